// npm run bench -- admin-list [--database sqlite|postgres://…|both]
// Authenticated, scope-checked list of 50 products from a store of 100,000, 50 connections,
// against a bare Fastify route returning the same bytes from memory, measured with the same load
// generator (autocannon) in the same run. Target: >= 0.5x the bare route's requests/s, p99 < 20 ms.
// Beside the rates it prints each server's CPU time per request (user + system, from the child's
// own process.cpuUsage), which moves far less than a rate when other work shares the machine.
// Knobs: BENCH_SECONDS (5), BENCH_ROUNDS (3), BENCH_PRODUCTS (100000), BENCH_RATE_LIMIT (off; e.g.
// 100000/100000 counts every call in the limiter without ever refusing one).
import type { ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { startChild, stopChild } from './child.ts';
import { benchDatabaseKind, createBenchDatabase } from './database.ts';
import { report } from './report.ts';

const DURATION = Number(process.env.BENCH_SECONDS ?? '5');
const PRODUCTS = Number(process.env.BENCH_PRODUCTS ?? '100000');
const PATH = '/openapi/2026-01/products?limit=50';

function cpu(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    const on = (m: { type?: string; user: number; system: number }) => {
      if (m?.type !== 'cpu') return;
      child.off('message', on);
      resolve(m.user + m.system);
    };
    child.on('message', on);
    child.send({ type: 'cpu' });
  });
}

async function load(child: ChildProcess, port: number, headers: Record<string, string>) {
  const opts = { url: `http://127.0.0.1:${port}${PATH}`, connections: 50, pipelining: 1, headers };
  await autocannon({ ...opts, duration: 1 }); // warm-up
  const before = await cpu(child);
  const r = await autocannon({ ...opts, duration: DURATION });
  const cpuPerRequest = (await cpu(child)) - before;
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.non2xx,
    cpuUs: r.requests.total > 0 ? cpuPerRequest / r.requests.total : 0,
  };
}

const database = await createBenchDatabase('admin_list');
try {
  const sg = await startChild<{ port: number; token: string; products: number; seedSeconds: number }>('./servers/admin-server.ts', {
    BENCH_PRODUCTS: String(PRODUCTS),
    BENCH_DATABASE_URL: database.url,
  });
  console.log(
    `seeded ${sg.ready.products} products in ${sg.ready.seedSeconds.toFixed(2)} s (${Math.round(sg.ready.products / sg.ready.seedSeconds)} products/s)`,
  );
  const headers = { host: 'bench.localhost', 'access-token': sg.ready.token };
  // Node's fetch will not send a Host header of our choosing; take the page bytes over node:http.
  const http = await import('node:http');
  const body: Buffer = await new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: sg.ready.port, path: PATH, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`status ${res.statusCode}`))));
      })
      .on('error', reject);
  });
  const items = JSON.parse(body.toString()).data.length;
  console.log(`page: ${items} products, ${body.length} bytes`);

  // Both servers stay up; rounds alternate between them so a change in machine load hits both alike.
  const bare = await startChild<{ port: number }>('./servers/admin-server.ts', {
    BENCH_BARE: '1',
    BENCH_BODY_B64: body.toString('base64'),
  });
  const rounds = Number(process.env.BENCH_ROUNDS ?? '3');
  const ours: Awaited<ReturnType<typeof load>>[] = [];
  const theirs: Awaited<ReturnType<typeof load>>[] = [];
  for (let i = 0; i < rounds; i++) {
    ours.push(await load(sg.child, sg.ready.port, headers));
    theirs.push(await load(bare.child, bare.ready.port, { host: 'bench.localhost' }));
  }
  await stopChild(sg.child);
  await stopChild(bare.child);
  const median = (xs: Awaited<ReturnType<typeof load>>[]) => [...xs].sort((a, b) => a.rps - b.rps)[Math.floor(xs.length / 2)]!;
  const medianCpu = (xs: Awaited<ReturnType<typeof load>>[]) =>
    [...xs].map((r) => r.cpuUs).sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const platform = { ...median(ours), errors: ours.reduce((n, r) => n + r.errors, 0), cpuUs: medianCpu(ours) };
  const baseline = { ...median(theirs), cpuUs: medianCpu(theirs) };
  console.log(
    `rounds (req/s): storegate ${ours.map((r) => r.rps.toFixed(0)).join(', ')}; bare ${theirs.map((r) => r.rps.toFixed(0)).join(', ')} (median shown below)`,
  );

  const ratio = platform.rps / baseline.rps;
  const kind = benchDatabaseKind() === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  const row = (name: string, r: typeof platform) =>
    `${name.padEnd(38)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${String(r.p50).padStart(3)} ms   p99 ${String(r.p99).padStart(3)} ms   server CPU ${r.cpuUs.toFixed(1).padStart(6)} µs/req   errors ${r.errors}`;
  console.log(row(`storegate list (auth+scope+${kind})`, platform));
  console.log(row('bare Fastify, same bytes', baseline));
  const pass = ratio >= 0.5 && platform.p99 < 20 && platform.errors === 0;
  console.log(
    `ratio storegate/bare: ${ratio.toFixed(2)}x, server CPU per request ${(platform.cpuUs / baseline.cpuUs).toFixed(2)}x the bare route's  (target >= 0.50x, p99 < 20 ms): ${pass ? 'PASS' : 'FAIL'}`,
  );
  report([
    {
      name: 'list page req/s (vs bare Fastify)',
      value: platform.rps,
      unit: 'req/s',
      ratio,
      target: '≥ 0.5x',
      pass: ratio >= 0.5 && platform.errors === 0,
    },
    { name: 'list page p99', value: platform.p99, unit: 'ms', target: '< 20 ms', pass: platform.p99 < 20 },
    { name: 'server CPU per page (vs bare Fastify)', value: platform.cpuUs, unit: 'µs', ratio: platform.cpuUs / baseline.cpuUs },
    { name: 'bare Fastify req/s', value: baseline.rps, unit: 'req/s' },
    { name: 'seed products/s', value: sg.ready.products / sg.ready.seedSeconds, unit: '/s' },
  ]);
} finally {
  await database.drop();
}
