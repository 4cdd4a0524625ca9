// One validated configuration object (PRODUCT.md §2). Flags and environment variables are mapped
// onto `RawConfig` by the CLI; `loadConfig` checks every value once and stops with a clear message.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError } from './errors.ts';

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
  refreshGraceSeconds: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
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
  refreshGrace?: string | number | undefined;
  logLevel?: string | undefined;
}

export const DEFAULT_DATABASE = './data/storegate.db';

/** Reads the environment variables of PRODUCT.md §2 into a RawConfig (flags override them). */
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
    refreshGrace: env.REFRESH_GRACE,
    logLevel: env.LOG_LEVEL,
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
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) throw new ConfigError(`--database: unsupported scheme; use a file path (SQLite) or a postgres:// URL`);
  return { dialect: 'sqlite', path: v === ':memory:' ? v : resolve(v) };
}

function int(name: string, value: string | number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const n = typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${name}: expected an integer from ${min} to ${max}, got "${value}"`);
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
  writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600 });
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
  if (raw.redisUrl !== undefined && raw.redisUrl !== '' && !/^rediss?:\/\/\S+$/.test(raw.redisUrl)) throw new ConfigError('--redis: expected a redis:// URL');
  const logLevel = raw.logLevel ?? 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) throw new ConfigError(`--log-level: unknown level "${logLevel}"`);
  return {
    port,
    host,
    database,
    storeDomain,
    publicScheme: scheme,
    publicPort: int('--public-port', raw.publicPort, port, 0, 65535),
    redisUrl: raw.redisUrl === '' ? undefined : raw.redisUrl,
    masterKey: resolveMasterKey(raw.masterKey, mode, database),
    mode,
    rateLimit: parseRateLimit(raw.rateLimit),
    accessTokenTtlSeconds: int('--access-token-ttl', raw.accessTokenTtl, 3600, 60, 86_400 * 30),
    refreshTokenTtlSeconds: 90 * 86_400,
    codeTtlSeconds: 60,
    refreshGraceSeconds: int('--refresh-grace', raw.refreshGrace, 30, 0, 600),
    logLevel: logLevel as Config['logLevel'],
  };
}

/** The public origin of a store, e.g. http://demo.localhost:8080 */
export function storeBaseUrl(config: Pick<Config, 'publicScheme' | 'storeDomain' | 'publicPort'>, storeName: string): string {
  return `${config.publicScheme}://${storeName}.${config.storeDomain}${portSuffix(config)}`;
}

export function platformBaseUrl(config: Pick<Config, 'publicScheme' | 'storeDomain' | 'publicPort'>): string {
  return `${config.publicScheme}://${config.storeDomain}${portSuffix(config)}`;
}

function portSuffix(config: Pick<Config, 'publicScheme' | 'publicPort'>): string {
  const dflt = config.publicScheme === 'https' ? 443 : 80;
  return config.publicPort === dflt || config.publicPort === 0 ? '' : `:${config.publicPort}`;
}
