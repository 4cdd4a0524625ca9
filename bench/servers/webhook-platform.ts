// Child process for the webhooks benchmark: the platform on SQLite (temp file, WAL, synchronous
// FULL) listening on a port, with its in-process delivery worker, a store with 1,000 products, a
// private app and one products/create subscription per receiver. IPC: sends {type:'ready', ...}.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPlatform, loadConfig } from '../../packages/platform/src/index.ts';
import { WebhookOutbox } from '../../packages/platform/src/services/webhook-outbox.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-webhooks-bench-'));
const config = loadConfig({
  database: join(dir, 'bench.db'),
  masterKey: randomBytes(32).toString('hex'),
  logLevel: 'silent',
  port: 0,
  rateLimit: 'off',
});
const platform = await createPlatform(config, {
  worker: process.env.BENCH_PER_ORIGIN ? { perOrigin: Number(process.env.BENCH_PER_ORIGIN) } : {},
});
const { http: app, services, db } = platform;
const worker = platform.worker!;
const store = await services.accounts.createStore({ name: 'bench', ownerEmail: 'o@bench.test', ownerPassword: 'bench-password' });
await services.seeds.seed(store.id, { products: 1000, orders: 0, customers: 0 });
const priv = await services.apps.createPrivateApp({ storeId: store.id, name: 'bench', scopes: 'write_products' });
const ports = String(process.env.BENCH_RECEIVER_PORTS ?? '')
  .split(',')
  .filter(Boolean)
  .map(Number);
const now = Date.now();
for (const port of ports) {
  await db.kysely
    .insertInto('webhook_subscriptions')
    .values({
      store_id: store.id,
      owner: `private:${priv.id}`,
      app_id: null,
      private_app_id: priv.id,
      topic: 'products/create',
      address: `http://127.0.0.1:${port}/hooks`,
      api_version: '2026-01',
      created_at: now,
      updated_at: now,
      disabled_at: null,
      disabled_reason: null,
    })
    .execute();
}
// Optional backlog (the drain phase): events committed before the worker starts.
const backlog = Number(process.env.BENCH_BACKLOG ?? '0');
if (backlog > 0) {
  const outbox = new WebhookOutbox(services.clock);
  await platform.storage.transaction(async (tx) => {
    for (let i = 0; i < backlog; i++)
      await outbox.enqueue(tx, { storeId: store.id, topic: 'products/create', payload: { id: String(i), title: `backlog ${i}` } });
  });
}
await app.listen({ port: 0, host: '127.0.0.1' });
await worker.start();
process.send!({ type: 'ready', port: (app.server.address() as { port: number }).port, token: priv.accessToken });
process.on('message', (m: { type: string }) => {
  if (m.type === 'stats') process.send!({ type: 'stats', attempts: worker.attemptsMade });
});
process.on('disconnect', async () => {
  await platform.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});
