// createPlatform(config): the one place that builds the platform: storage, services, the webhook
// worker and the HTTP server, each fully constructed. The CLI, the benchmarks, the browser tests
// and the test harness all start the platform through it.
import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Config, ShutdownConfig } from './config.ts';
import { type Clock, systemClock } from './domain/clock.ts';
import { CursorCodec } from './domain/cursor.ts';
import { ConfigError, DatabaseUnavailableError } from './domain/errors.ts';
import { SecretBox } from './domain/secret-box.ts';
import { PasswordHasher } from './domain/password.ts';
import { buildProbeServer } from './http/probe-server.ts';
import { buildHttpServer } from './http/server.ts';
import { gracefulShutdown, type ShutdownReport } from './lifecycle.ts';
import { AccountService } from './services/account-service.ts';
import { ApiHealth } from './services/api-health.ts';
import { BrownoutSchedule } from './services/api-brownouts.ts';
import { ApiUsageCounter } from './services/api-usage.ts';
import { ApiAuthService } from './services/api-auth.ts';
import { AuthenticatedPages } from './services/authenticated-pages.ts';
import { AppWebhooks } from './services/app-webhooks.ts';
import { AppService } from './services/app-service.ts';
import { CredentialPruning } from './services/credential-pruning.ts';
import { BulkExportRun } from './services/bulk-export-run.ts';
import { BulkExports, downloadKey } from './services/bulk-exports.ts';
import { CustomerPrivacy } from './services/customer-privacy.ts';
import { SecretRotations } from './services/secret-rotation.ts';
import { DeliveryLog, LOG_RETENTION_MS } from './services/delivery-log.ts';
import { IdempotentRequests } from './services/idempotency.ts';
import { KeyRotation } from './services/key-rotation.ts';
import { AdminDirectory } from './services/admin-directory-service.ts';
import { MasterKeys } from './services/master-keys.ts';
import { EndpointHealth } from './services/endpoint-health.ts';
import { EventLog } from './services/event-log.ts';
import { LoginThrottle } from './services/login-throttle.ts';
import { PlatformMetrics } from './services/metrics.ts';
import { OAuthService } from './services/oauth-service.ts';
import { LaunchTokens } from './services/launch-tokens.ts';
import { OneTimeReveals } from './services/one-time-reveal.ts';
import { PartnerDeliveries } from './services/partner-deliveries.ts';
import { MemoryRateLimiter, type RateLimiter, RedisRateLimiter } from './services/rate-limiter.ts';
import { GrantLimits } from './services/grant-limits.ts';
import { Readiness } from './services/readiness.ts';
import { ResourceService } from './services/resource-service.ts';
import { ResourceServers } from './services/resource-servers.ts';
import { WebhookSignatureOption } from './services/webhook-signature-option.ts';
import { WebhookSigningKeys } from './services/webhook-signing-keys.ts';
import { SeedService } from './services/seed-service.ts';
import { TokenIntrospection } from './services/token-introspection.ts';
import type { Services } from './services/services.ts';
import { WebhookOutbox } from './services/webhook-outbox.ts';
import { WebhookSubscriptions } from './services/webhook-subscriptions.ts';
import { WebhookRecovery } from './services/webhook-recovery.ts';
import type { Db } from './storage/database.ts';
import type { Storage } from './storage/ports/storage.ts';
import { SqlCredentialPrune } from './storage/repositories/credential-prune.ts';
import { SqlMasterKeyRepository } from './storage/repositories/master-key-repository.ts';
import { openStorage, storageOn } from './storage/sql-storage.ts';
import { WebhookWorker } from './webhooks/webhook-worker.ts';
import { buildWorkerParts } from './webhooks/worker-parts.ts';
import { BulkExportRunner } from './webhooks/bulk-export-runner.ts';
import type { WebhookWorkerOptions } from './webhooks/worker-options.ts';
import { silentLogger, type WorkerLogger } from './webhooks/worker-logger.ts';

export type WorkerSettings = Omit<
  WebhookWorkerOptions,
  'queue' | 'onDeliveriesQueued' | 'box' | 'config' | 'prune' | 'metrics' | 'bulkExports' | 'breakerLog'
>;

