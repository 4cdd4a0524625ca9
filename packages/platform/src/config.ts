// One validated configuration object for every part of the platform. Flags and environment
// variables (each flag has one) are mapped onto `RawConfig` by the CLI; `loadConfig` checks every
// value once, at start-up, and stops with a clear message.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError } from './domain/errors.ts';
import { storeHostname } from './domain/store-host.ts';
import { DEFAULT_RETRY_SCHEDULE_MS } from './domain/webhook-backoff.ts';

export interface Config {
  port: number;
  host: string;
  database: DatabaseConfig;
  storeDomain: string;
  publicScheme: 'http' | 'https';
  /** Port shown in public URLs (base_url); omitted when it is the scheme's default. */
  publicPort: number;
  redisUrl: string | undefined;
  masterKey: Buffer;
  mode: 'development' | 'production';
  rateLimit: { bucket: number; perSecond: number } | 'off';
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  codeTtlSeconds: number;
  /**
   * How long a rotated-out signing secret (a client secret, a private app's webhook secret) keeps
   * working and signing unless the rotation is finished first (default 24 h).
   */
  secretOverlapMs: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  webhooks: WebhookConfig;
  httpTimeouts: HttpTimeouts;
  /** Admin API versions on their way out, with the dates their responses announce (unix ms). */
  apiDeprecations: Readonly<Record<string, ApiDeprecation>>;
}

/** When a version was deprecated (the `Deprecation` field) and when it stops answering (`Sunset`). */
export interface ApiDeprecation {
  deprecatedAt: number;
  sunsetAt: number;
}

/** How long the HTTP server waits on a client, so a slow or silent one cannot hold a socket for ever. */
export interface HttpTimeouts {
  /** Receiving a request's headers; also how long a new connection may stay silent (default 10 s). */
  headersMs: number;
  /** Receiving a whole request, body included; also how long a socket may go without traffic (default 30 s). */
  requestMs: number;
  /**
   * An idle keep-alive connection is closed after this (default 72 s: longer than the 60 s idle
   * timeout of common proxies and load balancers, so they never reuse a connection being closed).
   */
  keepAliveMs: number;
}

/** Webhook delivery: the deadline of an attempt, the retry schedule, and when a subscription is disabled. */
export interface WebhookConfig {
  /** Whole-request deadline of one delivery attempt (headers and body), default 5000. */
  timeoutMs: number;
  /** Nominal wait before each retry, in ms (19 entries, about 48 h in total by default). */
  retrySchedule: readonly number[];
  /** Consecutive dead deliveries after which a subscription is disabled (default 5). */
  disableAfterDead: number;
}

export type DatabaseConfig = { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string };

export interface RawConfig {
  port?: string | number | undefined;
  host?: string | undefined;
  database?: string | undefined;
  storeDomain?: string | undefined;
  publicScheme?: string | undefined;
  publicPort?: string | number | undefined;
  redisUrl?: string | undefined;
  masterKey?: string | undefined;
  mode?: string | undefined;
  rateLimit?: string | undefined;
  accessTokenTtl?: string | number | undefined;
  secretOverlap?: string | undefined;
  logLevel?: string | undefined;
  webhookTimeout?: string | number | undefined;
  webhookRetrySchedule?: string | undefined;
  headersTimeout?: string | number | undefined;
  requestTimeout?: string | number | undefined;
  keepAliveTimeout?: string | number | undefined;
  deprecation202201?: string | undefined;
  sunset202201?: string | undefined;
}

export const DEFAULT_DATABASE = './data/storegate.db';

/** Reads the platform's environment variables (PORT, DATABASE_URL, ...) into a RawConfig (flags override them). */
export function rawConfigFromEnv(env: NodeJS.ProcessEnv): RawConfig {
  return {
    port: env.PORT,
    host: env.HOST,
    database: env.DATABASE_URL,
    storeDomain: env.STORE_DOMAIN,
    publicScheme: env.PUBLIC_SCHEME,
    publicPort: env.PUBLIC_PORT,
    redisUrl: env.REDIS_URL,
    masterKey: env.MASTER_KEY,
    mode: env.NODE_ENV === 'production' ? 'production' : env.NODE_ENV === 'development' ? 'development' : undefined,
    rateLimit: env.RATE_LIMIT,
    accessTokenTtl: env.ACCESS_TOKEN_TTL,
    secretOverlap: env.SECRET_OVERLAP,
    logLevel: env.LOG_LEVEL,
    webhookTimeout: env.WEBHOOK_TIMEOUT_MS,
    webhookRetrySchedule: env.WEBHOOK_RETRY_SCHEDULE,
    headersTimeout: env.HEADERS_TIMEOUT_MS,
    requestTimeout: env.REQUEST_TIMEOUT_MS,
    keepAliveTimeout: env.KEEP_ALIVE_TIMEOUT_MS,
    deprecation202201: env.DEPRECATION_2022_01,
    sunset202201: env.SUNSET_2022_01,
  };
}

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

function int(name: string, value: string | number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const n = typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ConfigError(`${name}: expected an integer from ${min} to ${max}, got "${value}"`);
  return n;
}

