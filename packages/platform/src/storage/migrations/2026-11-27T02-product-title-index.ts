// The index the products list's `title` filter reads: (store_id, title, id). With the title an
// equality, its entries come in id order, so a filtered page is one range scan of as many entries
// as the page holds, whatever else the store has; a count by title reads that title's entries only.
//
// Locking: a plain CREATE INDEX inside the migration's transaction blocks writes to products (not
// reads) while it builds. For a large table, build it beforehand with CREATE INDEX CONCURRENTLY
// under the same name (docs/scaling.md gives the statement); `if not exists` then makes this step
// instant. In the partitioned layout it is built on every partition. Frozen once landed.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists products_store_title on products (store_id, title, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('products_store_title').ifExists().execute();
}
