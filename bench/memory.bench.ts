// npm run bench -- memory [--database sqlite|postgres://…|both]
// Resident memory of one node as operators run it: the compiled `storegate serve` (built first if
// this checkout has no current build), production mode, on a database holding a store with
// BENCH_PRODUCTS products (20,000), a private app's Access-Token and a public app installed with
// one refresh-token chain per connection.
//   idle: RSS once start-up has settled (BENCH_IDLE_MS, 5 s after the banner);
//   peak: the highest RSS sampled every 250 ms during BENCH_SECONDS (60) of full load from
//         BENCH_CONNECTIONS (32) keep-alive connections: of every 8, six loop over list pages at
//         varying cursors, one creates products, one refreshes tokens (bench/servers/memory-node.ts).
// Baseline in the same run: a bare Node process serving the same three routes from memory with a
// bare Fastify server (bench/servers/bare-fastify.mjs), idle and under the same load shape.
// Targets (SQLite node): idle < 100 MB, peak < 200 MB (MiB as the kernel counts VmRSS).
// BENCH_NODE_OPTIONS: the node's NODE_OPTIONS (default the production setting of docs/deploy.md).
import { loadavg } from 'node:os';
import { createBenchDatabase } from './database.ts';
import { report } from './report.ts';
import {
  ensureBuild,
  prepareDatabase,
  rssMiB,
  runLoad,
  sampleRss,
  sleep,
  startBare,
  startNode,
  stopProcess,
} from './servers/memory-node.ts';

const PRODUCTS = Number(process.env.BENCH_PRODUCTS ?? '20000');
const SECONDS = Number(process.env.BENCH_SECONDS ?? '60');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? '32');
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? '5000');
const IDLE_TARGET = 100;
// The node runs with the V8 setting docs/deploy.md gives for production nodes (a young generation
// of at most 2 × 4 MiB instead of 2 × 16 MiB); BENCH_NODE_OPTIONS= (empty) measures Node's defaults.
const NODE_OPTIONS = process.env.BENCH_NODE_OPTIONS ?? '--max-semi-space-size=4';
const PEAK_TARGET = 200;

interface Measured {
  idle: number;
  peak: number;
  end: number;
  requests: number;
  errors: number;
  statuses: Record<string, number>;
}

async function measure(pid: number, port: number, node: Awaited<ReturnType<typeof prepareDatabase>>): Promise<Measured> {
  await sleep(IDLE_MS);
  const idle = rssMiB(pid);
  const until = sleep(SECONDS * 1000);
  const [samples, load] = await Promise.all([
    sampleRss(pid, 250, until),
    runLoad(port, node, { connections: CONNECTIONS, pauseMs: 0, until }),
  ]);
  return { idle, peak: Math.max(...samples), end: rssMiB(pid), ...load };
}

await ensureBuild();
const database = await createBenchDatabase('memory');
let failed = false;
try {
  const started = performance.now();
  const node = await prepareDatabase(database.url, PRODUCTS, CONNECTIONS);
  console.log(
    `prepared: ${PRODUCTS} products, ${node.refreshTokens.length} refresh chains, ${node.cursors.length} cursors (${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );

  const bare = await startBare();
  const base = await measure(bare.child.pid!, bare.port, node).finally(() => stopProcess(bare.child));
  const sg = await startNode(database.url, node.masterKey, NODE_OPTIONS ? { NODE_OPTIONS } : {});
  const ours = await measure(sg.child.pid!, sg.port, node).finally(() => stopProcess(sg.child));

  const line = (name: string, m: Measured) =>
    console.log(
      `${name.padEnd(36)} idle ${m.idle.toFixed(1).padStart(6)} MiB   peak ${m.peak.toFixed(1).padStart(6)} MiB   after load ${m.end.toFixed(1).padStart(6)} MiB   ${Math.round(m.requests / SECONDS)} req/s, errors ${m.errors}${m.errors ? ` ${JSON.stringify(m.statuses)}` : ''}`,
    );
  console.log(
    `${SECONDS} s of load, ${CONNECTIONS} connections (of every 8: 6 list pages, 1 creating products, 1 refreshing tokens); load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  line(`storegate serve (compiled, production)`, ours);
  console.log(`  (node started with NODE_OPTIONS=${NODE_OPTIONS === '' ? '(none: Node defaults)' : NODE_OPTIONS})`);
  line('bare Fastify (same routes from memory)', base);
  const idleOk = ours.idle < IDLE_TARGET;
  const peakOk = ours.peak < PEAK_TARGET;
  console.log(`ratio storegate/bare: idle ${(ours.idle / base.idle).toFixed(2)}x, peak ${(ours.peak / base.peak).toFixed(2)}x`);
  console.log(`idle < ${IDLE_TARGET} MiB: ${idleOk ? 'PASS' : 'FAIL'}   peak < ${PEAK_TARGET} MiB: ${peakOk ? 'PASS' : 'FAIL'}`);
  // A run whose requests failed did not measure the load it claims to.
  if (ours.errors > 0) {
    console.log(`storegate answered ${ours.errors} requests with an error: the figures do not count`);
    failed = true;
  }
  report([
    { name: 'idle RSS (MiB)', value: ours.idle, unit: 'MiB', ratio: ours.idle / base.idle, target: `< ${IDLE_TARGET} MiB`, pass: idleOk },
    {
      name: 'peak RSS under load (MiB)',
      value: ours.peak,
      unit: 'MiB',
      ratio: ours.peak / base.peak,
      target: `< ${PEAK_TARGET} MiB`,
      pass: peakOk,
    },
    { name: 'requests/s during the peak window', value: ours.requests / SECONDS, unit: 'req/s', ratio: ours.requests / base.requests },
  ]);
} finally {
  await database.drop();
}
if (failed) process.exitCode = 1;
