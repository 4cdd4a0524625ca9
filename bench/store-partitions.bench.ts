// npm run bench -- store-partitions
// Page cost per store with 10,000 stores on PostgreSQL, in the ordinary layout and in the
// partitioned one (every store table hash-partitioned by store_id, `migrate --pg-partitions 16`):
// 10,000 small stores of 60 products each, then 5 big stores of 50,000 created last. Times the
// platform's keyset reads (storage layer, no HTTP) for first and last pages of small stores
// (a different store each time, spread over all 10,000) and first, deep, backwards and filtered
// pages of the big ones, each as a ratio of the small stores' first page (target ~1.0x: a page
// costs the same whichever store it belongs to). Each layout runs in its own database, dropped
// at the end.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { openStorage } from '../packages/platform/src/storage/sql-storage.ts';

const BASE = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SMALL_STORES = Number(process.env.BENCH_STORES ?? '10000');
// Enough for a full page, so every case returns the same number of rows.
const SMALL_ROWS = 60;
const BIG_STORES = 5;
const BIG_ROWS = Number(process.env.BENCH_BIG_ROWS ?? '50000');
const PARTITIONS = 16;
const N = Number(process.env.BENCH_PAGES ?? '2000');
const LIMIT = 50;

// A fixed sequence of small stores to visit (seeded, so runs compare).
let seed = 42;
const rand = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};

async function run(partitions: number | undefined): Promise<void> {
  const dbName = `sg_bench_parts_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: BASE });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const url = new URL(BASE);
  url.pathname = `/${dbName}`;
  const storage = openStorage({ dialect: 'postgres', url: url.toString() }, { poolSize: 2 });
  try {
    await storage.migrate({ partitions });
    const k = storage.db.kysely;
    const started = performance.now();
    const lastStore = SMALL_STORES + BIG_STORES;
    await sql`insert into merchants (id, email, password_hash, created_at) values (1, 'm@bench.test', 'x', 0)`.execute(k);
    await sql`insert into stores (id, name, owner_merchant_id, created_at) select s, 'store' || s, 1, 0 from generate_series(1, ${lastStore}::int) s`.execute(
      k,
    );
    const fill = (from: number, to: number, rows: number) =>
      sql`insert into products (store_id, title, body_html, vendor, product_type, status, price, sku, inventory_quantity, tags, created_at, updated_at)
        select s, 'Product ' || g, repeat('x', 120), 'Vendor', 'Type', 'active', '19.99', 'SKU-' || g, 1, 'a,b', g, g
        from generate_series(${from}::int, ${to}::int) s, generate_series(1, ${rows}::int) g order by s, g`.execute(k);
    for (let s = 1; s <= SMALL_STORES; s += 1000) await fill(s, Math.min(s + 999, SMALL_STORES), SMALL_ROWS);
    for (let s = SMALL_STORES + 1; s <= lastStore; s++) await fill(s, s, BIG_ROWS);
    await sql`analyze`.execute(k);
    const label = partitions ? `partitioned layout (${partitions} hash partitions per store table)` : 'ordinary layout';
    console.log(
      `\n${label}: seeded ${SMALL_STORES.toLocaleString('en-US')} stores × ${SMALL_ROWS} and ${BIG_STORES} × ${BIG_ROWS.toLocaleString('en-US')} products in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );

    const source = storage.resources.page('products');
    const bounds = new Map<number, { lo: number; hi: number }>();
    const r = await sql<{ store_id: number; lo: number; hi: number }>`
      select store_id, min(id)::int as lo, max(id)::int as hi from products group by store_id`.execute(k);
    for (const row of r.rows) bounds.set(Number(row.store_id), { lo: row.lo, hi: row.hi });
    seed = 42;
    const smallAt = Array.from({ length: N }, () => 1 + Math.floor(rand() * SMALL_STORES));
    const bigAt = Array.from({ length: N }, (_, i) => SMALL_STORES + 1 + (i % BIG_STORES));
    const deep = (store: number) => bounds.get(store)!.hi - LIMIT - 5;
    type Case = { name: string; run: (i: number) => Promise<unknown> };
    const cases: Case[] = [
      { name: 'small stores, first page', run: (i) => source.after({ storeId: smallAt[i]! }, undefined, LIMIT + 1) },
      {
        name: 'small stores, last page (after row 10)',
        run: (i) => source.after({ storeId: smallAt[i]! }, bounds.get(smallAt[i]!)!.lo + 9, LIMIT + 1),
      },
      { name: 'big stores, first page', run: (i) => source.after({ storeId: bigAt[i]! }, undefined, LIMIT + 1) },
      { name: 'big stores, deep page', run: (i) => source.after({ storeId: bigAt[i]! }, deep(bigAt[i]!), LIMIT + 1) },
      { name: 'big stores, page backwards', run: (i) => source.before({ storeId: bigAt[i]! }, deep(bigAt[i]!), LIMIT + 1) },
      {
        name: 'big stores, filtered page',
        run: (i) =>
          source.after(
            { storeId: bigAt[i]!, filters: { sinceId: bounds.get(bigAt[i]!)!.lo + 100, createdAtMin: 50 } },
            undefined,
            LIMIT + 1,
          ),
      },
    ];
    for (let i = 0; i < Math.min(N, 200); i++) for (const c of cases) await c.run(i);
    const times = cases.map(() => [] as number[]);
    for (let i = 0; i < N; i++) {
      for (const [j, c] of cases.entries()) {
        const t0 = performance.now();
        await c.run(i);
        times[j]!.push(performance.now() - t0);
      }
    }
    const p50s = times.map((xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
    for (const [j, c] of cases.entries()) {
      const m = p50s[j]!;
      console.log(
        `  ${c.name.padEnd(40)} p50 ${m.toFixed(3)} ms  ${Math.round(1000 / m)
          .toLocaleString('en-US')
          .padStart(6)} pages/s  rate vs small stores' first page ${(p50s[0]! / m).toFixed(2)}x`,
      );
    }
    console.log(`  spread (slowest/fastest p50): ${(Math.max(...p50s) / Math.min(...p50s)).toFixed(2)}x (target ~1.0x)`);
  } finally {
    await storage.close();
    await admin.query(`drop database ${dbName} with (force)`);
    await admin.end();
  }
}

await run(undefined);
await run(PARTITIONS);
