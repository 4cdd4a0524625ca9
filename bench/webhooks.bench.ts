// npm run bench -- webhooks [--database sqlite|postgres://…|both]
// The webhook delivery pipeline against a bare loop of the same signed POSTs, in the same run.
// Processes: the receivers (answer 200 at once, note each receipt), the platform (HTTP API and its
// in-process delivery worker) and this load generator. Three measurements:
//  1. bare: a keep-alive loop (undici, BENCH_PER_ORIGIN connections per receiver, the worker's
//     default) posting the body of a products/create event with every header a delivery carries,
//     both HMAC-SHA256 signatures computed per POST: deliveries/s from first to last receipt.
//  2. drain: BENCH_BACKLOG_EVENTS events (x one subscription per receiver) committed in one
//     transaction and drained by the platform's one worker: deliveries/s from first to last
//     receipt, as a ratio of (1) measured in the same round. Target >= 0.5x.
//     Rounds alternate bare and drain (BENCH_ROUNDS) so a change in machine load hits both.
//  3. paced: products created through the Admin API at BENCH_COMMITS_PER_SECOND (each fans out to
//     every subscription) while BENCH_READERS read product pages: commit-to-receipt p50/p99
//     (target p50 < 50 ms) and the reads against the same reads without writes.
import { createHmac, randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { Pool } from 'undici';
import { startChild, stopChild } from './child.ts';
import { type CpuSpent, cpuRows, formatCpu, postgresDatabaseName, startCpuMeter } from './cpu.ts';
import { createBenchDatabase } from './database.ts';
import { report } from './report.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? '5');
const BARE_SECONDS = Number(process.env.BENCH_BARE_SECONDS ?? '3');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '3');
const BACKLOG_EVENTS = Number(process.env.BENCH_BACKLOG_EVENTS ?? '3000');
const WRITERS = Number(process.env.BENCH_WRITERS ?? '16');
/** Offered load: product creations per second, paced (each one fans out to every subscription). */
const COMMITS_PER_SECOND = Number(process.env.BENCH_COMMITS_PER_SECOND ?? '260');
const READERS = Number(process.env.BENCH_READERS ?? '4');
const RECEIVERS = Number(process.env.BENCH_RECEIVERS ?? '8');
/** The worker's default requests in flight per origin. */
const PER_ORIGIN = Number(process.env.BENCH_PER_ORIGIN || '8');

interface ReceiverStats {
  received: number;
  unique: number;
  duplicates: number;
  first: number;
  last: number;
  p50: number;
  p99: number;
  max: number;
}

function ask<T>(child: ChildProcess, message: { type: string; [k: string]: unknown }): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { type: string }) => {
      if (m.type === message.type) {
        child.off('message', on);
        resolve(m as T);
      }
    };
    child.on('message', on);
    child.send(message);
  });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const database = await createBenchDatabase('webhooks');
const rx = await startChild<{ ports: number[] }>('./servers/webhook-receiver.ts', { BENCH_RECEIVERS: String(RECEIVERS) });
const sg = await startChild<{ port: number; token: string; sample: { body: string; shopDomain: string } }>(
  './servers/webhook-platform.ts',
  {
    BENCH_DATABASE_URL: database.url,
    BENCH_RECEIVER_PORTS: rx.ready.ports.join(','),
    BENCH_PER_ORIGIN: String(PER_ORIGIN),
  },
);
const postgres = database.kind === 'postgres';
/** A CPU window over the platform process and, on PostgreSQL, the server processes of this run's database. */
const cpuMeter = () =>
  startCpuMeter({ platformPid: sg.child.pid, ...(postgres ? { postgresDatabase: postgresDatabaseName(database.url) } : {}) });
const rate = (s: ReceiverStats) => (s.last > s.first ? s.unique / ((s.last - s.first) / 1000) : 0);

/** Waits until the receivers have `expected` distinct deliveries (or `timeoutMs` passed), then their stats. */
async function receipts(expected: number, timeoutMs: number): Promise<ReceiverStats> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    if ((await ask<{ unique: number }>(rx.child, { type: 'count' })).unique >= expected) break;
    await sleep(50);
  }
  return ask<ReceiverStats>(rx.child, { type: 'stats' });
}

