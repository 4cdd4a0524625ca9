// npm run bench -- webhooks
// Deliveries per second from commit to a local receiver that answers 200 at once, on SQLite, with
// commit-to-receipt latency p50/p99, while the Admin API keeps answering. Three processes: the
// platform (HTTP API + its in-process delivery worker), the receivers, and this load generator,
// which creates products through the API at a fixed rate (each commit enqueues one delivery per
// subscription; BENCH_COMMITS_PER_SECOND, default 260, x 8 subscriptions) and
// at the same time reads product pages, timing both. Baseline in the same run: the same reads with
// no writes and no webhooks. Targets: >= 2,000 deliveries/s, p50 < 50 ms.
import type { ChildProcess } from 'node:child_process';
import { Pool } from 'undici';
import { startChild, stopChild } from './child.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? '5');
const WRITERS = Number(process.env.BENCH_WRITERS ?? '16');
/** Offered load: product creations per second, paced (each one fans out to every subscription). */
const COMMITS_PER_SECOND = Number(process.env.BENCH_COMMITS_PER_SECOND ?? '260');
const READERS = Number(process.env.BENCH_READERS ?? '4');
const RECEIVERS = Number(process.env.BENCH_RECEIVERS ?? '8');

function ask<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { type: string }) => {
      if (m.type === type) {
        child.off('message', on);
        resolve(m as T);
      }
    };
    child.on('message', on);
    child.send({ type });
  });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

const rx = await startChild<{ ports: number[] }>('./servers/webhook-receiver.ts', { BENCH_RECEIVERS: String(RECEIVERS) });
const sg = await startChild<{ port: number; token: string }>('./servers/webhook-platform.ts', {
  BENCH_RECEIVER_PORTS: rx.ready.ports.join(','),
  BENCH_PER_ORIGIN: process.env.BENCH_PER_ORIGIN ?? '',
  ...(process.env.BENCH_PROF ? { CHILD_PROF: '1' } : {}),
});
const pool = new Pool(`http://127.0.0.1:${sg.ready.port}`, { connections: WRITERS + READERS, pipelining: 1 });
const headers = { host: 'bench.localhost', 'access-token': sg.ready.token };

async function loop(until: number, fn: () => Promise<void>): Promise<void> {
  while (performance.now() < until) await fn();
}

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
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
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

async function run(withWrites: boolean, seconds: number) {
  const reads: number[] = [];
  const writes: number[] = [];
  const errors = { n: 0 };
  const end = performance.now() + seconds * 1000;
  let seq = 0;
  const started = performance.now();
  await Promise.all([
    ...Array.from({ length: READERS }, () => loop(end, () => timed('GET', '/openapi/2026-01/products?limit=50', undefined, reads, errors))),
    ...(withWrites ? [pacedWrites(end, writes, errors, () => ++seq)] : []),
  ]);
  return { reads, writes, errors: errors.n, elapsed: (performance.now() - started) / 1000 };
}

// Warm-up (connections, JIT, statement caches), then the baseline reads without writes.
await run(true, 1);
await new Promise((r) => setTimeout(r, 1000));
const baseline = await run(false, SECONDS);
rx.child.send({ type: 'reset' });
const loaded = await run(true, SECONDS);
const expected = loaded.writes.length * RECEIVERS;
const drainStart = performance.now();
let stats = await ask<{
  received: number;
  unique: number;
  duplicates: number;
  first: number;
  last: number;
  p50: number;
  p99: number;
  max: number;
}>(rx.child, 'stats');
while (stats.unique < expected && performance.now() - drainStart < 30_000) {
  await new Promise((r) => setTimeout(r, 100));
  stats = await ask(rx.child, 'stats');
}
await pool.close();
await stopChild(sg.child);
await stopChild(rx.child);

const rate = stats.unique / ((stats.last - stats.first) / 1000);
console.log(
  `offered ${COMMITS_PER_SECOND} commits/s x ${RECEIVERS} subscriptions (one receiver origin each) = ${COMMITS_PER_SECOND * RECEIVERS} deliveries/s for ${SECONDS} s`,
);
console.log(
  `${loaded.writes.length} commits (products/create) in ${loaded.elapsed.toFixed(1)} s = ${(loaded.writes.length / loaded.elapsed).toFixed(0)} commits/s -> ${expected} deliveries expected, ${stats.unique} received (${stats.duplicates} duplicates)`,
);
console.log(`deliveries/s (first to last receipt): ${rate.toFixed(0)}`);
console.log(`commit-to-receipt latency: p50 ${stats.p50.toFixed(1)} ms   p99 ${stats.p99.toFixed(1)} ms   max ${stats.max.toFixed(1)} ms`);
const row = (name: string, xs: number[], elapsed: number) =>
  `${name.padEnd(44)} ${(xs.length / elapsed).toFixed(0).padStart(6)} req/s   p50 ${pct(xs, 50).toFixed(1).padStart(6)} ms   p99 ${pct(xs, 99).toFixed(1).padStart(6)} ms`;
console.log(row('API reads (50 products), no webhook load', baseline.reads, baseline.elapsed));
console.log(row('API reads (50 products), during the load', loaded.reads, loaded.elapsed));
console.log(row('API writes (create product + outbox)', loaded.writes, loaded.elapsed));
console.log(`errors: ${baseline.errors + loaded.errors}`);
const pass = rate >= 2000 && stats.p50 < 50 && stats.unique === expected && loaded.errors === 0;
console.log(`target >= 2000 deliveries/s, p50 < 50 ms, none lost: ${pass ? 'PASS' : 'FAIL'}`);
