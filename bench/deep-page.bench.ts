// npm run bench -- deep-page [--database sqlite|postgres://…|both]
// The cost of a page near the end of 1,000,000 products against a page at the start, through the
// real API (auth, scope, keyset query, serialization). Every request uses a distinct
// cursor, so that neither the database's cache nor the machine's serves the same rows twice. Target: deep/start <= 1.3x (an offset-based
// page near the end would be hundreds of times slower). Also prints the seed rate
// (target: >= 20,000 products/s).
import http from 'node:http';
import { startChild, stopChild } from './child.ts';
import { cpuRows, formatCpu, postgresDatabaseName, startCpuMeter } from './cpu.ts';
import { createBenchDatabase } from './database.ts';
import { report } from './report.ts';

const PRODUCTS = Number(process.env.BENCH_PRODUCTS ?? '1000000');
const N = Number(process.env.BENCH_REQUESTS ?? '1500');

type Ready = { port: number; token: string; startCursors: string[]; endCursors: string[]; products: number; seedSeconds: number };
const database = await createBenchDatabase('deep_page');
const sg = await startChild<Ready>('./servers/admin-server.ts', {
  BENCH_PRODUCTS: String(PRODUCTS),
  BENCH_CURSORS: String(N),
  BENCH_DATABASE_URL: database.url,
});
console.log(
  `seeded ${sg.ready.products.toLocaleString('en-US')} products in ${sg.ready.seedSeconds.toFixed(1)} s: ${Math.round(sg.ready.products / sg.ready.seedSeconds).toLocaleString('en-US')} products/s (target >= 20,000/s)`,
);

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function get(cursor: string): Promise<number> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    http
      .get(
        {
          host: '127.0.0.1',
          port: sg.ready.port,
          agent,
          path: `/openapi/2026-01/products?limit=50&cursor=${encodeURIComponent(cursor)}`,
          headers: { host: 'bench.localhost', 'access-token': sg.ready.token },
        },
        (res) => {
          let n = 0;
          res.on('data', (c: Buffer) => (n += c.length));
          res.on('end', () =>
            res.statusCode === 200 && n > 1000
              ? resolve(Number(process.hrtime.bigint() - started) / 1e6)
              : reject(new Error(`status ${res.statusCode}`)),
          );
        },
      )
      .on('error', reject);
  });
}

// Warm up both ends, then alternate start and end requests so load changes hit both alike.
for (let i = 0; i < 100; i++) {
  await get(sg.ready.startCursors[N - 1 - i]!);
  await get(sg.ready.endCursors[N - 1 - i]!);
}
const start: number[] = [];
const end: number[] = [];
const postgres = database.kind === 'postgres';
const meter = startCpuMeter({ platformPid: sg.child.pid, postgresDatabase: postgres ? postgresDatabaseName(database.url) : undefined });
for (let i = 0; i < N - 100; i++) {
  start.push(await get(sg.ready.startCursors[i]!));
  end.push(await get(sg.ready.endCursors[i]!));
}
const spent = meter.stop();
const pages = start.length + end.length;
await stopChild(sg.child);
agent.destroy();
await database.drop();

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { mean: xs.reduce((a, b) => a + b, 0) / xs.length, p50: s[Math.floor(s.length / 2)]!, p99: s[Math.floor(s.length * 0.99)]! };
};
const a = stats(start);
const b = stats(end);
const fmt = (name: string, r: ReturnType<typeof stats>) =>
  `${name.padEnd(40)} mean ${r.mean.toFixed(3)} ms   p50 ${r.p50.toFixed(3)} ms   p99 ${r.p99.toFixed(3)} ms   (n=${start.length})`;
console.log(fmt('page at the start (ids 1–50 onward)', a));
console.log(fmt(`page near the end (of ${PRODUCTS.toLocaleString('en-US')})`, b));
console.log(`${formatCpu(spent, pages, 'page')} (start and end pages alike)`);
const ratio = b.p50 / a.p50;
console.log(
  `ratio end/start (p50): ${ratio.toFixed(2)}x, mean ${(b.mean / a.mean).toFixed(2)}x  (target <= 1.30x): ${ratio <= 1.3 ? 'PASS' : 'FAIL'}`,
);
const seedRate = sg.ready.products / sg.ready.seedSeconds;
report([
  { name: 'page near the end / page at the start (p50)', value: ratio, unit: 'x', target: '≤ 1.3x', pass: ratio <= 1.3 },
  { name: 'page at the start, p50', value: a.p50, unit: 'ms' },
  { name: 'page near the end, p50', value: b.p50, unit: 'ms' },
  ...cpuRows(spent, pages, 'page', postgres),
  { name: 'seed products/s', value: seedRate, unit: '/s', target: '≥ 20,000/s', pass: seedRate >= 20_000 },
]);
