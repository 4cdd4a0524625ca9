// The `hmac` query parameter that signs the platform's redirects to apps (the install redirect and
// the App URL request), so an app can tell they come from the platform: hex HMAC-SHA256, keyed
// with the client secret, over the other parameters sorted by name and joined as decoded
// `name=value` pairs with `&`.
//
// The joined string must name one set of parameters only, or a signed message could be re-read as
// another: with raw joining, `state=x&shop=b` is both one parameter and two. So before joining, `%`
// and `&` are escaped in names and values (`%25`, `%26`) and `=` in names (`%3D`), as the largest
// platform of this family does, and repeated names become one entry whose values are separated by
// `,` (the SDK reads them the same way). A message without those characters is signed exactly as
// it always was; and the platform never signs a name or value that holds `%` or `&` at all (it
// refuses to), so clients of the family that join the raw values still compute the same string.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { UnsafeSignedValueError } from './errors.ts';

function escapeName(name: string): string {
  if (!/[%&=]/.test(name)) return name;
  return name.replace(/%/g, '%25').replace(/&/g, '%26').replace(/=/g, '%3D');
}

function escapeValue(value: string): string {
  if (value.indexOf('%') === -1 && value.indexOf('&') === -1) return value;
  return value.replace(/%/g, '%25').replace(/&/g, '%26');
}

/** The string that is signed: every parameter but `hmac`, escaped, sorted by name, joined. */
export function canonicalQuery(params: Iterable<[string, string]>): string {
  const grouped = new Map<string, string>();
  for (const [name, value] of params) {
    if (name === 'hmac') continue;
    const seen = grouped.get(name);
    grouped.set(name, seen === undefined ? escapeValue(value) : `${seen},${escapeValue(value)}`);
  }
  return [...grouped.keys()]
    .sort()
    .map((name) => `${escapeName(name)}=${grouped.get(name) as string}`)
    .join('&');
}

function assertSignable(params: Record<string, string>): void {
  for (const [name, value] of Object.entries(params)) {
    if (/[%&=]/.test(name) || /[%&]/.test(value)) throw new UnsafeSignedValueError(name);
  }
}

export function signQuery(params: Record<string, string>, secret: string): string {
  return createHmac('sha256', secret)
    .update(canonicalQuery(Object.entries(params)))
    .digest('hex');
}

/**
 * Returns the params with `hmac` appended, as a URL query string. Throws
 * {@link UnsafeSignedValueError} for a name or value holding `%` or `&` (a name also `=`): callers
 * validate what they sign, so this is a guard, never a way to refuse input.
 */
export function signedQueryString(params: Record<string, string>, secret: string): string {
  assertSignable(params);
  const search = new URLSearchParams(params);
  search.set('hmac', signQuery(params, secret));
  return search.toString();
}

export function verifyQueryString(query: string, secret: string): boolean {
  const search = new URLSearchParams(query);
  const given = search.get('hmac');
  if (!given || !/^[0-9a-f]{64}$/.test(given)) return false;
  const expected = createHmac('sha256', secret).update(canonicalQuery(search.entries())).digest();
  return timingSafeEqual(expected, Buffer.from(given, 'hex'));
}
