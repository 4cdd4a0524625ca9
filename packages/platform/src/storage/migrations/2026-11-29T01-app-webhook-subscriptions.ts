// App-level webhook subscriptions: declared once for an app and copied into every store that
// installs it. The app's own list is not a store's record (one row serves every store), so it
// stays whole on the partitioned layout; each store copy is an ordinary store subscription that
// names the row it came from (`app_subscription_id`, null for a subscription made through the
// Admin API), so the copies of one row can be found and removed with it. A row carries the filter
// and include_fields its copies get (as on a store subscription: the filter's text, a JSON array of
// field names; null for none). `apps` counts its rows so that an install of an app without any
// costs no read of the list. Frozen once landed.
import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migration-dialect.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  const pg = dialect === 'postgres';
  const table = db.schema.createTable('app_webhook_subscriptions');
  await (pg
    ? table.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
  )
    .addColumn('app_id', 'bigint', (c) => c.notNull())
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('api_version', 'text', (c) => c.notNull())
    .addColumn('filter', 'text')
    .addColumn('include_fields', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('app_webhook_subscriptions_app_topic_address', ['app_id', 'topic', 'address'])
    .execute();
  await db.schema.alterTable('webhook_subscriptions').addColumn('app_subscription_id', 'bigint').execute();
  await db.schema
    .createIndex('webhook_subscriptions_app_subscription')
    .on('webhook_subscriptions')
    .columns(['app_subscription_id', 'store_id'])
    .execute();
  await db.schema
    .alterTable('apps')
    .addColumn('app_subscription_count', 'integer', (c) => c.notNull().defaultTo(sql`0`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('apps').dropColumn('app_subscription_count').execute();
  await db.schema.dropIndex('webhook_subscriptions_app_subscription').ifExists().execute();
  await db.schema.alterTable('webhook_subscriptions').dropColumn('app_subscription_id').execute();
  await db.schema.dropTable('app_webhook_subscriptions').ifExists().execute();
}
