// The shapes of the platform's configuration: what `loadConfig` returns and what the CLI and the
// environment hand it.
export interface Config {
  port: number;
  host: string;
  database: DatabaseConfig;
  /** PostgreSQL's pool size and deadlines (SQLite has one connection and no network). */
  databaseSettings: DatabaseSettings;
  storeDomain: string;
  publicScheme: 'http' | 'https';
  /** Port shown in public URLs (base_url); omitted when it is the scheme's default. */
  publicPort: number;
  redisUrl: string | undefined;
  masterKey: Buffer;
  /** While the master key changes: the key being replaced, still accepted to open secrets. */
  previousMasterKey?: Buffer | undefined;
  mode: 'development' | 'production';
  rateLimit: { bucket: number; perSecond: number } | 'off';
  /**
   * Leaky buckets of the token endpoint, counting the grants of authenticated clients: `client`
   * per client in a store, `store` per store over all its clients; each can be `off`.
   */
  tokenRateLimit: {
    client: { bucket: number; perSecond: number } | 'off';
    store: { bucket: number; perSecond: number } | 'off';
  };
  /**
   * Token introspection requests per resource-server credential (a leaky bucket shared by every
   * store it asks at), or `off`.
   */
  introspectRateLimit: { bucket: number; perSecond: number } | 'off';
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  codeTtlSeconds: number;
  /**
   * How long a rotated-out signing secret (a client secret, a private app's webhook secret) keeps
   * working and signing unless the rotation is finished first (default 24 h).
   */
  secretOverlapMs: number;
  /** scrypt's N for new password hashes (hashes keep the cost they were made at). */
  passwordScryptN: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * json: one JSON object per log line (Fastify's request and response lines). pretty: for a
   * terminal, one readable line per request; the lines themselves are formatted by the caller's
   * log stream.
   */
  logFormat: 'json' | 'pretty';
  webhooks: WebhookConfig;
  httpTimeouts: HttpTimeouts;
  /** How long after an uninstall `shop/redact` is sent to the app (default 48 h). */
  shopRedactDelayMs: number;
  /** Admin API versions on their way out, with the dates their responses announce (unix ms). */
  apiDeprecations: Readonly<Record<string, ApiDeprecation>>;
  /** Counting calls to deprecated versions, brown-outs, and the notice before a sunset. */
  apiHealth: ApiHealthSettings;
  /**
   * Peers (IP addresses, CIDR ranges) whose X-Forwarded-For and X-Forwarded-Proto are believed;
   * empty: none, the socket's peer is the client.
   */
  trustProxy: readonly string[];
  /** Who may read /metrics. */
  metrics: MetricsAccess;
  /** How a node stops on SIGTERM or SIGINT. */
  shutdown: ShutdownConfig;
  /**
   * How long a webhook worker's claim on a delivery lasts (default 30 s). A heartbeat renews it
   * while the worker still holds the delivery, so this is how long a dead worker's deliveries wait.
   */
  webhookClaimLeaseMs: number;
  /**
   * Delivery requests a worker has in flight to one endpoint (an origin: scheme, host and port) at
   * most, default 8 of its 64: a receiver that hangs holds no more than this many.
   */
  webhookEndpointConcurrency: number;
  /** How long a finished bulk export's file is kept before the worker's maintenance round deletes it (default 7 days). */
  bulkExportRetentionMs: number;
  /** Where `storegate worker` serves /metrics and its probes; undefined: nowhere. */
  metricsListener: MetricsListener | undefined;
}

/** Stopping a node without failing the requests and deliveries it already has. */
export interface ShutdownConfig {
  /**
   * After the signal, /readyz answers 503 while the node still serves everything for this long, so
   * a load balancer notices before the listener closes (default 5 s in production, 0 in development).
   */
  drainDelayMs: number;
  /**
   * Once the listener is closed, how long requests in flight and webhook attempts have to finish
   * before their connections are cut and their claims released (default 10 s).
   */
  timeoutMs: number;
}

/** An address and port of the worker's own small HTTP server (0: any free port). */
export interface MetricsListener {
  host: string;
  port: number;
}

/**
 * `/metrics`: behind a bearer token (`--metrics-token`), open (`--metrics-public`, and the default
 * in development), or closed (production without either: 403 naming the flags).
 */
export type MetricsAccess = { kind: 'token'; token: string } | { kind: 'open' } | { kind: 'closed' };

/** Calls to deprecated versions and their brown-outs. */
export interface ApiHealthSettings {
  /**
   * How often a node writes the calls to deprecated versions it counted in memory (default 60 s):
   * one batched upsert per interval instead of a write per request. A shutdown writes the rest.
   */
  usageFlushMs: number;
  /**
   * How long a node serves from its copy of the brown-out schedule before reading it again
   * (default 10 s): a brown-out added or removed takes effect on every node within this.
   */
  brownoutRefreshMs: number;
  /**
   * Days before a version's sunset when `app/api_version_deprecated` goes to the apps that called
   * it within the last as many days (default 30); each app hears it once per version.
   */
  noticeDays: number;
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

/** The PostgreSQL pool: how many connections, and how long a connect and a statement may take. */
export interface DatabaseSettings {
  /** Connections at most per process (default 10). */
  poolSize: number;
  /** The server cancels a statement after this many ms (default 30000; 0: never). */
  statementTimeoutMs: number;
  /** Getting a connection (a free one from the pool, or a new one) fails after this many ms (default 5000). */
  connectTimeoutMs: number;
  /**
   * SQLite: how long a write waits for another process's write lock before it fails (default 5000).
   * A request should fail fast; an administrative command may wait out another process's start.
   */
  sqliteBusyTimeoutMs?: number;
}

export type DatabaseConfig = { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string };

export interface RawConfig {
  apiUsageFlush?: string | number | undefined;
  brownoutRefresh?: string | number | undefined;
  apiNoticeDays?: string | number | undefined;
  port?: string | number | undefined;
  host?: string | undefined;
  database?: string | undefined;
  poolSize?: string | number | undefined;
  dbStatementTimeout?: string | number | undefined;
  dbConnectTimeout?: string | number | undefined;
  storeDomain?: string | undefined;
  publicScheme?: string | undefined;
  publicPort?: string | number | undefined;
  redisUrl?: string | undefined;
  masterKey?: string | undefined;
  previousMasterKey?: string | undefined;
  mode?: string | undefined;
  rateLimit?: string | undefined;
  tokenRateLimit?: string | undefined;
  tokenStoreRateLimit?: string | undefined;
  introspectRateLimit?: string | undefined;
  accessTokenTtl?: string | number | undefined;
  secretOverlap?: string | undefined;
  passwordScryptN?: string | number | undefined;
  logLevel?: string | undefined;
  logFormat?: string | undefined;
  webhookTimeout?: string | number | undefined;
  webhookRetrySchedule?: string | undefined;
  headersTimeout?: string | number | undefined;
  requestTimeout?: string | number | undefined;
  keepAliveTimeout?: string | number | undefined;
  shopRedactDelay?: string | undefined;
  deprecation202201?: string | undefined;
  sunset202201?: string | undefined;
  drainDelay?: string | undefined;
  shutdownTimeout?: string | undefined;
  webhookClaimLease?: string | undefined;
  webhookEndpointConcurrency?: string | number | undefined;
  bulkExportRetention?: string | undefined;
  trustProxy?: string | undefined;
  metricsToken?: string | undefined;
  metricsPublic?: string | boolean | undefined;
  metricsPort?: string | number | undefined;
  metricsHost?: string | undefined;
}
