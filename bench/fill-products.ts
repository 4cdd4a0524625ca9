// Bulk rows for the page-cost benchmarks, written by the database itself (one `insert … select`
// per call, no rows through JavaScript), on either database: PostgreSQL counts with
// generate_series, SQLite (which has no such function built in) with recursive CTEs.
import { type Kysely, sql } from 'kysely';
import type { BenchDatabaseKind } from './database.ts';

const BODY = 'x'.repeat(120);

/** One merchant (id 1) and stores 1..`count`, all owned by it. */
export async function insertStores<DB>(k: Kysely<DB>, kind: BenchDatabaseKind, count: number): Promise<void> {
  await sql`insert into merchants (id, email, password_hash, created_at) values (1, 'm@bench.test', 'x', 0)`.execute(k);
  if (kind === 'postgres')
    await sql`insert into stores (id, name, owner_merchant_id, created_at)
      select s, 'store' || s, 1, 0 from generate_series(1, ${count}::int) s`.execute(k);
  else
    await sql`with recursive s(x) as (select 1 union all select x + 1 from s where x < ${count})
      insert into stores (id, name, owner_merchant_id, created_at) select x, 'store' || x, 1, 0 from s`.execute(k);
}

/** `rows` products in each of the stores `from`..`to`, store by store (ids ascend with the store). */
export async function fillProducts<DB>(k: Kysely<DB>, kind: BenchDatabaseKind, from: number, to: number, rows: number): Promise<void> {
  if (kind === 'postgres')
    await sql`insert into products (store_id, title, body_html, vendor, product_type, status, price, sku, inventory_quantity, tags, created_at, updated_at)
      select s, 'Product ' || g, ${BODY}::text, 'Vendor', 'Type', 'active', '19.99', 'SKU-' || g, 1, 'a,b', g, g
      from generate_series(${from}::int, ${to}::int) s, generate_series(1, ${rows}::int) g order by s, g`.execute(k);
  else
    await sql`with recursive s(x) as (select ${from} union all select x + 1 from s where x < ${to}),
        g(y) as (select 1 union all select y + 1 from g where y < ${rows})
      insert into products (store_id, title, body_html, vendor, product_type, status, price, sku, inventory_quantity, tags, created_at, updated_at)
      select x, 'Product ' || y, ${BODY}, 'Vendor', 'Type', 'active', '19.99', 'SKU-' || y, 1, 'a,b', y, y
      from s, g order by x, y`.execute(k);
}

/** The lowest and highest product id of each store. */
export async function productBounds<DB>(k: Kysely<DB>): Promise<Map<number, { lo: number; hi: number }>> {
  const r = await sql<{ store_id: number; lo: number; hi: number }>`
    select store_id, cast(min(id) as integer) as lo, cast(max(id) as integer) as hi from products group by store_id`.execute(k);
  return new Map(r.rows.map((row) => [Number(row.store_id), { lo: Number(row.lo), hi: Number(row.hi) }]));
}