// 1. The bare loop: what one process can push through keep-alive connections to these receivers.
const secret = randomBytes(24).toString('base64url');
async function bareLoop(seconds: number): Promise<ReceiverStats> {
  await ask(rx.child, { type: 'reset' });
  const { body, shopDomain } = sg.ready.sample;
  const pools = rx.ready.ports.map((port) => new Pool(`http://127.0.0.1:${port}`, { connections: PER_ORIGIN, pipelining: 1 }));
  const end = performance.now() + seconds * 1000;
  const eventAt = new Date().toISOString();
  let seq = 0;
  const post = async (pool: Pool) => {
    while (performance.now() < end) {
      const id = `wh_bare_${++seq}`;
      const timestamp = Math.floor(Date.now() / 1000);
      const res = await pool.request({
        path: '/hooks',
        method: 'POST',
        body,
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': 'storegate-webhooks/1',
          'X-Service-Hmac-Sha256': createHmac('sha256', secret).update(body).digest('base64'),
          'X-Service-Topic': 'products/create',
          'X-Service-Shop-Domain': shopDomain,
          'X-Service-Api-Version': '2026-01',
          'X-Service-Webhook-Id': id,
          'X-Service-Event-Id': `evt_bare_${seq}`,
          'X-Service-Triggered-At': eventAt,
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': `v1,${createHmac('sha256', secret).update(`${id}.${timestamp}.`).update(body).digest('base64')}`,
        },
      });
      await res.body.dump();
    }
  };
  await Promise.all(pools.flatMap((pool) => Array.from({ length: PER_ORIGIN }, () => post(pool))));
  await Promise.all(pools.map((p) => p.close()));
  return ask<ReceiverStats>(rx.child, { type: 'stats' });
}

// 2. The drain: a backlog committed at once, sent by the platform's worker.
// Its CPU window covers the commit of the backlog as well as the sends: both are part of a delivery.
async function drain(): Promise<{ stats: ReceiverStats; deliveries: number; commitSeconds: number; cpu: CpuSpent }> {
  await ask(rx.child, { type: 'reset' });
  const meter = cpuMeter();
  const committed = await ask<{ deliveries: number; seconds: number }>(sg.child, { type: 'backlog', events: BACKLOG_EVENTS });
  const stats = await receipts(committed.deliveries, 120_000);
  return { stats, deliveries: committed.deliveries, commitSeconds: committed.seconds, cpu: meter.stop() };
}

// 3. Paced writes through the API with readers beside them.
const pool = new Pool(`http://127.0.0.1:${sg.ready.port}`, { connections: WRITERS + READERS, pipelining: 1 });
const headers = { host: 'bench.localhost', 'access-token': sg.ready.token };

async function timed(method: 'GET' | 'POST', path: string, body: string | undefined, into: number[], errors: { n: number }): Promise<void> {
  const t0 = performance.now();
  const res = await pool.request({
    method,
    path,
    headers: body ? { ...headers, 'content-type': 'application/json' } : headers,
    ...(body ? { body } : {}),
  });
  await res.body.arrayBuffer();
  into.push(performance.now() - t0);
  if (res.statusCode >= 300) errors.n++;
}

/** Creates products at a fixed rate (not as fast as possible), at most WRITERS in flight. */
async function pacedWrites(end: number, into: number[], errors: { n: number }, next: () => number): Promise<void> {
  const started = performance.now();
  const pending = new Set<Promise<void>>();
  for (let i = 0; ; i++) {
    const due = started + (i * 1000) / COMMITS_PER_SECOND;
    if (due >= end) break;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    if (pending.size >= WRITERS) await Promise.race(pending);
    const p: Promise<void> = timed(
      'POST',
      '/openapi/2026-01/products',
      JSON.stringify({ title: `bench ${next()}`, price: '9.99' }),
      into,
      errors,
    ).finally(() => pending.delete(p));
    pending.add(p);
  }
  await Promise.all(pending);
}

async function paced(withWrites: boolean, seconds: number) {
  const reads: number[] = [];
  const writes: number[] = [];
  const errors = { n: 0 };
  const end = performance.now() + seconds * 1000;
  let seq = 0;
  const started = performance.now();
  await Promise.all([
    ...Array.from({ length: READERS }, async () => {
      while (performance.now() < end) await timed('GET', '/openapi/2026-01/products?limit=50', undefined, reads, errors);
    }),
    ...(withWrites ? [pacedWrites(end, writes, errors, () => ++seq)] : []),
  ]);
  return { reads, writes, errors: errors.n, elapsed: (performance.now() - started) / 1000 };
}

// Warm-up: connections, JIT and statement caches on both sides.
await bareLoop(1);
await drain();
const rounds: { bare: ReceiverStats; drain: Awaited<ReturnType<typeof drain>> }[] = [];
for (let i = 0; i < ROUNDS; i++) rounds.push({ bare: await bareLoop(BARE_SECONDS), drain: await drain() });

await ask(rx.child, { type: 'reset' });
await paced(true, 1);
await receipts(Number.POSITIVE_INFINITY, 1000);
const baseline = await paced(false, SECONDS);
await ask(rx.child, { type: 'reset' });
await ask(sg.child, { type: 'claims' });
// The paced window's CPU covers the API writes and reads as well as the deliveries.
const pacedMeter = cpuMeter();
const loaded = await paced(true, SECONDS);
const expected = loaded.writes.length * RECEIVERS;
const latency = await receipts(expected, 30_000);
const pacedCpu = pacedMeter.stop();
const claims = await ask<{
  ageP50: number;
  ageP99: number;
  claims: number;
  meanSize: number;
  loopDelayP50: number;
  loopDelayP99: number;
  busy: number;
}>(sg.child, { type: 'claims' });
const attempts = (await ask<{ attempts: number }>(sg.child, { type: 'stats' })).attempts;
await pool.close();
await stopChild(sg.child);
await stopChild(rx.child);
await database.drop();

