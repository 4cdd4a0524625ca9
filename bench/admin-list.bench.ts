// npm run bench -- admin-list [--database sqlite|postgres://…|both]
// Authenticated, scope-checked lists of products from a store of 100,000, 50 connections, two
// workloads, each against baselines measured with the same load generator (autocannon) in the same
// run, rounds alternating between the servers so a change in machine load hits all alike:
// - one URL over and over (the first page of 50), no writes, against a bare Fastify route
//   answering that page's bytes from memory;
// - pages spread: each request a random one of BENCH_SPREAD (5,000) pages over the whole store
//   (seeded; both pagination conventions, forward and back, 50 a page and some 10 or 100), while
//   another store takes BENCH_WRITES_PER_S (20) product updates a second through the Admin API.
//   The platform is measured against a bare Fastify handler that
//   runs the same keyset statement on the same database and sends the same JSON (no auth, no
//   hooks: servers/bare-keyset.ts), and against the bytes from memory.
// Targets (spread + writes): >= 0.7x the bare keyset handler, p99 < 20 ms; >= 0.3x (SQLite),
// 0.2x (PostgreSQL) the bytes from memory. Beside the rates it prints the platform's CPU per page
// and, on PostgreSQL, the database server's, read from /proc (bench/cpu.ts).
// Knobs: BENCH_SECONDS (5), BENCH_ROUNDS (3), BENCH_PRODUCTS (100000), BENCH_SPREAD (5000),
// BENCH_WRITES_PER_S (20), BENCH_SEED (23), BENCH_RATE_LIMIT (off; e.g. 100000/100000 counts every
// call in the limiter without ever refusing one).
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import autocannon from 'autocannon';
import { startChild, stopChild } from './child.ts';
import { type CpuSpent, formatCpu, postgresDatabaseName, startCpuMeter } from './cpu.ts';
import { benchDatabaseKind, createBenchDatabase } from './database.ts';
import { report } from './report.ts';

const DURATION = Number(process.env.BENCH_SECONDS ?? '5');
const PRODUCTS = Number(process.env.BENCH_PRODUCTS ?? '100000');
const SPREAD = Number(process.env.BENCH_SPREAD ?? '5000');
const WRITES_PER_S = Number(process.env.BENCH_WRITES_PER_S ?? '20');
const PATH = '/openapi/2026-01/products?limit=50';
const postgres = benchDatabaseKind() === 'postgres';

interface Ready {
  port: number;
  token: string;
  products: number;
  seedSeconds: number;
  spread: string[];
  writer: { token: string; ids: number[] };
  storeId: number;
  cursorKey: string;
}

interface Run {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  requests: number;
  cpu: CpuSpent;
  writes: number;
}

/** Product updates on the writer store at `perSecond`, until stopped; counts the ones answered 200. */
function startWrites(port: number, writer: Ready['writer'], perSecond: number) {
  // Enough sockets that a slow answer does not hold the next write back: the rate is the timer's.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  let done = 0;
  let failed = 0;
  let n = 0;
  const timer = setInterval(() => {
    const id = writer.ids[n++ % writer.ids.length];
    const body = JSON.stringify({ inventory_quantity: n });
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        agent,
        method: 'PUT',
        path: `/openapi/2026-01/products/${id}`,
        headers: { host: 'writer.localhost', 'access-token': writer.token, 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        if (res.statusCode === 200) done++;
        else failed++;
      },
    );
    req.on('error', () => failed++);
    req.end(body);
  }, 1000 / perSecond);
  return {
    stop() {
      clearInterval(timer);
      agent.destroy();
      return { done, failed };
    },
  };
}

