// npm run bench -- store-pages
// Page cost per store on PostgreSQL when many stores share the tables: 100 small stores (100
// products each) created first, then 100 big stores of 10,000 products each (1,000,000 rows), then
// one huge store of 200,000 (a fifth of the table: the layout that made the planner walk the
// primary key past every other store's rows).
// Times the platform's keyset reads (the storage layer, no HTTP, so the query is what is measured)
// for the first page and a deep page of the big store created last, of a big store in the middle,
// and of a small store, and prints each as a ratio of the small store's first page (target ~1.0x).
// For contrast it times the query the platform used to run (`where store_id = ? order by id`).
// Runs in its own database (BENCH_PG_URL names the server; default the local test server), dropped
// at the end.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { openStorage } from '../packages/platform/src/storage/sql-storage.ts';

const BASE = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SMALL_STORES = 100;
const SMALL_ROWS = 100;
const BIG_STORES = Number(process.env.BENCH_BIG_STORES ?? '100');
const BIG_ROWS = Number(process.env.BENCH_BIG_ROWS ?? '10000');
const HUGE_ROWS = Number(process.env.BENCH_HUGE_ROWS ?? '200000');
const N = Number(process.env.BENCH_PAGES ?? '2000');
const LIMIT = 50;

const dbName = `sg_bench_pages_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: BASE });
await admin.connect();
await admin.query(`create database ${dbName}`);
const url = new URL(BASE);
url.pathname = `/${dbName}`;
const storage = openStorage({ dialect: 'postgres', url: url.toString() }, { poolSize: 2 });
try {
  await storage.migrate();
  const k = storage.db.kysely;
  const started = performance.now();
  const lastBig = SMALL_STORES + BIG_STORES;
  const huge = lastBig + 1;
  await sql`insert into merchants (id, email, password_hash, created_at) values (1, 'm@bench.test', 'x', 0)`.execute(k);
  await sql`insert into stores (id, name, owner_merchant_id, created_at) select s, 'store' || s, 1, 0 from generate_series(1, ${huge}::int) s`.execute(
    k,
  );
  const fill = (from: number, to: number, rows: number) =>
    sql`insert into products (store_id, title, body_html, vendor, product_type, status, price, sku, inventory_quantity, tags, created_at, updated_at)
      select s, 'Product ' || g, repeat('x', 120), 'Vendor', 'Type', 'active', '19.99', 'SKU-' || g, 1, 'a,b', g, g
      from generate_series(${from}::int, ${to}::int) s, generate_series(1, ${rows}::int) g order by s, g`.execute(k);
  await fill(1, SMALL_STORES, SMALL_ROWS);
  for (let s = SMALL_STORES + 1; s <= lastBig; s += 10) await fill(s, Math.min(s + 9, lastBig), BIG_ROWS);
  await fill(huge, huge, HUGE_ROWS);
  await sql`analyze`.execute(k);
  const total = SMALL_STORES * SMALL_ROWS + BIG_STORES * BIG_ROWS + HUGE_ROWS;
  console.log(
    `seeded ${SMALL_STORES} stores × ${SMALL_ROWS}, then ${BIG_STORES} stores × ${BIG_ROWS.toLocaleString('en-US')}, then 1 store × ${HUGE_ROWS.toLocaleString('en-US')} products (${total.toLocaleString('en-US')} rows) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );

  const source = storage.resources.page('products');
  const bounds = async (storeId: number) => {
    const r = await sql<{
      lo: number;
      hi: number;
    }>`select min(id)::int as lo, max(id)::int as hi from products where store_id = ${storeId}`.execute(k);
    return r.rows[0]!;
  };
  const oldQuery = (storeId: number, after: number | undefined) =>
    after === undefined
      ? sql`select * from products where store_id = ${storeId} order by id limit ${LIMIT + 1}`.execute(k)
      : sql`select * from products where store_id = ${storeId} and id > ${after} order by id limit ${LIMIT + 1}`.execute(k);

  type Case = { name: string; run: () => Promise<unknown> };
  const small = 37;
  const middle = SMALL_STORES + Math.ceil(BIG_STORES / 2);
  const sb = await bounds(small);
  const mb = await bounds(middle);
  const lb = await bounds(lastBig);
  const hb = await bounds(huge);
  const deep = (b: { hi: number }) => b.hi - LIMIT - 5;
  const cases: Case[] = [
    { name: `small store (${SMALL_ROWS} rows), first page`, run: () => source.after({ storeId: small }, undefined, LIMIT + 1) },
    { name: `small store, last page`, run: () => source.after({ storeId: small }, sb.hi - LIMIT, LIMIT + 1) },
    { name: `big store in the middle, first page`, run: () => source.after({ storeId: middle }, undefined, LIMIT + 1) },
    { name: `big store in the middle, deep page`, run: () => source.after({ storeId: middle }, deep(mb), LIMIT + 1) },
    { name: `last big store, first page`, run: () => source.after({ storeId: lastBig }, undefined, LIMIT + 1) },
    { name: `last big store, deep page`, run: () => source.after({ storeId: lastBig }, deep(lb), LIMIT + 1) },
    { name: `huge store created last, first page`, run: () => source.after({ storeId: huge }, undefined, LIMIT + 1) },
    { name: `huge store created last, deep page`, run: () => source.after({ storeId: huge }, deep(hb), LIMIT + 1) },
    { name: `huge store created last, page backwards`, run: () => source.before({ storeId: huge }, deep(hb), LIMIT + 1) },
    {
      name: `huge store created last, filtered page`,
      run: () => source.after({ storeId: huge, filters: { sinceId: hb.lo + 100, createdAtMin: 50 } }, undefined, LIMIT + 1),
    },
    { name: `old query: small store, first page`, run: () => oldQuery(small, undefined) },
    { name: `old query: big store in the middle, first page`, run: () => oldQuery(middle, undefined) },
    { name: `old query: huge store created last, first page`, run: () => oldQuery(huge, undefined) },
  ];
  const OURS = cases.length - 3;
  // Warm up, then interleave the cases so that load on the machine hits them alike. The old query
  // on the huge store takes a quarter of a second a page, so the old queries run fewer times, after
  // the others (interleaved, they would leave the next case a cold cache).
  const measure = async (list: Case[], rounds: number) => {
    for (let i = 0; i < Math.min(rounds, 100); i++) for (const c of list) await c.run();
    const times = list.map(() => [] as number[]);
    for (let i = 0; i < rounds; i++) {
      for (const [j, c] of list.entries()) {
        const t0 = performance.now();
        await c.run();
        times[j]!.push(performance.now() - t0);
      }
    }
    return times.map((xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
  };
  const ours = await measure(cases.slice(0, OURS), N);
  const old = await measure(cases.slice(OURS), 20);
  const base = ours[0]!;
  for (const [j, m] of [...ours, ...old].entries()) {
    console.log(
      `${cases[j]!.name.padEnd(50)} p50 ${m.toFixed(3)} ms  ${Math.round(1000 / m)
        .toLocaleString('en-US')
        .padStart(6)} pages/s  rate vs small first page ${(base / m).toFixed(2)}x`,
    );
  }
  const worst = Math.max(...ours) / Math.min(...ours);
  console.log(`spread of the platform's pages (slowest/fastest p50): ${worst.toFixed(2)}x (target ~1.0x)`);
} finally {
  await storage.close();
  await admin.query(`drop database ${dbName} with (force)`);
  await admin.end();
}
