// Idempotency-Key on Admin API writes, on SQLite and PostgreSQL: replays of creates, updates and
// deletes (one row, one webhook event), a key reused for another request, a key in use, keys of
// other apps and stores, the 24-hour window on the frozen clock, malformed keys, what uses a key up
// and what does not, and the OpenAPI entries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, parseIdempotencyKey, RESERVATION_LEASE_MS, requestFingerprint } from '../src/domain/idempotency.ts';
import { IdempotencyKeyInUseError } from '../src/domain/errors.ts';
import { RESOURCE_DEFS } from '../src/domain/resources.ts';
import { until } from './webhook-receiver.ts';
import { createFixture, createTestPlatform, DIALECTS, privateToken, type Fixture, type TestPlatform } from './harness.ts';

const V = '/openapi/2026-01';
const HOUR = 3_600_000;
const products = RESOURCE_DEFS.find((d) => d.name === 'products')!;

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

function send(t: TestPlatform, host: string, token: string, method: Method, url: string, body?: unknown, key?: string) {
  return t.app.inject({
    method,
    url,
    headers: {
      host,
      'access-token': token,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(key !== undefined ? { 'idempotency-key': key } : {}),
    },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
}

describe('idempotency keys (pure parts)', () => {
  it('accepts 1–255 printable ASCII characters and names the header in every refusal', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
    expect(parseIdempotencyKey('a')).toBe('a');
    expect(parseIdempotencyKey('k'.repeat(255))).toBe('k'.repeat(255));
    expect(parseIdempotencyKey('order 42 / retry-safe ~!')).toBe('order 42 / retry-safe ~!');
    for (const bad of ['', 'k'.repeat(256), 'tab\there', 'caf\u00e9', 'nul\u0000', ['a', 'b']]) {
      expect(() => parseIdempotencyKey(bad)).toThrow(/Idempotency-Key/);
    }
  });

  it('fingerprints method, URL and body, ignoring the order of object keys only', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: null }] })).toBe('{"a":[{"c":null,"d":2}],"b":1}');
    const base = requestFingerprint('POST', '/openapi/2026-01/products', { title: 'Hat', price: '1.00' });
    expect(requestFingerprint('post', '/openapi/2026-01/products', { price: '1.00', title: 'Hat' })).toBe(base);
    expect(requestFingerprint('PUT', '/openapi/2026-01/products', { price: '1.00', title: 'Hat' })).not.toBe(base);
    expect(requestFingerprint('POST', '/openapi/2025-06/products', { price: '1.00', title: 'Hat' })).not.toBe(base);
    expect(requestFingerprint('POST', '/openapi/2026-01/products', { price: '1.00', title: 'Hat ' })).not.toBe(base);
    expect(requestFingerprint('DELETE', '/x', undefined)).toBe(requestFingerprint('DELETE', '/x', null));
  });
});

