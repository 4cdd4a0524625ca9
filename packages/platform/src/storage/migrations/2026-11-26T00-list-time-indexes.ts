// Indexes that the time-range filters of the Admin API lists read: (store_id, created_at, id) and
// (store_id, updated_at, id) on products, orders and customers. Without them a page filtered by a
// time range walked the store's ids checking the range row by row, reading the whole store when
// few rows matched (storage/repositories/keyset.ts says how a page uses them). id rides at the end
// so the range is read as ids alone.
//
// Locking: a plain CREATE INDEX inside the migration's transaction blocks writes to the table (not
// reads) while it builds. For a large table, build them beforehand with CREATE INDEX CONCURRENTLY
// under the same names (docs/scaling.md gives the statements); `if not exists` then makes this
// step instant. In the partitioned layout they are built on every partition. Frozen once landed.
import { sql, type Kysely } from 'kysely';

const TABLES = ['products', 'orders', 'customers'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) {
    await sql`create index if not exists ${sql.id(`${table}_store_created`)} on ${sql.id(table)} (store_id, created_at, id)`.execute(db);
    await sql`create index if not exists ${sql.id(`${table}_store_updated`)} on ${sql.id(table)} (store_id, updated_at, id)`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) {
    await db.schema.dropIndex(`${table}_store_updated`).ifExists().execute();
    await db.schema.dropIndex(`${table}_store_created`).ifExists().execute();
  }
}