export function parseRateLimit(value: string | undefined): Config['rateLimit'] {
  if (value === undefined || value === '') return { bucket: 40, perSecond: 2 };
  if (value === 'off') return 'off';
  const m = /^(\d+)\/(\d+(?:\.\d+)?)$/.exec(value);
  const bucket = m ? Number(m[1]) : NaN;
  const perSecond = m ? Number(m[2]) : NaN;
  if (!m || bucket < 1 || bucket > 100_000 || !(perSecond > 0) || perSecond > 100_000) {
    throw new ConfigError(`--rate-limit: expected <bucket>/<per-second> such as 40/2, or off; got "${value}"`);
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

/** Master key: 32+ bytes as hex or base64. Generated and kept beside the SQLite file in development. */
function resolveMasterKey(raw: string | undefined, mode: Config['mode'], database: DatabaseConfig): Buffer {
  if (raw !== undefined && raw !== '') {
    const key = /^[0-9a-f]+$/i.test(raw) && raw.length % 2 === 0 ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
    if (key.length < 32) throw new ConfigError('--master-key: must be at least 32 bytes (64 hex characters)');
    return key;
  }
  if (mode === 'production') throw new ConfigError('--master-key (MASTER_KEY) is required in production mode');
  if (database.dialect === 'sqlite' && database.path === ':memory:') return randomBytes(32);
  const dir = database.dialect === 'sqlite' ? dirname(database.path) : resolve('./data');
  const file = resolve(dir, 'master.key');
  if (existsSync(file)) return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  mkdirSync(dir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600 });
  return key;
}

export function loadConfig(raw: RawConfig): Config {
  const mode = raw.mode === undefined || raw.mode === '' ? 'development' : raw.mode;
  if (mode !== 'development' && mode !== 'production') throw new ConfigError(`--mode: expected development or production, got "${mode}"`);
  const storeDomain = (raw.storeDomain ?? 'localhost').toLowerCase();
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(storeDomain)) {
    throw new ConfigError(`--store-domain: not a valid domain name: "${raw.storeDomain}"`);
  }
  const localDomain = storeDomain === 'localhost' || storeDomain.endsWith('.localhost');
  const scheme = raw.publicScheme ?? (localDomain ? 'http' : 'https');
  if (scheme !== 'http' && scheme !== 'https') throw new ConfigError(`--public-scheme: expected http or https, got "${scheme}"`);
  const port = int('--port', raw.port, 8080, 0, 65535);
  const host = raw.host ?? '127.0.0.1';
  if (!/^[0-9a-zA-Z.:-]+$/.test(host)) throw new ConfigError(`--host: not a valid address: "${host}"`);
  const database = parseDatabase(raw.database);
  if (raw.redisUrl !== undefined && raw.redisUrl !== '' && !/^rediss?:\/\/\S+$/.test(raw.redisUrl))
    throw new ConfigError('--redis: expected a redis:// URL');
  const logLevel = raw.logLevel ?? 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel))
    throw new ConfigError(`--log-level: unknown level "${logLevel}"`);
  const httpTimeouts = parseHttpTimeouts(raw);
  const masterKey = resolveMasterKey(raw.masterKey, mode, database);
  // Secure cookies, HSTS and the URLs handed to apps all follow the public scheme.
  if (mode === 'production' && scheme !== 'https') {
    const given = raw.publicScheme === undefined ? ` (the default for the store domain "${storeDomain}")` : '';
    throw new ConfigError(`--public-scheme: production mode serves https only, got "${scheme}"${given}`);
  }
  return {
    port,
    host,
    database,
    storeDomain,
    publicScheme: scheme,
    publicPort: int('--public-port', raw.publicPort, port, 0, 65535),
    redisUrl: raw.redisUrl === '' ? undefined : raw.redisUrl,
    masterKey,
    mode,
    rateLimit: parseRateLimit(raw.rateLimit),
    accessTokenTtlSeconds: int('--access-token-ttl', raw.accessTokenTtl, 3600, 60, 86_400 * 30),
    refreshTokenTtlSeconds: 90 * 86_400,
    codeTtlSeconds: 60,
    secretOverlapMs: parseSecretOverlap(raw.secretOverlap),
    logLevel: logLevel as Config['logLevel'],
    webhooks: {
      timeoutMs: int('--webhook-timeout', raw.webhookTimeout, 5000, 50, 60_000),
      retrySchedule: parseRetrySchedule(raw.webhookRetrySchedule),
      disableAfterDead: 5,
    },
    httpTimeouts,
    apiDeprecations: { '2022-01': parseDeprecation('2022-01', raw.deprecation202201, raw.sunset202201) },
  };
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
      `--sunset-${version}: must not be earlier than --deprecation-${version} (${new Date(deprecatedAt).toISOString()}), got ${new Date(sunsetAt).toISOString()}`,
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

/** The public origin of a store, e.g. http://demo.localhost:8080 */
export function storeBaseUrl(config: Pick<Config, 'publicScheme' | 'storeDomain' | 'publicPort'>, storeName: string): string {
  return `${config.publicScheme}://${storeHostname(storeName, config.storeDomain)}${portSuffix(config)}`;
}

export function platformBaseUrl(config: Pick<Config, 'publicScheme' | 'storeDomain' | 'publicPort'>): string {
  return `${config.publicScheme}://${config.storeDomain}${portSuffix(config)}`;
}

function portSuffix(config: Pick<Config, 'publicScheme' | 'publicPort'>): string {
  const dflt = config.publicScheme === 'https' ? 443 : 80;
  return config.publicPort === dflt || config.publicPort === 0 ? '' : `:${config.publicPort}`;
}
