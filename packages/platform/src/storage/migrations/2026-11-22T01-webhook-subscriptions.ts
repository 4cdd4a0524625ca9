// Webhook subscriptions of the Admin API (the delivery tables come with the webhooks work).
import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migration-dialect.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  const pg = dialect === 'postgres';
  let t = db.schema.createTable('webhook_subscriptions');
  t = pg
    ? t.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  await t
    .addColumn('store_id', 'bigint', (c) => c.notNull().references('stores.id'))
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('app_id', 'bigint')
    .addColumn('private_app_id', 'bigint')
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('api_version', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('disabled_at', 'bigint')
    .addUniqueConstraint('webhook_subscriptions_unique', ['store_id', 'owner', 'topic', 'address'])
    .execute();
  await db.schema.createIndex('webhook_subscriptions_store_topic').on('webhook_subscriptions').columns(['store_id', 'topic']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_subscriptions').ifExists().execute();
}
