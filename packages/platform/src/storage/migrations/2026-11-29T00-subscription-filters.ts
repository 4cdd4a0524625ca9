// What a webhook subscription sends: `filter` (the query text that picks the changes it gets; null
// for every change of its topic) and `include_fields` (a JSON array of the top-level fields each
// delivery holds; null for the whole object). A delivery keeps the include_fields its subscription
// had when the event was written, so that every attempt and a manual redelivery send the same body
// under the same webhook id. Nullable columns: no rewrite of existing rows on either database, nor
// on the partitioned layout (its partitions take the column from their parent). Frozen once landed.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_subscriptions').addColumn('filter', 'text').execute();
  await db.schema.alterTable('webhook_subscriptions').addColumn('include_fields', 'text').execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('include_fields', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').dropColumn('include_fields').execute();
  await db.schema.alterTable('webhook_subscriptions').dropColumn('include_fields').execute();
  await db.schema.alterTable('webhook_subscriptions').dropColumn('filter').execute();
}
