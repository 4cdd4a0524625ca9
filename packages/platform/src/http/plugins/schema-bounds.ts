// A body is held to the bounds its schema sets before the schema's validator sees it. The
// validators report every problem they find (so a 422 names each bad field), which makes their work
// and their report grow with the body: an object of thousands of unknown fields, or an array of
// thousands of bad items, would cost a pass and an error for each. An object with more fields than
// its schema knows, or an array longer than its schema allows, is refused at once instead, naming
// its first few unknown fields.
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import { MAX_LISTED_FIELDS } from './error-handler.ts';

/** A compiled validator as Fastify calls it: a verdict, with the errors on the function. */
type Validator = ReturnType<FastifySchemaCompiler<unknown>>;

/** What a schema allows at one place of a body, and the places below it that have bounds. */
interface Bounds {
  /** Most fields the object may have (closed objects: the fields its schema names). */
  maxFields?: number;
  /** The field names of a closed object. */
  known?: Set<string>;
  properties?: Map<string, Bounds>;
  maxItems?: number;
  items?: Bounds;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The bounds of a JSON schema, or `undefined` where it sets none. Only `properties` with
 * `additionalProperties: false`, `maxProperties`, `maxItems` and a single `items` schema are read:
 * anything else (combinators, references) leaves that place to the validator alone.
 */
export function schemaBounds(schema: unknown): Bounds | undefined {
  if (!isRecord(schema)) return undefined;
  const bounds: Bounds = {};
  const properties = isRecord(schema.properties) ? schema.properties : {};
  if (schema.additionalProperties === false && schema.patternProperties === undefined) {
    bounds.known = new Set(Object.keys(properties));
    bounds.maxFields = bounds.known.size;
  }
  if (typeof schema.maxProperties === 'number')
    bounds.maxFields = Math.min(bounds.maxFields ?? Number.POSITIVE_INFINITY, schema.maxProperties);
  for (const [name, sub] of Object.entries(properties)) {
    const below = schemaBounds(sub);
    if (below) (bounds.properties ??= new Map()).set(name, below);
  }
  if (typeof schema.maxItems === 'number') bounds.maxItems = schema.maxItems;
  const items = schemaBounds(schema.items);
  if (items) bounds.items = items;
  return Object.keys(bounds).length > 0 ? bounds : undefined;
}

/** One name of a JSON Pointer (RFC 6901), as the validator writes instance paths. */
function pointerToken(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * The first place of `data` beyond its bounds, as validation errors (at most
 * `MAX_LISTED_FIELDS` of them), or `undefined` when there is none. Costs one pass over the fields
 * of each object and the items of each array the schema bounds, and stops at the first excess.
 */
export function beyondBounds(data: unknown, bounds: Bounds, path = ''): FastifySchemaValidationError[] | undefined {
  if (Array.isArray(data)) {
    if (bounds.maxItems !== undefined && data.length > bounds.maxItems) {
      const limit = bounds.maxItems;
      return [
        {
          keyword: 'maxItems',
          instancePath: path,
          schemaPath: '#/maxItems',
          params: { limit },
          message: `must NOT have more than ${limit} items`,
        },
      ];
    }
    if (bounds.items)
      for (let i = 0; i < data.length; i++) {
        const found = beyondBounds(data[i], bounds.items, `${path}/${i}`);
        if (found) return found;
      }
    return undefined;
  }
  if (!isRecord(data)) return undefined;
  if (bounds.maxFields !== undefined) {
    // One pass counts the fields and the unknown ones, and keeps the names of the first few.
    const known = bounds.known;
    let count = 0;
    let unknownCount = 0;
    const unknown: string[] = [];
    for (const name in data) {
      count++;
      if (known === undefined || known.has(name)) continue;
      unknownCount++;
      if (unknown.length < MAX_LISTED_FIELDS) unknown.push(name);
    }
    if (count > bounds.maxFields)
      return tooManyFields(path, count, bounds.maxFields, known?.size === bounds.maxFields, unknown, unknownCount);
  }
  if (bounds.properties)
    for (const [name, below] of bounds.properties) {
      if (!Object.hasOwn(data, name)) continue;
      const found = beyondBounds(data[name], below, `${path}/${pointerToken(name)}`);
      if (found) return found;
    }
  return undefined;
}

/**
 * Every unknown field by name when they are all there is to say and fit in the listing; otherwise
 * how many fields the object has, then the first unknown ones in the room left.
 */
function tooManyFields(
  path: string,
  count: number,
  limit: number,
  /** Whether the limit is the number of fields the schema names. */
  closed: boolean,
  unknown: readonly string[],
  unknownCount: number,
): FastifySchemaValidationError[] {
  const named = (name: string): FastifySchemaValidationError => ({
    keyword: 'additionalProperties',
    instancePath: path,
    schemaPath: '#/additionalProperties',
    params: { additionalProperty: name },
    message: 'must NOT have additional properties',
  });
  if (closed && unknownCount <= MAX_LISTED_FIELDS) return unknown.map(named);
  const summary: FastifySchemaValidationError = {
    keyword: 'maxProperties',
    instancePath: path,
    schemaPath: '#/maxProperties',
    params: { limit },
    message: `has ${count} fields; at most ${limit} ${closed ? 'are known' : 'are allowed'}`,
  };
  return [summary, ...unknown.slice(0, MAX_LISTED_FIELDS - 1).map(named)];
}

/**
 * `validate` preceded by the bounds of `schema`: a body beyond them is refused with its
 * `beyondBounds` errors and never reaches `validate`.
 */
export function boundedValidator(validate: Validator, schema: unknown): Validator {
  const bounds = schemaBounds(schema);
  if (!bounds) return validate;
  const bounded: Validator = (data: unknown) => {
    const refused = beyondBounds(data, bounds);
    if (refused) {
      bounded.errors = refused;
      return false;
    }
    const valid = validate(data);
    bounded.errors = validate.errors ?? null;
    return valid;
  };
  return bounded;
}
