// Privacy webhooks: the address on the app itself where customers/data_request, customers/redact
// and shop/redact go (null: the app gets none), and an index to find a customer's orders, which
// both customer topics list. Frozen once landed.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('apps').addColumn('privacy_webhook_url', 'text').execute();
  await db.schema.createIndex('orders_store_customer').on('orders').columns(['store_id', 'customer_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('orders_store_customer').ifExists().execute();
  await db.schema.alterTable('apps').dropColumn('privacy_webhook_url').execute();
}