export interface PlatformOptions {
  /** Injected time (tests freeze and move it). */
  clock?: Clock;
  /** Where the HTTP server's JSON logs go (default stdout). */
  logStream?: DestinationStream;
  /** Build the HTTP server (default true; administrative commands need only the services). */
  http?: boolean;
  /** Build a webhook delivery worker with these settings (not started; default none). */
  worker?: WorkerSettings;
  /**
   * Build the small server of /healthz, /readyz and /metrics (not listening; default false), for a
   * process without the HTTP server: `storegate worker --metrics-port`.
   */
  probes?: boolean;
  /** Apply pending migrations before anything else (default true). */
  migrate?: boolean;
  /** With `migrate`: the partitioned PostgreSQL layout with this many partitions (storage/partitioning.ts). */
  partitions?: number | undefined;
  /** Database connections on PostgreSQL, in place of `config.databaseSettings.poolSize`. */
  poolSize?: number;
  /** Run on an already open database (tests that share one handle between platforms). */
  db?: Db;
}

export interface Platform {
  config: Config;
  storage: Storage;
  /** The open database handle underneath storage, for tests and tools that inspect it. */
  db: Db;
  services: Services;
  box: SecretBox;
  /** Migrations this start applied (none when built with `migrate: false`). */
  migrated: string[];
  /** The HTTP server (never listening by itself); undefined when built with `http: false`. */
  http: FastifyInstance | undefined;
  worker: WebhookWorker | undefined;
  /** The worker's bulk export runner (started and stopped with it); undefined without a worker. */
  bulkExports: BulkExportRunner | undefined;
  /** The probe and metrics server when built with `probes: true` (never listening by itself). */
  probes: FastifyInstance | undefined;
  /** Stops the worker, closes the HTTP server and the database. */
  close(): Promise<void>;
  /**
   * Stops gracefully (lifecycle.ts): drains, closes the listener, lets requests and webhook
   * attempts finish within the timeout, releases the worker's claims, closes the database.
   * Settings default to `config.shutdown`; phases are logged to the server's log, else to `logger` or the worker's.
   */
  shutdown(options?: Partial<ShutdownConfig> & { logger?: WorkerLogger }): Promise<ShutdownReport>;
}

/** How long start-up waits for Redis before serving from local buckets (it joins when it answers). */
const REDIS_START_WAIT_MS = 2_000;
/** A readiness probe gets its answer within this, even while connecting to the database hangs. */
const READINESS_DEADLINE_MS = 2_000;

/**
 * The buckets of the Admin API and of the token endpoint (one limiter, one connection to Redis);
 * none when every limit is off. Its own size is the Admin API's; the token endpoint passes its own.
 */
async function rateLimiterFor(config: Config, clock: Clock): Promise<RateLimiter | undefined> {
  if (config.rateLimit === 'off' && !GrantLimits.enabled(config.tokenRateLimit) && config.introspectRateLimit === 'off') return undefined;
  // With the Admin API's limit off, its size is never used.
  const { bucket, perSecond } = config.rateLimit === 'off' ? { bucket: 1, perSecond: 1 } : config.rateLimit;
  if (!config.redisUrl) return new MemoryRateLimiter(bucket, perSecond, clock);
  const limiter = new RedisRateLimiter(config.redisUrl, bucket, perSecond, clock);
  await limiter.connected(REDIS_START_WAIT_MS);
  return limiter;
}

/**
 * 'up' when the database answers a ping within the readiness deadline, or when the ping is only
 * queued behind busy connections of a database that answered its last statement (an overloaded
 * node still serves; taking it out would push its load onto the others).
 */
async function databaseStatus(db: Db, ping: () => Promise<void>): Promise<'up' | 'down'> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), READINESS_DEADLINE_MS);
  });
  try {
    const answer = await Promise.race([
      ping().then(
        () => 'up' as const,
        (err) => (err instanceof DatabaseUnavailableError && err.fault === 'pool exhausted' ? ('late' as const) : ('down' as const)),
      ),
      deadline,
    ]);
    if (answer !== 'late') return answer;
    const pool = db.poolStats();
    const busy = pool !== undefined && pool.inUse >= pool.max;
    return busy && db.health.state === 'up' ? 'up' : 'down';
  } finally {
    clearTimeout(timer);
  }
}

