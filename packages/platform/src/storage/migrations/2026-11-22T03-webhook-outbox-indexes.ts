// Fewer indexes on the outbox tables: every index is one more page written (and synced) by each
// change that emits an event, and on SQLite that doubled the cost of a commit. The delivery log and
// the hourly pruning read these tables rarely and do without them.
import type { Kysely } from 'kysely';

const DROPPED = ['webhook_deliveries_updated', 'webhook_deliveries_event', 'webhook_deliveries_store', 'webhook_events_created'];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const name of DROPPED) await db.schema.dropIndex(name).ifExists().execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('webhook_events_created').on('webhook_events').column('created_at').execute();
  await db.schema.createIndex('webhook_deliveries_store').on('webhook_deliveries').columns(['store_id', 'id']).execute();
  await db.schema.createIndex('webhook_deliveries_updated').on('webhook_deliveries').column('updated_at').execute();
  await db.schema.createIndex('webhook_deliveries_event').on('webhook_deliveries').column('event_id').execute();
}
