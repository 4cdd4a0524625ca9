// The query of an Admin API list: which rows (ids, since_id, created/updated time ranges, and the
// exact-match filters a list adds of its own, such as a product's title), which fields of each, and
// the page parameters. Every list takes the same set plus its own, parsed and checked here once; a
// parameter outside the set is refused rather than ignored, so a client that believes it filtered
// never receives every row instead.
import { createHash } from 'node:crypto';
import { UnsupportedParameterError, ValidationFailedError } from './errors.ts';

/** At most this many ids in one `ids` filter (one page's worth at the largest limit). */
export const MAX_IDS = 250;

/** Which rows a list returns; times are unix milliseconds, bounds inclusive. */
export interface ListFilters {
  /** Only these ids (ascending, without repeats). */
  ids?: number[];
  /** Only ids above this one. */
  sinceId?: number;
  createdAtMin?: number;
  createdAtMax?: number;
  updatedAtMin?: number;
  updatedAtMax?: number;
  /** Exact-match filters of the list's own (column to value, the value in its stored form). */
  match?: Readonly<Record<string, string>>;
}

/**
 * A filter one list adds to the common set: `name` is both the query parameter and the column it
 * compares for equality (an index of the table must lead with (store_id, name) or the list be
 * bounded otherwise). `check` returns what is wrong with a value, or undefined.
 */
export interface MatchFilter {
  name: string;
  description: string;
  check(value: string): string | undefined;
}

export interface ListQuery {
  filters: ListFilters;
  /** Top-level fields to return for each object, in the order asked; undefined = all. */
  fields: string[] | undefined;
  /** The filter parameters in one canonical spelling, to carry into the links of other pages. */
  params: [string, string][];
}

/** Page parameters: read by the pagination code, allowed here. */
export const PAGE_PARAMS = ['limit', 'page_size', 'per_page', 'cursor', 'pre_cursor'] as const;

const TIME_PARAMS = {
  created_at_min: 'createdAtMin',
  created_at_max: 'createdAtMax',
  updated_at_min: 'updatedAtMin',
  updated_at_max: 'updatedAtMax',
} as const satisfies Record<string, keyof ListFilters>;

/** Filter parameters of every list, with the words the API documentation uses for them. */
export const FILTER_PARAMS = {
  ids: `Only these ids: a comma-separated list (ids=1,2) and/or repeated keys (ids=1&ids=2); at most ${MAX_IDS}.`,
  since_id: 'Only objects whose id is greater than this one.',
  created_at_min: 'Only objects created at or after this time (ISO 8601, e.g. 2026-01-31T09:00:00Z or 2026-01-31).',
  created_at_max: 'Only objects created at or before this time (ISO 8601).',
  updated_at_min: 'Only objects last updated at or after this time (ISO 8601).',
  updated_at_max: 'Only objects last updated at or before this time (ISO 8601).',
  fields: 'Comma-separated top-level fields to return for each object, e.g. id,title; an unknown field is an error.',
} as const;

const ID = /^[1-9][0-9]{0,15}$/;
// Calendar date, or date and time with optional seconds and fraction, then Z or an offset. A blank
// before the offset is a `+` that was not percent-encoded in the query string.
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+\- ]\d{2}:?\d{2})?)?$/i;

/** Unix milliseconds of an ISO 8601 date or date-time (UTC when no offset is given), or undefined. */
export function parseIsoTime(raw: string): number | undefined {
  const m = ISO_8601.exec(raw);
  if (!m) return undefined;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : `${zone[0] === '-' ? '-' : '+'}${zone.slice(1, 3)}:${zone.slice(-2)}`;
  const ms = frac ? frac.slice(0, 4).padEnd(4, '0') : '';
  const text = `${y}-${mo}-${d}T${h}:${mi}:${s}${ms}${offset}`;
  const t = Date.parse(text);
  if (Number.isNaN(t)) return undefined;
  // Date.parse rolls some impossible dates over (February 30th); refuse those.
  const local = new Date(t + (offset === 'Z' ? 0 : offsetMinutes(offset) * 60_000));
  if (local.getUTCDate() !== Number(d) || local.getUTCMonth() + 1 !== Number(mo) || Number(h) > 23 || Number(s) > 59) return undefined;
  return t;
}

function offsetMinutes(offset: string): number {
  const sign = offset[0] === '-' ? -1 : 1;
  return sign * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)));
}

/**
 * Parses a list's query string (`query` as the server parsed it: a repeated key is an array).
 * `fieldNames` are the top-level fields of the list's objects. Throws UnsupportedParameterError for
 * an unknown parameter and ValidationFailedError naming each bad one.
 */
