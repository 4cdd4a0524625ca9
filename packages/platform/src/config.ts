// One validated configuration object for every part of the platform. Flags and environment
// variables (each flag has one) are mapped onto `RawConfig` by the CLI; `loadConfig` checks every
// value once, at start-up, and stops with a clear message. Single settings are parsed in
// config/parsers.ts; the types live in config/types.ts.
import { ConfigError } from './domain/errors.ts';
import { storeHostname } from './domain/store-host.ts';
import { resolveMasterKey, resolvePreviousMasterKey } from './config/master-key.ts';
import {
  int,
  parseDatabase,
  parseDeprecation,
  parseHttpTimeouts,
  parseRateLimit,
  parseRetrySchedule,
  parseBulkExportRetention,
  parsePasswordScryptN,
  parseSecretOverlap,
  parseShopRedactDelay,
  parseTokenRateLimits,
  parseIntrospectRateLimit,
} from './config/parsers.ts';
import { parseClaimLease, parseShutdown } from './config/lifecycle-settings.ts';
import { parseMetricsAccess, parseMetricsListener } from './config/metrics-settings.ts';
import { parseTrustProxy } from './config/proxy-settings.ts';
import type { Config, RawConfig } from './config/types.ts';
import { parseDatabaseSettings } from './config/database-settings.ts';
import { parseApiHealthSettings } from './config/api-health-settings.ts';

export type {
  ApiDeprecation,
  ApiHealthSettings,
  Config,
  DatabaseConfig,
  DatabaseSettings,
  HttpTimeouts,
  MetricsAccess,
  MetricsListener,
  RawConfig,
  ShutdownConfig,
  WebhookConfig,
} from './config/types.ts';
export { parseMetricsAccess } from './config/metrics-settings.ts';
export { parseTrustProxy } from './config/proxy-settings.ts';
export {
  DEFAULT_CLAIM_LEASE_MS,
  DEFAULT_DRAIN_DELAY_MS,
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
  parseClaimLease,
  parseShutdown,
} from './config/lifecycle-settings.ts';
export {
  DEFAULT_2022_01_DEPRECATION,
  DEFAULT_DATABASE,
  DEFAULT_SECRET_OVERLAP_MS,
  DEFAULT_SHOP_REDACT_DELAY_MS,
  DEFAULT_TOKEN_RATE_LIMIT,
  DEFAULT_TOKEN_STORE_RATE_LIMIT,
  parseDatabase,
  parseDeprecation,
  parseHttpTimeouts,
  parseRateLimit,
  parseRetrySchedule,
  parseSecretOverlap,
  parseShopRedactDelay,
  parseTokenRateLimits,
  parseIntrospectRateLimit,
} from './config/parsers.ts';
export { parseDatabaseSettings } from './config/database-settings.ts';

