// Child process for the webhook fairness benchmark: the platform (no HTTP server) with its delivery
// worker on the database the parent created (BENCH_DATABASE_URL), a store, a private app and a
// products/create subscription to each address in BENCH_ADDRESSES, so each event is one delivery
// per address. On {type:'run', seconds, rate} it commits one event per transaction at that paced
// rate (event number i carries `id: i`) and answers {type:'done', committedAt, seconds}: when each
// commit returned, in high-resolution wall time (the receivers' clock too). IPC: sends {type:'ready'} first.
import { randomBytes } from 'node:crypto';
import { createPlatform, loadConfig } from '../../packages/platform/src/index.ts';
import { WebhookOutbox } from '../../packages/platform/src/services/webhook-outbox.ts';

const config = loadConfig({
  database: process.env.BENCH_DATABASE_URL ?? '',
  masterKey: randomBytes(32).toString('hex'),
  logLevel: 'silent',
  webhookTimeout: process.env.BENCH_WEBHOOK_TIMEOUT_MS || undefined,
});
const platform = await createPlatform(config, { http: false, worker: {} });
const { services, db } = platform;
const worker = platform.worker!;
const store = await services.accounts.createStore({ name: 'fair', ownerEmail: 'o@fair.test', ownerPassword: 'bench-password' });
const priv = await services.apps.createPrivateApp({ storeId: store.id, name: 'fair', scopes: 'read_products' });
for (const address of String(process.env.BENCH_ADDRESSES ?? '')
  .split(',')
  .filter(Boolean)) {
  await db.kysely
    .insertInto('webhook_subscriptions')
    .values({
      store_id: store.id,
      owner: `private:${priv.id}`,
      app_id: null,
      private_app_id: priv.id,
      topic: 'products/create',
      address,
      api_version: '2026-01',
      created_at: Date.now(),
      updated_at: Date.now(),
      disabled_at: null,
      disabled_reason: null,
    })
    .execute();
}
const outbox = new WebhookOutbox(services.clock);
await worker.start();
process.send!({ type: 'ready' });

/**
 * Commits at a fixed rate, one at a time (several at once would have the worker's own writes wait
 * behind them on SQLite's single connection, which measures the queue, not the fairness); when a
 * commit takes longer than the interval the next one follows at once.
 */
async function run(seconds: number, rate: number): Promise<{ committedAt: number[]; seconds: number }> {
  const started = performance.now();
  const committedAt: number[] = [];
  for (let i = 0; ; i++) {
    const due = started + (i * 1000) / rate;
    if (due - started >= seconds * 1000) break;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await platform.storage.transaction((tx) =>
      outbox.enqueue(tx, { storeId: store.id, topic: 'products/create', payload: { id: String(i) } }),
    );
    committedAt.push(performance.timeOrigin + performance.now());
  }
  return { committedAt, seconds: (performance.now() - started) / 1000 };
}

process.on('message', async (m: { type: string; seconds?: number; rate?: number }) => {
  if (m.type === 'run') process.send!({ type: 'done', ...(await run(m.seconds ?? 10, m.rate ?? 200)) });
});
process.on('disconnect', async () => {
  // The hanging endpoint's attempts are cut off rather than waited for.
  await worker.stop({ timeoutMs: 100 });
  await platform.close();
  process.exit(0);
});
