// Indexes that keyset pages read, each led by store_id so a page of one store never walks other
// stores' rows. products, customers and orders have had (store_id, id) since the first schema; a
// webhook subscriptions list reads one owner's subscriptions in a store in id order, which the
// unique key (store_id, owner, topic, address) can only answer with a sort.
//
// Locking: a plain CREATE INDEX, inside the migration's transaction. It blocks writes to the table
// (not reads) while it builds, which for this table (a few rows per app and store) is a moment.
// CREATE INDEX CONCURRENTLY would not block writes but cannot run inside a transaction, and a
// half-applied migration is worse than a short pause. Operators with a large table can build the
// index beforehand with CONCURRENTLY under the same name (docs/scaling.md gives the statement);
// `if not exists` then makes this step instant. Frozen once landed.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists webhook_subscriptions_store_owner on webhook_subscriptions (store_id, owner, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_subscriptions_store_owner').ifExists().execute();
}
