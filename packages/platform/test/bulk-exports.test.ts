// Bulk exports (POST /openapi/{v}/bulk_operations and the signed download) on SQLite and
// PostgreSQL: the file holds exactly what the list gives for the same filters and fields; it is
// the store at `snapshot_at`, which is the exact boundary of the events list; a run taken over
// after a crash ends complete without duplicates; one that keeps failing ends failed after its
// last attempt and frees its slot; cancel, the per-app limit, scopes at start and
// at download, bad input, Range requests and pruning.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BulkExportRun, MAX_ATTEMPTS } from '../src/services/bulk-export-run.ts';
import { WebhookOutbox } from '../src/services/webhook-outbox.ts';
import { createPlatform } from '../src/platform.ts';
import type { BulkOperationRepository } from '../src/storage/ports/bulk-operations.ts';
import type { Repositories } from '../src/storage/ports/repositories.ts';
import type { Storage } from '../src/storage/ports/storage.ts';
import type { BulkExportRunner } from '../src/webhooks/bulk-export-runner.ts';
import { api, appToken, createFixture, createTestPlatform, DIALECTS, type Fixture, privateToken, type TestPlatform } from './harness.ts';

const V = '/openapi/2026-01';
const HOUR = 3_600_000;

/** The storage with some members replaced by faulty ones; everything else is the real one. */
function withFault(storage: Storage, fault: Partial<Storage>): Storage {
  return new Proxy(storage, {
    get(target, prop) {
      if (prop in fault) return (fault as Record<PropertyKey, unknown>)[prop];
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

interface Op {
  id: string;
  status: string;
  resource: string;
  filters: Record<string, string>;
  fields: string | null;
  rows: number;
  bytes: number;
  error: string | null;
  snapshot_at: string | null;
  url: string | null;
}

describe.each(DIALECTS)('bulk exports on %s', (dialect) => {
  let t: TestPlatform;
  let runner: BulkExportRunner;

  beforeAll(async () => {
    t = await createTestPlatform(dialect);
    const p = await createPlatform(t.config, { clock: t.clock.fn, http: false, migrate: false, worker: {}, db: t.db });
    runner = p.bulkExports!;
  });
  afterAll(async () => {
    await t.close();
  });

  /** Runs one waiting export; the frozen test clock ticks meanwhile (the snapshot waits for it to pass its time). */
  async function runOne(run: () => Promise<string> = () => runner.runOnce()): Promise<string> {
    const tick = setInterval(() => t.clock.advance(1), 1);
    try {
      return await run();
    } finally {
      clearInterval(tick);
    }
  }

  /** Runs waiting exports until none is left (each test leaves none behind). */
  async function runAll(): Promise<string[]> {
    const outcomes: string[] = [];
    for (let o = await runOne(); o !== 'none'; o = await runOne()) outcomes.push(o);
    return outcomes;
  }

  async function setup(scopes = 'read_products read_customers') {
    const f = await createFixture(t, { scopes });
    const token = await appToken(t, f, scopes);
    const writer = await privateToken(t, f.storeName, 'write_products write_customers write_orders');
    return { f, token, writer };
  }

  async function products(f: Fixture, writer: string, titles: string[]): Promise<Record<string, unknown>[]> {
    const out = [];
    for (const [i, title] of titles.entries()) {
      const res = await api(t, f, writer, 'POST', `${V}/products`, { title, price: `${i + 1}.50`, inventory_quantity: i, tags: `t${i}` });
      expect(res.statusCode, res.body).toBe(201);
      out.push(res.json().data);
    }
    return out;
  }

  async function start(f: Fixture, token: string, body: unknown): Promise<Op> {
    const res = await api(t, f, token, 'POST', `${V}/bulk_operations`, body);
    expect(res.statusCode, res.body).toBe(202);
    return res.json().data;
  }

  async function show(f: Fixture, token: string, id: string): Promise<Op> {
    const res = await api(t, f, token, 'GET', `${V}/bulk_operations/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }

  function download(f: Fixture, url: string, headers: Record<string, string> = {}) {
    const u = new URL(url);
    return t.app.inject({ method: 'GET', url: `${u.pathname}${u.search}`, headers: { host: f.host, ...headers } });
  }

  async function file(f: Fixture, token: string, id: string): Promise<Record<string, unknown>[]> {
    const op = await show(f, token, id);
    expect(op.status).toBe('completed');
    const res = await download(f, op.url!);
    expect(res.statusCode).toBe(200);
    expect(Number(res.headers['content-length'])).toBe(op.bytes);
    const text = res.body;
    if (text === '') return [];
    expect(text.endsWith('\n')).toBe(true);
    return text
      .slice(0, -1)
      .split('\n')
      .map((l) => JSON.parse(l));
  }

  async function listed(f: Fixture, token: string, resource: string, query: string): Promise<Record<string, unknown>[]> {
    const res = await api(t, f, token, 'GET', `${V}/${resource}?limit=250${query ? `&${query}` : ''}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }

  it('exports exactly what the list gives for the same filters and fields, and sends bulk_operations/finish', async () => {
    const { f, token, writer } = await setup();
    const sub = await api(t, f, token, 'POST', `${V}/webhooks`, {
      address: 'https://hooks.example.com/bulk',
      topic: 'bulk_operations/finish',
    });
    expect(sub.statusCode, sub.body).toBe(201);
    await products(f, writer, ['Blue', 'Red', 'Blue', 'Green', 'Blue']);
    const wrapped = await start(f, token, {
      bulk_operation: { resource: 'products', filters: { title: 'Blue' }, fields: 'id,title,price' },
    });
    expect(wrapped).toMatchObject({
      status: 'created',
      resource: 'products',
      filters: { title: 'Blue' },
      fields: 'id,title,price',
      url: null,
    });
    const bare = await start(f, token, { resource: 'products' });
    expect(await runAll()).toEqual(['completed', 'completed']);
    const filtered = await file(f, token, wrapped.id);
    expect(filtered).toEqual(await listed(f, token, 'products', 'title=Blue&fields=id,title,price'));
    expect(filtered).toHaveLength(3);
    expect(Object.keys(filtered[0]!)).toEqual(['id', 'title', 'price']);
    const all = await file(f, token, bare.id);
    expect(all).toEqual(await listed(f, token, 'products', ''));
    const done = await show(f, token, bare.id);
    expect(done).toMatchObject({ status: 'completed', rows: 5, error: null });
    expect(done.snapshot_at).not.toBeNull();
    const ev = await api(t, f, token, 'GET', `${V}/events?topic=bulk_operations/finish`);
    expect(
      ev
        .json()
        .data.map((e: { payload: Record<string, unknown> }) => e.payload)
        .sort((a: { id: string }, b: { id: string }) => Number(a.id) - Number(b.id)),
    ).toEqual([
      expect.objectContaining({ id: wrapped.id, status: 'completed', resource: 'products', rows: 3 }),
      expect.objectContaining({ id: bare.id, status: 'completed', rows: 5, snapshot_at: done.snapshot_at }),
    ]);
    const mine = await api(t, f, token, 'GET', `${V}/bulk_operations`);
    expect(mine.json().data.map((o: Op) => o.id)).toEqual([bare.id, wrapped.id]);
  });

  it('exports customers and orders as their lists give them', async () => {
    const scopes = 'read_customers read_orders';
    const f = await createFixture(t, { scopes });
    const token = await appToken(t, f, scopes);
    const writer = await privateToken(t, f.storeName, 'write_customers write_orders');
    const c = await api(t, f, writer, 'POST', `${V}/customers`, { email: 'ada@example.com', first_name: 'Ada' });
    expect(c.statusCode, c.body).toBe(201);
    const o = await api(t, f, writer, 'POST', `${V}/orders`, {
      customer_id: c.json().data.id,
      email: 'ada@example.com',
      line_items: [{ title: 'Tea', quantity: 2, price: '3.10' }],
    });
    expect(o.statusCode, o.body).toBe(201);
    await api(t, f, writer, 'POST', `${V}/orders`, {
      email: 'guest@example.com',
      line_items: [{ title: 'Cup', quantity: 1, price: '9.00' }],
    });
    const customers = await start(f, token, { resource: 'customers' });
    const orders = await start(f, token, { resource: 'orders', filters: { since_id: '0' } });
    await runAll();
    expect(await file(f, token, customers.id)).toEqual(await listed(f, token, 'customers', ''));
    const rows = await file(f, token, orders.id);
    expect(rows).toEqual(await listed(f, token, 'orders', ''));
    expect(rows).toHaveLength(2);
  });

  it('is the store at snapshot_at: a write before it is in the file, one after it in events from snapshot_at', async () => {
    const { f, token, writer } = await setup();
    for (const topic of ['products/create', 'products/update'])
      expect((await api(t, f, token, 'POST', `${V}/webhooks`, { address: `https://hooks.example.com/${topic}`, topic })).statusCode).toBe(
        201,
      );
    const made = await products(f, writer, ['a0', 'a1', 'a2', 'a3', 'a4', 'a5']);
    const before = await api(t, f, writer, 'PUT', `${V}/products/${made[0]!.id}`, { title: 'before' });
    expect(before.statusCode).toBe(200);
    const op = await start(f, token, { resource: 'products' });
    // Writes race the export: each lands wholly before the snapshot or wholly after it.
    const running = runAll();
    const racing = made.slice(1).map((p, i) => api(t, f, writer, 'PUT', `${V}/products/${p.id}`, { title: `during${i}` }));
    const created = api(t, f, writer, 'POST', `${V}/products`, { title: 'new during' });
    await Promise.all([running, ...racing, created]);
    t.clock.advance(5);
    const after = await api(t, f, writer, 'PUT', `${V}/products/${made[0]!.id}`, { title: 'after' });
    expect(after.statusCode).toBe(200);
    const done = await show(f, token, op.id);
    const rows = await file(f, token, op.id);
    const events = (await api(t, f, token, 'GET', `${V}/events?created_at_min=${done.snapshot_at}&limit=250`)).json().data as {
      topic: string;
      created_at: string;
      payload: Record<string, unknown>;
    }[];
    expect(events.every((e) => e.created_at >= done.snapshot_at!)).toBe(true);
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(made[0]!.id)!.title).toBe('before');
    expect(events.some((e) => e.payload.title === 'before')).toBe(false);
    expect(events.at(-1)!.payload.title).toBe('after');
    expect(rows.some((r) => r.title === 'after')).toBe(false);
    // Replaying the events from snapshot_at over the file gives the store as it is now, with no
    // change counted twice and none missing.
    const replayed = new Map(byId);
    for (const e of events) {
      if (e.topic === 'products/create') expect(replayed.has(e.payload.id)).toBe(false);
      replayed.set(e.payload.id, e.payload);
    }
    const now = await listed(f, token, 'products', '');
    expect([...replayed.values()].sort((a, b) => Number(a.id) - Number(b.id))).toEqual(now);
    // And a change in the file is never in the events: each racing update is in exactly one.
    for (const [i, p] of made.slice(1).entries()) {
      const inFile = byId.get(p.id)!.title === `during${i}`;
      const inEvents = events.some((e) => e.payload.id === p.id && e.payload.title === `during${i}`);
      expect(inFile !== inEvents, `during${i}`).toBe(true);
    }
  });

  it('a run cut off mid-file is taken over once its lease runs out, and the file has every row once', async () => {
    const { f, token, writer } = await setup();
    await products(
      f,
      writer,
      Array.from({ length: 12 }, (_, i) => `p${i}`),
    );
    const op = await start(f, token, { resource: 'products' });
    const run = new BulkExportRun(t.platform.storage, new WebhookOutbox(t.clock.fn), t.clock.fn, 300);
    let chunks = 0;
    // The first worker "crashes" after writing two chunks: it stops with its lease still held.
    expect(await runOne(() => run.runNext('crashed', 60_000, () => ++chunks > 2))).toBe('lost');
    const part = await show(f, token, op.id);
    expect(part.status).toBe('running');
    expect(part.rows).toBeGreaterThan(0);
    expect(part.rows).toBeLessThan(12);
    // Nobody else takes it while the lease holds.
    expect(await runOne(() => run.runNext('other', 60_000))).toBe('none');
    t.clock.advance(61_000);
    expect(await runOne(() => run.runNext('other', 60_000))).toBe('completed');
    const done = await show(f, token, op.id);
    expect(done.snapshot_at).toBe(part.snapshot_at);
    const rows = await file(f, token, op.id);
    expect(rows).toEqual(await listed(f, token, 'products', ''));
    expect(new Set(rows.map((r) => r.id)).size).toBe(12);
  });

  it('ends an export that throws on every attempt as failed after the last one, with its webhook, and frees its slot', async () => {
    const { f, token, writer } = await setup();
    const sub = await api(t, f, token, 'POST', `${V}/webhooks`, {
      address: 'https://hooks.example.com/bulk',
      topic: 'bulk_operations/finish',
    });
    expect(sub.statusCode, sub.body).toBe(201);
    await products(f, writer, ['s0', 's1', 's2']);
    const op = await start(f, token, { resource: 'products' });
    const waiting = await start(f, token, { resource: 'customers' });
    expect((await api(t, f, token, 'POST', `${V}/bulk_operations`, { resource: 'products' })).statusCode).toBe(429);
    const storage = t.platform.storage;
    // A row of this export that can never be written: every attempt throws once it has its snapshot.
    const broken: BulkOperationRepository = Object.assign(Object.create(storage.bulkOperations), {
      snapshotRows: async (id: number, ...rest: [never, number, number]) => {
        if (id === Number(op.id)) throw new Error('cannot serialise {"title":"s1","secret":"hunter2"}');
        return storage.bulkOperations.snapshotRows(id, ...rest);
      },
    });
    const run = new BulkExportRun(withFault(storage, { bulkOperations: broken }), new WebhookOutbox(t.clock.fn), t.clock.fn, 300);
    expect(MAX_ATTEMPTS).toBe(3);
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      await expect(
        runOne(() => run.runNext(`w${attempt}`, 60_000)),
        `attempt ${attempt}`,
      ).rejects.toMatchObject({ final: false });
      expect(await show(f, token, op.id)).toMatchObject({ status: 'running', error: null });
      expect((await api(t, f, token, 'POST', `${V}/bulk_operations`, { resource: 'products' })).statusCode).toBe(429);
      // Retried once its lease runs out (the waiting export has a higher id, so this one goes first).
      t.clock.advance(61_000);
    }
    await expect(runOne(() => run.runNext('last', 60_000))).rejects.toMatchObject({ final: true });
    const failed = await show(f, token, op.id);
    expect(failed).toMatchObject({ status: 'failed', error: 'the export failed on each of its 3 attempts; start a new one', url: null });
    expect(failed.error).not.toMatch(/hunter2|s1/);
    const events = (await api(t, f, token, 'GET', `${V}/events?topic=bulk_operations/finish`)).json().data;
    expect(events.map((e: { payload: Record<string, unknown> }) => e.payload)).toEqual([
      expect.objectContaining({ id: op.id, status: 'failed', error: failed.error }),
    ]);
    expect(await storage.bulkOperations.snapshotRows(Number(op.id), 'products', 0, 10)).toEqual([]);
    // Its slot is free, and nobody takes it up again.
    const next = await start(f, token, { resource: 'products' });
    expect(await runAll()).toEqual(['completed', 'completed']);
    expect((await show(f, token, op.id)).status).toBe('failed');
    expect((await show(f, token, waiting.id)).status).toBe('completed');
    expect((await file(f, token, next.id)).map((r) => r.title)).toEqual(['s0', 's1', 's2']);
  });

  it('an export whose worker dies on every attempt is ended as failed when claimed after its last one', async () => {
    const { f, token, writer } = await setup();
    await products(f, writer, ['d0', 'd1', 'd2', 'd3']);
    const op = await start(f, token, { resource: 'products' });
    const run = new BulkExportRun(t.platform.storage, new WebhookOutbox(t.clock.fn), t.clock.fn, 50);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      // Stops at its first chunk with the lease still held, as a killed process would.
      expect(await runOne(() => run.runNext(`dies${attempt}`, 60_000, () => true))).toBe('lost');
      t.clock.advance(61_000);
    }
    expect(await runOne(() => run.runNext('next', 60_000))).toBe('failed');
    expect(await show(f, token, op.id)).toMatchObject({
      status: 'failed',
      error: 'the export failed on each of its 3 attempts; start a new one',
    });
    expect(await runOne()).toBe('none');
  });

  it('an export that throws once is retried from where it stopped and completes with every row once', async () => {
    const { f, token, writer } = await setup();
    await products(
      f,
      writer,
      Array.from({ length: 12 }, (_, i) => `q${i}`),
    );
    const op = await start(f, token, { resource: 'products' });
    const storage = t.platform.storage;
    // The snapshot and the first chunk commit; the second chunk's transaction throws, once.
    let calls = 0;
    const transaction = <T>(work: (tx: Repositories) => Promise<T>): Promise<T> => {
      if (++calls === 3) return Promise.reject(new Error('connection reset'));
      return storage.transaction(work);
    };
    const run = new BulkExportRun(withFault(storage, { transaction }), new WebhookOutbox(t.clock.fn), t.clock.fn, 300);
    await expect(runOne(() => run.runNext('flaky', 60_000))).rejects.toMatchObject({ final: false });
    const part = await show(f, token, op.id);
    expect(part.status).toBe('running');
    expect(part.rows).toBeGreaterThan(0);
    expect(part.rows).toBeLessThan(12);
    t.clock.advance(61_000);
    expect(await runOne(() => run.runNext('flaky', 60_000))).toBe('completed');
    const done = await show(f, token, op.id);
    expect(done).toMatchObject({ status: 'completed', rows: 12, error: null, snapshot_at: part.snapshot_at });
    const rows = await file(f, token, op.id);
    expect(rows).toEqual(await listed(f, token, 'products', ''));
    expect(new Set(rows.map((r) => r.id)).size).toBe(12);
  });

  it('claims: each claim takes one operation, never one whose lease holds, and a lease that ran out is taken over', async () => {
    const { f, token } = await setup();
    const ops = [await start(f, token, { resource: 'products' }), await start(f, token, { resource: 'customers' })];
    const repo = t.platform.storage.bulkOperations;
    const now = t.clock.now;
    const a = await repo.claim('a', now, now + 1000);
    const b = await repo.claim('b', now, now + 1000);
    expect([a?.id, b?.id].map(String).sort()).toEqual(ops.map((o) => o.id).sort());
    expect(await repo.claim('c', now, now + 1000)).toBeUndefined();
    expect(await repo.renew(a!.id, 'b', now + 2000)).toBe(false);
    expect(await repo.renew(a!.id, 'a', now + 2000)).toBe(true);
    const taken = await repo.claim('c', now + 1500, now + 3000);
    expect(taken?.id).toBe(b!.id);
    expect(taken?.claimed_by).toBe('c');
    for (const o of ops) expect((await api(t, f, token, 'POST', `${V}/bulk_operations/${o.id}/cancel`, {})).statusCode).toBe(200);
    expect(await repo.renew(taken!.id, 'c', now + 4000)).toBe(false);
  });

  it('cancels a created or running operation; a finished one is 409; another app sees 404', async () => {
    const { f, token } = await setup();
    const op = await start(f, token, { resource: 'products' });
    const canceled = await api(t, f, token, 'POST', `${V}/bulk_operations/${op.id}/cancel`, {});
    expect(canceled.statusCode, canceled.body).toBe(200);
    expect(canceled.json().data.status).toBe('canceled');
    const again = await api(t, f, token, 'POST', `${V}/bulk_operations/${op.id}/cancel`, {});
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toMatch(/already canceled/);
    expect(await runOne()).toBe('none');
    const other = await privateToken(t, f.storeName, 'read_products');
    expect((await api(t, f, other, 'GET', `${V}/bulk_operations/${op.id}`)).statusCode).toBe(404);
    expect((await api(t, f, other, 'POST', `${V}/bulk_operations/${op.id}/cancel`, {})).statusCode).toBe(404);
    expect((await api(t, f, other, 'GET', `${V}/bulk_operations`)).json().data).toEqual([]);
  });

  it('allows two created or running operations per app in a store (429 beyond), counted per app', async () => {
    const { f, token } = await setup();
    await start(f, token, { resource: 'products' });
    const second = await start(f, token, { resource: 'customers' });
    const third = await api(t, f, token, 'POST', `${V}/bulk_operations`, { resource: 'products' });
    expect(third.statusCode).toBe(429);
    expect(third.json()).toMatchObject({ code: 'TooManyRequests', message: expect.stringMatching(/already has 2 bulk operations/) });
    const other = await privateToken(t, f.storeName, 'read_products');
    await start(f, other, { resource: 'products' });
    expect((await api(t, f, token, 'POST', `${V}/bulk_operations/${second.id}/cancel`, {})).statusCode).toBe(200);
    await start(f, token, { resource: 'products' });
    expect((await api(t, f, token, 'GET', `${V}/bulk_operations`)).json().data).toHaveLength(3);
    expect(await runAll()).toHaveLength(3);
  });

  it('checks scopes at start, before running and at download', async () => {
    const { f, token } = await setup('read_customers');
    const refused = await api(t, f, token, 'POST', `${V}/bulk_operations`, { resource: 'products' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toMatch(/read_products/);
    expect((await api(t, f, token, 'GET', `${V}/bulk_operations`)).json().data).toEqual([]);

    const scopes = 'read_products read_customers';
    const g = await createFixture(t, { scopes });
    const gToken = await appToken(t, g, scopes);
    const store = (await t.services.accounts.findStoreByName(g.storeName))!;
    const app = (await t.services.apps.findByClientId(g.clientId))!;
    const exported = await start(g, gToken, { resource: 'products' });
    await runAll();
    const url = (await show(g, gToken, exported.id)).url!;
    expect((await download(g, url)).statusCode).toBe(200);
    // A grant that no longer reads products: the file goes with it, and a waiting export fails.
    const waiting = await start(g, gToken, { resource: 'products' });
    await t.services.apps.grant(store.id, app.id, ['read_customers']);
    const shrunk = await download(g, url);
    expect(shrunk.statusCode).toBe(403);
    expect(shrunk.json().message).toMatch(/read_products/);
    expect(await runAll()).toEqual(['failed']);
    // An uninstalled app's file is gone.
    await t.services.apps.grant(store.id, app.id, ['read_products']);
    expect((await download(g, url)).statusCode).toBe(200);
    await t.services.apps.uninstall(store.id, app.id);
    expect((await download(g, url)).statusCode).toBe(404);
    const token2 = await appToken(t, g, scopes);
    const failed = await show(g, token2, waiting.id);
    expect(failed).toMatchObject({ status: 'failed', error: 'the app no longer holds the read_products scope', url: null });
  });

  it('refuses bad input with a clear 4xx and creates nothing', async () => {
    const { f, token } = await setup();
    const cases: [unknown, number, RegExp][] = [
      [{ resource: 'themes' }, 422, /resource/],
      [{ resource: 'products', filters: { created_at_min: 'yesterday' } }, 422, /created_at_min/],
      [{ resource: 'products', filters: { colour: 'red' } }, 400, /colour/],
      [{ resource: 'products', filters: { limit: '5' } }, 400, /limit/],
      [{ resource: 'products', fields: 'id,colour' }, 422, /colour/],
      [{ resource: 'products', filters: { ids: '1,x' } }, 422, /ids/],
      [{ resource: 'products', filters: { title: 'x' }, extra: 1 }, 422, /extra/],
      [{}, 422, /resource/],
      ['not json', 400, /./],
    ];
    for (const [body, status, message] of cases) {
      const res = await api(t, f, token, 'POST', `${V}/bulk_operations`, body);
      expect(res.statusCode, `${JSON.stringify(body)}: ${res.body}`).toBe(status);
      expect(res.body, JSON.stringify(body)).toMatch(message);
    }
    expect((await api(t, f, token, 'GET', `${V}/bulk_operations`)).json().data).toEqual([]);
    expect((await api(t, f, token, 'GET', `${V}/bulk_operations/abc`)).statusCode).toBe(404);
    expect((await api(t, f, token, 'GET', `${V}/bulk_operations/999999`)).statusCode).toBe(404);
    expect((await api(t, f, token, 'POST', `${V}/bulk_operations/0/cancel`, {})).statusCode).toBe(404);
    expect((await api(t, f, token, 'GET', '/openapi/2025-06/bulk_operations')).statusCode).toBe(404);
  });

  it('serves the file with Range, ETag and a signed address that expires', async () => {
    const { f, token, writer } = await setup();
    await products(f, writer, ['r0', 'r1', 'r2']);
    const op = await start(f, token, { resource: 'products', fields: 'id,title' });
    await runAll();
    const done = await show(f, token, op.id);
    const whole = await download(f, done.url!);
    expect(whole.headers['accept-ranges']).toBe('bytes');
    expect(whole.headers['content-type']).toMatch(/^application\/jsonl/);
    const etag = whole.headers.etag as string;
    const body = whole.rawPayload;
    const part = await download(f, done.url!, { range: 'bytes=5-14' });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 5-14/${body.length}`);
    expect(part.rawPayload).toEqual(body.subarray(5, 15));
    const tail = await download(f, done.url!, { range: 'bytes=-7' });
    expect(tail.rawPayload).toEqual(body.subarray(body.length - 7));
    const open = await download(f, done.url!, { range: `bytes=${body.length - 3}-`, 'if-range': etag });
    expect(open.statusCode).toBe(206);
    expect(open.rawPayload).toEqual(body.subarray(body.length - 3));
    const stale = await download(f, done.url!, { range: 'bytes=0-3', 'if-range': '"other"' });
    expect(stale.statusCode).toBe(200);
    expect(stale.rawPayload).toEqual(body);
    const beyond = await download(f, done.url!, { range: `bytes=${body.length}-` });
    expect(beyond.statusCode).toBe(416);
    expect(beyond.headers['content-range']).toBe(`bytes */${body.length}`);
    const forged = new URL(done.url!);
    forged.searchParams.set('signature', `${forged.searchParams.get('signature')!.slice(0, -2)}AA`);
    expect((await download(f, forged.toString())).statusCode).toBe(403);
    const longer = new URL(done.url!);
    longer.searchParams.set('expires', String(Number(longer.searchParams.get('expires')) + HOUR));
    expect((await download(f, longer.toString())).statusCode).toBe(403);
    const other = await createFixture(t);
    expect((await download(other, done.url!)).statusCode).toBe(403);
    t.clock.advance(HOUR + 1);
    const expired = await download(f, done.url!);
    expect(expired.statusCode).toBe(403);
    expect(expired.json().message).toMatch(/expired/);
    const fresh = await show(f, await appToken(t, f, 'read_products read_customers'), op.id);
    expect(fresh.url).not.toBe(done.url);
    expect((await download(f, fresh.url!)).rawPayload).toEqual(body);
  });

  it('is described in the OpenAPI document and on the API docs page', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'localhost:8080' } })).json();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/openapi/{version}/bulk_operations',
        '/openapi/{version}/bulk_operations/{id}',
        '/openapi/{version}/bulk_operations/{id}/cancel',
        '/bulk_downloads/{id}',
      ]),
    );
    expect(doc.paths['/bulk_downloads/{id}'].get.security).toEqual([]);
    const docs = (await t.app.inject({ method: 'GET', url: '/docs', headers: { host: 'localhost:8080' } })).body;
    expect(docs).toContain('<p id="bulk-exports">Bulk exports:');
    expect(docs).toContain('id="group-bulk_operations"');
  });

  it('prunes finished operations and their files after the retention', async () => {
    const { f, token } = await setup();
    const op = await start(f, token, { resource: 'products' });
    await runAll();
    const url = (await show(f, token, op.id)).url!;
    const run = new BulkExportRun(t.platform.storage, new WebhookOutbox(t.clock.fn), t.clock.fn);
    expect(await run.prune(t.clock.now - t.config.bulkExportRetentionMs)).toBe(0);
    t.clock.advance(t.config.bulkExportRetentionMs + 1);
    expect(await run.prune(t.clock.now - t.config.bulkExportRetentionMs)).toBeGreaterThanOrEqual(1);
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    expect(await t.platform.storage.bulkOperations.getById(store.id, Number(op.id))).toBeUndefined();
    expect([403, 404]).toContain((await download(f, url)).statusCode);
  });
});