export async function createPlatform(config: Config, options: PlatformOptions & { http: false }): Promise<Platform>;
export async function createPlatform(config: Config, options?: PlatformOptions): Promise<Platform & { http: FastifyInstance }>;
export async function createPlatform(config: Config, options: PlatformOptions = {}): Promise<Platform> {
  const storage = options.db
    ? storageOn(options.db)
    : openStorage(config.database, { ...config.databaseSettings, ...(options.poolSize ? { poolSize: options.poolSize } : {}) });
  const clock = options.clock ?? systemClock;
  const box = new SecretBox(config.masterKey, config.previousMasterKey);
  const keyRepo = new SqlMasterKeyRepository(storage.db);
  let keys: MasterKeys;
  let migrated: string[] = [];
  try {
    // A node with the wrong master key stops before it migrates or records anything.
    await MasterKeys.verify(box, keyRepo);
    if (options.migrate !== false) migrated = await storage.migrate({ partitions: options.partitions });
    keys = await MasterKeys.open(box, keyRepo, clock());
  } catch (err) {
    // Built without migrating while the database does not answer (a start during an outage): there
    // is nothing to compare with yet, so it runs on the keys its own master key derives.
    if (options.migrate === false && !(err instanceof ConfigError)) keys = MasterKeys.unchecked(box, keyRepo);
    else {
      await storage.close();
      throw err;
    }
  }
  const cursors = new CursorCodec(keys.cursorKey);
  const readiness = new Readiness();
  readiness.register('database', { required: true, status: () => databaseStatus(storage.db, () => storage.ping()) });
  const rateLimiter = options.http === false ? undefined : await rateLimiterFor(config, clock);
  const metrics = new PlatformMetrics({ readiness, storage: storage.stats, clock, rateLimiter });
  const outbox = new WebhookOutbox(clock, metrics);
  const apps = new AppService(storage, keys, config, clock, outbox);
  const grantLimits =
    rateLimiter && GrantLimits.enabled(config.tokenRateLimit)
      ? new GrantLimits(rateLimiter, config.tokenRateLimit, apps, clock)
      : undefined;
  // Without Redis the node still serves, on its own buckets: not ready is not the right answer.
  if (rateLimiter instanceof RedisRateLimiter)
    readiness.register('redis', { required: false, status: () => (rateLimiter.state() === 'shared' ? 'up' : 'degraded') });
  const rotations = new SecretRotations(storage, keys, config, clock);
  const launchTokens = new LaunchTokens((app) => rotations.clientSigningSecrets(app), clock);
  const apiAuth = new ApiAuthService(storage.tokens, clock, () => storage.changeStamp(), storage.grants);
  const introspectLimits =
    rateLimiter && config.introspectRateLimit !== 'off' ? { limiter: rateLimiter, limit: config.introspectRateLimit } : undefined;
  const signingKeys = new WebhookSigningKeys(storage.signingKeys, keys, clock);
  const passwords = new PasswordHasher(config.passwordScryptN);
  const apiUsage = new ApiUsageCounter(storage.apiHealth, clock, config.apiHealth.usageFlushMs);
  const services: Services = {
    config,
    clock,
    cursors,
    accounts: new AccountService(storage, clock, passwords),
    apps,
    rotations,
    launchTokens,
    oauth: new OAuthService(storage, keys, config, clock, launchTokens),
    apiAuth,
    resourceServers: new ResourceServers(storage.resourceServers, clock),
    apiUsage,
    brownouts: new BrownoutSchedule(storage.apiHealth, clock, config),
    apiHealth: new ApiHealth(storage, config, clock, outbox),
    introspection: new TokenIntrospection(apiAuth, storage.tokens, storage.apps, clock, introspectLimits),
    resources: new ResourceService(storage, clock, outbox, cursors),
    authenticatedPages: new AuthenticatedPages(storage.tokens, apiAuth, cursors),
    customerPrivacy: new CustomerPrivacy(storage, config, clock, outbox),
    rateLimiter: config.rateLimit === 'off' ? undefined : rateLimiter,
    grantLimits,
    subscriptions: new WebhookSubscriptions(storage, config, clock, cursors),
    appWebhooks: new AppWebhooks(storage, config, clock),
    signingKeys,
    webhookSignatures: new WebhookSignatureOption(storage.apps),
    webhookRecovery: new WebhookRecovery(storage, clock),
    idempotency: new IdempotentRequests(storage.idempotency, clock),
    deliveries: new DeliveryLog(storage, clock),
    events: new EventLog(storage, clock, cursors, LOG_RETENTION_MS),
    partnerDeliveries: new PartnerDeliveries(storage.webhooks),
    endpointHealth: new EndpointHealth(storage.endpointHealth, clock),
    loginThrottle: new LoginThrottle(storage.throttles, clock),
    reveals: new OneTimeReveals(storage.reveals, keys, clock),
    keyRotation: new KeyRotation(keyRepo, clock),
    directory: new AdminDirectory(storage.directory, clock, passwords),
    seeds: new SeedService(storage, clock),
    bulkExports: new BulkExports(storage, clock, downloadKey(keys.cursorKey)),
    ping: () => storage.ping(),
    readiness,
    metrics,
  };
  const http = options.http === false ? undefined : await buildHttpServer(services, { logStream: options.logStream });
  // Only a serving node counts calls; its last counts are written before the database closes.
  if (http) apiUsage.start();
  const probes = options.probes ? await buildProbeServer(services) : undefined;
  const stopWatching = http ? watchDependencies(http, storage, rateLimiter) : () => {};
  const credentialPruning = new CredentialPruning(new SqlCredentialPrune(storage.db.kysely, storage.db.dialect), config, clock);
  const bulkRun = new BulkExportRun(storage, outbox, clock);
  const bulkExports = options.worker
    ? new BulkExportRunner({
        run: bulkRun,
        leaseMs: options.worker.leaseMs ?? config.webhookClaimLeaseMs,
        logger: http?.log ?? options.worker.logger ?? silentLogger,
      })
    : undefined;
  const workerOptions: WebhookWorkerOptions | undefined = options.worker
    ? {
        // Beside a server, the worker logs through the server's logger.
        ...(http ? { logger: http.log } : {}),
        clock,
        ...options.worker,
        queue: storage.deliveryQueue,
        breakerLog: storage.endpointHealth,
        onDeliveriesQueued: (listener) => storage.onDeliveriesQueued(listener),
        box,
        config,
        metrics,
        bulkExports,
        signingKeys,
        // The same hourly round drops idempotency keys past their 24 h window, and codes, tokens,
        // sessions and reveals past their last use, and sends the notices before a version's sunset.
        prune: async () => ({
          ...(await services.deliveries.prune(LOG_RETENTION_MS)),
          idempotencyKeys: await services.idempotency.prune(),
          credentials: await credentialPruning.prune(),
          apiVersionNotices: await services.apiHealth.sendNotices(),
          bulkOperations: await bulkRun.prune(clock() - config.bulkExportRetentionMs),
          endpointHealth: await services.endpointHealth.prune(),
          signingKeys: await signingKeys.pruneRetired(),
        }),
      }
    : undefined;
  // The root builds the worker's parts and hands them over; the worker builds none itself.
  const worker = workerOptions ? new WebhookWorker(buildWorkerParts(workerOptions), workerOptions) : undefined;
  // Closing twice (a shutdown, then the caller's own close) closes each part once.
  let storageClosed: Promise<void> | undefined;
  const closeStorage = () => {
    stopWatching();
    storageClosed ??= flushUsage(apiUsage, http).then(() => storage.close());
    return storageClosed;
  };
  return {
    config,
    storage,
    db: storage.db,
    services,
    box,
    migrated,
    http,
    worker,
    bulkExports,
    probes,
    async close() {
      stopWatching();
      await worker?.stop();
      await probes?.close();
      // The server's onClose hook closes the rate limiter; there is none without a server.
      await http?.close();
      await closeStorage();
    },
    shutdown(shutdownOptions = {}) {
      const { logger, ...settings } = shutdownOptions;
      return gracefulShutdown(
        { readiness, http, worker, probes, closeStorage, logger: http?.log ?? logger ?? options.worker?.logger ?? silentLogger },
        { ...config.shutdown, ...settings },
      );
    },
  };
}