export function parseListQuery(
  query: Record<string, unknown>,
  fieldNames: readonly string[],
  matches: readonly MatchFilter[] = [],
): ListQuery {
  const own = matches.map((m) => m.name);
  const unknown = Object.keys(query).filter(
    (k) => !(PAGE_PARAMS as readonly string[]).includes(k) && !Object.hasOwn(FILTER_PARAMS, k) && !own.includes(k),
  );
  if (unknown.length > 0)
    throw new UnsupportedParameterError(
      unknown.map((k) => k.slice(0, 40)).slice(0, 10),
      [...PAGE_PARAMS, ...Object.keys(FILTER_PARAMS), ...own],
      'This list takes',
    );

  const errors: Record<string, string[]> = {};
  const filters: ListFilters = {};
  const params: [string, string][] = [];
  const once = (name: string): string | undefined => {
    const v = query[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') {
      errors[name] = ['must be given once'];
      return undefined;
    }
    return v;
  };

  if (query.ids !== undefined) {
    const parts = (Array.isArray(query.ids) ? query.ids : [query.ids]).flatMap((v) => String(v).split(','));
    const bad = parts.filter((p) => !ID.test(p.trim()) || !Number.isSafeInteger(Number(p.trim())));
    if (parts.length > MAX_IDS) errors.ids = [`takes at most ${MAX_IDS} ids; got ${parts.length}`];
    else if (bad.length > 0)
      errors.ids = [`must be positive whole numbers separated by commas; not ${JSON.stringify(bad[0]!.slice(0, 20))}`];
    else {
      filters.ids = [...new Set(parts.map((p) => Number(p.trim())))].sort((a, b) => a - b);
      params.push(['ids', filters.ids.join(',')]);
    }
  }

  const sinceId = once('since_id');
  if (sinceId !== undefined) {
    if (sinceId !== '0' && (!ID.test(sinceId) || !Number.isSafeInteger(Number(sinceId))))
      errors.since_id = ['must be a whole number (an id)'];
    else {
      filters.sinceId = Number(sinceId);
      params.push(['since_id', sinceId]);
    }
  }

  for (const [name, key] of Object.entries(TIME_PARAMS)) {
    const raw = once(name);
    if (raw === undefined) continue;
    const t = parseIsoTime(raw.trim());
    if (t === undefined) errors[name] = ['must be an ISO 8601 date or date-time, such as 2026-01-31T09:00:00Z'];
    else {
      filters[key] = t;
      params.push([name, new Date(t).toISOString()]);
    }
  }
  for (const which of ['created_at', 'updated_at'] as const) {
    const min = filters[which === 'created_at' ? 'createdAtMin' : 'updatedAtMin'];
    const max = filters[which === 'created_at' ? 'createdAtMax' : 'updatedAtMax'];
    if (min !== undefined && max !== undefined && min > max) errors[`${which}_min`] = [`must not be after ${which}_max`];
  }

  const match: Record<string, string> = {};
  for (const m of matches) {
    const raw = once(m.name);
    if (raw === undefined) continue;
    const problem = m.check(raw);
    if (problem) errors[m.name] = [problem];
    else {
      match[m.name] = raw;
      params.push([m.name, raw]);
    }
  }
  if (Object.keys(match).length > 0) filters.match = match;

  let fields: string[] | undefined;
  const rawFields = once('fields');
  if (rawFields !== undefined) {
    const checked = checkFieldNames(rawFields.split(','), fieldNames);
    if ('problem' in checked) errors.fields = [checked.problem];
    else {
      fields = checked.fields;
      params.push(['fields', fields.join(',')]);
    }
  }

  if (Object.keys(errors).length > 0) throw new ValidationFailedError(errors);
  return { filters, fields, params };
}

/** Whether any row filter is set. */
export function hasFilters(f: ListFilters): boolean {
  return Object.values(f).some((v) => v !== undefined);
}

/**
 * A short digest of the row filters, bound into cursors so that a cursor is only used with the
 * filters it was issued for; '' when there are none (cursors of unfiltered lists keep their form).
 */
export function filterDigest(f: ListFilters): string {
  if (!hasFilters(f)) return '';
  let canonical = [
    f.ids?.join(',') ?? '',
    f.sinceId ?? '',
    f.createdAtMin ?? '',
    f.createdAtMax ?? '',
    f.updatedAtMin ?? '',
    f.updatedAtMax ?? '',
  ].join('|');
  // Appended only when set, so that the cursors of lists filtered without one keep their digest.
  const match = f.match ? Object.entries(f.match).sort(([a], [b]) => (a < b ? -1 : 1)) : [];
  if (match.length > 0) canonical += `|${JSON.stringify(match)}`;
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 16);
}

/**
 * Checks a list of top-level field names (blanks around each trimmed) against an object's:
 * the names without repeats, in the order asked, or what is wrong. The rule of a list's `fields`,
 * shared by everything else that picks fields of an API object (a webhook's `include_fields`).
 */
export function checkFieldNames(asked: readonly string[], fieldNames: readonly string[]): { fields: string[] } | { problem: string } {
  const names = asked.map((f) => f.trim());
  if (names.every((f) => f === '')) return { problem: `must name at least one of ${fieldNames.join(', ')}` };
  const unknownFields = names.filter((f) => !fieldNames.includes(f));
  if (unknownFields.length > 0)
    return {
      problem: `unknown field${unknownFields.length > 1 ? 's' : ''} ${unknownFields
        .slice(0, 5)
        .map((f) => JSON.stringify(f.slice(0, 40)))
        .join(', ')}; fields are ${fieldNames.join(', ')}`,
    };
  return { fields: [...new Set(names)] };
}

/** The object with only `fields` (in the object's own order), or the object when no fields were asked. */
export function selectFields<T extends Record<string, unknown>>(obj: T, fields: readonly string[] | undefined): Partial<T> {
  if (!fields) return obj;
  const out: Partial<T> = {};
  for (const k of Object.keys(obj) as (keyof T & string)[]) if (fields.includes(k)) out[k] = obj[k];
  return out;
}

/**
 * Parses the query of a count: the row filters of the list (and its own exact-match filters), none
 * of the page parameters nor `fields`, which would mean nothing there.
 */
export function parseCountQuery(query: Record<string, unknown>, matches: readonly MatchFilter[] = []): ListFilters {
  const accepted = [...Object.keys(FILTER_PARAMS).filter((k) => k !== 'fields'), ...matches.map((m) => m.name)];
  const refused = Object.keys(query).filter((k) => !accepted.includes(k));
  if (refused.length > 0)
    throw new UnsupportedParameterError(refused.map((k) => k.slice(0, 40)).slice(0, 10), accepted, 'A count takes the filters of its list');
  return parseListQuery(query, [], matches).filters;
}