console.log(
  `${RECEIVERS} receivers, ${PER_ORIGIN} connections each (bare) / ${PER_ORIGIN} requests in flight per origin (worker); body ${sg.ready.sample.body.length} bytes`,
);
const ratios: number[] = [];
let lost = 0;
for (const [i, r] of rounds.entries()) {
  const ratio = rate(r.drain.stats) / rate(r.bare);
  ratios.push(ratio);
  lost += r.drain.deliveries - r.drain.stats.unique;
  console.log(
    `round ${i + 1}: bare ${rate(r.bare).toFixed(0)} POST/s (${r.bare.unique} in ${((r.bare.last - r.bare.first) / 1000).toFixed(2)} s); ` +
      `drain ${rate(r.drain.stats).toFixed(0)} deliveries/s (${r.drain.stats.unique}/${r.drain.deliveries} in ${((r.drain.stats.last - r.drain.stats.first) / 1000).toFixed(2)} s, ` +
      `${r.drain.stats.duplicates} duplicates; backlog committed in ${r.drain.commitSeconds.toFixed(2)} s) = ${ratio.toFixed(2)}x; ` +
      formatCpu(r.drain.cpu, r.drain.deliveries, 'delivery'),
  );
}
const ratio = median(ratios);
const mid = rounds[ratios.indexOf(ratio)] ?? {
  bare: latency,
  drain: { stats: latency, deliveries: 0, cpu: { platformUs: undefined, serverUs: undefined } },
};
console.log(
  `offered ${COMMITS_PER_SECOND} commits/s x ${RECEIVERS} subscriptions = ${COMMITS_PER_SECOND * RECEIVERS} deliveries/s for ${SECONDS} s: ` +
    `${loaded.writes.length} commits in ${loaded.elapsed.toFixed(1)} s -> ${expected} deliveries expected, ${latency.unique} received (${latency.duplicates} duplicates), ${rate(latency).toFixed(0)} deliveries/s`,
);
console.log(
  `commit-to-receipt latency: p50 ${latency.p50.toFixed(1)} ms   p99 ${latency.p99.toFixed(1)} ms   max ${latency.max.toFixed(1)} ms   (worker attempts in all: ${attempts})`,
);
console.log(
  `  of which commit to claimed (write, sync, wake-up, claim): p50 ${claims.ageP50} ms   p99 ${claims.ageP99} ms; ${claims.claims} claims of ${claims.meanSize.toFixed(1)} deliveries on average; ` +
    `platform process: event loop busy ${(claims.busy * 100).toFixed(0)}%, delay p50 ${claims.loopDelayP50.toFixed(1)} ms p99 ${claims.loopDelayP99.toFixed(1)} ms`,
);
console.log(`  paced phase: ${formatCpu(pacedCpu, latency.unique, 'delivery (with its API write and the reads beside it)')}`);
const row = (name: string, xs: number[], elapsed: number) =>
  `${name.padEnd(44)} ${(xs.length / elapsed).toFixed(0).padStart(6)} req/s   p50 ${pct(xs, 50).toFixed(1).padStart(6)} ms   p99 ${pct(xs, 99).toFixed(1).padStart(6)} ms`;
console.log(row('API reads (50 products), no webhook load', baseline.reads, baseline.elapsed));
console.log(row('API reads (50 products), during the load', loaded.reads, loaded.elapsed));
console.log(row('API writes (create product + outbox)', loaded.writes, loaded.elapsed));
const errors = baseline.errors + loaded.errors;
console.log(`errors: ${errors}; drain deliveries not received: ${lost}`);
const readRate = (r: typeof baseline) => r.reads.length / r.elapsed;
report([
  { name: 'bare signed-POST loop', value: rate(mid.bare), unit: 'POST/s' },
  {
    name: 'drain by one worker (median round)',
    value: rate(mid.drain.stats),
    unit: 'deliveries/s',
    ratio,
    target: '≥ 0.5x',
    pass: ratio >= 0.5 && lost === 0,
  },
  {
    name: 'commit-to-receipt p50 (paced)',
    value: latency.p50,
    unit: 'ms',
    target: '< 50 ms',
    pass: latency.p50 < 50 && latency.unique === expected,
  },
  ...cpuRows(mid.drain.cpu, mid.drain.deliveries, 'delivery (drain)', postgres),
  { name: 'commit-to-receipt p99 (paced)', value: latency.p99, unit: 'ms' },
  { name: 'deliveries received (paced)', value: rate(latency), unit: 'deliveries/s' },
  {
    name: 'API reads during the paced load',
    value: readRate(loaded),
    unit: 'req/s',
    ratio: readRate(loaded) / readRate(baseline),
    pass: errors === 0,
  },
]);