describe.each(DIALECTS)('Idempotency-Key on %s', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  let g: Fixture;
  let token: string;
  let sameStoreOtherApp: string;
  let otherStore: string;
  let storeId: number;
  let keySeq = 0;
  const newKey = () => `key-${dialect}-${++keySeq}`;

  async function rows(table: 'products' | 'customers' | 'webhook_subscriptions' | 'webhook_events' | 'idempotency_keys'): Promise<number> {
    const r = await t.db.kysely
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
  async function titled(title: string): Promise<number> {
    const r = await t.db.kysely
      .selectFrom('products')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('title', '=', title)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
  async function keyRows(key: string): Promise<number> {
    const r = await t.db.kysely
      .selectFrom('idempotency_keys')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('idem_key', '=', key)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
  const call = (method: Method, url: string, body?: unknown, key?: string) => send(t, f.host, token, method, url, body, key);
  const product = async (title: string) => (await call('POST', `${V}/products`, { title, price: '5.00' })).json().data.id as string;

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off' });
    f = await createFixture(t);
    g = await createFixture(t);
    token = await privateToken(t, f.storeName, 'write_products write_orders write_customers');
    sameStoreOtherApp = await privateToken(t, f.storeName, 'write_products');
    otherStore = await privateToken(t, g.storeName, 'write_products');
    storeId = (await t.services.accounts.findStoreByName(f.storeName))!.id;
    // Every product change of this store emits an event to this subscription, so events can be counted.
    for (const topic of ['products/create', 'products/update', 'products/delete']) {
      const res = await call('POST', `${V}/webhooks`, { address: `http://127.0.0.1:9/${topic}`, topic });
      expect(res.statusCode).toBe(201);
    }
  });
  afterAll(async () => t.close());

  it('a repeated create returns the first response, marked as replayed, and writes one row and one event', async () => {
    const key = newKey();
    const events = await rows('webhook_events');
    const first = await call('POST', `${V}/products`, { title: 'Replay hat', price: '12.00' }, key);
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(await rows('webhook_events')).toBe(events + 1);
    t.clock.advance(1000);
    // The same request: the same fields in another order, and wrapped in the resource's name.
    for (const body of [{ price: '12.00', title: 'Replay hat' }, { product: { title: 'Replay hat', price: '12.00' } }]) {
      const again = await call('POST', `${V}/products`, body, key);
      expect(again.statusCode).toBe(201);
      expect(again.body).toBe(first.body);
      expect(again.headers['content-type']).toBe(first.headers['content-type']);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.headers['original-request-id']).toBe(first.headers['x-request-id']);
      expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    }
    expect(await titled('Replay hat')).toBe(1);
    expect(await rows('webhook_events')).toBe(events + 1);
  });

  it('the same key with another body, path or method is 422 IdempotencyKeyReused and changes nothing', async () => {
    const key = newKey();
    const first = await call('POST', `${V}/products`, { title: 'Reused', price: '1.00' }, key);
    expect(first.statusCode).toBe(201);
    const id = first.json().data.id as string;
    const before = { products: await rows('products'), events: await rows('webhook_events') };
    const others: [Method, string, unknown][] = [
      ['POST', `${V}/products`, { title: 'Reused', price: '2.00' }],
      ['POST', '/openapi/2025-06/products', { title: 'Reused', price: '1.00' }],
      ['PUT', `${V}/products/${id}`, { title: 'Reused', price: '1.00' }],
      ['DELETE', `${V}/products/${id}`, undefined],
      ['POST', `${V}/customers`, { email: 'reused@example.test' }],
    ];
    for (const [method, url, body] of others) {
      const res = await call(method, url, body, key);
      expect(res.statusCode, `${method} ${url}`).toBe(422);
      expect(res.json()).toMatchObject({ code: 'IdempotencyKeyReused', request_id: res.headers['x-request-id'] });
      expect(res.json().message).toMatch(/Idempotency-Key/);
    }
    expect(await rows('products')).toBe(before.products);
    expect(await rows('webhook_events')).toBe(before.events);
    expect((await call('GET', `${V}/products/${id}`)).json().data.price).toBe('1.00');
    // The first request still replays.
    const again = await call('POST', `${V}/products`, { title: 'Reused', price: '1.00' }, key);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('while the first request runs, the same key is 409 IdempotencyKeyInUse; afterwards it replays', async () => {
    const key = newKey();
    const resources = t.platform.services.resources;
    const original = resources.create;
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    resources.create = async (...args) => {
      entered();
      await gate;
      return original.apply(resources, args);
    };
    try {
      const firstP = call('POST', `${V}/products`, { title: 'Slow hat', price: '3.00' }, key);
      await inside;
      const second = await call('POST', `${V}/products`, { title: 'Slow hat', price: '3.00' }, key);
      expect(second.statusCode).toBe(409);
      expect(second.json()).toMatchObject({ code: 'IdempotencyKeyInUse' });
      // Another request with the key is still "reused", even while the first runs.
      expect((await call('POST', `${V}/products`, { title: 'Other hat', price: '3.00' }, key)).statusCode).toBe(422);
      open();
      const first = await firstP;
      expect(first.statusCode).toBe(201);
      const third = await call('POST', `${V}/products`, { title: 'Slow hat', price: '3.00' }, key);
      expect(third.body).toBe(first.body);
      expect(third.headers['idempotent-replayed']).toBe('true');
    } finally {
      resources.create = original;
    }
    expect(await titled('Slow hat')).toBe(1);
  });

  it('simultaneous requests with one key write exactly one row; each answer is the 201 or a 409', async () => {
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => call('POST', `${V}/products`, { title: 'Race hat', price: '4.00' }, key)),
    );
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const created = answers.filter((a) => a.statusCode === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(created.filter((a) => a.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(new Set(created.map((a) => a.body)).size).toBe(1);
    expect(await titled('Race hat')).toBe(1);
  });

  it('keys belong to one app in one store: the same key elsewhere is independent', async () => {
    const key = newKey();
    expect((await call('POST', `${V}/products`, { title: 'Mine', price: '1.00' }, key)).statusCode).toBe(201);
    const otherApp = await send(t, f.host, sameStoreOtherApp, 'POST', `${V}/products`, { title: 'Theirs', price: '9.00' }, key);
    expect(otherApp.statusCode).toBe(201);
    expect(otherApp.headers['idempotent-replayed']).toBeUndefined();
    // Even the identical request is its own write for another app or store.
    const sameBody = await send(t, f.host, sameStoreOtherApp, 'POST', `${V}/products`, { title: 'Mine', price: '1.00' }, newKey());
    expect(sameBody.statusCode).toBe(201);
    const otherShop = await send(t, g.host, otherStore, 'POST', `${V}/products`, { title: 'Mine', price: '1.00' }, key);
    expect(otherShop.statusCode).toBe(201);
    expect(otherShop.headers['idempotent-replayed']).toBeUndefined();
    expect(await titled('Mine')).toBe(3);
    expect(await titled('Theirs')).toBe(1);
    expect(await keyRows(key)).toBe(3);
  });

  it('a key answers for 24 hours after its first use, enforced on read; pruning then deletes it', async () => {
    const key = newKey();
    const start = t.clock.now;
    try {
      const first = await call('POST', `${V}/products`, { title: 'Day hat', price: '1.00' }, key);
      expect(first.statusCode).toBe(201);
      t.clock.advance(24 * HOUR - 1);
      expect((await call('POST', `${V}/products`, { title: 'Day hat', price: '1.00' }, key)).headers['idempotent-replayed']).toBe('true');
      await t.services.idempotency.prune();
      expect(await keyRows(key)).toBe(1);
      t.clock.advance(1);
      // Not pruned yet, but past its window: the key is free, and a new request with it is a new write.
      const later = await call('POST', `${V}/products`, { title: 'Day hat', price: '2.00' }, key);
      expect(later.statusCode).toBe(201);
      expect(later.headers['idempotent-replayed']).toBeUndefined();
      expect(await titled('Day hat')).toBe(2);
      t.clock.advance(24 * HOUR + 1);
      expect(await t.services.idempotency.prune()).toBeGreaterThanOrEqual(1);
      expect(await keyRows(key)).toBe(0);
    } finally {
      t.clock.now = start;
    }
  });

  it('the worker prunes expired keys in its hourly round', async () => {
    const key = newKey();
    const start = t.clock.now;
    const platform = await (await import('../src/platform.ts')).createPlatform(t.config, {
      clock: t.clock.fn,
      http: false,
      migrate: false,
      db: t.db,
      worker: { pollMs: 5 },
    });
    try {
      expect((await call('POST', `${V}/products`, { title: 'Pruned hat', price: '1.00' }, key)).statusCode).toBe(201);
      t.clock.advance(25 * HOUR);
      platform.worker!.start();
      await until(async () => (await keyRows(key)) === 0, 10_000, 'the worker to prune the expired key');
    } finally {
      await platform.worker!.stop();
      t.clock.now = start;
    }
  });

  it('a malformed key is 400 naming the header and changes nothing; reads ignore the header', async () => {
    const before = await rows('products');
    for (const bad of ['', 'k'.repeat(256), 'tab\there']) {
      const res = await call('POST', `${V}/products`, { title: 'Bad key', price: '1.00' }, bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'BadRequest' });
      expect(res.json().message).toMatch(/Idempotency-Key/);
    }
    expect(await rows('products')).toBe(before);
    expect((await call('POST', `${V}/products`, { title: 'Long key', price: '1.00' }, 'k'.repeat(255))).statusCode).toBe(201);
    expect((await call('GET', `${V}/products?limit=1`, undefined, '')).statusCode).toBe(200);
  });

  it('DELETE replays its 200 instead of a 404, with one delete event', async () => {
    const id = await product('Doomed hat');
    const key = newKey();
    const events = await rows('webhook_events');
    const first = await call('DELETE', `${V}/products/${id}`, undefined, key);
    expect(first.statusCode).toBe(200);
    const again = await call('DELETE', `${V}/products/${id}`, undefined, key);
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await rows('webhook_events')).toBe(events + 1);
    expect((await call('DELETE', `${V}/products/${id}`)).statusCode).toBe(404);
  });

  it('PUT and PATCH replay their first answer even after the record changed again', async () => {
    const id = await product('Before');
    for (const method of ['PUT', 'PATCH'] as const) {
      const key = newKey();
      const events = await rows('webhook_events');
      const first = await call(method, `${V}/products/${id}`, { title: `After ${method}` }, key);
      expect(first.statusCode).toBe(200);
      expect(first.json().data.title).toBe(`After ${method}`);
      expect(await rows('webhook_events')).toBe(events + 1);
      expect((await call('PUT', `${V}/products/${id}`, { title: 'Changed meanwhile' })).statusCode).toBe(200);
      const again = await call(method, `${V}/products/${id}`, { title: `After ${method}` }, key);
      expect(again.body).toBe(first.body);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(await rows('webhook_events')).toBe(events + 2);
      expect((await call('GET', `${V}/products/${id}`)).json().data.title).toBe('Changed meanwhile');
    }
  });

  it("the handler's own refusals (404, 422) are kept and replayed", async () => {
    const key = newKey();
    const missing = await call('PUT', `${V}/products/999999`, { title: 'Nobody' }, key);
    expect(missing.statusCode).toBe(404);
    const again = await call('PUT', `${V}/products/999999`, { title: 'Nobody' }, key);
    expect(again.statusCode).toBe(404);
    expect(again.body).toBe(missing.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect((await call('POST', `${V}/customers`, { email: 'taken@example.test' })).statusCode).toBe(201);
    const dupKey = newKey();
    const taken = await call('POST', `${V}/customers`, { email: 'taken@example.test' }, dupKey);
    expect(taken.statusCode).toBe(422);
    expect(taken.json().code).toBe('ValidationFailed');
    const takenAgain = await call('POST', `${V}/customers`, { email: 'taken@example.test' }, dupKey);
    expect(takenAgain.body).toBe(taken.body);
    expect(takenAgain.headers['idempotent-replayed']).toBe('true');
  });

  it('refusals before the handler (415, body schema, 403) keep no answer and leave the key unused', async () => {
    const key = newKey();
    const wrongType = await t.app.inject({
      method: 'POST',
      url: `${V}/products`,
      headers: { host: f.host, 'access-token': token, 'content-type': 'text/plain', 'idempotency-key': key },
      payload: 'title=Hat',
    });
    expect(wrongType.statusCode).toBe(415);
    expect((await call('POST', `${V}/products`, { title: 'Hat', unknown_field: 1 }, key)).statusCode).toBe(422);
    const readOnly = await privateToken(t, f.storeName, 'read_products');
    expect((await send(t, f.host, readOnly, 'POST', `${V}/products`, { title: 'Hat', price: '1.00' }, key)).statusCode).toBe(403);
    expect(await keyRows(key)).toBe(0);
    const res = await call('POST', `${V}/products`, { title: 'Unused key hat', price: '1.00' }, key);
    expect(res.statusCode).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a server error frees the key, and the retry performs the write once', async () => {
    const key = newKey();
    const resources = t.platform.services.resources;
    const original = resources.create;
    resources.create = async () => {
      throw new Error('simulated failure');
    };
    try {
      const failed = await call('POST', `${V}/products`, { title: 'Retry hat', price: '1.00' }, key);
      expect(failed.statusCode).toBe(500);
    } finally {
      resources.create = original;
    }
    expect(await keyRows(key)).toBe(0);
    const retry = await call('POST', `${V}/products`, { title: 'Retry hat', price: '1.00' }, key);
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await titled('Retry hat')).toBe(1);
  });

  it('a reservation whose process died frees the key after its lease; a late writer then rolls back', async () => {
    const key = newKey();
    const start = t.clock.now;
    const body = { title: 'Orphan hat', price: '1.00' };
    const fingerprint = requestFingerprint('POST', `${V}/products`, body);
    const owner = (
      await t.db.kysely
        .selectFrom('private_apps')
        .select('id')
        .orderBy('id')
        .where('scopes', 'like', '%write_customers%')
        .executeTakeFirstOrThrow()
    ).id;
    const id = { storeId, owner: `private:${owner}`, key };
    try {
      // Another node reserved the key and stopped answering.
      const stale = await t.services.idempotency.admit(id, fingerprint, 'req-dead');
      expect(stale.kind).toBe('run');
      expect((await call('POST', `${V}/products`, body, key)).statusCode).toBe(409);
      t.clock.advance(RESERVATION_LEASE_MS);
      const retry = await call('POST', `${V}/products`, body, key);
      expect(retry.statusCode).toBe(201);
      // The old holder wakes up and tries to write: its reservation is gone, so its write rolls back.
      if (stale.kind !== 'run') throw new Error('unreachable');
      const late = t.services.resources.create(
        products,
        storeId,
        body,
        t.services.idempotency.recordIn(stale.reservation, () => ({ status: 201, body: '{}', headers: {} })),
      );
      await expect(late).rejects.toBeInstanceOf(IdempotencyKeyInUseError);
      expect(await titled('Orphan hat')).toBe(1);
      expect((await call('POST', `${V}/products`, body, key)).body).toBe(retry.body);
    } finally {
      t.clock.now = start;
    }
  });

  it('webhook subscriptions: create and delete replay; one subscription row', async () => {
    const key = newKey();
    const sub = { address: 'http://127.0.0.1:9/idem', topic: 'orders/create' };
    const before = await rows('webhook_subscriptions');
    const first = await call('POST', `${V}/webhooks`, sub, key);
    expect(first.statusCode).toBe(201);
    const again = await call('POST', `${V}/webhooks`, sub, key);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await rows('webhook_subscriptions')).toBe(before + 1);
    // Without a key the same subscribe is refused as a duplicate: the replay was not a second write.
    expect((await call('POST', `${V}/webhooks`, sub)).statusCode).toBe(422);
    const delKey = newKey();
    const url = `${V}/webhooks/${first.json().data.id}`;
    expect((await call('DELETE', url, undefined, delKey)).statusCode).toBe(200);
    const delAgain = await call('DELETE', url, undefined, delKey);
    expect(delAgain.statusCode).toBe(200);
    expect(delAgain.headers['idempotent-replayed']).toBe('true');
    expect(await rows('webhook_subscriptions')).toBe(before);
  });

  it('the OpenAPI document names the header on every write and the 409 and 422 answers', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'localhost:8080' } })).json();
    const writes: [string, string][] = [
      ['/openapi/{version}/products', 'post'],
      ['/openapi/{version}/products/{id}', 'put'],
      ['/openapi/{version}/products/{id}', 'patch'],
      ['/openapi/{version}/products/{id}', 'delete'],
      ['/openapi/{version}/orders/{id}', 'put'],
      ['/openapi/{version}/customers', 'post'],
      ['/openapi/{version}/webhooks', 'post'],
      ['/openapi/{version}/webhooks/{id}', 'delete'],
    ];
    for (const [path, method] of writes) {
      const op = doc.paths[path][method];
      const header = (op.parameters as { in: string; name: string }[]).find((p) => p.in === 'header' && p.name === 'idempotency-key');
      expect(header, `${method} ${path}`).toBeDefined();
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['409', '422']));
    }
    const docs = (await t.app.inject({ method: 'GET', url: '/docs', headers: { host: 'localhost:8080' } })).body;
    expect(docs).toMatch(/<code>idempotency-key<\/code> \(header\) — string · Optional\. A unique key for this write/);
    const list = doc.paths['/openapi/{version}/products'].get;
    expect((list.parameters ?? []).some((p: { name: string }) => p.name === 'idempotency-key')).toBe(false);
  });
});
