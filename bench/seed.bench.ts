// npm run bench -- seed [--database sqlite|postgres://…|both]
// `storegate seed` as a user runs it (the CLI, a child process) on a fresh database: products per
// second, from the command's own timing. Target: >= 20,000 products/s on either database.
// Baseline in the same run, on a second fresh database of the same kind: the same number of
// product rows written by the database itself (one `insert … select`, no rows through
// JavaScript, no process start), the fastest that database fills the table here; the seed's rate
// is printed as a ratio of it. Knob: BENCH_PRODUCTS (200,000).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openStorage } from '../packages/platform/src/storage/sql-storage.ts';
import { benchDatabaseName, createBenchDatabase } from './database.ts';
import { fillProducts, insertStores } from './fill-products.ts';
import { report } from './report.ts';

const PRODUCTS = Number(process.env.BENCH_PRODUCTS ?? '200000');
const TARGET = 20_000;
const cli = new URL('../packages/cli/bin/storegate.js', import.meta.url).pathname;
// Given, so that the CLI writes no development key file (on PostgreSQL it would land in ./data).
const MASTER_KEY = randomBytes(32).toString('hex');

async function cliSeed(): Promise<{ products: number; seconds: number }> {
  const database = await createBenchDatabase('seed');
  try {
    const run = (args: string[]) => {
      const res = spawnSync(process.execPath, [cli, ...args, '--database', database.url, '--json'], {
        encoding: 'utf8',
        env: { ...process.env, MASTER_KEY },
      });
      if (res.status !== 0) throw new Error(`storegate ${args[0]} failed: ${res.stderr}`);
      return JSON.parse(res.stdout);
    };
    // The owner's password is generated: nobody logs in here.
    run(['stores', 'create', 'seeded', '--owner-email', 'o@seed.test']);
    const out = run(['seed', '--store', 'seeded', '--products', String(PRODUCTS)]);
    return { products: out.products, seconds: out.seconds };
  } finally {
    await database.drop();
  }
}

async function bulkFill(): Promise<number> {
  const database = await createBenchDatabase('seed_baseline');
  const storage = openStorage(database.config, { poolSize: 1 });
  try {
    await storage.migrate();
    await insertStores(storage.db.kysely, database.kind, 1);
    const started = performance.now();
    await fillProducts(storage.db.kysely, database.kind, 1, 1, PRODUCTS);
    return (performance.now() - started) / 1000;
  } finally {
    await storage.close();
    await database.drop();
  }
}

const out = await cliSeed();
const rate = out.products / out.seconds;
const bulkSeconds = await bulkFill();
const bulkRate = PRODUCTS / bulkSeconds;
const db = benchDatabaseName();
console.log(
  `storegate seed, ${db}: ${out.products.toLocaleString('en-US')} products in ${out.seconds.toFixed(2)} s = ${Math.round(rate).toLocaleString('en-US')} products/s (target >= ${TARGET.toLocaleString('en-US')}/s): ${rate >= TARGET ? 'PASS' : 'FAIL'}`,
);
console.log(
  `baseline, ${db} filling the table itself (one insert … select): ${PRODUCTS.toLocaleString('en-US')} rows in ${bulkSeconds.toFixed(2)} s = ${Math.round(bulkRate).toLocaleString('en-US')} rows/s; seed / baseline ${(rate / bulkRate).toFixed(2)}x`,
);
report([
  {
    name: 'storegate seed',
    value: rate,
    unit: 'products/s',
    ratio: rate / bulkRate,
    target: `>= ${TARGET.toLocaleString('en-US')}/s`,
    pass: rate >= TARGET,
  },
  { name: 'baseline: one insert … select', value: bulkRate, unit: 'rows/s' },
]);
