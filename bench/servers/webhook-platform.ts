// Child process for the webhooks benchmark: the platform on the database the parent created
// (BENCH_DATABASE_URL: a SQLite file or a postgres:// URL) listening on a port, with its in-process
// delivery worker, a store with 1,000 products, a private app and one products/create subscription
// per receiver. IPC: sends {type:'ready', port, token, sample}; on {type:'backlog', events} commits
// that many products/create events in one transaction (the worker is woken by the commit, as after
// any write) and answers {type:'backlog', deliveries, seconds}.
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay, performance as perf } from 'node:perf_hooks';
import { createPlatform, loadConfig } from '../../packages/platform/src/index.ts';
import { WebhookOutbox } from '../../packages/platform/src/services/webhook-outbox.ts';

const config = loadConfig({
  database: process.env.BENCH_DATABASE_URL ?? '',
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

// Backlog payloads: products as the API shows them, which is what products/create carries.
const page = await app.inject({
  method: 'GET',
  url: '/openapi/2026-01/products?limit=50',
  headers: { host: 'bench.localhost', 'access-token': priv.accessToken },
});
const products = (JSON.parse(page.body) as { data: Record<string, unknown>[] }).data;
const outbox = new WebhookOutbox(services.clock);

async function commitBacklog(events: number): Promise<number> {
  let deliveries = 0;
  await platform.storage.transaction(async (tx) => {
    for (let i = 0; i < events; i++) {
      const product = products[i % products.length]!;
      deliveries += await outbox.enqueue(tx, {
        storeId: store.id,
        topic: 'products/create',
        payload: { ...product, title: `backlog ${i}` },
      });
    }
  });
  return deliveries;
}

// Where the time from commit to receipt goes: the age of each delivery when its claim returns
// (commit, sync to disk, wake-up and the claim itself), and the size of the claims.
const queue = platform.storage.deliveryQueue;
const claim = queue.claim.bind(queue);
let claimAges: number[] = [];
let claimSizes: number[] = [];
const loopDelay = monitorEventLoopDelay({ resolution: 5 });
loopDelay.enable();
let elu = perf.eventLoopUtilization();
queue.claim = async (input) => {
  const rows = await claim(input);
  const at = Date.now();
  for (const r of rows) claimAges.push(at - Number(r.event_at));
  if (rows.length > 0) claimSizes.push(rows.length);
  return rows;
};
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;

await app.listen({ port: 0, host: '127.0.0.1' });
await worker.start();
process.send!({
  type: 'ready',
  port: (app.server.address() as { port: number }).port,
  token: priv.accessToken,
  sample: { body: JSON.stringify(products[0]), shopDomain: 'bench.localhost' },
});
process.on('message', async (m: { type: string; events?: number }) => {
  if (m.type === 'claims') {
    process.send!({
      type: 'claims',
      ageP50: pct(claimAges, 50),
      ageP99: pct(claimAges, 99),
      claims: claimSizes.length,
      meanSize: claimSizes.reduce((a, b) => a + b, 0) / Math.max(1, claimSizes.length),
      loopDelayP50: loopDelay.percentile(50) / 1e6,
      loopDelayP99: loopDelay.percentile(99) / 1e6,
      busy: perf.eventLoopUtilization(elu).utilization,
    });
    loopDelay.reset();
    elu = perf.eventLoopUtilization();
    claimAges = [];
    claimSizes = [];
  }
  if (m.type === 'stats') process.send!({ type: 'stats', attempts: worker.attemptsMade });
  if (m.type === 'backlog') {
    const started = performance.now();
    const deliveries = await commitBacklog(m.events ?? 0);
    process.send!({ type: 'backlog', deliveries, seconds: (performance.now() - started) / 1000 });
  }
});
process.on('disconnect', async () => {
  await platform.close();
  process.exit(0);
});
