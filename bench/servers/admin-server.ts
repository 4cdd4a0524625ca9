// Child process for the Admin API benchmarks: the platform with a seeded store on the database this
// run was asked for (bench/database.ts: BENCH_DATABASE_URL from the parent, or a fresh one created
// here and dropped when the parent disconnects), or (BENCH_BARE=1) a bare Fastify route answering
// fixed bytes from memory. Talks to the parent over IPC: sends {type:'ready', ...}; answers
// {type:'cpu'} with its CPU time so far (user and system µs); exits when the parent disconnects.
import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import { sql } from 'kysely';
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
  // Distinct positions near the start and near the end (the deep-page bench reads each once).
  const n = Number(process.env.BENCH_CURSORS ?? '0');
  const minId = maxId - products + 1;
  const cursorAt = (id: number, direction: 'next' | 'prev' = 'next') =>
    services.cursors.encode({ storeId: store.id, resource: 'products', direction, id });
  const startCursors = Array.from({ length: n }, (_, i) => cursorAt(minId + i));
  const endCursors = Array.from({ length: n }, (_, i) => cursorAt(maxId - 60 - i));
  const spread = spreadPaths(Number(process.env.BENCH_SPREAD ?? '0'), minId, maxId, cursorAt);
  // Another store written through the Admin API while pages are read (BENCH_WRITER=1).
  let writer: { token: string; ids: number[] } | undefined;
  if (process.env.BENCH_WRITER === '1') {
    const other = await services.accounts.createStore({ name: 'writer', ownerEmail: 'w@bench.test', ownerPassword: 'bench-password' });
    await services.seeds.seed(other.id, { products: 200, orders: 0, customers: 0 });
    const app2 = await services.apps.createPrivateApp({ storeId: other.id, name: 'writer', scopes: 'write_products' });
    const rows = await db.kysely.selectFrom('products').select('id').where('store_id', '=', other.id).execute();
    writer = { token: app2.accessToken, ids: rows.map((r) => Number(r.id)) };
  }
  db.sqlite?.pragma('wal_checkpoint(TRUNCATE)');
  // A database in service has statistics of its tables (autovacuum gathers them on PostgreSQL a
  // minute or so after a bulk load): the rounds are measured with them, not in the minute before.
  if (!db.sqlite) await sql`analyze`.execute(db.kysely);
  await app.listen({ port: 0, host: '127.0.0.1' });
  send({
    type: 'ready',
    port: (app.server.address() as { port: number }).port,
    token: accessToken,
    deepCursor,
    startCursors,
    endCursors,
    spread,
    writer,
    storeId: store.id,
    // The codec's key, so that the bare keyset baseline checks and mints the same cursors.
    cursorKey: (services.cursors as unknown as { key: Buffer }).key.toString('hex'),
    products,
    seedSeconds,
  });
  process.on('disconnect', async () => {
    await platform.close();
    await own?.drop();
    process.exit(0);
  });
}

/**
 * `count` list requests spread over the store, as apps page it: mostly forward from a cursor in
 * the newer convention, some first pages, some pages back (a `cursor` going back in the newer
 * convention, `pre_cursor` in 2022-01), some forward in 2022-01; mostly 50 a page, some 10 or 100.
 * The same seed gives the same requests.
 */
function spreadPaths(count: number, minId: number, maxId: number, cursorAt: (id: number, d?: 'next' | 'prev') => string): string[] {
  let seed = Number(process.env.BENCH_SEED ?? '23') >>> 0;
  const random = () => {
    // mulberry32
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const paths: string[] = [];
  for (let i = 0; i < count; i++) {
    const r = random();
    const l = random();
    const limit = l < 0.8 ? 50 : l < 0.9 ? 10 : 100;
    const id = minId + Math.floor(random() * (maxId - minId + 1));
    const at = (v: string, param: string, d: 'next' | 'prev') => `/openapi/${v}/products?limit=${limit}&${param}=${cursorAt(id, d)}`;
    if (r < 0.05) paths.push(`/openapi/2026-01/products?limit=${limit}`);
    else if (r < 0.7) paths.push(at('2026-01', 'cursor', 'next'));
    else if (r < 0.8) paths.push(at('2026-01', 'cursor', 'prev'));
    else if (r < 0.92) paths.push(at('2022-01', 'cursor', 'next'));
    else paths.push(at('2022-01', 'pre_cursor', 'prev'));
  }
  return paths;
}
