// Webhook filters: a small query language over the top-level fields of a resource's API object,
// parsed and type-checked once into a predicate that the outbox runs on every change.
//
//   filter     := or
//   or         := and ("OR" and)*
//   and        := term ("AND" term)*               AND binds tighter than OR
//   term       := "(" or ")" | comparison
//   comparison := field ":" [">=" | "<=" | ">" | "<"] value
//   value      := "..." (backslash escapes " and \) | a run of characters other than blanks, ( ) and "
//
// Examples: `status:active AND price:>=10`, `title:"blue shirt" OR (vendor:Acme AND inventory_quantity:<5)`,
// `updated_at:>=2026-01-01T00:00:00Z`, `fulfillment_status:null`.
//
// A value is checked against its field's type: numbers (ids and decimal amounts included, compared
// as numbers), ISO 8601 timestamps, true/false, strings (one of the listed values for an enumerated
// field); ranges only on numbers and timestamps; an unquoted `null` only on a field that may be
// null. Strings compare exactly, case included. A field the object does not hold matches nothing.
// Every limit is small on purpose: the predicate runs inside the transaction of every write.
import { parseIsoTime } from './list-filters.ts';
import { type FilterField, resourceFields } from './resource-fields.ts';
import { FilterSyntaxError } from './errors.ts';

export const MAX_FILTER_LENGTH = 1000;
export const MAX_FILTER_TERMS = 20;
export const MAX_FILTER_DEPTH = 5;

export type FilterPredicate = (object: Readonly<Record<string, unknown>>) => boolean;

type Op = '=' | '>=' | '<=' | '>' | '<';

const FIELD_NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const BARE_VALUE = /[^\s()"]+/y;

class Parser {
  private pos = 0;
  private terms = 0;

  constructor(
    private readonly text: string,
    private readonly resource: string,
    private readonly fields: ReadonlyMap<string, FilterField>,
    private readonly unfilterable: ReadonlyMap<string, { reason: string }>,
    private readonly names: readonly string[],
  ) {}

  parse(): FilterPredicate {
    const predicate = this.or(0);
    this.blanks();
    if (this.pos < this.text.length) {
      if (this.text[this.pos] === ')') this.fail(`unmatched ")"`);
      this.fail(`expected AND, OR or the end of the filter, not ${this.quoteNext()}`);
    }
    return predicate;
  }

  private fail(message: string, at = this.pos): never {
    throw new FilterSyntaxError(`${message} at position ${at + 1}`);
  }

  private blanks(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos]!)) this.pos++;
  }

  private quoteNext(): string {
    const rest = this.text.slice(this.pos);
    const word = /^\S{1,20}/.exec(rest)?.[0] ?? rest.slice(0, 20);
    return JSON.stringify(word);
  }

  /** Consumes the keyword when it comes next as a whole word. */
  private keyword(word: 'AND' | 'OR'): boolean {
    this.blanks();
    if (!this.text.startsWith(word, this.pos)) return false;
    const after = this.text[this.pos + word.length];
    if (after !== undefined && !/[\s(]/.test(after)) return false;
    this.pos += word.length;
    return true;
  }

  private or(depth: number): FilterPredicate {
    const parts = [this.and(depth)];
    while (this.keyword('OR')) parts.push(this.and(depth));
    if (parts.length === 1) return parts[0]!;
    return (o) => parts.some((p) => p(o));
  }

  private and(depth: number): FilterPredicate {
    const parts = [this.term(depth)];
    while (this.keyword('AND')) parts.push(this.term(depth));
    if (parts.length === 1) return parts[0]!;
    return (o) => parts.every((p) => p(o));
  }

  private term(depth: number): FilterPredicate {
    this.blanks();
    if (this.text[this.pos] === '(') {
      if (depth + 1 > MAX_FILTER_DEPTH) this.fail(`parentheses nest deeper than ${MAX_FILTER_DEPTH} levels`);
      const open = this.pos;
      this.pos++;
      const inner = this.or(depth + 1);
      this.blanks();
      if (this.text[this.pos] !== ')') this.fail(`the "(" at position ${open + 1} is not closed`);
      this.pos++;
      return inner;
    }
    return this.comparison();
  }

  private comparison(): FilterPredicate {
    const start = this.pos;
    if (start >= this.text.length) this.fail('expected a field name, found the end of the filter');
    FIELD_NAME.lastIndex = start;
    const name = FIELD_NAME.exec(this.text)?.[0];
    if (!name) this.fail(`expected a field name, not ${this.quoteNext()}`);
    if (name === 'AND' || name === 'OR') this.fail(`expected a field name before ${name}`);
    this.pos += name.length;
    if (this.text[this.pos] !== ':') this.fail(`expected ":" right after the field ${name}`);
    this.pos++;
    if (++this.terms > MAX_FILTER_TERMS) this.fail(`a filter may compare at most ${MAX_FILTER_TERMS} fields`, start);
    const field = this.fields.get(name);
    if (!field) {
      const unfit = this.unfilterable.get(name);
      if (unfit) this.fail(unfit.reason, start);
      this.fail(`unknown field ${JSON.stringify(name)}: ${this.resource} have ${this.names.join(', ')}`, start);
    }
    const valueAt = this.pos;
    let op: Op = '=';
    for (const candidate of ['>=', '<=', '>', '<'] as const)
      if (this.text.startsWith(candidate, this.pos)) {
        op = candidate;
        this.pos += candidate.length;
        break;
      }
    const { value, quoted } = this.value(name);
    return compare(field, op, value, quoted, (message) => this.fail(message, valueAt));
  }

  private value(field: string): { value: string; quoted: boolean } {
    if (this.text[this.pos] === '"') {
      const open = this.pos;
      let out = '';
      for (let i = this.pos + 1; i < this.text.length; i++) {
        const c = this.text[i]!;
        if (c === '\\' && (this.text[i + 1] === '"' || this.text[i + 1] === '\\')) {
          out += this.text[++i];
        } else if (c === '"') {
          this.pos = i + 1;
          return { value: out, quoted: true };
        } else out += c;
      }
      this.fail(`the quote opened for ${field} is not closed`, open);
    }
    BARE_VALUE.lastIndex = this.pos;
    const bare = BARE_VALUE.exec(this.text)?.[0];
    if (!bare) this.fail(`expected a value for ${field} after ":"`);
    this.pos += bare.length;
    return { value: bare, quoted: false };
  }
}

