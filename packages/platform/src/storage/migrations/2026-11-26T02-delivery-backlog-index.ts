// An index for putting off one owner's backlog at an endpoint whose circuit breaker is open: the
// pending deliveries of a few subscriptions in one store that fall due before the breaker reopens.
// (store_id, subscription_id, next_attempt_at), partial on pending rows: the statement reads the
// entries it moves and no others, whatever the size of the store's delivery log or of the other
// owners' queues. A delivery adds one entry while it is pending (none once it has ended), and a
// claim does not touch it (the claim columns are not in it).
//
// Locking: plain CREATE INDEX inside the migration's transaction, which blocks writes to the
// deliveries while it builds; on a large database it can be built beforehand with CREATE INDEX
// CONCURRENTLY under the same name (docs/operations.md), and `if not exists` then makes this step
// instant. Frozen once landed.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists webhook_deliveries_backlog
    on webhook_deliveries (store_id, subscription_id, next_attempt_at) where status = 'pending'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_backlog').ifExists().execute();
}
