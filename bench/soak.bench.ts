// npm run bench -- soak [--database sqlite|postgres://…|both]
// The node of bench/memory.bench.ts (compiled `storegate serve`, production mode, the same
// prepared database) under steady moderate load for BENCH_SOAK_MINUTES (10): BENCH_SOAK_CONNECTIONS
// (8) connections in the same mix (list pages at varying cursors, product creations, refresh
// grants), each pausing BENCH_SOAK_PAUSE_MS (5) after every answer. Every 30 s it prints the RSS
// and V8's heapUsed (from the node's own /metrics, scraped as Prometheus would). It exits non-zero
// when the RSS climbs (the rule is at `climbs` below) or when any request failed.
// Baseline in the same run: a bare Fastify server under the same load for the first two minutes
// (its RSS is flat, so the ratio shows what of the node's footprint is the node's own).
// Target: flat, peak < 150 MiB; the node's CPU per request over the soak is printed beside it.
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { request } from 'undici';
import { formatCpu, startCpuMeter } from './cpu.ts';
import { createBenchDatabase } from './database.ts';
import { report } from './report.ts';
import {
  ensureBuild,
  prepareDatabase,
  rssMiB,
  runLoad,
  sleep,
  startBare,
  startLoad,
  startNode,
  stopProcess,
} from './servers/memory-node.ts';

const MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? '10');
const CONNECTIONS = Number(process.env.BENCH_SOAK_CONNECTIONS ?? '8');
const PAUSE_MS = Number(process.env.BENCH_SOAK_PAUSE_MS ?? '5');
const PRODUCTS = Number(process.env.BENCH_PRODUCTS ?? '20000');
const PRINT_EVERY_MS = 30_000;
const SAMPLE_EVERY_MS = 5_000;
/** Least-squares slope over the second half above this is a climb (MiB per minute). */
const SLOPE_LIMIT = 1;
/** The last third's median above the middle third's by more than this is a climb (MiB). */
const STEP_LIMIT = 4;
const BASELINE_MINUTES = Math.min(2, MINUTES);
const PEAK_TARGET = 150;

