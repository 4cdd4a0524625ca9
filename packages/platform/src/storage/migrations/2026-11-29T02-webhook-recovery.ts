// Recovering a subscription's deliveries. `webhook_deliveries.replayed_at`: when a replay queued
// the delivery again (null for every other send); the worker reads it at the claim so that what a
// replay's attempts show counts neither toward the owner's circuit breaker nor toward the dead
// streak that disables a subscription. `webhook_subscriptions.enabled_at`: when the subscription
// was last enabled again after being disabled; a worker whose breaker for the owner's endpoint
// dates from before then forgets it. The index reads one subscription's deliveries in a store by
// creation time (what a replay selects) without visiting the store's other deliveries.
// Frozen once landed.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('replayed_at', 'bigint').execute();
  await db.schema.alterTable('webhook_subscriptions').addColumn('enabled_at', 'bigint').execute();
  await db.schema
    .createIndex('webhook_deliveries_subscription_time')
    .on('webhook_deliveries')
    .columns(['store_id', 'subscription_id', 'created_at', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_subscription_time').ifExists().execute();
  await db.schema.alterTable('webhook_subscriptions').dropColumn('enabled_at').execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('replayed_at').execute();
}
