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
// Beside it, the idle RSS of `storegate serve --seed-demo` as `npm start` runs it (development
// mode, a fresh SQLite file), at BENCH_IDLE_MS and again 15 s later, once the WAL checkpointing
// thread the seed's writes started has ended. CPU per request of each server under the load, read
// from /proc (bench/cpu.ts).
// Targets (SQLite node): idle < 100 MiB, peak < 200 MiB (MiB as the kernel counts VmRSS).
// Both nodes are started as operators start them: the bin itself, with no NODE_OPTIONS (the bin
// sets what the node needs); BENCH_NODE_OPTIONS gives them some (e.g. --max-semi-space-size=16).
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatCpu, startCpuMeter } from './cpu.ts';
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
  startDemo,
  startNode,
  stopProcess,
} from './servers/memory-node.ts';

const PRODUCTS = Number(process.env.BENCH_PRODUCTS ?? '20000');
const SECONDS = Number(process.env.BENCH_SECONDS ?? '60');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? '32');
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? '5000');
const IDLE_TARGET = 100;
const NODE_OPTIONS = process.env.BENCH_NODE_OPTIONS ?? '';
/** After the seed's last write the checkpointing thread lives 15 s (storage/wal-checkpointer.ts). */
const CHECKPOINTER_IDLE_MS = 15_000;
const PEAK_TARGET = 200;

interface Measured {
  idle: number;
  peak: number;
  end: number;
  requests: number;
  errors: number;
  statuses: Record<string, number>;
  /** CPU time of the server process over the load window, µs. */
  cpuUs: number | undefined;
}

async function measure(pid: number, port: number, node: Awaited<ReturnType<typeof prepareDatabase>>): Promise<Measured> {
  await sleep(IDLE_MS);
  const idle = rssMiB(pid);
  const until = sleep(SECONDS * 1000);
  const cpu = startCpuMeter({ platformPid: pid });
  const [samples, load] = await Promise.all([
    sampleRss(pid, 250, until),
    runLoad(port, node, { connections: CONNECTIONS, pauseMs: 0, until }),
  ]);
  const cpuUs = cpu.stop().platformUs;
  return { idle, peak: Math.max(...samples), end: rssMiB(pid), ...load, cpuUs };
}

/** Idle RSS of `storegate serve --seed-demo` on a fresh file: at IDLE_MS, and once the checkpointer has ended. */
async function measureDemo(): Promise<{ idle: number; settled: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'sg-memory-demo-'));
  try {
    const demo = await startDemo(join(dir, 'storegate.db'), NODE_OPTIONS ? { NODE_OPTIONS } : {});
    try {
      await sleep(IDLE_MS);
      const idle = rssMiB(demo.child.pid!);
      await sleep(CHECKPOINTER_IDLE_MS);
      return { idle, settled: rssMiB(demo.child.pid!) };
    } finally {
      await stopProcess(demo.child);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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

  const demo = await measureDemo();
  const bare = await startBare();
  const base = await measure(bare.child.pid!, bare.port, node).finally(() => stopProcess(bare.child));
  const sg = await startNode(database.url, node.masterKey, NODE_OPTIONS ? { NODE_OPTIONS } : {});
  const ours = await measure(sg.child.pid!, sg.port, node).finally(() => stopProcess(sg.child));

  const line = (name: string, m: Measured) =>
    console.log(
      `${name.padEnd(36)} idle ${m.idle.toFixed(1).padStart(6)} MiB   peak ${m.peak.toFixed(1).padStart(6)} MiB   after load ${m.end.toFixed(1).padStart(6)} MiB   ${Math.round(m.requests / SECONDS)} req/s, errors ${m.errors}${m.errors ? ` ${JSON.stringify(m.statuses)}` : ''}; ` +
        formatCpu({ platformUs: m.cpuUs, serverUs: undefined }, m.requests, 'request'),
    );
  console.log(
    `${SECONDS} s of load, ${CONNECTIONS} connections (of every 8: 6 list pages, 1 creating products, 1 refreshing tokens); load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  line(`storegate serve (compiled, production)`, ours);
  console.log(`  (the bin started as an operator does; NODE_OPTIONS ${NODE_OPTIONS === '' ? 'unset' : NODE_OPTIONS})`);
  console.log(
    `storegate serve --seed-demo (npm start) idle ${demo.idle.toFixed(1).padStart(6)} MiB   ` +
      `${CHECKPOINTER_IDLE_MS / 1000} s later ${demo.settled.toFixed(1).padStart(6)} MiB (the seed's checkpointing thread ended)`,
  );
  line('bare Fastify (same routes from memory)', base);
  const idleOk = ours.idle < IDLE_TARGET;
  const demoOk = demo.idle < IDLE_TARGET;
  const peakOk = ours.peak < PEAK_TARGET;
  console.log(`ratio storegate/bare: idle ${(ours.idle / base.idle).toFixed(2)}x, peak ${(ours.peak / base.peak).toFixed(2)}x`);
  console.log(
    `idle < ${IDLE_TARGET} MiB: ${idleOk ? 'PASS' : 'FAIL'} (--seed-demo: ${demoOk ? 'PASS' : 'FAIL'})   ` +
      `peak < ${PEAK_TARGET} MiB: ${peakOk ? 'PASS' : 'FAIL'}`,
  );
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
    {
      name: 'idle RSS, serve --seed-demo (MiB)',
      value: demo.idle,
      unit: 'MiB',
      ratio: demo.idle / base.idle,
      target: `< ${IDLE_TARGET} MiB`,
      pass: demoOk,
    },
    { name: 'requests/s during the peak window', value: ours.requests / SECONDS, unit: 'req/s', ratio: ours.requests / base.requests },
    {
      name: 'platform CPU per request under load',
      value: ours.cpuUs === undefined ? Number.NaN : ours.cpuUs / ours.requests,
      unit: 'µs',
      ratio: ours.cpuUs === undefined || base.cpuUs === undefined ? undefined : ours.cpuUs / ours.requests / (base.cpuUs / base.requests),
    },
  ]);
} finally {
  await database.drop();
}
if (failed) process.exitCode = 1;
