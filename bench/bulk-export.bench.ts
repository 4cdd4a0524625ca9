// npm run bench -- bulk-export [--database sqlite|postgres://…|both]
// A bulk export of a store's products (BENCH_PRODUCTS, default 1,000,000, seeded with the seed
// service as `storegate seed` does) through the platform: POST the operation, the worker's runner
// takes the snapshot and writes the JSON Lines file into the database, then the file is
// downloaded whole. Compared with (a) paging the same rows through the Admin API at the default
// rate limit, computed from the limit rather than waited for (it would take hours), and (b) a
// plain keyset query writing the same JSON Lines to a local file in the same run. Target: the
// export at least 0.5x the plain query's rows/s.
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createPlatform, loadConfig } from '../packages/platform/src/index.ts';
import { products as productDef } from '../packages/platform/src/domain/resources.ts';
import { type CpuSpent, cpuRows, formatCpu, postgresDatabaseName, startCpuMeter } from './cpu.ts';
import { createBenchDatabase } from './database.ts';
import { report } from './report.ts';

const PRODUCTS = Number(process.env.BENCH_PRODUCTS ?? '1000000');
const PAGE = 250;

const database = await createBenchDatabase('bulk_export');
const masterKey = randomBytes(32).toString('hex');
// The default Admin API limit (--rate-limit), which paging would be held to.
const limit = loadConfig({ database: database.url, masterKey }).rateLimit;
if (limit === 'off') throw new Error('the default rate limit is off: nothing to compare paging with');
const { bucket: BUCKET, perSecond: PER_SECOND } = limit;
const config = loadConfig({ database: database.url, masterKey, logLevel: 'silent', port: 0, rateLimit: 'off' });
const platform = await createPlatform(config, { worker: {} });
const { http: app, services, db } = platform;
const store = await services.accounts.createStore({ name: 'bench', ownerEmail: 'o@bench.test', ownerPassword: 'bench-password' });
let started = performance.now();
await services.seeds.seed(store.id, { products: PRODUCTS, orders: 0, customers: 0 });
console.log(`seeded ${PRODUCTS.toLocaleString('en-US')} products in ${((performance.now() - started) / 1000).toFixed(1)} s`);
db.sqlite?.pragma('wal_checkpoint(TRUNCATE)');
const { accessToken } = await services.apps.createPrivateApp({ storeId: store.id, name: 'bench', scopes: 'read_products' });
const headers = { host: 'bench.localhost', 'access-token': accessToken, 'content-type': 'application/json' };

// (b) The plain query: keyset batches of the same rows, each turned into the list's JSON, written
// as JSON Lines to a file.
const dir = mkdtempSync(join(tmpdir(), 'storegate-bulk-bench-'));
const postgresDatabase = database.kind === 'postgres' ? postgresDatabaseName(database.url) : undefined;
const meter = () => startCpuMeter({ platformPid: process.pid, ...(postgresDatabase ? { postgresDatabase } : {}) });
let cpu = meter();
started = performance.now();
const out = createWriteStream(join(dir, 'plain.jsonl'));
let after = 0;
let plainRows = 0;
for (;;) {
  const rows = await db.kysely
    .selectFrom('products')
    .selectAll()
    .where('store_id', '=', store.id)
    .where('id', '>', after)
    .orderBy('store_id')
    .orderBy('id')
    .limit(5000)
    .execute();
  if (rows.length === 0) break;
  let text = '';
  for (const r of rows) text += `${JSON.stringify(productDef.toJson(r))}\n`;
  if (!out.write(text)) await once(out, 'drain');
  plainRows += rows.length;
  after = Number(rows.at(-1)!.id);
}
out.end();
await once(out, 'finish');
const plainSeconds = (performance.now() - started) / 1000;
const plainCpu: CpuSpent = cpu.stop();
const plainBytes = statSync(join(dir, 'plain.jsonl')).size;
rmSync(dir, { recursive: true, force: true });

// The export: POST, the runner's run (snapshot copy, file chunks, finish), then the download.
cpu = meter();
started = performance.now();
const created = await app.inject({ method: 'POST', url: '/openapi/2026-01/bulk_operations', headers, payload: { resource: 'products' } });
if (created.statusCode !== 202) throw new Error(`POST bulk_operations: ${created.statusCode} ${created.body}`);
const id = created.json().data.id as string;
const outcome = await platform.bulkExports!.runOnce();
const exportSeconds = (performance.now() - started) / 1000;
const exportCpu: CpuSpent = cpu.stop();
const op = (await app.inject({ method: 'GET', url: `/openapi/2026-01/bulk_operations/${id}`, headers })).json().data;
if (outcome !== 'completed' || op.rows !== plainRows || op.bytes !== plainBytes)
  throw new Error(`export ${outcome}: ${op.rows} rows, ${op.bytes} bytes; the plain query wrote ${plainRows} rows, ${plainBytes} bytes`);
started = performance.now();
const file = await app.inject({
  method: 'GET',
  url: new URL(op.url).pathname + new URL(op.url).search,
  headers: { host: 'bench.localhost' },
});
const downloadSeconds = (performance.now() - started) / 1000;
if (file.rawPayload.length !== plainBytes) throw new Error(`download: ${file.rawPayload.length} bytes, expected ${plainBytes}`);
await platform.close();
await database.drop();

// (a) Paging at the default limit: the bucket's first 40 calls at once, then 2 a second.
const calls = Math.ceil(plainRows / PAGE);
const pagingSeconds = Math.max(0, calls - BUCKET) / PER_SECOND;
const rate = (rows: number, s: number) => rows / s;
const exportRate = rate(plainRows, exportSeconds);
const plainRate = rate(plainRows, plainSeconds);
const pagingRate = rate(plainRows, pagingSeconds);
const mb = (n: number) => `${(n / 1_048_576).toFixed(1)} MiB`;
console.log(`plain query → JSON Lines file: ${plainRows.toLocaleString('en-US')} rows, ${mb(plainBytes)} in ${plainSeconds.toFixed(1)} s`);
console.log(
  `bulk export (POST → completed): ${op.rows.toLocaleString('en-US')} rows, ${mb(op.bytes)} in ${exportSeconds.toFixed(1)} s; download ${downloadSeconds.toFixed(1)} s`,
);
console.log(
  `paging at the default rate limit (${BUCKET} calls, then ${PER_SECOND}/s, ${PAGE} per page): ${calls.toLocaleString('en-US')} calls ≈ ${(pagingSeconds / 3600).toFixed(2)} h — computed from the limit, not waited for`,
);
console.log(
  `export / plain query: ${(exportRate / plainRate).toFixed(2)}x (target ≥ 0.5x); export / paging: ${(exportRate / pagingRate).toFixed(0)}x`,
);
console.log(`CPU, export: ${formatCpu(exportCpu, plainRows, 'row')}; plain query: ${formatCpu(plainCpu, plainRows, 'row')}`);
report([
  {
    name: 'bulk export rows/s',
    value: exportRate,
    unit: '/s',
    ratio: exportRate / plainRate,
    target: '≥ 0.5x',
    pass: exportRate / plainRate >= 0.5,
  },
  { name: 'plain query to JSON Lines rows/s', value: plainRate, unit: '/s' },
  { name: 'paging at the default rate limit rows/s (computed)', value: pagingRate, unit: '/s' },
  { name: 'bulk export / paging at the limit', value: exportRate / pagingRate, unit: 'x' },
  ...cpuRows(exportCpu, plainRows, 'row exported', postgresDatabase !== undefined),
  ...cpuRows(plainCpu, plainRows, 'row, plain query', postgresDatabase !== undefined),
]);
