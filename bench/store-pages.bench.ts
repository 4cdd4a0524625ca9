// npm run bench -- store-pages [--database sqlite|postgres://…|both]
// Page cost per store when many stores share the tables: 100 small stores (100 products each)
// created first, then 100 big stores of 10,000 products each (1,000,000 rows), then one huge store
// of 200,000 (a fifth of the table: the layout that made PostgreSQL's planner walk the primary key
// past every other store's rows).
// Times the platform's keyset reads (the storage layer, no HTTP, so the query is what is measured)
// for the first page and a deep page of the big store created last, of a big store in the middle,
// and of a small store, and prints each as a ratio of the small store's first page (target ~1.0x;
// the spread, slowest over fastest, passes at <= 1.3x).
// On SQLite the same rows go through the same storage API. The query the platform used to run
// (`where store_id = ? order by id`) is timed for contrast on PostgreSQL only: its failure was a
// PostgreSQL plan (treating store_id as a constant and walking the primary key); SQLite serves
// that query from the (store_id, id) index like the current one, so there it contrasts nothing.
// Knobs: BENCH_BIG_STORES (100), BENCH_BIG_ROWS (10,000), BENCH_HUGE_ROWS (200,000), BENCH_PAGES
// (2,000 timed pages per case). Runs in its own database, dropped at the end. Also prints the CPU per
// page over the timed rounds of the platform's cases: this process's (the storage layer runs here)
// and, on PostgreSQL, the server's (cpu.ts).
import { sql } from 'kysely';
import { openStorage } from '../packages/platform/src/storage/sql-storage.ts';
import { type CpuSpent, cpuRows, formatCpu, postgresDatabaseName, startCpuMeter } from './cpu.ts';
import { benchDatabaseName, createBenchDatabase } from './database.ts';
import { fillProducts, insertStores, productBounds } from './fill-products.ts';
import { type ReportRow, report } from './report.ts';

const SMALL_STORES = 100;
const SMALL_ROWS = 100;
const BIG_STORES = Number(process.env.BENCH_BIG_STORES ?? '100');
const BIG_ROWS = Number(process.env.BENCH_BIG_ROWS ?? '10000');
const HUGE_ROWS = Number(process.env.BENCH_HUGE_ROWS ?? '200000');
const N = Number(process.env.BENCH_PAGES ?? '2000');
const LIMIT = 50;
const SPREAD_TARGET = 1.3;

const database = await createBenchDatabase('pages');
const kind = database.kind;
const storage = openStorage(database.config, { poolSize: 2 });
try {
  await storage.migrate();
  const k = storage.db.kysely;
  const started = performance.now();
  const lastBig = SMALL_STORES + BIG_STORES;
  const huge = lastBig + 1;
  await insertStores(k, kind, huge);
  await fillProducts(k, kind, 1, SMALL_STORES, SMALL_ROWS);
  for (let s = SMALL_STORES + 1; s <= lastBig; s += 10) await fillProducts(k, kind, s, Math.min(s + 9, lastBig), BIG_ROWS);
  await fillProducts(k, kind, huge, huge, HUGE_ROWS);
  await sql`analyze`.execute(k);
  const total = SMALL_STORES * SMALL_ROWS + BIG_STORES * BIG_ROWS + HUGE_ROWS;
  console.log(
    `${benchDatabaseName(kind)}: seeded ${SMALL_STORES} stores × ${SMALL_ROWS}, then ${BIG_STORES} stores × ${BIG_ROWS.toLocaleString('en-US')}, then 1 store × ${HUGE_ROWS.toLocaleString('en-US')} products (${total.toLocaleString('en-US')} rows) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );

  const source = storage.resources.page('products');
  const bounds = await productBounds(k);
  const oldQuery = (storeId: number) => sql`select * from products where store_id = ${storeId} order by id limit ${LIMIT + 1}`.execute(k);

  type Case = { name: string; run: () => Promise<unknown> };
  const small = 37;
  const middle = SMALL_STORES + Math.ceil(BIG_STORES / 2);
  const sb = bounds.get(small)!;
  const mb = bounds.get(middle)!;
  const lb = bounds.get(lastBig)!;
  const hb = bounds.get(huge)!;
  const deep = (b: { hi: number }) => b.hi - LIMIT - 5;
  const ours: Case[] = [
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
      run: () => source.window({ storeId: huge, filters: { sinceId: hb.lo + 100, createdAtMin: 50 } }, 'after', undefined, LIMIT + 1),
    },
  ];
  const old: Case[] =
    kind === 'postgres'
      ? [
          { name: `old query: small store, first page`, run: () => oldQuery(small) },
          { name: `old query: big store in the middle, first page`, run: () => oldQuery(middle) },
          { name: `old query: huge store created last, first page`, run: () => oldQuery(huge) },
        ]
      : [];
  // Warm up, then interleave the cases so that load on the machine hits them alike. The old query
  // on the huge store takes a quarter of a second a page, so the old queries run fewer times, after
  // the others (interleaved, they would leave the next case a cold cache).
  let cpu: CpuSpent = { platformUs: undefined, serverUs: undefined };
  const measure = async (list: Case[], rounds: number) => {
    for (let i = 0; i < Math.min(rounds, 100); i++) for (const c of list) await c.run();
    const times = list.map(() => [] as number[]);
    const meter = startCpuMeter({
      platformPid: process.pid,
      ...(kind === 'postgres' ? { postgresDatabase: postgresDatabaseName(database.url) } : {}),
    });
    for (let i = 0; i < rounds; i++) {
      for (const [j, c] of list.entries()) {
        const t0 = performance.now();
        await c.run();
        times[j]!.push(performance.now() - t0);
      }
    }
    if (list === ours) cpu = meter.stop();
    return times.map((xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
  };
  const oursP50 = await measure(ours, N);
  const oldP50 = await measure(old, 20);
  const base = oursP50[0]!;
  const cases = [...ours, ...old];
  const rows: ReportRow[] = [];
  for (const [j, m] of [...oursP50, ...oldP50].entries()) {
    console.log(
      `${cases[j]!.name.padEnd(50)} p50 ${m.toFixed(3)} ms  ${Math.round(1000 / m)
        .toLocaleString('en-US')
        .padStart(6)} pages/s  rate vs small first page ${(base / m).toFixed(2)}x`,
    );
    rows.push({ name: `p50 ${cases[j]!.name}`, value: m, unit: 'ms', ratio: base / m });
  }
  if (kind === 'sqlite') console.log('(the old query is timed on PostgreSQL only: its slow plan was PostgreSQL’s)');
  const spread = Math.max(...oursP50) / Math.min(...oursP50);
  console.log(`spread of the platform's pages (slowest/fastest p50): ${spread.toFixed(2)}x (target ~1.0x, <= ${SPREAD_TARGET}x)`);
  rows.push({
    name: 'spread of pages (slowest/fastest p50)',
    value: spread,
    unit: 'x',
    target: `<= ${SPREAD_TARGET}x`,
    pass: spread <= SPREAD_TARGET,
  });
  const pages = N * ours.length;
  console.log(`${formatCpu(cpu, pages, 'page')} (the platform's cases, all rounds)`);
  rows.push(...cpuRows(cpu, pages, 'page', kind === 'postgres'));
  report(rows);
} finally {
  await storage.close();
  await database.drop();
}
