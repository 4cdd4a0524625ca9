// npm run bench -- store-partitions [--database sqlite|postgres://…|both]
// Page cost per store with 10,000 stores, in the ordinary layout and, on PostgreSQL, in the
// partitioned one (every store table hash-partitioned by store_id, `migrate --pg-partitions 16`):
// 10,000 small stores of 60 products each, then 5 big stores of 50,000 created last. Times the
// platform's keyset reads (storage layer, no HTTP) for first and last pages of small stores
// (a different store each time, spread over all 10,000) and first, deep, backwards and filtered
// pages of the big ones, each as a ratio of the small stores' first page (target ~1.0x: a page
// costs the same whichever store it belongs to; the spread, slowest over fastest, passes at
// <= 1.3x). Both layouts are seeded first and their reads interleave, so the partitioned layout's
// first page is also printed as a ratio of the ordinary one's measured alongside.
// On SQLite the ordinary layout runs alone, and the output says so: partitioning is a PostgreSQL
// layout (there is nothing to partition in one SQLite file), but the question the ordinary run
// answers (does a page cost the same among 10,000 stores?) is as real on SQLite, so refusing
// would throw that figure away.
// Knobs: BENCH_STORES (10,000 small stores), BENCH_BIG_ROWS (50,000), BENCH_PAGES (2,000 timed
// pages per case). Each layout has its own database, dropped at the end. Also prints the CPU per
// page over the timed rounds: this process's, both layouts together (their reads interleave), and
// on PostgreSQL each layout's server processes apart (each layout is a database of its own; cpu.ts).
import { sql } from 'kysely';
import { openStorage } from '../packages/platform/src/storage/sql-storage.ts';
import { type CpuMeter, formatCpu, postgresDatabaseName, startCpuMeter } from './cpu.ts';
import { benchDatabaseKind, benchDatabaseName, createBenchDatabase } from './database.ts';
import { fillProducts, insertStores, productBounds } from './fill-products.ts';
import { type ReportRow, report } from './report.ts';

const SMALL_STORES = Number(process.env.BENCH_STORES ?? '10000');
// Enough for a full page, so every case returns the same number of rows.
const SMALL_ROWS = 60;
const BIG_STORES = 5;
const BIG_ROWS = Number(process.env.BENCH_BIG_ROWS ?? '50000');
const PARTITIONS = 16;
const N = Number(process.env.BENCH_PAGES ?? '2000');
const LIMIT = 50;
const SPREAD_TARGET = 1.3;

// A fixed sequence of small stores to visit (seeded, so runs compare).
let seed = 42;
const rand = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};

type Case = { name: string; run: (i: number) => Promise<unknown> };
interface Layout {
  name: 'ordinary' | 'partitioned';
  cases: Case[];
  /** The database's name on PostgreSQL, for the server's CPU. */
  postgresDatabase: string | undefined;
  close(): Promise<void>;
}

