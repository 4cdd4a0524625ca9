// Child process for the webhooks benchmark: receivers on several ports that answer 200 at once and
// note, per delivery, the time from the event's commit (X-Service-Triggered-At) to its receipt.
// IPC: sends {type:'ready', ports}; answers {type:'count'} with the number of distinct webhook ids
// received (cheap, for polling while a phase runs) and {type:'stats'} with counts and latencies;
// {type:'reset'} starts a new phase.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const RECEIVERS = Number(process.env.BENCH_RECEIVERS ?? '4');
let latencies: number[] = [];
const webhookIds = new Set<string>();
let duplicates = 0;
let first = 0;
let last = 0;
const now = () => performance.timeOrigin + performance.now();

const ports: number[] = [];
for (let i = 0; i < RECEIVERS; i++) {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const at = now();
      const triggered = Date.parse(String(req.headers['x-service-triggered-at']));
      const id = String(req.headers['x-service-webhook-id']);
      if (webhookIds.has(id)) duplicates++;
      webhookIds.add(id);
      latencies.push(at - triggered);
      if (first === 0) first = at;
      last = at;
      res.end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  ports.push((server.address() as AddressInfo).port);
}

process.on('message', (m: { type: string }) => {
  if (m.type === 'reset') {
    latencies = [];
    webhookIds.clear();
    duplicates = 0;
    first = last = 0;
    process.send!({ type: 'reset' });
  }
  if (m.type === 'count') process.send!({ type: 'count', unique: webhookIds.size });
  if (m.type === 'stats') {
    const sorted = latencies.sort((a, b) => a - b);
    const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
    process.send!({
      type: 'stats',
      received: latencies.length,
      unique: webhookIds.size,
      duplicates,
      first,
      last,
      p50: pct(50),
      p99: pct(99),
      max: sorted[sorted.length - 1] ?? 0,
    });
  }
});
process.send!({ type: 'ready', ports });
process.on('disconnect', () => process.exit(0));
