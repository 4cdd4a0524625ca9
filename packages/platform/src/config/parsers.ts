// Parsing and checking of single settings; each failure names its flag.
import { resolve } from 'node:path';
import { ConfigError } from '../domain/errors.ts';
import { DEFAULT_SCRYPT_N } from '../domain/password.ts';
import { DEFAULT_RETRY_SCHEDULE_MS } from '../domain/webhook-backoff.ts';
import type { ApiDeprecation, Config, DatabaseConfig, HttpTimeouts, RawConfig } from './types.ts';

export const DEFAULT_DATABASE = './data/storegate.db';

export function parseDatabase(value: string | undefined): DatabaseConfig {
  const v = value && value.trim() !== '' ? value.trim() : DEFAULT_DATABASE;
  if (/^postgres(ql)?:\/\//.test(v)) {
    try {
      new URL(v);
    } catch {
      throw new ConfigError('--database: not a valid postgres:// URL');
    }
    return { dialect: 'postgres', url: v };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v))
    throw new ConfigError(`--database: unsupported scheme; use a file path (SQLite) or a postgres:// URL`);
  return { dialect: 'sqlite', path: v === ':memory:' ? v : resolve(v) };
}

export function int(name: string, value: string | number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const n = typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ConfigError(`${name}: expected an integer from ${min} to ${max}, got "${value}"`);
  return n;
}

export function parseRateLimit(value: string | undefined): Config['rateLimit'] {
  return parseBucketLimit('--rate-limit', value, { bucket: 40, perSecond: 2 });
}

/**
 * Token grants a client may ask for in one store: a burst of 20, then one a second. An app needs
 * one grant an hour per token family; this leaves room for retries and for many workers
 * refreshing at once, and stops a loop that asks without end.
 */
export const DEFAULT_TOKEN_RATE_LIMIT = { bucket: 20, perSecond: 1 } as const;
/** Token grants of every client of one store together: five clients at their full rate. */
export const DEFAULT_TOKEN_STORE_RATE_LIMIT = { bucket: 100, perSecond: 5 } as const;

/** `--token-rate-limit` (per client in a store) and `--token-store-rate-limit` (per store, all clients). */
export function parseTokenRateLimits(raw: Pick<RawConfig, 'tokenRateLimit' | 'tokenStoreRateLimit'>): Config['tokenRateLimit'] {
  return {
    client: parseBucketLimit('--token-rate-limit', raw.tokenRateLimit, DEFAULT_TOKEN_RATE_LIMIT),
    store: parseBucketLimit('--token-store-rate-limit', raw.tokenStoreRateLimit, DEFAULT_TOKEN_STORE_RATE_LIMIT),
  };
}

/**
 * Token introspection per resource-server credential: a burst of 300, then 5 a second (300 a
 * minute). A resource server that asks once per request it serves and keeps no cache hits it; one
 * that caches answers for their lifetime never comes near.
 */
export const DEFAULT_INTROSPECT_RATE_LIMIT = { bucket: 300, perSecond: 5 } as const;

export function parseIntrospectRateLimit(value: string | undefined): Config['introspectRateLimit'] {
  return parseBucketLimit('--introspect-rate-limit', value, DEFAULT_INTROSPECT_RATE_LIMIT);
}

/** A leaky bucket written `<bucket>/<per-second>` (such as 40/2), or `off`. */
function parseBucketLimit(
  flag: string,
  value: string | undefined,
  fallback: { bucket: number; perSecond: number },
): { bucket: number; perSecond: number } | 'off' {
  if (value === undefined || value === '') return { ...fallback };
  if (value === 'off') return 'off';
  const m = /^(\d+)\/(\d+(?:\.\d+)?)$/.exec(value);
  const bucket = m ? Number(m[1]) : NaN;
  const perSecond = m ? Number(m[2]) : NaN;
  if (!m || bucket < 1 || bucket > 100_000 || !(perSecond > 0) || perSecond > 100_000) {
    throw new ConfigError(
      `${flag}: expected <bucket>/<per-second> such as ${fallback.bucket}/${fallback.perSecond}, or off; got "${value.slice(0, 40)}"`,
    );
  }
  return { bucket, perSecond };
}