async function load(
  child: ChildProcess,
  port: number,
  headers: Record<string, string>,
  options: { paths?: string[]; writes?: { port: number; writer: Ready['writer'] } } = {},
): Promise<Run> {
  let seed = 0x2323;
  const random = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 4294967296;
  };
  const paths = options.paths;
  const base = { url: `http://127.0.0.1:${port}${PATH}`, connections: 50, pipelining: 1, headers };
  const pick = (r: autocannon.Request) => ({ ...r, path: paths![Math.floor(random() * paths!.length)]! });
  const opts: autocannon.Options = paths ? { ...base, requests: [{ setupRequest: pick }] } : base;
  await autocannon({ ...opts, duration: 1 }); // warm-up
  const writes = options.writes ? startWrites(options.writes.port, options.writes.writer, WRITES_PER_S) : undefined;
  const meter = startCpuMeter({ platformPid: child.pid, postgresDatabase: postgres ? postgresDatabaseName(database.url) : undefined });
  const r = await autocannon({ ...opts, duration: DURATION });
  const cpu = meter.stop();
  const w = writes?.stop();
  if (w && w.failed > 0) console.log(`  (${w.failed} writes failed)`);
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.non2xx,
    requests: r.requests.total,
    cpu,
    writes: w ? w.done / DURATION : 0,
  };
}

function get(port: number, path: string, headers: Record<string, string>): Promise<Buffer> {
  // Node's fetch will not send a Host header of our choosing; take the bytes over node:http.
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`status ${res.statusCode} for ${path}`)),
        );
      })
      .on('error', reject);
  });
}

const cpuOf = (r: Run) => ({
  platform: r.cpu.platformUs === undefined || r.requests === 0 ? Number.NaN : r.cpu.platformUs / r.requests,
  server: r.cpu.serverUs === undefined || r.requests === 0 ? Number.NaN : r.cpu.serverUs / r.requests,
});

/** The round with the median rate; errors summed over all rounds. */
function median(xs: Run[]): Run {
  const m = [...xs].sort((a, b) => a.rps - b.rps)[Math.floor(xs.length / 2)]!;
  return { ...m, errors: xs.reduce((n, r) => n + r.errors, 0) };
}

