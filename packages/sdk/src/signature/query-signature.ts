// The `hmac` query parameter the platform adds to every request or redirect it sends to an app, so
// the app can tell that the parameters really come from the platform and were not changed.
import { timingSafeEqualStrings } from '../crypto/constant-time.ts';
import { hmacSha256 } from '../crypto/hmac.ts';
import { HmacError, ParameterError, TimestampError } from '../errors.ts';

/** A query parameter value as a record holds it. Arrays are repeated keys. */
export type QueryValue = string | number | boolean | readonly string[] | null | undefined;

/**
 * A query in any of the forms apps meet: the raw query string (with or without `?`, or a whole URL
 * or path starting with `http://`, `https://` or `/`), `URLSearchParams`, or a record such as the
 * `req.query` of a framework.
 */
export type QueryInput = string | URLSearchParams | Readonly<Record<string, QueryValue>>;

/** One secret, or several during a rotation (the first is current; any of them verifies). */
export type SecretInput = string | readonly string[];

/** Options of {@link verifyQuery}. */
export interface VerifyQueryOptions {
  /** Accept `timestamp` only within this many seconds of now (either side). Off when absent. */
  timestampToleranceSeconds?: number;
  /** Clock in milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
  /** Name of the signature parameter (default `hmac`). */
  hmacParam?: string;
  /** Name of the timestamp parameter (default `timestamp`). */
  timestampParam?: string;
}

function decodeComponent(text: string): string {
  if (text.indexOf('%') === -1 && text.indexOf('+') === -1) return text;
  const spaced = text.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    // A malformed escape is kept as sent: the digest then simply does not match.
    return spaced;
  }
}

function rawQueryOf(text: string): string {
  if (text.startsWith('http://') || text.startsWith('https://') || text.startsWith('/')) {
    const q = text.indexOf('?');
    if (q === -1) return '';
    const hash = text.indexOf('#', q);
    return text.slice(q + 1, hash === -1 ? undefined : hash);
  }
  return text.startsWith('?') ? text.slice(1) : text;
}

/**
 * Parses a query into its (name, value) pairs, decoded, in the order sent. From a raw string the
 * SDK does its own parsing, so a framework's parser (which may drop, merge or nest keys) cannot
 * change what is verified.
 *
 * @example
 * ```ts
 * queryPairs('?shop=demo.localhost&ids=1&ids=2');
 * // [['shop', 'demo.localhost'], ['ids', '1'], ['ids', '2']]
 * ```
 */
export function queryPairs(query: QueryInput): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  if (typeof query === 'string') {
    const raw = rawQueryOf(query);
    if (raw === '') return pairs;
    for (const segment of raw.split('&')) {
      if (segment === '') continue;
      const eq = segment.indexOf('=');
      if (eq === -1) pairs.push([decodeComponent(segment), '']);
      else pairs.push([decodeComponent(segment.slice(0, eq)), decodeComponent(segment.slice(eq + 1))]);
    }
    return pairs;
  }
  if (query instanceof URLSearchParams) {
    for (const [name, value] of query) pairs.push([name, value]);
    return pairs;
  }
  for (const name of Object.keys(query)) {
    const value = query[name];
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const v of value as readonly string[]) pairs.push([name, String(v)]);
    else pairs.push([name, String(value)]);
  }
  return pairs;
}

function escapeName(name: string): string {
  if (!/[%&=]/.test(name)) return name;
  return name.replace(/%/g, '%25').replace(/&/g, '%26').replace(/=/g, '%3D');
}

function escapeValue(value: string): string {
  if (value.indexOf('%') === -1 && value.indexOf('&') === -1) return value;
  return value.replace(/%/g, '%25').replace(/&/g, '%26');
}

/**
 * The string the platform signs: every parameter except `hmac`, ordered by name, joined as
 * `name=value` with `&`, names and values decoded (not percent-encoded), with only `%` and `&`
 * escaped (`%25`, `%26`) in names and values and `=` in names (`%3D`). The escaping makes the
 * string name one set of parameters only: without it `a=1&b=2` could be one parameter `a` whose
 * value is `1&b=2`, and a signature given for one message would verify another. Parameters without
 * those characters (all the platform sends) are joined exactly as they are.
 *
 * Repeated names (`ids=1&ids=2`) are joined into one entry whose values are separated by `,` in the
 * order they were sent (`ids=1,2`), as the best-known platform of this family does. The order of
 * values is kept because it can carry meaning; the sort is by name (before escaping) only, and stable.
 *
 * @example
 * ```ts
 * canonicalQuery('shop=a.localhost&code=c&hmac=ff'); // 'code=c&shop=a.localhost'
 * canonicalQuery('state=x%26shop%3Db'); // 'state=x%26shop=b'
 * ```
 */
export function canonicalQuery(query: QueryInput | Array<[string, string]>, excluded = 'hmac'): string {
  const pairs = Array.isArray(query) ? query : queryPairs(query);
  const grouped = new Map<string, string>();
  for (const [name, value] of pairs) {
    if (name === excluded) continue;
    const seen = grouped.get(name);
    grouped.set(name, seen === undefined ? escapeValue(value) : `${seen},${escapeValue(value)}`);
  }
  const names = [...grouped.keys()].sort();
  let out = '';
  for (const name of names) {
    if (out !== '') out += '&';
    out += `${escapeName(name)}=${grouped.get(name) as string}`;
  }
  return out;
}

