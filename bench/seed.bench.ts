// npm run bench -- seed [--database sqlite|postgres://…|both]
// `storegate seed` as a user runs it (the CLI, a child process) on a fresh database: products per
// second, from the command's own timing. Target: >= 100,000 products/s on either database.
// Baseline in the same run, on a second fresh database of the same kind: the same number of
// product rows written by the database itself (one `insert … select`, no rows through
// JavaScript, no process start), the fastest that database fills the table here; the seed's rate
// is printed as a ratio of it. Beside the rates, CPU per 1,000 rows, read from outside the
// processes (cpu.ts): the CLI child's (less what the same command seeding nothing spends starting
// and stopping) and, on PostgreSQL, the server's for the seed and for the baseline.
// Knob: BENCH_PRODUCTS (200,000).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openStorage } from '../packages/platform/src/storage/sql-storage.ts';
import { type CpuSpent, postgresDatabaseName, processCpuMicros, startCpuMeter } from './cpu.ts';
import { type BenchDatabase, benchDatabaseName, createBenchDatabase } from './database.ts';
import { fillProducts, insertStores } from './fill-products.ts';
import { report } from './report.ts';

const PRODUCTS = Number(process.env.BENCH_PRODUCTS ?? '200000');
const TARGET = 100_000;
const cli = new URL('../packages/cli/bin/storegate.js', import.meta.url).pathname;
// Given, so that the CLI writes no development key file (on PostgreSQL it would land in ./data).
const MASTER_KEY = randomBytes(32).toString('hex');
// The child's CPU is read this often while it runs: its last moments before exiting are lost, the
// same for the seeding run and for the empty run subtracted from it.
const CHILD_SAMPLE_MS = 20;

interface Measured {
  out: Record<string, unknown>;
  /** The child's CPU over its whole life, µs. */
  childUs: number;
  /** The server's CPU for the database meanwhile (PostgreSQL), µs. */
  serverUs: number | undefined;
}

async function runCli(database: BenchDatabase, args: string[]): Promise<Measured> {
  const meter = startCpuMeter(database.kind === 'postgres' ? { postgresDatabase: postgresDatabaseName(database.url), intervalMs: 20 } : {});
  const child = spawn(process.execPath, [cli, ...args, '--database', database.url, '--json'], {
    env: { ...process.env, MASTER_KEY },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let childUs = 0;
  const sample = setInterval(() => {
    const us = child.pid === undefined ? undefined : processCpuMicros(child.pid);
    if (us !== undefined) childUs = us;
  }, CHILD_SAMPLE_MS);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d));
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  clearInterval(sample);
  const spent: CpuSpent = meter.stop();
  if (code !== 0) throw new Error(`storegate ${args[0]} failed: ${stderr}`);
  return { out: JSON.parse(stdout), childUs, serverUs: spent.serverUs };
}

interface SeedRun {
  products: number;
  seconds: number;
  /** CPU of the seed itself (the run less the empty run), µs. */
  childUs: number;
  serverUs: number | undefined;
  /** The empty run's CPU: start-up, opening the database, finding the store, exiting. */
  idleChildUs: number;
}

async function cliSeed(): Promise<SeedRun> {
  const database = await createBenchDatabase('seed');
  try {
    // The owner's password is generated: nobody logs in here.
    await runCli(database, ['stores', 'create', 'seeded', '--owner-email', 'o@seed.test']);
    const idle = await runCli(database, ['seed', '--store', 'seeded', '--products', '0']);
    const run = await runCli(database, ['seed', '--store', 'seeded', '--products', String(PRODUCTS)]);
    const minus = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : a - b);
    return {
      products: Number(run.out.products),
      seconds: Number(run.out.seconds),
      childUs: run.childUs - idle.childUs,
      serverUs: minus(run.serverUs, idle.serverUs),
      idleChildUs: idle.childUs,
    };
  } finally {
    await database.drop();
  }
}

async function bulkFill(): Promise<{ seconds: number; serverUs: number | undefined }> {
  const database = await createBenchDatabase('seed_baseline');
  const storage = openStorage(database.config, { poolSize: 1 });
  try {
    await storage.migrate();
    await insertStores(storage.db.kysely, database.kind, 1);
    const meter = startCpuMeter(
      database.kind === 'postgres' ? { postgresDatabase: postgresDatabaseName(database.url), intervalMs: 20 } : {},
    );
    const started = performance.now();
    await fillProducts(storage.db.kysely, database.kind, 1, 1, PRODUCTS);
    const seconds = (performance.now() - started) / 1000;
    return { seconds, serverUs: meter.stop().serverUs };
  } finally {
    await storage.close();
    await database.drop();
  }
}

const thousands = (rows: number) => rows / 1000;
const ms = (us: number | undefined, rows: number) => (us === undefined ? Number.NaN : us / 1000 / thousands(rows));
const fmt = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)} ms` : 'n/a');

const seed = await cliSeed();
const rate = seed.products / seed.seconds;
const bulk = await bulkFill();
const bulkRate = PRODUCTS / bulk.seconds;
const db = benchDatabaseName();
const postgres = db === 'PostgreSQL';
const childPer = ms(seed.childUs, seed.products);
const serverPer = ms(seed.serverUs, seed.products);
const bulkServerPer = ms(bulk.serverUs, PRODUCTS);
console.log(
  `storegate seed, ${db}: ${seed.products.toLocaleString('en-US')} products in ${seed.seconds.toFixed(2)} s = ${Math.round(rate).toLocaleString('en-US')} products/s (target >= ${TARGET.toLocaleString('en-US')}/s): ${rate >= TARGET ? 'PASS' : 'FAIL'}`,
);
console.log(
  `  CPU per 1,000 rows: CLI child ${fmt(childPer)} (its ${(seed.idleChildUs / 1e6).toFixed(2)} s of start and exit left out)${postgres ? `, PostgreSQL server ${fmt(serverPer)}` : ''}`,
);
console.log(
  `baseline, ${db} filling the table itself (one insert … select): ${PRODUCTS.toLocaleString('en-US')} rows in ${bulk.seconds.toFixed(2)} s = ${Math.round(bulkRate).toLocaleString('en-US')} rows/s; seed / baseline ${(rate / bulkRate).toFixed(2)}x`,
);
if (postgres) console.log(`  CPU per 1,000 rows: PostgreSQL server ${fmt(bulkServerPer)}`);
report([
  {
    name: 'storegate seed',
    value: rate,
    unit: 'products/s',
    ratio: rate / bulkRate,
    target: `>= ${TARGET.toLocaleString('en-US')}/s`,
    pass: rate >= TARGET,
  },
  { name: 'seed: CLI CPU per 1,000 rows', value: childPer, unit: 'ms' },
  ...(postgres ? [{ name: 'seed: PostgreSQL server CPU per 1,000 rows', value: serverPer, unit: 'ms' }] : []),
  { name: 'baseline: one insert … select', value: bulkRate, unit: 'rows/s' },
  ...(postgres ? [{ name: 'baseline: PostgreSQL server CPU per 1,000 rows', value: bulkServerPer, unit: 'ms' }] : []),
]);
