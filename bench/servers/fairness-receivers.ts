// Child process for the webhook fairness benchmark: a healthy receiver that answers 200 at once and
// notes, per delivery, the event's number (`id` in its payload) and the time of its receipt (this
// machine's high-resolution wall time, which the platform child also uses for its commits); and a hanging receiver that accepts every
// request and never answers, counting how many it holds at once. IPC: sends {type:'ready',
// healthy, hanging} (their ports); answers {type:'count'} with the healthy deliveries received,
// {type:'stats'} with the receipts and the hanging receiver's counts; {type:'reset'} starts a new
// phase (and cuts every request held).
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const now = () => performance.timeOrigin + performance.now();
let receipts: { id: number; at: number }[] = [];
const seen = new Set<string>();
let duplicates = 0;
let held: ServerResponse[] = [];
let holding = 0;
let maxHolding = 0;
let hangingRequests = 0;

const healthy = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = now();
    const id = String(req.headers['x-service-webhook-id'] ?? '');
    if (seen.has(id)) duplicates++;
    else {
      seen.add(id);
      receipts.push({ id: Number((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id), at });
    }
    res.end('ok');
  });
});
healthy.keepAliveTimeout = 60_000;

const hanging = createServer((req, res) => {
  hangingRequests++;
  holding++;
  maxHolding = Math.max(maxHolding, holding);
  res.on('close', () => holding--);
  held.push(res);
  req.resume();
});

const listen = (s: typeof healthy) =>
  new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));
const ports = { healthy: await listen(healthy), hanging: await listen(hanging) };
process.send!({ type: 'ready', ...ports });

process.on('message', (m: { type: string }) => {
  if (m.type === 'reset') {
    receipts = [];
    seen.clear();
    duplicates = 0;
    for (const res of held) res.destroy();
    held = [];
    maxHolding = 0;
    hangingRequests = 0;
    process.send!({ type: 'reset' });
  }
  if (m.type === 'count') process.send!({ type: 'count', received: seen.size });
  if (m.type === 'stats') process.send!({ type: 'stats', receipts, duplicates, hanging: { requests: hangingRequests, maxHolding } });
});
process.on('disconnect', () => process.exit(0));