/** The test of one comparison, its value checked against the field's type; `fail` throws. */
function compare(field: FilterField, op: Op, raw: string, quoted: boolean, fail: (message: string) => never): FilterPredicate {
  const name = field.name;
  if (!quoted && raw === 'null') {
    if (op !== '=') fail(`${name}: a range needs a value, not null`);
    if (!field.nullable) fail(`${name} is never null`);
    return (o) => o[name] === null;
  }
  if (op !== '=' && (field.type === 'string' || field.type === 'boolean'))
    fail(`${name} is a ${field.type}: ranges (${op}) apply to numbers and times only`);
  switch (field.type) {
    case 'number': {
      if (!/^-?[0-9]{1,16}(\.[0-9]{1,10})?$/.test(raw)) fail(`${name} is a number: ${JSON.stringify(raw.slice(0, 40))} is not one`);
      return ordered(name, op, Number(raw), toNumber);
    }
    case 'timestamp': {
      const at = parseIsoTime(raw);
      if (at === undefined) fail(`${name} is a time: expected an ISO 8601 date or date-time such as 2026-01-31T09:00:00Z`);
      return ordered(name, op, at, toTime);
    }
    case 'boolean': {
      if (raw !== 'true' && raw !== 'false') fail(`${name} is true or false, not ${JSON.stringify(raw.slice(0, 40))}`);
      const want = raw === 'true';
      return (o) => o[name] === want;
    }
    case 'string': {
      if (field.values && !field.values.includes(raw))
        fail(`${name} is one of ${field.values.join(', ')}; not ${JSON.stringify(raw.slice(0, 40))}`);
      return (o) => o[name] === raw;
    }
  }
}

function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

function toTime(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

function ordered(name: string, op: Op, want: number, read: (v: unknown) => number | undefined): FilterPredicate {
  const test =
    op === '='
      ? (x: number) => x === want
      : op === '>='
        ? (x: number) => x >= want
        : op === '<='
          ? (x: number) => x <= want
          : op === '>'
            ? (x: number) => x > want
            : (x: number) => x < want;
  return (o) => {
    const x = read(o[name]);
    return x !== undefined && test(x);
  };
}

/**
 * Parses and checks `text` against the fields of `resource` (products, orders, customers) and
 * returns its predicate. Throws FilterSyntaxError naming the field or position of the first problem.
 */
export function compileFilter(resource: string, text: string): FilterPredicate {
  const fields = resourceFields(resource);
  if (!fields) throw new FilterSyntaxError(`${resource} cannot be filtered`);
  if (text.length > MAX_FILTER_LENGTH) throw new FilterSyntaxError(`is longer than ${MAX_FILTER_LENGTH} characters`);
  if (text.trim() === '') throw new FilterSyntaxError('is empty; send null to have no filter');
  return new Parser(text, resource, fields.filterable, fields.unfilterable, [...fields.filterable.keys()]).parse();
}

/**
 * Compiled filters by resource and text, so that the outbox parses each stored filter once rather
 * than on every write. Bounded: past `maxEntries` the least recently used one goes.
 */
export class FilterCache {
  private readonly compiled = new Map<string, FilterPredicate | null>();

  constructor(private readonly maxEntries = 1000) {}

  /**
   * The predicate of a stored filter; null when it no longer compiles (it was checked when saved,
   * so only a change of the resource's fields can do that: the caller decides what then).
   */
  get(resource: string, text: string): FilterPredicate | null {
    const key = `${resource}\n${text}`;
    let predicate = this.compiled.get(key);
    if (predicate !== undefined) {
      this.compiled.delete(key);
      this.compiled.set(key, predicate);
      return predicate;
    }
    try {
      predicate = compileFilter(resource, text);
    } catch (err) {
      if (!(err instanceof FilterSyntaxError)) throw err;
      predicate = null;
    }
    if (this.compiled.size >= this.maxEntries) this.compiled.delete(this.compiled.keys().next().value as string);
    this.compiled.set(key, predicate);
    return predicate;
  }

  get size(): number {
    return this.compiled.size;
  }
}