/** Reads the platform's environment variables (PORT, DATABASE_URL, ...) into a RawConfig (flags override them). */
export function rawConfigFromEnv(env: NodeJS.ProcessEnv): RawConfig {
  return {
    port: env.PORT,
    host: env.HOST,
    database: env.DATABASE_URL,
    poolSize: env.DB_POOL_SIZE,
    dbStatementTimeout: env.DB_STATEMENT_TIMEOUT_MS,
    dbConnectTimeout: env.DB_CONNECT_TIMEOUT_MS,
    storeDomain: env.STORE_DOMAIN,
    publicScheme: env.PUBLIC_SCHEME,
    publicPort: env.PUBLIC_PORT,
    redisUrl: env.REDIS_URL,
    masterKey: env.MASTER_KEY,
    previousMasterKey: env.PREVIOUS_MASTER_KEY,
    mode: env.NODE_ENV === 'production' ? 'production' : env.NODE_ENV === 'development' ? 'development' : undefined,
    rateLimit: env.RATE_LIMIT,
    tokenRateLimit: env.TOKEN_RATE_LIMIT,
    tokenStoreRateLimit: env.TOKEN_STORE_RATE_LIMIT,
    introspectRateLimit: env.INTROSPECT_RATE_LIMIT,
    accessTokenTtl: env.ACCESS_TOKEN_TTL,
    secretOverlap: env.SECRET_OVERLAP,
    passwordScryptN: env.PASSWORD_SCRYPT_N,
    logLevel: env.LOG_LEVEL,
    webhookTimeout: env.WEBHOOK_TIMEOUT_MS,
    webhookRetrySchedule: env.WEBHOOK_RETRY_SCHEDULE,
    headersTimeout: env.HEADERS_TIMEOUT_MS,
    requestTimeout: env.REQUEST_TIMEOUT_MS,
    keepAliveTimeout: env.KEEP_ALIVE_TIMEOUT_MS,
    shopRedactDelay: env.SHOP_REDACT_DELAY,
    deprecation202201: env.DEPRECATION_2022_01,
    sunset202201: env.SUNSET_2022_01,
    apiUsageFlush: env.API_USAGE_FLUSH_MS,
    brownoutRefresh: env.BROWNOUT_REFRESH_MS,
    apiNoticeDays: env.API_NOTICE_DAYS,
    drainDelay: env.DRAIN_DELAY,
    shutdownTimeout: env.SHUTDOWN_TIMEOUT,
    webhookClaimLease: env.WEBHOOK_CLAIM_LEASE,
    webhookEndpointConcurrency: env.WEBHOOK_ENDPOINT_CONCURRENCY,
    bulkExportRetention: env.BULK_EXPORT_RETENTION,
    trustProxy: env.TRUST_PROXY,
    metricsToken: env.METRICS_TOKEN,
    metricsPublic: env.METRICS_PUBLIC,
    metricsPort: env.METRICS_PORT,
    metricsHost: env.METRICS_HOST,
  };
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
  const databaseSettings = parseDatabaseSettings(raw);
  if (raw.redisUrl !== undefined && raw.redisUrl !== '' && !/^rediss?:\/\/\S+$/.test(raw.redisUrl))
    throw new ConfigError('--redis: expected a redis:// URL');
  const logLevel = raw.logLevel ?? 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel))
    throw new ConfigError(`--log-level: unknown level "${logLevel}"`);
  const logFormat = raw.logFormat ?? 'json';
  if (logFormat !== 'json' && logFormat !== 'pretty')
    throw new ConfigError(`--log-format: expected pretty or json, got "${logFormat.slice(0, 20)}"`);
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
    databaseSettings,
    storeDomain,
    publicScheme: scheme,
    publicPort: int('--public-port', raw.publicPort, port, 0, 65535),
    redisUrl: raw.redisUrl === '' ? undefined : raw.redisUrl,
    masterKey,
    previousMasterKey: resolvePreviousMasterKey(raw.previousMasterKey),
    mode,
    rateLimit: parseRateLimit(raw.rateLimit),
    tokenRateLimit: parseTokenRateLimits(raw),
    introspectRateLimit: parseIntrospectRateLimit(raw.introspectRateLimit),
    accessTokenTtlSeconds: int('--access-token-ttl', raw.accessTokenTtl, 3600, 60, 86_400 * 30),
    refreshTokenTtlSeconds: 90 * 86_400,
    codeTtlSeconds: 60,
    secretOverlapMs: parseSecretOverlap(raw.secretOverlap),
    passwordScryptN: parsePasswordScryptN(raw.passwordScryptN, mode),
    logLevel: logLevel as Config['logLevel'],
    logFormat,
    webhooks: {
      timeoutMs: int('--webhook-timeout', raw.webhookTimeout, 5000, 50, 60_000),
      retrySchedule: parseRetrySchedule(raw.webhookRetrySchedule),
      disableAfterDead: 5,
    },
    httpTimeouts,
    shopRedactDelayMs: parseShopRedactDelay(raw.shopRedactDelay),
    apiDeprecations: { '2022-01': parseDeprecation('2022-01', raw.deprecation202201, raw.sunset202201) },
    apiHealth: parseApiHealthSettings(raw),
    shutdown: parseShutdown(raw, mode),
    webhookClaimLeaseMs: parseClaimLease(raw.webhookClaimLease),
    // At most the 64 requests a worker has in flight over all endpoints.
    webhookEndpointConcurrency: int('--webhook-endpoint-concurrency', raw.webhookEndpointConcurrency, 8, 1, 64),
    bulkExportRetentionMs: parseBulkExportRetention(raw.bulkExportRetention),
    trustProxy: parseTrustProxy(raw.trustProxy),
    metrics: parseMetricsAccess(raw, mode),
    metricsListener: parseMetricsListener(raw),
  };
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