const database = await createBenchDatabase('admin_list');
try {
  const sg = await startChild<Ready>('./servers/admin-server.ts', {
    BENCH_PRODUCTS: String(PRODUCTS),
    BENCH_DATABASE_URL: database.url,
    BENCH_SPREAD: String(SPREAD),
    BENCH_WRITER: '1',
  });
  const ready = sg.ready;
  console.log(
    `seeded ${ready.products} products in ${ready.seedSeconds.toFixed(2)} s (${Math.round(ready.products / ready.seedSeconds)} products/s)`,
  );
  const headers = { host: 'bench.localhost', 'access-token': ready.token };
  const body = await get(ready.port, PATH, headers);
  console.log(`page: ${JSON.parse(body.toString()).data.length} products, ${body.length} bytes; spread over ${ready.spread.length} pages`);

  const bare = await startChild<{ port: number }>('./servers/admin-server.ts', {
    BENCH_BARE: '1',
    BENCH_BODY_B64: body.toString('base64'),
  });
  const keyset = await startChild<{ port: number }>('./servers/bare-keyset.ts', {
    BENCH_DATABASE_URL: database.url,
    BENCH_STORE_ID: String(ready.storeId),
    BENCH_CURSOR_KEY: ready.cursorKey,
  });
  // The baseline answers what the platform answers, byte for byte.
  for (const path of [PATH, ...ready.spread.slice(0, 20)]) {
    const [ours, theirs] = [await get(ready.port, path, headers), await get(keyset.ready.port, path, { host: 'bench.localhost' })];
    if (!ours.equals(theirs)) throw new Error(`the keyset baseline answers other bytes than the platform for ${path}`);
  }
  const rounds = Number(process.env.BENCH_ROUNDS ?? '3');
  const runs = {
    one: [] as Run[],
    oneBare: [] as Run[],
    plain: [] as Run[],
    keyset: [] as Run[],
    spreadBare: [] as Run[],
  };
  const writes = { port: ready.port, writer: ready.writer };
  const bareHeaders = { host: 'bench.localhost' };
  for (let i = 0; i < rounds; i++) {
    runs.one.push(await load(sg.child, ready.port, headers));
    runs.oneBare.push(await load(bare.child, bare.ready.port, bareHeaders));
    runs.plain.push(await load(sg.child, ready.port, headers, { paths: ready.spread, writes }));
    runs.keyset.push(await load(keyset.child, keyset.ready.port, bareHeaders, { paths: ready.spread, writes }));
    runs.spreadBare.push(await load(bare.child, bare.ready.port, bareHeaders, { writes }));
  }
  await stopChild(sg.child);
  await stopChild(bare.child);
  await stopChild(keyset.child);
  const list = (xs: Run[]) => xs.map((r) => r.rps.toFixed(0)).join(', ');
  console.log(
    `rounds (req/s): one URL ${list(runs.one)}, bytes ${list(runs.oneBare)}; spread+writes storegate ${list(runs.plain)}, ` +
      `bare keyset ${list(runs.keyset)}, bytes ${list(runs.spreadBare)} (medians below)`,
  );
  const m = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, median(v)])) as Record<keyof typeof runs, Run>;
  const kind = postgres ? 'PostgreSQL' : 'SQLite';
  const row = (name: string, r: Run) =>
    `${name.padEnd(44)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${String(r.p50).padStart(3)} ms  p99 ${String(r.p99).padStart(3)} ms  ` +
    `${formatCpu(r.cpu, r.requests, 'page')}  errors ${r.errors}${r.writes ? `  (writes ${r.writes.toFixed(1)}/s elsewhere)` : ''}`;
  console.log(`one URL, no writes:`);
  console.log(row(`  storegate list (auth+scope+${kind})`, m.one));
  console.log(row('  bare Fastify, same bytes from memory', m.oneBare));
  console.log(`pages spread + writes elsewhere:`);
  console.log(row(`  storegate list (auth+scope+${kind})`, m.plain));
  console.log(row(`  bare Fastify keyset handler (${kind})`, m.keyset));
  console.log(row('  bare Fastify, bytes from memory', m.spreadBare));

  const best = m.plain;
  const vsKeyset = best.rps / m.keyset.rps;
  const vsBytes = best.rps / m.spreadBare.rps;
  const bytesTarget = postgres ? 0.2 : 0.3;
  console.log(
    `spread+writes: ${vsKeyset.toFixed(2)}x the bare keyset handler (target >= 0.70x), ` +
      `${vsBytes.toFixed(2)}x the bytes from memory (target >= ${bytesTarget.toFixed(2)}x), p99 ${best.p99} ms (target < 20 ms)`,
  );
  const ok = best.errors === 0;
  report([
    {
      name: 'spread+writes pages/s (vs bare keyset handler)',
      value: best.rps,
      unit: 'req/s',
      ratio: vsKeyset,
      target: '≥ 0.7x',
      pass: ok && vsKeyset >= 0.7,
    },
    {
      name: 'spread+writes pages/s (vs bytes from memory)',
      value: best.rps,
      unit: 'req/s',
      ratio: vsBytes,
      target: `≥ ${bytesTarget}x`,
      pass: ok && vsBytes >= bytesTarget,
    },
    { name: 'spread+writes p99', value: best.p99, unit: 'ms', target: '< 20 ms', pass: best.p99 < 20 },
    { name: 'spread+writes platform CPU per page', value: cpuOf(best).platform, unit: 'µs' },
    ...(postgres ? [{ name: 'spread+writes PostgreSQL CPU per page', value: cpuOf(best).server, unit: 'µs' }] : []),
    { name: 'bare keyset handler pages/s', value: m.keyset.rps, unit: 'req/s' },
    { name: 'bare keyset platform CPU per page', value: cpuOf(m.keyset).platform, unit: 'µs' },
    { name: 'one URL pages/s (vs bytes from memory)', value: m.one.rps, unit: 'req/s', ratio: m.one.rps / m.oneBare.rps },
    { name: 'one URL p99', value: m.one.p99, unit: 'ms' },
    { name: 'one URL platform CPU per page', value: cpuOf(m.one).platform, unit: 'µs' },
    { name: 'seed products/s', value: ready.products / ready.seedSeconds, unit: '/s' },
  ]);
} finally {
  await database.drop();
}