export function parseHttpTimeouts(raw: Pick<RawConfig, 'headersTimeout' | 'requestTimeout' | 'keepAliveTimeout'>): HttpTimeouts {
  const requestMs = int('--request-timeout', raw.requestTimeout, 30_000, 100, 600_000);
  const headersMs = int('--headers-timeout', raw.headersTimeout, Math.min(10_000, requestMs), 100, 600_000);
  // The whole request includes its headers (Node refuses the other way round).
  if (headersMs > requestMs)
    throw new ConfigError(`--headers-timeout: must not be longer than --request-timeout (${requestMs} ms), got ${headersMs} ms`);
  return { headersMs, requestMs, keepAliveMs: int('--keep-alive-timeout', raw.keepAliveTimeout, 72_000, 100, 600_000) };
}

export const DEFAULT_SHOP_REDACT_DELAY_MS = 48 * 3_600_000;

/** `--shop-redact-delay`: a wait such as `48h`, `30m`, `90s` or `0` (a bare number is milliseconds), at most 30 days. */
export function parseShopRedactDelay(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return DEFAULT_SHOP_REDACT_DELAY_MS;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const m = /^(\d{1,10})(ms|s|m|h|d)?$/.exec(value.trim());
  const ms = m ? Number(m[1]) * units[m[2] ?? 'ms']! : NaN;
  if (!m || ms > 30 * 86_400_000)
    throw new ConfigError(`--shop-redact-delay: expected a wait from 0 to 30 days such as "48h", "30m" or "90s", got "${value}"`);
  return ms;
}

/**
 * Version 2022-01 (the older pagination convention) is deprecated: it has been since 2025-06 brought
 * the newer one, and by default it is announced to end on 2027-06-01, two years later.
 */
export const DEFAULT_2022_01_DEPRECATION = { deprecatedAt: Date.UTC(2025, 5, 1), sunsetAt: Date.UTC(2027, 5, 1) } as const;

/** A date flag: `2027-06-01` (midnight UTC) or a UTC time `2027-06-01T12:00:00Z`. */
function parseDate(flag: string, value: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2})Z)?$/.exec(value.trim());
  const iso = m ? `${m[1]}-${m[2]}-${m[3]}T${m[4] ?? '00'}:${m[5] ?? '00'}:${m[6] ?? '00'}.000Z` : '';
  const ms = m ? Date.parse(iso) : Number.NaN;
  // Date.parse may roll 2027-02-30 over into March: a value that does not come back unchanged was no date.
  if (Number.isNaN(ms) || new Date(ms).toISOString() !== iso || ms < Date.UTC(2000, 0, 1))
    throw new ConfigError(`${flag}: expected a date such as 2027-06-01 or 2027-06-01T00:00:00Z, got "${value.slice(0, 40)}"`);
  return ms;
}

export function parseDeprecation(version: string, deprecation: string | undefined, sunset: string | undefined): ApiDeprecation {
  const deprecatedAt =
    deprecation === undefined || deprecation === ''
      ? DEFAULT_2022_01_DEPRECATION.deprecatedAt
      : parseDate(`--deprecation-${version}`, deprecation);
  const sunsetAt = sunset === undefined || sunset === '' ? DEFAULT_2022_01_DEPRECATION.sunsetAt : parseDate(`--sunset-${version}`, sunset);
  // A version cannot stop answering before it was announced as deprecated.
  if (sunsetAt < deprecatedAt)
    throw new ConfigError(
      `--sunset-${version}: must not be earlier than --deprecation-${version} (${new Date(deprecatedAt).toISOString()}), ` +
        `got ${new Date(sunsetAt).toISOString()}`,
    );
  return { deprecatedAt, sunsetAt };
}

/**
 * `--webhook-retry-schedule`: comma-separated waits such as `100ms,1s,5m,2h` (a bare number is
 * milliseconds), 1 to 50 entries; the default is the 19 retries of about 48 h (domain/webhook-backoff.ts).
 */
