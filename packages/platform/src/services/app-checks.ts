// The rules of an app's URLs and of a private app's name and scopes, shared by the forms and the CLI.
import type { Config } from '../config.ts';
import { isLocalHostname } from '../domain/ssrf.ts';
import { ScopeParseError } from '../domain/errors.ts';
import { parseScopes, type Scope } from '../domain/scopes.ts';

/**
 * App URL and redirect URL rules: an absolute http(s) URL without `#` (the platform appends the
 * code and the signed parameters as a query, and a fragment would hide them from the server) and
 * without credentials; https required in production except for loopback and `*.localhost`.
 */
export function checkAppUrl(value: string | undefined, mode: Config['mode']): string | undefined {
  if (!value) return 'is required';
  if (value.length > 2000) return 'must be at most 2000 characters';
  if (value.includes('#')) return 'must not contain "#"';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not contain credentials';
  if (url.protocol === 'http:' && mode === 'production' && !isLocalHostname(url.hostname))
    return 'must use https (http is allowed only for localhost and loopback)';
  return undefined;
}

/** A private app's name and scopes, checked: field → messages (empty when valid). */
export function checkPrivateApp(input: { name: string; scopes: string }): {
  errors: Record<string, string[]>;
  name: string;
  scopes: Scope[];
} {
  const errors: Record<string, string[]> = {};
  const name = input.name?.trim() ?? '';
  if (name.length < 1 || name.length > 100) errors.name = ['must be 1 to 100 characters'];
  let scopes: Scope[] = [];
  try {
    scopes = parseScopes(input.scopes ?? '');
    if (scopes.length === 0) errors.scopes = ['choose at least one scope'];
  } catch (err) {
    if (!(err instanceof ScopeParseError)) throw err;
    errors.scopes = [err.message];
  }
  return { errors, name, scopes };
}
