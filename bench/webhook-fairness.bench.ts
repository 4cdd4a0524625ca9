// npm run bench -- webhook-fairness [--database sqlite|postgres://…|both]
// Whether a receiver that hangs slows down the others. A healthy receiver (answers 200 at once)
// gets one delivery per event under a paced load; its p99 from the commit's return to the receipt
// alone is the baseline.
// Then the same load with a second subscription to a receiver that accepts and never answers, so
// the hanging endpoint is sent half of all deliveries: the healthy endpoint's p99 must stay within
// 1.2x of its p99 alone, and the hanging endpoint must never hold more than its cap of requests
// (`--webhook-endpoint-concurrency`, default 8). The worker runs with its defaults (64 requests in
// flight, 5 s timeout, breaker after 10 failures in a row). Phases alternate (alone, with, alone,
// with…), each on a fresh platform and database, and the p99s are taken over every round of each,
// so a drift in the machine's load falls on both.
// Knobs: BENCH_SECONDS (per phase, default 15: the hanging endpoint's breaker opens after about
// 10 s, two rounds of 5 s timeouts), BENCH_ROUNDS (default 2), BENCH_EVENTS_PER_SECOND
// (default 100), BENCH_WARMUP_SECONDS (left out of the figures, default 1), BENCH_WEBHOOK_TIMEOUT_MS.
import type { ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { startChild, stopChild } from './child.ts';
import { type CpuSpent, cpuRows, formatCpu, postgresDatabaseName, startCpuMeter } from './cpu.ts';
import { benchDatabaseKind, createBenchDatabase } from './database.ts';
import { report } from './report.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? '15');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '2');
const RATE = Number(process.env.BENCH_EVENTS_PER_SECOND ?? '100');
const WARMUP_MS = Number(process.env.BENCH_WARMUP_SECONDS ?? '1') * 1000;
const CAP = 8;

function ask<T>(child: ChildProcess, message: { type: string } & Record<string, unknown>, answer = message.type): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { type: string }) => {
      if (m.type === answer) {
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

interface Stats {
  receipts: { id: number; at: number }[];
  duplicates: number;
  hanging: { requests: number; maxHolding: number };
}

const rx = await startChild<{ healthy: number; hanging: number }>('./servers/fairness-receivers.ts', {});
const healthyUrl = `http://127.0.0.1:${rx.ready.healthy}/hooks`;
const hangingUrl = `http://127.0.0.1:${rx.ready.hanging}/hooks`;

/** One phase on a fresh database: the paced load, then the healthy deliveries' latencies once all have arrived. */
async function phase(withHanging: boolean): Promise<{ ms: number[]; events: number; stats: Stats; seconds: number; cpu: CpuSpent }> {
  await ask(rx.child, { type: 'reset' });
  const database = await createBenchDatabase(`fairness_${withHanging ? 'with' : 'alone'}`);
  const sg = await startChild<{ type: 'ready' }>('./servers/fairness-platform.ts', {
    BENCH_DATABASE_URL: database.url,
    BENCH_ADDRESSES: withHanging ? `${healthyUrl},${hangingUrl}` : healthyUrl,
  });
  try {
    const meter = startCpuMeter({
      platformPid: sg.child.pid,
      ...(database.kind === 'postgres' ? { postgresDatabase: postgresDatabaseName(database.url) } : {}),
    });
    const startedAt = performance.timeOrigin + performance.now();
    const done = await ask<{ committedAt: number[]; seconds: number }>(sg.child, { type: 'run', seconds: SECONDS, rate: RATE }, 'done');
    const events = done.committedAt.length;
    const drainUntil = performance.now() + 15_000;
    while ((await ask<{ received: number }>(rx.child, { type: 'count' })).received < events && performance.now() < drainUntil)
      await new Promise((r) => setTimeout(r, 50));
    const cpu = meter.stop();
    const stats = await ask<Stats>(rx.child, { type: 'stats' });
    const ms = stats.receipts
      .filter((r) => done.committedAt[r.id]! >= startedAt + WARMUP_MS)
      .map((r) => Math.max(0, r.at - done.committedAt[r.id]!));
    return { ms, events, stats, seconds: done.seconds, cpu };
  } finally {
    await stopChild(sg.child);
    await database.drop();
  }
}

console.log(
  `webhook fairness on ${benchDatabaseKind()}: ${RATE} events/s for ${SECONDS} s per phase, ${ROUNDS} rounds; load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
const alone: number[] = [];
const withHanging: number[] = [];
let maxHolding = 0;
let hangingRequests = 0;
let lost = 0;
// CPU per event over the phases alone (one delivery per event: the healthy one).
const aloneCpu: { platformUs: number | undefined; serverUs: number | undefined } = { platformUs: 0, serverUs: undefined };
let aloneEvents = 0;
const add = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : a + b);
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const hanging of [false, true]) {
      const r = await phase(hanging);
      (hanging ? withHanging : alone).push(...r.ms);
      lost += r.events - r.stats.receipts.length;
      if (!hanging) {
        aloneEvents += r.events;
        aloneCpu.platformUs = add(aloneCpu.platformUs, r.cpu.platformUs);
        if (r.cpu.serverUs !== undefined) aloneCpu.serverUs = (aloneCpu.serverUs ?? 0) + r.cpu.serverUs;
      }
      if (hanging) {
        maxHolding = Math.max(maxHolding, r.stats.hanging.maxHolding);
        hangingRequests += r.stats.hanging.requests;
      }
      console.log(
        `  round ${round} ${hanging ? 'with a hanging endpoint' : 'healthy alone          '}: ${r.events} events in ${r.seconds.toFixed(1)} s, ` +
          `healthy received ${r.stats.receipts.length} (${r.stats.duplicates} duplicates), p50 ${pct(r.ms, 50).toFixed(2)} ms, p99 ${pct(r.ms, 99).toFixed(2)} ms` +
          (hanging ? `; hanging endpoint: ${r.stats.hanging.requests} requests, at most ${r.stats.hanging.maxHolding} at once` : '') +
          `; ${formatCpu(r.cpu, r.events, 'event')}`,
      );
    }
  }
} finally {
  await stopChild(rx.child);
}

const p99Alone = pct(alone, 99);
const p99With = pct(withHanging, 99);
const ratio = p99With / p99Alone;
console.log(
  `\nhealthy endpoint p99 commit -> receipt (${alone.length} and ${withHanging.length} deliveries): alone ${p99Alone.toFixed(2)} ms, with a hanging endpoint ${p99With.toFixed(2)} ms`,
);
console.log(`ratio ${ratio.toFixed(2)}x (target <= 1.2x): ${ratio <= 1.2 ? 'PASS' : 'FAIL'}`);
console.log(
  `hanging endpoint: ${hangingRequests} requests, at most ${maxHolding} at once (cap ${CAP}): ${maxHolding <= CAP ? 'PASS' : 'FAIL'}`,
);
if (lost > 0) console.log(`healthy deliveries missing after the drain: ${lost}`);
report([
  { name: 'healthy p99, alone', value: p99Alone, unit: 'ms' },
  { name: 'healthy p99, hanging endpoint subscribed', value: p99With, unit: 'ms', ratio, target: '<= 1.2x', pass: ratio <= 1.2 },
  { name: 'hanging endpoint, requests held at once', value: maxHolding, unit: 'req', target: `<= ${CAP}`, pass: maxHolding <= CAP },
  { name: 'healthy deliveries missing', value: lost, unit: '', target: '0', pass: lost === 0 },
  ...cpuRows(aloneCpu, aloneEvents, 'delivery (healthy alone)', benchDatabaseKind() === 'postgres'),
]);