/** Writes the calls to deprecated versions still counted in memory; a failure is logged, never thrown. */
async function flushUsage(usage: ApiUsageCounter, http: FastifyInstance | undefined): Promise<void> {
  try {
    await usage.stop();
  } catch (err) {
    http?.log.warn({ err }, 'could not write the last counts of calls to deprecated API versions');
  }
}

/**
 * One log line per change of a dependency's state (not one per request while it lasts): the
 * database going away and coming back, Redis lost (local buckets) and back (shared ones).
 */
function watchDependencies(http: FastifyInstance, storage: Storage & { readonly db: Db }, limiter: RateLimiter | undefined): () => void {
  const log = http.log;
  // Already away while the platform was built (a start during an outage): said once, now.
  if (storage.db.health.state === 'down')
    log.warn({ dependency: 'database', fault: storage.db.health.fault }, 'the database is unavailable: requests that need it answer 503');
  const stops = [
    storage.db.health.onChange((state, fault) => {
      if (state === 'down') log.warn({ dependency: 'database', fault }, 'the database is unavailable: requests that need it answer 503');
      else log.info({ dependency: 'database' }, 'the database is back');
    }),
  ];
  if (limiter instanceof RedisRateLimiter) {
    if (limiter.state() === 'local')
      log.warn({ dependency: 'redis' }, 'Redis does not answer: rate limits are counted on this node alone until it does');
    stops.push(
      limiter.onChange((state, reason) => {
        if (state === 'local')
          log.warn({ dependency: 'redis', reason }, 'Redis is unavailable: rate limits are counted on this node alone until it is back');
        else log.info({ dependency: 'redis' }, 'Redis is back: rate limits are shared again');
      }),
    );
  }
  return () => {
    for (const stop of stops) stop();
  };
}
