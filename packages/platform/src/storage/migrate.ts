// Runs the dated migrations in order (Kysely's Migrator keeps its own bookkeeping tables).
import { type Kysely, Migrator, sql, type Migration, type MigrationProvider } from 'kysely';
import type { DialectMigration, MigrationDialect } from './migration-dialect.ts';
import { databaseFault } from './database-faults.ts';
import type { Db } from './database.ts';
import type { Database } from './schema.ts';
import { checkPartitionRequest, partitionStoreTables } from './partitioning.ts';
import * as initial from './migrations/2026-11-22T00-initial.ts';
import * as webhookSubscriptions from './migrations/2026-11-22T01-webhook-subscriptions.ts';
import * as webhookDeliveries from './migrations/2026-11-22T02-webhook-deliveries.ts';
import * as webhookOutboxIndexes from './migrations/2026-11-22T03-webhook-outbox-indexes.ts';
import * as loginAttemptsAndReveals from './migrations/2026-11-22T04-login-attempts-and-reveals.ts';
import * as authorizationIss from './migrations/2026-11-24T06-authorization-iss.ts';
import * as uniqueCustomerEmail from './migrations/2026-11-23T00-unique-customer-email.ts';
import * as shopProfile from './migrations/2026-11-24T00-shop-profile.ts';
import * as refreshSuccessors from './migrations/2026-11-24T01-refresh-successors.ts';
import * as secretRotation from './migrations/2026-11-24T02-secret-rotation.ts';
import * as idempotencyKeys from './migrations/2026-11-24T03-idempotency-keys.ts';
import * as privacyWebhooks from './migrations/2026-11-24T04-privacy-webhooks.ts';
import * as eventsIndex from './migrations/2026-11-24T05-events-index.ts';
import * as masterKeyCheck from './migrations/2026-11-24T07-master-key-check.ts';
import * as storeKeysetIndexes from './migrations/2026-11-24T08-store-keyset-indexes.ts';
import * as storeRoutedTokens from './migrations/2026-11-24T12-store-routed-tokens.ts';
import * as storeRoutedWebhooks from './migrations/2026-11-24T13-store-routed-webhooks.ts';
import * as listTimeIndexes from './migrations/2026-11-26T00-list-time-indexes.ts';
import * as credentialPruneIndexes from './migrations/2026-11-26T01-credential-prune-indexes.ts';
import * as deliveryBacklogIndex from './migrations/2026-11-26T02-delivery-backlog-index.ts';
import * as idempotencyResource from './migrations/2026-11-26T04-idempotency-resource.ts';
import * as launchTokensAndOnlineAccess from './migrations/2026-11-27T00-launch-tokens-and-online-access.ts';
import * as resourceServers from './migrations/2026-11-27T01-resource-servers.ts';
import * as productTitleIndex from './migrations/2026-11-27T02-product-title-index.ts';
import * as recordVersions from './migrations/2026-11-27T05-record-versions.ts';
import * as apiHealth from './migrations/2026-11-28T00-api-health.ts';
import * as bulkOperations from './migrations/2026-11-28T01-bulk-operations.ts';
import * as bulkAttempts from './migrations/2026-11-28T02-bulk-attempts.ts';
import * as subscriptionFilters from './migrations/2026-11-29T00-subscription-filters.ts';
import * as appWebhookSubscriptions from './migrations/2026-11-29T01-app-webhook-subscriptions.ts';
import * as webhookRecovery from './migrations/2026-11-29T02-webhook-recovery.ts';
import * as endpointHealth from './migrations/2026-11-29T03-endpoint-health.ts';
import * as webhookSigningKeys from './migrations/2026-11-29T04-webhook-signing-keys.ts';
import * as deliveryLeases from './migrations/2026-11-30T03-delivery-leases.ts';

/** Every migration by name, in the order they run. */
export const MIGRATIONS: Record<string, DialectMigration> = {
  '2026-11-22T00-initial': initial,
  '2026-11-22T01-webhook-subscriptions': webhookSubscriptions,
  '2026-11-22T02-webhook-deliveries': webhookDeliveries,
  '2026-11-22T03-webhook-outbox-indexes': webhookOutboxIndexes,
  '2026-11-22T04-login-attempts-and-reveals': loginAttemptsAndReveals,
  '2026-11-23T00-unique-customer-email': uniqueCustomerEmail,
  '2026-11-24T00-shop-profile': shopProfile,
  '2026-11-24T01-refresh-successors': refreshSuccessors,
  '2026-11-24T02-secret-rotation': secretRotation,
  '2026-11-24T03-idempotency-keys': idempotencyKeys,
  '2026-11-24T04-privacy-webhooks': privacyWebhooks,
  '2026-11-24T05-events-index': eventsIndex,
  '2026-11-24T06-authorization-iss': authorizationIss,
  '2026-11-24T07-master-key-check': masterKeyCheck,
  '2026-11-24T08-store-keyset-indexes': storeKeysetIndexes,
  '2026-11-24T12-store-routed-tokens': storeRoutedTokens,
  '2026-11-24T13-store-routed-webhooks': storeRoutedWebhooks,
  '2026-11-26T00-list-time-indexes': listTimeIndexes,
  '2026-11-26T01-credential-prune-indexes': credentialPruneIndexes,
  '2026-11-26T02-delivery-backlog-index': deliveryBacklogIndex,
  '2026-11-26T04-idempotency-resource': idempotencyResource,
  '2026-11-27T00-launch-tokens-and-online-access': launchTokensAndOnlineAccess,
  '2026-11-27T01-resource-servers': resourceServers,
  '2026-11-27T02-product-title-index': productTitleIndex,
  '2026-11-27T05-record-versions': recordVersions,
  '2026-11-28T00-api-health': apiHealth,
  '2026-11-28T01-bulk-operations': bulkOperations,
  '2026-11-28T02-bulk-attempts': bulkAttempts,
  '2026-11-29T00-subscription-filters': subscriptionFilters,
  '2026-11-29T01-app-webhook-subscriptions': appWebhookSubscriptions,
  '2026-11-29T02-webhook-recovery': webhookRecovery,
  '2026-11-29T03-endpoint-health': endpointHealth,
  '2026-11-29T04-webhook-signing-keys': webhookSigningKeys,
  '2026-11-30T03-delivery-leases': deliveryLeases,
};

