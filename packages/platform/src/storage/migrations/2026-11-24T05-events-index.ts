// The events list of the Admin API reads one owner's deliveries in a store, within a time window,
// in (created_at, id) order. One index per kind of owner, each partial, so a delivery adds one
// index entry (it has an app or a private app, never both) and the outbox's commits stay cheap.
// `topic` rides at the end so a topic filter is answered from the index, without visiting rows
// of other topics. Frozen once landed.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_app_events')
    .on('webhook_deliveries')
    .columns(['store_id', 'app_id', 'created_at', 'id', 'topic'])
    .where(sql<boolean>`app_id is not null`)
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_private_events')
    .on('webhook_deliveries')
    .columns(['store_id', 'private_app_id', 'created_at', 'id', 'topic'])
    .where(sql<boolean>`private_app_id is not null`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_private_events').ifExists().execute();
  await db.schema.dropIndex('webhook_deliveries_app_events').ifExists().execute();
}
