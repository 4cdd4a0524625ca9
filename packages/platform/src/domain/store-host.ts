// Store hostnames: every store lives at `{store_name}.{store_domain}` and requests are routed by
// the Host header; the bare store domain serves the platform's own pages. Store names follow the
// rule apps use to check the `shop` parameter of an install redirect, so every store passes it.

const LABEL = /^[a-z0-9][a-z0-9-]*$/;

/** A store name: letter or digit first, then letters, digits, hyphens; lower case; at most 63 chars. */
export function isValidStoreName(name: string): boolean {
  return name.length >= 1 && name.length <= 63 && LABEL.test(name);
}

export type HostRoute = { kind: 'platform' } | { kind: 'store'; storeName: string } | { kind: 'invalid' };

/**
 * Routes a `Host` header: the bare store domain is the platform itself, `{name}.{domain}` is a
 * store; anything else (another domain, nested labels, bad characters) is invalid.
 */
export function routeHost(hostHeader: string | undefined, storeDomain: string): HostRoute {
  if (!hostHeader || hostHeader.length > 300) return { kind: 'invalid' };
  const host = stripPort(hostHeader.toLowerCase());
  if (host === undefined) return { kind: 'invalid' };
  if (host === storeDomain) return { kind: 'platform' };
  const suffix = `.${storeDomain}`;
  if (!host.endsWith(suffix)) return { kind: 'invalid' };
  const name = host.slice(0, -suffix.length);
  return isValidStoreName(name) ? { kind: 'store', storeName: name } : { kind: 'invalid' };
}

function stripPort(host: string): string | undefined {
  const m = /^([a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(host);
  return m ? m[1] : undefined;
}

/** The check apps must apply to a `shop` parameter: one DNS label (letter or digit first), then `.{storeDomain}`. */
export function isValidShopHostname(shop: string, storeDomain: string): boolean {
  const escaped = storeDomain.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^[a-z0-9][a-z0-9-]*\\.${escaped}$`).test(shop);
}

/** A store's hostname, `{name}.{domain}`: the `shop` parameter apps receive and the store's host. */
export function storeHostname(storeName: string, storeDomain: string): string {
  return `${storeName}.${storeDomain}`;
}
