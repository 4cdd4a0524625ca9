// Child process for the Admin API benchmarks: the platform with a seeded store on the database this
// run was asked for (bench/database.ts: BENCH_DATABASE_URL from the parent, or a fresh one created
// here and dropped when the parent disconnects), or (BENCH_BARE=1) a bare Fastify route answering
// fixed bytes from memory. Talks to the parent over IPC: sends {type:'ready', ...}; answers
// {type:'cpu'} with its CPU time so far (user and system µs); exits when the parent disconnects.
import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import { createPlatform, loadConfig } from '../../packages/platform/src/index.ts';
import { createBenchDatabase } from '../database.ts';

const send = (msg: unknown) => process.send!(msg);
process.on('message', (m: { type?: string }) => {
  if (m?.type === 'cpu') send({ type: 'cpu', ...process.cpuUsage(), rss: process.memoryUsage().rss });
});

if (process.env.BENCH_BARE === '1') {
  // The baseline: the same bytes, from memory, with the same content type.
  const body = Buffer.from(process.env.BENCH_BODY_B64 ?? '', 'base64');
  const app = Fastify({ logger: false });
  app.get('/openapi/:version/products', async (_req, reply) => reply.type('application/json; charset=utf-8').send(body));
  await app.listen({ port: 0, host: '127.0.0.1' });
  send({ type: 'ready', port: (app.server.address() as { port: number }).port });
  process.on('disconnect', () => process.exit(0));
} else {
  const products = Number(process.env.BENCH_PRODUCTS ?? '100000');
  const own = process.env.BENCH_DATABASE_URL ? undefined : await createBenchDatabase('admin');
  const database = process.env.BENCH_DATABASE_URL ?? own!.url;
  const config = loadConfig({
    database,
    masterKey: randomBytes(32).toString('hex'),
    logLevel: 'silent',
    port: 0,
    rateLimit: process.env.BENCH_RATE_LIMIT ?? 'off',
  });
  const platform = await createPlatform(config);
  const { http: app, services, db } = platform;
  const store = await services.accounts.createStore({ name: 'bench', ownerEmail: 'o@bench.test', ownerPassword: 'bench-password' });
  const started = performance.now();
  await services.seeds.seed(store.id, { products, orders: 0, customers: 0 });
  const seedSeconds = (performance.now() - started) / 1000;
  // The seed's WAL is copied into the database file now, not by the checkpointer thread while
  // the first round is measured.
  db.sqlite?.pragma('wal_checkpoint(TRUNCATE)');
  const { accessToken } = await services.apps.createPrivateApp({ storeId: store.id, name: 'bench', scopes: 'read_products' });
  const maxId = Number(
    (
      await db.kysely
        .selectFrom('products')
        .select((eb) => eb.fn.max('id').as('m'))
        .where('store_id', '=', store.id)
        .executeTakeFirstOrThrow()
    ).m,
  );
  // A cursor just before the last page, minted the way the API mints them.
  const deepCursor = services.cursors.encode({ storeId: store.id, resource: 'products', direction: 'next', id: maxId - 60 });
  // Distinct positions near the start and near the end (distinct, so no page is served twice
  // from the page cache: every request runs its keyset query).
  const n = Number(process.env.BENCH_CURSORS ?? '0');
  const minId = maxId - products + 1;
  const cursorAt = (id: number) => services.cursors.encode({ storeId: store.id, resource: 'products', direction: 'next', id });
  const startCursors = Array.from({ length: n }, (_, i) => cursorAt(minId + i));
  const endCursors = Array.from({ length: n }, (_, i) => cursorAt(maxId - 60 - i));
  await app.listen({ port: 0, host: '127.0.0.1' });
  send({
    type: 'ready',
    port: (app.server.address() as { port: number }).port,
    token: accessToken,
    deepCursor,
    startCursors,
    endCursors,
    products,
    seedSeconds,
  });
  process.on('disconnect', async () => {
    await platform.close();
    await own?.drop();
    process.exit(0);
  });
}
