// The `hmac` query parameter that signs the platform's redirects to apps (the install redirect and
// the App URL request), so an app can tell they come from the platform: hex HMAC-SHA256, keyed
// with the client secret, over the other parameters sorted by name and joined as raw (decoded)
// `name=value` pairs with `&`.
import { createHmac, timingSafeEqual } from 'node:crypto';

export function canonicalQuery(params: Iterable<[string, string]>): string {
  return [...params]
    .filter(([name]) => name !== 'hmac')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

export function signQuery(params: Record<string, string>, secret: string): string {
  return createHmac('sha256', secret)
    .update(canonicalQuery(Object.entries(params)))
    .digest('hex');
}

/** Returns the params with `hmac` appended, as a URL query string. */
export function signedQueryString(params: Record<string, string>, secret: string): string {
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