export function parseRetrySchedule(value: string | undefined): readonly number[] {
  if (value === undefined || value.trim() === '') return DEFAULT_RETRY_SCHEDULE_MS;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const parts = value.split(',').map((p) => p.trim());
  const out: number[] = [];
  for (const part of parts) {
    const m = /^(\d{1,9})(ms|s|m|h)?$/.exec(part);
    if (!m) throw new ConfigError(`--webhook-retry-schedule: expected waits such as "100ms,1s,5m,2h", got "${part}"`);
    const ms = Number(m[1]) * units[m[2] ?? 'ms']!;
    if (ms < 1 || ms > 7 * 86_400_000)
      throw new ConfigError(`--webhook-retry-schedule: each wait must be from 1 ms to 7 days, got "${part}"`);
    out.push(ms);
  }
  if (out.length > 50) throw new ConfigError('--webhook-retry-schedule: at most 50 retries');
  return out;
}

export const DEFAULT_BULK_EXPORT_RETENTION_MS = 7 * 86_400_000;

/**
 * `--bulk-export-retention`: how long a finished export's file is kept, a duration such as `12h`
 * or `7d`, from 1 hour (an app needs time to fetch it) to 90 days (the files are copies of store
 * data, not an archive).
 */
export function parseBulkExportRetention(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return DEFAULT_BULK_EXPORT_RETENTION_MS;
  const units: Record<string, number> = { h: 3_600_000, d: 86_400_000 };
  const m = /^(\d{1,6})(h|d)$/.exec(value.trim());
  if (!m) throw new ConfigError(`--bulk-export-retention: expected a duration such as 12h or 7d, got "${value}"`);
  const ms = Number(m[1]) * units[m[2]!]!;
  if (ms < 3_600_000 || ms > 90 * 86_400_000)
    throw new ConfigError(`--bulk-export-retention: must be from 1 hour to 90 days, got "${value}"`);
  return ms;
}

export const DEFAULT_SECRET_OVERLAP_MS = 24 * 3_600_000;

/**
 * `--secret-overlap`: one duration with its unit, `30m`, `24h`, `7d` (also `s`), from 1 minute to 30
 * days. Shorter would not leave an app time to deploy; longer keeps a replaced secret alive for
 * too long.
 */
export function parseSecretOverlap(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return DEFAULT_SECRET_OVERLAP_MS;
  const units: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const m = /^(\d{1,9})(s|m|h|d)$/.exec(value.trim());
  if (!m) throw new ConfigError(`--secret-overlap: expected a duration such as 30m, 24h or 7d, got "${value}"`);
  const ms = Number(m[1]) * units[m[2]!]!;
  if (ms < 60_000 || ms > 30 * 86_400_000) throw new ConfigError(`--secret-overlap: must be from 1 minute to 30 days, got "${value}"`);
  return ms;
}

/**
 * `--password-scrypt-n`: the scrypt cost of new password hashes, a power of two from 2^10 to 2^20
 * (default 2^15). Production mode refuses less than the default: a cheaper hash is cheaper to
 * guess too. A lower cost is for development machines and test runs, where thousands of stores and
 * partners are created and each hash at the default costs a tenth of a second of CPU.
 */
export function parsePasswordScryptN(value: string | number | undefined, mode: 'development' | 'production'): number {
  if (value === undefined || String(value).trim() === '') return DEFAULT_SCRYPT_N;
  const text = String(value).trim();
  const n = /^\d{1,8}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 << 10 || n > 1 << 20 || (n & (n - 1)) !== 0)
    throw new ConfigError(`--password-scrypt-n: expected a power of two from 1024 to 1048576, got "${text.slice(0, 20)}"`);
  if (mode === 'production' && n < DEFAULT_SCRYPT_N)
    throw new ConfigError(`--password-scrypt-n: production mode needs at least ${DEFAULT_SCRYPT_N}, got ${n}`);
  return n;
}