if (!(MINUTES > 0)) throw new Error(`BENCH_SOAK_MINUTES: expected a positive number, got "${process.env.BENCH_SOAK_MINUTES}"`);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Slope (per minute) of the least-squares line through (minute, MiB) points. */
function slopePerMinute(points: { minute: number; rss: number }[]): number {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.minute, 0) / n;
  const my = points.reduce((s, p) => s + p.rss, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.minute - mx) * (p.rss - my);
    den += (p.minute - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/**
 * Whether the RSS climbs. The first half of the run is warm-up: V8 grows its young generation and
 * old space to what the load needs, SQLite fills its page cache and prepared statements, the
 * caches of list pages and tokens fill to their bounds; a healthy node is flat after that. A leak
 * is a steady rise, so two independent signs must agree before the run fails: the least-squares
 * slope over the second half (every 5 s sample) is above SLOPE_LIMIT MiB/min (1 MiB/min is 1.4 GiB
 * a day: a node would not last a week), and the median of the last third is above the median of
 * the middle third by more than STEP_LIMIT MiB. The slope alone is moved by one garbage
 * collection near either end of the window; the medians alone by one late step that then stays
 * flat (an old-space page kept, a cache reaching its bound). A real leak moves both.
 */
function climbs(points: { minute: number; rss: number }[]): { slope: number; step: number; climbing: boolean } {
  const secondHalf = points.slice(Math.floor(points.length / 2));
  const third = Math.floor(points.length / 3);
  const middle = points.slice(third, 2 * third).map((p) => p.rss);
  const last = points.slice(2 * third).map((p) => p.rss);
  const slope = slopePerMinute(secondHalf);
  const step = middle.length && last.length ? median(last) - median(middle) : 0;
  return { slope, step, climbing: slope > SLOPE_LIMIT && step > STEP_LIMIT };
}

async function heapUsedMiB(port: number, token: string): Promise<number | undefined> {
  try {
    const res = await request(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    const text = await res.body.text();
    const m = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
    return m ? Number(m[1]) / 2 ** 20 : undefined;
  } catch {
    return undefined;
  }
}

await ensureBuild();
const database = await createBenchDatabase('soak');
let failed = false;
try {
  const node = await prepareDatabase(database.url, PRODUCTS, CONNECTIONS);

  // Baseline: the bare server's RSS under the same load, for the ratio.
  const bare = await startBare();
  let bareRss: number;
  try {
    const until = sleep(BASELINE_MINUTES * 60_000);
    const samples: number[] = [];
    const sampling = (async () => {
      let done = false;
      void until.then(() => (done = true));
      while (!done) {
        await sleep(SAMPLE_EVERY_MS);
        samples.push(rssMiB(bare.child.pid!));
      }
    })();
    await Promise.all([runLoad(bare.port, node, { connections: CONNECTIONS, pauseMs: PAUSE_MS, until }), sampling]);
    bareRss = median(samples.slice(Math.floor(samples.length / 2)));
  } finally {
    await stopProcess(bare.child);
  }
  console.log(`bare Fastify under the same load for ${BASELINE_MINUTES} min: RSS ${bareRss.toFixed(1)} MiB (median of the second half)`);

  const metricsToken = randomBytes(16).toString('hex');
  // As in bench/memory.bench.ts: none, the bin sets what the node needs.
  const nodeOptions = process.env.BENCH_NODE_OPTIONS ?? '';
  const sg = await startNode(database.url, node.masterKey, {
    METRICS_TOKEN: metricsToken,
    ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
  });
  const pid = sg.child.pid!;
  const started = performance.now();
  const minute = () => (performance.now() - started) / 60_000;
  const until = sleep(MINUTES * 60_000);
  const points: { minute: number; rss: number }[] = [];
  console.log(
    `storegate serve (compiled, production) for ${MINUTES} min, ${CONNECTIONS} connections pausing ${PAUSE_MS} ms; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(`  ${'min'.padStart(5)} ${'RSS MiB'.padStart(8)} ${'heapUsed MiB'.padStart(13)} ${'requests'.padStart(9)}  load average`);
  const cpu = startCpuMeter({ platformPid: pid });
  const load = startLoad(sg.port, node, { connections: CONNECTIONS, pauseMs: PAUSE_MS, until });
  let done = false;
  void until.then(() => (done = true));
  let nextPrint = 0;
  try {
    while (!done) {
      const at = minute();
      points.push({ minute: at, rss: rssMiB(pid) });
      if (at * 60_000 >= nextPrint) {
        const heap = await heapUsedMiB(sg.port, metricsToken);
        console.log(
          `  ${at.toFixed(1).padStart(5)} ${points.at(-1)!.rss.toFixed(1).padStart(8)} ${(heap === undefined ? '?' : heap.toFixed(1)).padStart(13)} ${String(load.live.requests).padStart(9)}  ${loadavg()[0]!.toFixed(2)}`,
        );
        nextPrint += PRINT_EVERY_MS;
      }
      await sleep(SAMPLE_EVERY_MS);
    }
  } finally {
    await load.done;
  }
  const result = await load.done;
  const spent = cpu.stop();
  await stopProcess(sg.child);

  const verdict = climbs(points);
  const finalRss = median(points.slice(-Math.max(1, Math.floor(points.length / 6))).map((p) => p.rss));
  const peak = Math.max(...points.map((p) => p.rss));
  console.log(
    `requests ${result.requests} (${Math.round(result.requests / (MINUTES * 60))}/s), errors ${result.errors}${result.errors ? ` ${JSON.stringify(result.statuses)}` : ''}`,
  );
  console.log(formatCpu(spent, result.requests, 'request'));
  console.log(
    `RSS: peak ${peak.toFixed(1)} MiB, end ${finalRss.toFixed(1)} MiB (${(finalRss / bareRss).toFixed(2)}x bare); second-half slope ${verdict.slope.toFixed(2)} MiB/min (limit ${SLOPE_LIMIT}), last third − middle third ${verdict.step.toFixed(1)} MiB (limit ${STEP_LIMIT})`,
  );
  console.log(verdict.climbing ? 'FAIL: RSS climbs (both the slope and the step are over their limits)' : 'PASS: RSS is flat');
  if (verdict.climbing) failed = true;
  if (result.errors > 0) {
    console.log(`FAIL: ${result.errors} requests failed`);
    failed = true;
  }
  report([
    {
      name: 'soak RSS at the end (MiB)',
      value: finalRss,
      unit: 'MiB',
      // Under load, so not the idle target: the ratio to the bare server under the same load is the figure.
      ratio: finalRss / bareRss,
    },
    { name: 'soak RSS peak (MiB)', value: peak, unit: 'MiB', target: `< ${PEAK_TARGET} MiB`, pass: peak < PEAK_TARGET },
    {
      name: 'soak RSS slope, second half (MiB/min)',
      value: verdict.slope,
      unit: 'MiB/min',
      target: `flat (≤ ${SLOPE_LIMIT}/min or ≤ ${STEP_LIMIT} MiB step)`,
      pass: !verdict.climbing,
    },
    {
      name: 'platform CPU per request',
      value: spent.platformUs === undefined ? Number.NaN : spent.platformUs / result.requests,
      unit: 'µs',
    },
  ]);
} finally {
  await database.drop();
}
if (failed) process.exitCode = 1;
