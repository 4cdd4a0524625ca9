// The top-level fields of a store resource's API object as a webhook filter sees them: each one's
// kind of value (number, string, boolean, timestamp), whether it may be null, and for enumerated
// strings the values it can take. Read from the resource's JSON schema, so a field added there is
// filterable at once.
import { RESOURCE_DEFS, type ResourceName } from './resources.ts';

export type FieldType = 'number' | 'string' | 'boolean' | 'timestamp';

export interface FilterField {
  name: string;
  type: FieldType;
  nullable: boolean;
  /** The values an enumerated string field can take (null left out). */
  values?: readonly string[];
}

/** A field a filter cannot test (a list or an object), with why. */
export interface UnfilterableField {
  name: string;
  reason: string;
}

/**
 * Fields the API writes as strings although they hold numbers: ids (strings of digits, so that no
 * client loses precision) and decimal amounts such as "19.99". A filter compares them as numbers,
 * so `price:>=10` means ten or more, not the text after "10".
 */
const NUMERIC_TEXT = new Set(['id', 'customer_id', 'price', 'total_price']);

export interface ResourceFields {
  /** Every top-level field of the object, in its order: what `fields` and `include_fields` accept. */
  names: readonly string[];
  filterable: ReadonlyMap<string, FilterField>;
  unfilterable: ReadonlyMap<string, UnfilterableField>;
}

const cache = new Map<ResourceName, ResourceFields>();

/** The fields of a resource's API object; undefined for a name that is not a resource. */
export function resourceFields(resource: string): ResourceFields | undefined {
  const known = cache.get(resource as ResourceName);
  if (known) return known;
  const def = RESOURCE_DEFS.find((d) => d.name === resource);
  if (!def) return undefined;
  const properties = (def.object.properties ?? {}) as Record<string, Record<string, unknown>>;
  const filterable = new Map<string, FilterField>();
  const unfilterable = new Map<string, UnfilterableField>();
  for (const [name, schema] of Object.entries(properties)) {
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [String(schema.type)];
    const nullable = types.includes('null');
    const base = types.find((t) => t !== 'null') ?? 'string';
    if (base === 'array' || base === 'object') {
      unfilterable.set(name, { name, reason: `${name} is ${base === 'array' ? 'a list' : 'an object'} and cannot be filtered on` });
      continue;
    }
    let type: FieldType;
    if (base === 'integer' || base === 'number' || NUMERIC_TEXT.has(name)) type = 'number';
    else if (base === 'boolean') type = 'boolean';
    else if (schema.format === 'date-time') type = 'timestamp';
    else type = 'string';
    const field: FilterField = { name, type, nullable };
    if (type === 'string' && Array.isArray(schema.enum))
      field.values = (schema.enum as unknown[]).filter((v): v is string => typeof v === 'string');
    filterable.set(name, field);
  }
  const fields: ResourceFields = { names: Object.keys(properties), filterable, unfilterable };
  cache.set(def.name, fields);
  return fields;
}
