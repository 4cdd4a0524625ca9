// Which resource each idempotency key's write was on (`customers`, `orders`, `products`,
// `webhooks`), kept with its stored answer, so that redacting a customer reads only the customer
// and order answers of the store and not every write's. Nullable: keys stored before it have none
// and are told apart by their answer's shape until they expire (a day). A nullable column without
// a default changes only the catalogue on PostgreSQL and SQLite: instant, whatever the table
// holds. Frozen once landed.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('resource', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').dropColumn('resource').execute();
}
