// The `shop` parameter must be a hostname under the platform's store domain: the SDK builds API and
// OAuth URLs from it (the code exchange posts the client secret there), so a forged `shop` must never
// point them at another host.

/** Options of {@link isValidShop}. */
export interface ShopValidationOptions {
  /** Accept `http://` in the full-URL form as well (development platforms). Default false. */
  allowHttp?: boolean;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const patterns = new Map<string, RegExp>();

function hostPattern(storeDomain: string): RegExp {
  let pattern = patterns.get(storeDomain);
  if (!pattern) {
    pattern = new RegExp(`^[a-z0-9][a-z0-9-]{0,62}\\.${escapeRegExp(storeDomain.toLowerCase())}$`);
    if (patterns.size > 32) patterns.clear();
    patterns.set(storeDomain, pattern);
  }
  return pattern;
}

/**
 * Whether `shop` is a valid shop hostname of `storeDomain`: a letter or digit, then
 * letters a-z, digits or hyphens (the store name, at most 63 characters), then `.{storeDomain}`.
 * Upper-case letters are refused (the platform sends lower case). The full-URL form of the
 * reference pattern is accepted as well: `https://{shop}/`, with the `https` scheme and the
 * trailing `/` (or `http://` with `allowHttp`).
 *
 * @example
 * ```ts
 * isValidShop('demo.localhost', 'localhost');                  // true
 * isValidShop('https://demo.example-shops.com/', 'example-shops.com'); // true
 * isValidShop('evil.com/.localhost', 'localhost');             // false
 * ```
 */
export function isValidShop(shop: unknown, storeDomain: string, options: ShopValidationOptions = {}): boolean {
  if (typeof shop !== 'string' || shop.length > 255 || storeDomain === '') return false;
  let host = shop;
  const scheme = /^(https?):\/\//.exec(shop);
  if (scheme) {
    if (scheme[1] === 'http' && !options.allowHttp) return false;
    if (!shop.endsWith('/')) return false;
    host = shop.slice(scheme[0].length, -1);
  }
  return hostPattern(storeDomain).test(host);
}
