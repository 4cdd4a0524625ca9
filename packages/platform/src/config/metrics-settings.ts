// Who may read /metrics. The numbers name no customer, but they do tell an outsider how busy the
// platform is, which apps fail and when a dependency is down, so production keeps them closed
// unless the operator hands out a bearer token or says the port is private anyway.
import { ConfigError } from '../domain/errors.ts';
import type { MetricsAccess, RawConfig } from './types.ts';

// The characters of an OAuth bearer token (b64token), so any generated token fits a header as is.
const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

export function parseMetricsAccess(
  raw: Pick<RawConfig, 'metricsToken' | 'metricsPublic'>,
  mode: 'development' | 'production',
): MetricsAccess {
  const token = raw.metricsToken === undefined || raw.metricsToken === '' ? undefined : raw.metricsToken;
  const open = parseFlag('--metrics-public', raw.metricsPublic);
  if (token !== undefined) {
    if (open) throw new ConfigError('--metrics-public: cannot be combined with --metrics-token (a token would protect nothing)');
    // The value is never echoed: it is a secret even when it is malformed.
    if (token.length < 16 || token.length > 512 || !TOKEN.test(token))
      throw new ConfigError('--metrics-token: expected 16 to 512 characters of letters, digits and -._~+/ (e.g. `openssl rand -hex 32`)');
    return { kind: 'token', token };
  }
  if (open || mode === 'development') return { kind: 'open' };
  return { kind: 'closed' };
}

function parseFlag(name: string, value: string | boolean | undefined): boolean {
  if (value === undefined || value === '' || value === false) return false;
  if (value === true) return true;
  const v = value.toLowerCase();
  if (v === 'true' || v === '1' || v === 'yes') return true;
  if (v === 'false' || v === '0' || v === 'no') return false;
  throw new ConfigError(`${name}: expected true or false, got "${value.slice(0, 20)}"`);
}