/** Every migration, each handed the dialect the database handle declares. */
class StaticProvider implements MigrationProvider {
  constructor(private readonly dialect: MigrationDialect) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    const bound: Record<string, Migration> = {};
    for (const [name, m] of Object.entries(MIGRATIONS)) {
      const down = m.down;
      bound[name] = { up: (k) => m.up(k, this.dialect), ...(down ? { down: (k) => down(k) } : {}) };
    }
    return bound;
  }
}

export interface MigrateOptions {
  /**
   * PostgreSQL only: hash-partition every store table into this many partitions (see
   * partitioning.ts). Accepted on an empty database, or one already partitioned the same way.
   */
  partitions?: number | undefined;
}

export async function migrateToLatest(db: Db, options: MigrateOptions = {}): Promise<string[]> {
  const partitions = options.partitions;
  if (partitions !== undefined) {
    if (db.dialect !== 'postgres') throw new Error('--pg-partitions: partitioning is for PostgreSQL databases only');
    if (!Number.isInteger(partitions) || partitions < 2 || partitions > 1024)
      throw new Error(`--pg-partitions: expected an integer from 2 to 1024, got ${partitions}`);
    await checkPartitionRequest(db.kysely, partitions);
  }
  // On PostgreSQL the bookkeeping tables live in the connection's current schema (search_path), so
  // several schemas in one database each keep their own migration state.
  const schema =
    db.dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db.kysely)).rows[0]?.schema
      : undefined;
  // Unordered: migrations written side by side can land in an order other than their names' (a
  // database that already ran a later-named one must still take an earlier-named newcomer).
  // Without a statement deadline: building an index on a large table may take longer than any
  // request should.
  const applied = await db.withoutStatementTimeout(async (kysely) => {
    if (db.dialect === 'sqlite') return underSqliteWriteLock(kysely, runMigrator);
    return runMigrator(kysely);
  });
  if (partitions !== undefined) await db.withoutStatementTimeout((kysely) => partitionStoreTables(kysely, partitions));
  return applied;

  async function runMigrator(kysely: Kysely<Database>): Promise<string[]> {
    const migrator = new Migrator({
      db: kysely,
      provider: new StaticProvider(db.dialect),
      allowUnorderedMigrations: true,
      ...(schema ? { migrationTableSchema: schema } : {}),
    });
    const { error, results } = await migrator.migrateToLatest();
    if (error) throw error instanceof Error ? error : new Error(String(error));
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  }
}

/** How long a process waits for another one's migrations on the same SQLite file. */
const SQLITE_MIGRATION_LOCK_WAIT_MS = 10 * 60_000;
const SQLITE_LOCK_RETRY_MS = 25;

/**
 * Runs the migrations on SQLite inside one write transaction (BEGIN IMMEDIATE), so processes that
 * open the same file at once migrate one after the other: Kysely's Migrator takes no lock on
 * SQLite (its lock is a no-op there, as it assumes one connection), and two processes starting
 * together would both find a migration pending and both run it, the second failing on a table the
 * first had just created. The transaction is that lock: whoever waits for it then finds nothing
 * pending. SQLite's DDL is transactional, so a migration that fails leaves nothing half done.
 */
async function underSqliteWriteLock<T>(kysely: Kysely<Database>, work: (k: Kysely<Database>) => Promise<T>): Promise<T> {
  return kysely.connection().execute(async (conn) => {
    await acquireWriteLock(conn);
    try {
      const result = await work(conn);
      await sql`commit`.execute(conn);
      return result;
    } catch (err) {
      await sql`rollback`.execute(conn).catch(() => undefined);
      throw err;
    }
  });
}

/**
 * BEGIN IMMEDIATE, waiting for another holder without blocking the event loop: the busy timeout
 * would hold the whole thread (better-sqlite3 is synchronous), for at most its few seconds, while a
 * long migration elsewhere (an index on a large table) may take minutes.
 */
async function acquireWriteLock(conn: Kysely<Database>): Promise<void> {
  const { rows } = await sql<{ timeout: number }>`pragma busy_timeout`.execute(conn);
  const busyTimeout = Number(rows[0]?.timeout ?? 0);
  await sql`pragma busy_timeout = 0`.execute(conn);
  try {
    const deadline = Date.now() + SQLITE_MIGRATION_LOCK_WAIT_MS;
    for (;;) {
      try {
        await sql`begin immediate`.execute(conn);
        return;
      } catch (err) {
        if (databaseFault(err) !== 'busy' || Date.now() > deadline) throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, SQLITE_LOCK_RETRY_MS));
    }
  } finally {
    await sql.raw(`pragma busy_timeout = ${Math.trunc(busyTimeout)}`).execute(conn);
  }
}