/**
 * Signs query parameters as the platform does: hex HMAC-SHA256 of
 * {@link canonicalQuery}, keyed with the client secret. Any `hmac` already present is ignored.
 *
 * @example
 * ```ts
 * const hmac = await signQuery({ shop: 'demo.localhost', timestamp: '1700000000' }, clientSecret);
 * const url = `https://app.example/?shop=demo.localhost&timestamp=1700000000&hmac=${hmac}`;
 * ```
 */
export async function signQuery(params: QueryInput, secret: string): Promise<string> {
  return hmacSha256(secret, [canonicalQuery(params)], 'hex');
}

const HEX_DIGEST = /^[0-9a-fA-F]{64}$/;

/**
 * Verifies the `hmac` of a request or redirect from the platform, in constant time,
 * against one secret or several (rotation). Pass the raw query string (or the request URL)
 * whenever you have it. With `timestampToleranceSeconds` the `timestamp` parameter must also be
 * within that many seconds of now. Throws {@link HmacError} (`HMAC_MISSING`, `HMAC_INVALID`) or
 * {@link TimestampError}; returns the verified parameters without `hmac`.
 *
 * @example
 * ```ts
 * const params = await verifyQuery(new URL(req.url).search, process.env.CLIENT_SECRET!, {
 *   timestampToleranceSeconds: 300,
 * });
 * console.log(params.shop);
 * ```
 */
export async function verifyQuery(
  query: QueryInput,
  secret: SecretInput,
  options: VerifyQueryOptions = {},
): Promise<Record<string, string>> {
  const hmacParam = options.hmacParam ?? 'hmac';
  const pairs = queryPairs(query);
  let provided: string | undefined;
  for (const [name, value] of pairs) {
    if (name !== hmacParam) continue;
    if (provided !== undefined) throw new HmacError('HMAC_INVALID', `query parameter "${hmacParam}" appears more than once`);
    provided = value;
  }
  if (provided === undefined || provided === '') throw new HmacError('HMAC_MISSING', `query parameter "${hmacParam}" is missing`);
  if (!HEX_DIGEST.test(provided)) throw new HmacError('HMAC_INVALID', `query parameter "${hmacParam}" is not a hex SHA-256 digest`);
  const expectedHex = provided.toLowerCase();
  const canonical = canonicalQuery(pairs, hmacParam);
  const secrets = typeof secret === 'string' ? [secret] : secret;
  let valid = false;
  for (const s of secrets) {
    // Every secret is tried, so the time taken does not reveal which one matched.
    const pending = hmacSha256(s, [canonical], 'hex');
    const digest = typeof pending === 'string' ? pending : await pending;
    if (timingSafeEqualStrings(digest, expectedHex)) valid = true;
  }
  if (!valid) {
    throw new HmacError(
      'HMAC_INVALID',
      `query signature does not match (checked ${secrets.length} secret${secrets.length === 1 ? '' : 's'}): the request was not signed ` +
        `with this app's client secret, or a parameter was changed`,
    );
  }
  const params: Record<string, string> = {};
  for (const [name, value] of pairs) {
    if (name === hmacParam) continue;
    params[name] = name in params ? `${params[name]},${value}` : value;
  }
  if (options.timestampToleranceSeconds !== undefined) {
    checkTimestamp(
      params[options.timestampParam ?? 'timestamp'],
      options.timestampToleranceSeconds,
      options.now ?? Date.now,
      options.timestampParam ?? 'timestamp',
    );
  }
  return params;
}

/**
 * Throws {@link TimestampError} unless `value` (unix seconds) is within `toleranceSeconds` of now.
 *
 * @example
 * ```ts
 * checkTimestamp(params.timestamp, 300, Date.now); // returns the timestamp as a number
 * ```
 */
export function checkTimestamp(value: string | undefined, toleranceSeconds: number, now: () => number, name = 'timestamp'): number {
  if (value === undefined || value === '') throw new TimestampError('TIMESTAMP_MISSING', `query parameter "${name}" is missing`);
  if (!/^\d{1,12}$/.test(value)) throw new TimestampError('TIMESTAMP_OUT_OF_RANGE', `"${name}" is not a unix timestamp in seconds`);
  const ts = Number(value);
  const skew = Math.abs(now() / 1000 - ts);
  if (skew > toleranceSeconds) {
    throw new TimestampError(
      'TIMESTAMP_OUT_OF_RANGE',
      `"${name}" is ${Math.round(skew)} s away from now; at most ${toleranceSeconds} s is accepted (check the server clock)`,
    );
  }
  return ts;
}

/** Reads a required parameter or throws {@link ParameterError}. */
export function requireParam(params: Record<string, string>, name: string): string {
  const value = params[name];
  if (value === undefined || value === '') throw new ParameterError('PARAMETER_MISSING', name);
  return value;
}