/** A database in the given layout, seeded, with the reads to time on it. */
async function prepare(partitions: number | undefined, opened: Layout[]): Promise<void> {
  const database = await createBenchDatabase(partitions ? 'parts' : 'ordinary');
  const kind = database.kind;
  const storage = openStorage(database.config, { poolSize: 2 });
  const layout: Layout = {
    name: partitions ? 'partitioned' : 'ordinary',
    cases: [],
    postgresDatabase: kind === 'postgres' ? postgresDatabaseName(database.url) : undefined,
    close: async () => {
      await storage.close();
      await database.drop();
    },
  };
  // Registered before anything can fail, so the caller's finally drops this database too.
  opened.push(layout);
  await storage.migrate({ partitions });
  const k = storage.db.kysely;
  const started = performance.now();
  const lastStore = SMALL_STORES + BIG_STORES;
  await insertStores(k, kind, lastStore);
  for (let s = 1; s <= SMALL_STORES; s += 1000) await fillProducts(k, kind, s, Math.min(s + 999, SMALL_STORES), SMALL_ROWS);
  for (let s = SMALL_STORES + 1; s <= lastStore; s++) await fillProducts(k, kind, s, s, BIG_ROWS);
  await sql`analyze`.execute(k);
  const label = partitions ? `partitioned layout (${partitions} hash partitions per store table)` : 'ordinary layout';
  console.log(
    `${benchDatabaseName(kind)}, ${label}: seeded ${SMALL_STORES.toLocaleString('en-US')} stores × ${SMALL_ROWS} and ${BIG_STORES} × ${BIG_ROWS.toLocaleString('en-US')} products in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );

  const source = storage.resources.page('products');
  const bounds = await productBounds(k);
  seed = 42;
  const smallAt = Array.from({ length: N }, () => 1 + Math.floor(rand() * SMALL_STORES));
  const bigAt = Array.from({ length: N }, (_, i) => SMALL_STORES + 1 + (i % BIG_STORES));
  const deep = (store: number) => bounds.get(store)!.hi - LIMIT - 5;
  layout.cases.push(
    { name: 'small stores, first page', run: (i) => source.after({ storeId: smallAt[i]! }, undefined, LIMIT + 1) },
    {
      name: 'small stores, page after row 10',
      run: (i) => source.after({ storeId: smallAt[i]! }, bounds.get(smallAt[i]!)!.lo + 9, LIMIT + 1),
    },
    { name: 'big stores, first page', run: (i) => source.after({ storeId: bigAt[i]! }, undefined, LIMIT + 1) },
    { name: 'big stores, deep page', run: (i) => source.after({ storeId: bigAt[i]! }, deep(bigAt[i]!), LIMIT + 1) },
    { name: 'big stores, page backwards', run: (i) => source.before({ storeId: bigAt[i]! }, deep(bigAt[i]!), LIMIT + 1) },
    {
      name: 'big stores, filtered page',
      run: (i) =>
        source.window(
          { storeId: bigAt[i]!, filters: { sinceId: bounds.get(bigAt[i]!)!.lo + 100, createdAtMin: 50 } },
          'after',
          undefined,
          LIMIT + 1,
        ),
    },
  );
}

const rows: ReportRow[] = [];
const layouts: Layout[] = [];
let closed: PromiseSettledResult<void>[] = [];
try {
  await prepare(undefined, layouts);
  if (benchDatabaseKind() === 'postgres') await prepare(PARTITIONS, layouts);
  else console.log('SQLite: ordinary layout only; the partitioned layout is PostgreSQL’s (run with --database postgres://… or both)');
  // Both layouts are seeded before anything is timed, and their reads interleave, so a change in
  // the machine's load falls on both alike and the partitioned/ordinary ratio means something.
  for (let i = 0; i < Math.min(N, 200); i++) for (const l of layouts) for (const c of l.cases) await c.run(i);
  const times = layouts.map((l) => l.cases.map(() => [] as number[]));
  const platformMeter = startCpuMeter({ platformPid: process.pid });
  const serverMeters: (CpuMeter | undefined)[] = layouts.map((l) =>
    l.postgresDatabase === undefined ? undefined : startCpuMeter({ postgresDatabase: l.postgresDatabase }),
  );
  for (let i = 0; i < N; i++) {
    for (const [li, l] of layouts.entries()) {
      for (const [j, c] of l.cases.entries()) {
        const t0 = performance.now();
        await c.run(i);
        times[li]![j]!.push(performance.now() - t0);
      }
    }
  }
  const platformCpu = platformMeter.stop();
  const serverCpu = serverMeters.map((m) => m?.stop());
  const pagesOf = (l: Layout) => N * l.cases.length;
  const allPages = layouts.reduce((n, l) => n + pagesOf(l), 0);
  console.log(`${formatCpu(platformCpu, allPages, 'page')} (both layouts, all rounds)`);
  rows.push({ name: 'platform CPU per page', value: (platformCpu.platformUs ?? Number.NaN) / allPages, unit: 'µs' });
  for (const [li, l] of layouts.entries()) {
    const spent = serverCpu[li];
    if (!spent) continue;
    const perPage = (spent.serverUs ?? Number.NaN) / pagesOf(l);
    console.log(`${l.name} layout: PostgreSQL ${Number.isFinite(perPage) ? `${perPage.toFixed(1)} µs` : 'n/a'} CPU per page`);
    rows.push({ name: `${l.name}: PostgreSQL server CPU per page`, value: perPage, unit: 'µs' });
  }
  const p50s = times.map((perCase) => perCase.map((xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!));
  for (const [li, l] of layouts.entries()) {
    const m50 = p50s[li]!;
    console.log(`\n${l.name} layout:`);
    for (const [j, c] of l.cases.entries()) {
      const m = m50[j]!;
      console.log(
        `  ${c.name.padEnd(40)} p50 ${m.toFixed(3)} ms  ${Math.round(1000 / m)
          .toLocaleString('en-US')
          .padStart(6)} pages/s  rate vs small stores' first page ${(m50[0]! / m).toFixed(2)}x`,
      );
      rows.push({ name: `${l.name}: p50 ${c.name}`, value: m, unit: 'ms', ratio: m50[0]! / m });
    }
    const spread = Math.max(...m50) / Math.min(...m50);
    console.log(`  spread (slowest/fastest p50): ${spread.toFixed(2)}x (target ~1.0x, <= ${SPREAD_TARGET}x)`);
    rows.push({
      name: `${l.name}: spread (slowest/fastest p50)`,
      value: spread,
      unit: 'x',
      target: `<= ${SPREAD_TARGET}x`,
      pass: spread <= SPREAD_TARGET,
    });
  }
  if (layouts.length === 2) {
    const cost = p50s[1]![0]! / p50s[0]![0]!;
    console.log(`\npartitioned / ordinary, small stores' first page: ${cost.toFixed(2)}x`);
    rows.push({ name: 'partitioned / ordinary: small stores, first page', value: cost, unit: 'x' });
  }
} finally {
  // Every layout's database is dropped even when closing another one fails.
  closed = await Promise.allSettled(layouts.map((l) => l.close()));
}
const failedClose = closed.find((c) => c.status === 'rejected');
if (failedClose) throw failedClose.reason;
report(rows);
