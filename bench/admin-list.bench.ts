// npm run bench -- admin-list
// Authenticated, scope-checked list of 50 products from a store of 100,000 (SQLite), 50
// connections, against a bare Fastify route returning the same bytes from memory, measured with
// the same load generator (autocannon) in the same run. Target: >= 0.5x the bare route's
// requests/s, p99 < 20 ms.
import autocannon from 'autocannon';
import { startChild, stopChild } from './child.ts';

const DURATION = Number(process.env.BENCH_SECONDS ?? '5');

async function load(port: number, headers: Record<string, string>, path: string) {
  const opts = { url: `http://127.0.0.1:${port}${path}`, connections: 50, pipelining: 1, headers };
  await autocannon({ ...opts, duration: 1 }); // warm-up
  const r = await autocannon({ ...opts, duration: DURATION });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx, bytes: r.throughput.average };
}

const sg = await startChild<{ port: number; token: string; products: number; seedSeconds: number }>('./servers/admin-server.ts', {
  BENCH_PRODUCTS: '100000',
});
console.log(
  `seeded ${sg.ready.products} products in ${sg.ready.seedSeconds.toFixed(2)} s (${Math.round(sg.ready.products / sg.ready.seedSeconds)} products/s)`,
);
const headers = { host: 'bench.localhost', 'access-token': sg.ready.token };
// Node's fetch will not send a Host header of our choosing; take the page bytes over node:http.
const http = await import('node:http');
const body: Buffer = await new Promise((resolve, reject) => {
  http
    .get({ host: '127.0.0.1', port: sg.ready.port, path: '/openapi/2026-01/products?limit=50', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`status ${res.statusCode}`))));
    })
    .on('error', reject);
});
const items = JSON.parse(body.toString()).data.length;
console.log(`page: ${items} products, ${body.length} bytes`);

// Both servers stay up; rounds alternate between them so a change in machine load hits both alike.
const bare = await startChild<{ port: number }>('./servers/admin-server.ts', { BENCH_BARE: '1', BENCH_BODY_B64: body.toString('base64') });
const rounds = Number(process.env.BENCH_ROUNDS ?? '3');
const ours: Awaited<ReturnType<typeof load>>[] = [];
const theirs: Awaited<ReturnType<typeof load>>[] = [];
for (let i = 0; i < rounds; i++) {
  ours.push(await load(sg.ready.port, headers, '/openapi/2026-01/products?limit=50'));
  theirs.push(await load(bare.ready.port, { host: 'bench.localhost' }, '/openapi/2026-01/products?limit=50'));
}
await stopChild(sg.child);
await stopChild(bare.child);
const median = (xs: Awaited<ReturnType<typeof load>>[]) => [...xs].sort((a, b) => a.rps - b.rps)[Math.floor(xs.length / 2)]!;
const platform = { ...median(ours), errors: ours.reduce((n, r) => n + r.errors, 0) };
const baseline = median(theirs);
console.log(
  `rounds (req/s): storegate ${ours.map((r) => r.rps.toFixed(0)).join(', ')}; bare ${theirs.map((r) => r.rps.toFixed(0)).join(', ')} (median shown below)`,
);

const ratio = platform.rps / baseline.rps;
const row = (name: string, r: typeof platform) =>
  `${name.padEnd(34)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${String(r.p50).padStart(3)} ms   p99 ${String(r.p99).padStart(3)} ms   errors ${r.errors}`;
console.log(row('storegate list (auth+scope+SQLite)', platform));
console.log(row('bare Fastify, same bytes', baseline));
console.log(
  `ratio storegate/bare: ${ratio.toFixed(2)}x  (target >= 0.50x, p99 < 20 ms): ${ratio >= 0.5 && platform.p99 < 20 && platform.errors === 0 ? 'PASS' : 'FAIL'}`,
);
