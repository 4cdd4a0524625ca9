// The Storage port on Kysely: SQLite (better-sqlite3, the embedded default) or PostgreSQL (pg).
import { sql, type Transaction } from 'kysely';
import type { DatabaseConfig, DatabaseSettings } from '../config.ts';
import { sqliteChangeStamp } from './change-stamp.ts';
import { openDatabase, type Db } from './database.ts';
import { durabilityFor } from './durability.ts';
import { PerGrantTransactions } from './pg-grants.ts';
import { migrateToLatest } from './migrate.ts';
import { queryRunner } from './prepared-query.ts';
import type { Repositories } from './ports/repositories.ts';
import type { Storage } from './ports/storage.ts';
import type { StorageStats } from './ports/storage-stats.ts';
import type { AdminDirectoryRepository } from './ports/admin-directory.ts';
import type { ResourceServerRepository } from './ports/resource-servers.ts';
import type { WebhookSigningKeyRepository } from './ports/webhook-signing-keys.ts';
import { SqlAdminDirectory } from './repositories/admin-directory-repository.ts';
import { SqlApiHealthRepository } from './repositories/api-health-repository.ts';
import { SqlEndpointHealthRepository } from './repositories/endpoint-health-repository.ts';
import { SqlEventLogRepository } from './repositories/event-log-repository.ts';
import { SqlEventPayloadRepository } from './repositories/event-payload-repository.ts';
import { SqlIdempotentAnswerRepository } from './repositories/idempotent-answer-repository.ts';
import { SqlAccountRepository } from './repositories/account-repository.ts';
import { SqlAppRepository } from './repositories/app-repository.ts';
import { SqlAppWebhookRepository } from './repositories/app-webhook-repository.ts';
import { PgBulkRows, SqliteBulkRows } from './repositories/bulk-rows.ts';
import { SqlBulkOperationRepository } from './repositories/bulk-operation-repository.ts';
import { SqlWebhookRecoveryRepository } from './repositories/webhook-recovery-repository.ts';
import { SqlDeliveryQueue } from './repositories/delivery-queue.ts';
import { SqlIdempotencyRepository } from './repositories/idempotency-repository.ts';
import type { Executor } from './repositories/executor.ts';
import { outboxStatements } from './repositories/outbox-statements.ts';
import { preparedStatements, type PreparedStatements } from './repositories/prepared-statements.ts';
import { SqlResourceRepository } from './repositories/resource-repository.ts';
import { SqlResourceServerRepository } from './repositories/resource-server-repository.ts';
import { SqlWebhookSigningKeyRepository } from './repositories/webhook-signing-key-repository.ts';
import { SqlRevealRepository } from './repositories/reveal-repository.ts';
import { SqlSessionRepository } from './repositories/session-repository.ts';
import { SqlStorageStats } from './repositories/storage-stats.ts';
import { SqlThrottleRepository } from './repositories/throttle-repository.ts';
import { SqlTokenRepository } from './repositories/token-repository.ts';
import { SqlWebhookRepository } from './repositories/webhook-repository.ts';
import type { Database } from './schema.ts';
import { SqliteGroupCommit } from './sqlite-group-commit.ts';

/** PostgreSQL's pool size and deadlines; what is left out takes its default. */
export type StorageOptions = Partial<DatabaseSettings>;

// Listeners to "deliveries were queued" per database handle, so that every Storage opened over the
// same handle (and the worker built on any of them) hears about commits made through the others.
const queuedListeners = new WeakMap<Db, Set<() => void>>();

function repositories(x: Executor): Repositories {
  return {
    accounts: new SqlAccountRepository(x),
    sessions: new SqlSessionRepository(x),
    throttles: new SqlThrottleRepository(x),
    reveals: new SqlRevealRepository(x),
    apps: new SqlAppRepository(x),
    tokens: new SqlTokenRepository(x),
    resources: new SqlResourceRepository(x),
    webhooks: new SqlWebhookRepository(x),
    idempotency: new SqlIdempotencyRepository(x),
    events: new SqlEventLogRepository(x),
    eventPayloads: new SqlEventPayloadRepository(x),
    idempotentAnswers: new SqlIdempotentAnswerRepository(x),
    apiHealth: new SqlApiHealthRepository(x),
    endpointHealth: new SqlEndpointHealthRepository(x),
    bulkOperations: new SqlBulkOperationRepository(x),
    appWebhooks: new SqlAppWebhookRepository(x),
    webhookRecovery: new SqlWebhookRecoveryRepository(x),
  };
}

/** Opens the database named by `config` (nothing is migrated until `migrate()`). */
/** Storage as the composition root holds it: the ports, the open handle, and the figures metrics read. */
export type OpenStorage = Storage & {
  readonly db: Db;
  readonly stats: StorageStats;
  readonly directory: AdminDirectoryRepository;
  /** The operator's token introspection clients: platform-wide, outside any store's transaction. */
  readonly resourceServers: ResourceServerRepository;
  /** The platform's webhook signing keys: platform-wide, outside any store's transaction. */
  readonly signingKeys: WebhookSigningKeyRepository;
};

export function openStorage(config: DatabaseConfig, options: StorageOptions = {}): OpenStorage {
  return storageOn(openDatabase(config, options));
}

/** The Storage port over an open database handle. */
export function storageOn(db: Db): OpenStorage {
  const durability = durabilityFor(db.kysely, db.sqlite);
  const prepared: PreparedStatements = preparedStatements(db.kysely);
  const outbox = outboxStatements(db.kysely, db.dialect);
  let listeners = queuedListeners.get(db);
  if (!listeners) queuedListeners.set(db, (listeners = new Set()));
  const notify = () => {
    for (const fn of listeners) fn();
  };
  const executor = (trx: Transaction<Database> | undefined, onQueued: () => void): Executor => ({
    k: trx ?? db.kysely,
    dialect: db.dialect,
    runner: queryRunner(db, trx ? { scope: trx } : {}),
    prepared,
    outbox,
    deliveriesQueued: onQueued,
  });
  const base = repositories(executor(undefined, notify));
  const grants = db.sqlite ? new SqliteGroupCommit(db, durability, prepared) : new PerGrantTransactions(db, prepared);
  const stamp = db.sqlite ? sqliteChangeStamp(db.sqlite, db.writes) : undefined;
  db.onClose(() => durability.close());
  return {
    db,
    stats: new SqlStorageStats(db),
    directory: new SqlAdminDirectory(db.kysely),
    resourceServers: new SqlResourceServerRepository(db.kysely),
    signingKeys: new SqlWebhookSigningKeyRepository(db.kysely),
    ...base,
    grants,
    deliveryQueue: new SqlDeliveryQueue(db, durability),
    bulkRows: db.sqlite ? new SqliteBulkRows(db, durability) : new PgBulkRows(db),
    async transaction<T>(work: (tx: Repositories) => Promise<T>): Promise<T> {
      let queued = false;
      const run = (trx: Transaction<Database>) =>
        work(
          repositories(
            executor(trx, () => {
              queued = true;
            }),
          ),
        );
      const result = await durability.transaction(run);
      if (queued) notify();
      return result;
    },
    changeStamp: () => stamp?.(),
    onDeliveriesQueued(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    async ping() {
      await sql`select 1`.execute(db.kysely);
    },
    migrate: (options) => migrateToLatest(db, options),
    close: () => db.close(),
  };
}
