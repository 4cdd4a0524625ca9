// Webhook outbox and delivery log: an event is written in the same transaction as the change that
// causes it (so a committed change always has its event and a rolled-back one never does), one
// delivery per matching subscription, every attempt recorded. Frozen once landed.
import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migration-dialect.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  const pg = dialect === 'postgres';
  const id = <TB extends string>(t: CreateTableBuilder<TB>) =>
    pg
      ? t.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());

  await db.schema
    .createTable('webhook_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'bigint', (c) => c.notNull())
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_events_created').on('webhook_events').column('created_at').execute();

  await id(db.schema.createTable('webhook_deliveries'))
    .addColumn('webhook_id', 'text', (c) => c.notNull().unique())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('subscription_id', 'bigint', (c) => c.notNull())
    .addColumn('store_id', 'bigint', (c) => c.notNull())
    .addColumn('app_id', 'bigint')
    .addColumn('private_app_id', 'bigint')
    .addColumn('topic', 'text', (c) => c.notNull())
    // pending → delivered | dead | cancelled (subscription gone or disabled, app uninstalled)
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', 'bigint')
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // The worker's claim walks pending rows by due time; finished rows stay out of this index.
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['next_attempt_at', 'id'])
    .where(sql<boolean>`status = 'pending'`)
    .execute();
  await db.schema.createIndex('webhook_deliveries_store').on('webhook_deliveries').columns(['store_id', 'id']).execute();
  await db.schema.createIndex('webhook_deliveries_updated').on('webhook_deliveries').column('updated_at').execute();
  await db.schema.createIndex('webhook_deliveries_event').on('webhook_deliveries').column('event_id').execute();

  await id(db.schema.createTable('webhook_attempts'))
    .addColumn('delivery_id', 'bigint', (c) => c.notNull())
    .addColumn('attempted_at', 'bigint', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('response_body', 'text')
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('webhook_attempts_delivery').on('webhook_attempts').column('delivery_id').execute();
  await db.schema.createIndex('webhook_attempts_time').on('webhook_attempts').column('attempted_at').execute();

  // A run of dead deliveries disables the subscription; the reason is kept for the dashboard.
  await db.schema
    .alterTable('webhook_subscriptions')
    .addColumn('dead_streak', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('webhook_subscriptions').addColumn('disabled_reason', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['webhook_attempts', 'webhook_deliveries', 'webhook_events']) await db.schema.dropTable(t).ifExists().execute();
  await db.schema.alterTable('webhook_subscriptions').dropColumn('disabled_reason').execute();
  await db.schema.alterTable('webhook_subscriptions').dropColumn('dead_streak').execute();
}
