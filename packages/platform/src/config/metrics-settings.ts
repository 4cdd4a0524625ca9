// Who may read /metrics. The numbers name no customer, but they do tell an outsider how busy the
// platform is, which apps fail and when a dependency is down, so production keeps them closed
// unless the operator hands out a bearer token or says the port is private anyway.
import { isIP } from 'node:net';
import { ConfigError } from '../domain/errors.ts';
import type { MetricsAccess, MetricsListener, RawConfig } from './types.ts';

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

/**
 * `--metrics-port` (and `--metrics-host`, default 127.0.0.1): where `storegate worker` serves
 * /metrics, /healthz and /readyz; none without a port (the worker then listens nowhere).
 */
export function parseMetricsListener(raw: Pick<RawConfig, 'metricsPort' | 'metricsHost'>): MetricsListener | undefined {
  const given = raw.metricsPort !== undefined && raw.metricsPort !== '';
  const host = raw.metricsHost === undefined || raw.metricsHost === '' ? undefined : raw.metricsHost;
  if (!given) {
    if (host !== undefined) throw new ConfigError('--metrics-host: needs --metrics-port');
    return undefined;
  }
  const text = String(raw.metricsPort);
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(port >= 0 && port <= 65535)) throw new ConfigError(`--metrics-port: expected a port from 0 to 65535, got "${text.slice(0, 20)}"`);
  if (host !== undefined && isIP(host) === 0)
    throw new ConfigError(`--metrics-host: expected an IP address to listen on, such as 127.0.0.1 or 0.0.0.0, got "${host.slice(0, 60)}"`);
  return { host: host ?? '127.0.0.1', port };
}
