// Missed-event recovery (GET /openapi/{version}/events) on SQLite and PostgreSQL: the list carries
// the ids and body of each delivery as a real worker sent it to a local receiver, undelivered and
// dead ones too; the 30-day window on the frozen clock; filters; keyset pages; isolation between
// apps and stores; current scopes; versions; bad input.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookWorker } from '../src/webhooks/webhook-worker.ts';
import {
  api,
  appToken,
  consent,
  createFixture,
  createTestPlatform,
  DIALECTS,
  exchange,
  login,
  privateToken,
  testWorker,
  type Fixture,
  type TestPlatform,
} from './harness.ts';
import { Receiver, until } from './webhook-receiver.ts';

const V = '/openapi/2026-01';
const DAY = 86_400_000;
const FAST = { timeoutMs: 300, retrySchedule: [40, 40, 40], disableAfterDead: 2 };
const BASE = Date.UTC(2026, 10, 20, 9, 0, 0);

interface Entry {
  webhook_id: string;
  event_id: string;
  topic: string;
  created_at: string;
  api_version: string | null;
  status: string;
  attempts: number;
  payload: Record<string, unknown>;
}

describe.each(DIALECTS)('events list on %s', (dialect) => {
  let t: TestPlatform;
  let rx: Receiver;
  const workers: WebhookWorker[] = [];

  /** A store with an app installed (`scopes`), its token, and a private app that writes. */
  async function setup(scopes = 'read_products read_customers', fixture?: Fixture) {
    const f = fixture ?? (await createFixture(t, { scopes }));
    const token = await appToken(t, f, scopes);
    const writer = await privateToken(t, f.storeName, 'write_products write_customers');
    return { f, token, writer };
  }

  async function subscribe(f: Fixture, token: string, topic: string, path: string): Promise<void> {
    const res = await api(t, f, token, 'POST', `${V}/webhooks`, { address: rx.url(path), topic });
    expect(res.statusCode, res.body).toBe(201);
  }

  async function product(f: Fixture, writer: string, title: string): Promise<Record<string, unknown>> {
    const res = await api(t, f, writer, 'POST', `${V}/products`, { title, price: '5.00' });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data;
  }

  async function customer(f: Fixture, writer: string, email: string): Promise<void> {
    expect((await api(t, f, writer, 'POST', `${V}/customers`, { email })).statusCode).toBe(201);
  }

  async function list(f: Fixture, token: string, query = ''): Promise<{ data: Entry[]; cursor: string; has_more: boolean }> {
    const res = await api(t, f, token, 'GET', `${V}/events${query ? `?${query}` : ''}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { webhooks: FAST });
    rx = await Receiver.start();
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
    rx.handler = (_req, res) => res.end('ok');
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  it('lists each delivery with the webhook id, event id, topic, time, version and body its requests carried, whatever its state', async () => {
    // Real time: the worker schedules attempts by the wall clock.
    t.clock.now = Date.now() - 1000;
    const { f, token, writer } = await setup();
    await subscribe(f, token, 'products/create', '/ev-ok');
    await subscribe(f, token, 'customers/create', '/ev-dead');
    await subscribe(f, token, 'products/update', '/ev-later');
    rx.handler = (req, res) => {
      res.statusCode = req.url === '/ev-dead' ? 500 : 200;
      res.end('ok');
    };
    const w = await testWorker(t, { pollMs: 25, random: () => 0.5, pruneEveryMs: 0 });
    workers.push(w);
    await w.start();
    const made = [await product(f, writer, 'First'), await product(f, writer, 'Second')];
    await customer(f, writer, 'dead@example.test');
    await until(() => rx.on('/ev-ok').length === 2 && rx.on('/ev-dead').length === 4, 8000, 'deliveries and retries');
    await until(async () => (await list(f, token)).data.every((e) => e.status !== 'pending'), 5000, 'final states');
    await w.stop();
    // Queued while no worker runs: listed as pending, with the ids its delivery will carry.
    const updated = await api(t, f, writer, 'PUT', `${V}/products/${made[0]!.id}`, { title: 'First, renamed' });
    expect(updated.statusCode).toBe(200);

    const { data, cursor, has_more } = await list(f, token);
    expect({ cursor, has_more }).toEqual({ cursor: '', has_more: false });
    expect(data.map((e) => [e.topic, e.status, e.attempts])).toEqual([
      ['products/create', 'delivered', 1],
      ['products/create', 'delivered', 1],
      ['customers/create', 'dead', 4],
      ['products/update', 'pending', 0],
    ]);
    for (const got of [...rx.on('/ev-ok'), rx.on('/ev-dead')[0]!]) {
      const entry = data.find((e) => e.webhook_id === got.headers['x-service-webhook-id']);
      expect(entry, got.body).toBeDefined();
      expect(entry!.webhook_id).toBe(got.headers['webhook-id']);
      expect(entry!.event_id).toBe(got.headers['x-service-event-id']);
      expect(entry!.topic).toBe(got.headers['x-service-topic']);
      expect(entry!.api_version).toBe(got.headers['x-service-api-version']);
      expect(entry!.created_at).toBe(got.headers['x-service-triggered-at']);
      // The body, byte for byte.
      expect(JSON.stringify(entry!.payload)).toBe(got.body);
    }
    // Every retry of the dead delivery carried the one webhook id listed.
    expect(new Set(rx.on('/ev-dead').map((r) => r.headers['x-service-webhook-id'])).size).toBe(1);
    const pending = data[3]!;
    expect(pending.payload).toEqual(updated.json().data);

    const again = await testWorker(t, { pollMs: 25, random: () => 0.5, pruneEveryMs: 0 });
    workers.push(again);
    await again.start();
    await until(() => rx.on('/ev-later').length === 1, 5000, 'the pending delivery');
    const later = rx.on('/ev-later')[0]!;
    expect(later.headers['x-service-webhook-id']).toBe(pending.webhook_id);
    expect(later.headers['x-service-event-id']).toBe(pending.event_id);
    expect(later.body).toBe(JSON.stringify(pending.payload));
  });

  it('covers the last 30 days on the clock, boundary included; an older created_at_min is clamped to it', async () => {
    t.clock.now = BASE;
    // A private app reads here: its token does not expire while the clock moves on by weeks.
    const { f, writer } = await setup();
    await subscribe(f, writer, 'products/create', '/window');
    await product(f, writer, 'Old');
    t.clock.advance(10 * DAY);
    await product(f, writer, 'Newer');
    t.clock.advance(20 * DAY);
    const titles = async (q = '') => (await list(f, writer, q)).data.map((e) => e.payload.title);
    expect(await titles()).toEqual(['Old', 'Newer']);
    t.clock.advance(1);
    expect(await titles()).toEqual(['Newer']);
    expect(await titles(`created_at_min=${new Date(BASE - 90 * DAY).toISOString()}`)).toEqual(['Newer']);
    t.clock.advance(10 * DAY);
    expect(await titles()).toEqual([]);
  });

  it('filters by topic and created_at_min (inclusive, any time zone), alone and together', async () => {
    t.clock.now = BASE;
    const { f, token, writer } = await setup();
    for (const topic of ['products/create', 'products/update', 'customers/create']) await subscribe(f, token, topic, '/filters');
    const p = await product(f, writer, 'Filtered');
    t.clock.advance(60_000);
    await customer(f, writer, 'filter@example.test');
    t.clock.advance(60_000);
    expect((await api(t, f, writer, 'PUT', `${V}/products/${p.id}`, { title: 'Filtered again' })).statusCode).toBe(200);
    const topics = async (q: string) => (await list(f, token, q)).data.map((e) => e.topic);
    expect(await topics('')).toEqual(['products/create', 'customers/create', 'products/update']);
    expect(await topics('topic=products/create')).toEqual(['products/create']);
    expect(await topics(`topic=${encodeURIComponent('customers/create')}`)).toEqual(['customers/create']);
    const second = new Date(BASE + 60_000).toISOString();
    expect(await topics(`created_at_min=${second}`)).toEqual(['customers/create', 'products/update']);
    // The same instant written with an offset.
    expect(await topics(`created_at_min=${encodeURIComponent('2026-11-20T10:01:00+01:00')}`)).toEqual([
      'customers/create',
      'products/update',
    ]);
    expect(await topics(`created_at_min=${second}&topic=products/update`)).toEqual(['products/update']);
    expect(await topics(`created_at_min=${second}&topic=products/create`)).toEqual([]);
    expect(await topics(`created_at_min=${new Date(BASE + DAY).toISOString()}`)).toEqual([]);
  });

  it('pages with signed cursors: no repeat, no skip, events added meanwhile come last; altered or foreign cursors are 400', async () => {
    t.clock.now = BASE;
    const { f, token, writer } = await setup();
    await subscribe(f, token, 'products/create', '/pages');
    const titles: string[] = [];
    for (let i = 0; i < 7; i++) {
      // Three events share each instant: the id breaks the tie.
      if (i % 3 === 0) t.clock.advance(1000);
      titles.push(`P${i}`);
      await product(f, writer, `P${i}`);
    }
    const seen: string[] = [];
    const shapes: Array<[number, boolean, boolean]> = [];
    let cursor = '';
    for (let n = 0; n < 10; n++) {
      const page = await list(f, token, `limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.data.map((e) => String(e.payload.title)));
      shapes.push([page.data.length, page.has_more, page.cursor === '']);
      if (n === 0) {
        // Added while paging: after every position already handed out.
        titles.push('Late');
        await product(f, writer, 'Late');
      }
      if (!page.has_more) break;
      cursor = page.cursor;
    }
    expect(seen).toEqual(titles);
    expect(shapes).toEqual([
      [3, true, false],
      [3, true, false],
      [2, false, true],
    ]);
    // page_size and per_page are aliases of limit.
    expect((await list(f, token, 'page_size=2')).data).toHaveLength(2);
    expect((await list(f, token, 'per_page=5')).data).toHaveLength(5);

    const first = await list(f, token, 'limit=2');
    const bad = async (c: string, fx = f, tok = token) => {
      const res = await api(t, fx, tok, 'GET', `${V}/events?cursor=${encodeURIComponent(c)}`);
      expect(res.statusCode, c).toBe(400);
      expect(res.json().code).toBe('InvalidCursor');
    };
    const [payload, mac] = first.cursor.split('.');
    await bad(`${payload}.${mac!.slice(0, -2)}AA`);
    await bad(
      `${Buffer.from(
        Buffer.from(payload!, 'base64url')
          .toString()
          .replace(/\|\d+$/, '|1'),
      ).toString('base64url')}.${mac}`,
    );
    await bad('garbage');
    // A cursor of another list (the product list of the same store) or of another app.
    const productsPage = await api(t, f, writer, 'GET', `${V}/products?limit=1`);
    await bad(productsPage.json().cursor);
    const otherApp = await createFixture(t, { scopes: 'read_products' });
    const other = await setup('read_products', { ...f, clientId: otherApp.clientId, clientSecret: otherApp.clientSecret });
    expect(other.f.clientId).not.toBe(f.clientId);
    await bad(first.cursor, other.f, other.token);
  });

  it("never lists another app's, a private app's or another store's deliveries", async () => {
    t.clock.now = BASE;
    const a = await setup();
    // A second app in the same store, and the same app installed in a second store.
    const bFixture = await createFixture(t, { scopes: 'read_products' });
    const b = await setup('read_products', { ...a.f, clientId: bFixture.clientId, clientSecret: bFixture.clientSecret });
    const elsewhere = await createFixture(t, { scopes: 'read_products' });
    const aThere = await setup('read_products read_customers', {
      ...a.f,
      storeName: elsewhere.storeName,
      host: elsewhere.host,
      email: elsewhere.email,
      password: elsewhere.password,
    });
    const priv = await privateToken(t, a.f.storeName, 'read_products');
    await subscribe(a.f, a.token, 'products/create', '/iso-a');
    await subscribe(b.f, b.token, 'products/create', '/iso-b');
    await subscribe(a.f, priv, 'products/create', '/iso-priv');
    await subscribe(aThere.f, aThere.token, 'products/create', '/iso-there');
    await product(a.f, a.writer, 'Here');
    await product(aThere.f, aThere.writer, 'There');

    const here = await list(a.f, a.token);
    const ofB = await list(b.f, b.token);
    const ofPriv = await list(a.f, priv);
    const there = await list(aThere.f, aThere.token);
    expect([here, ofB, ofPriv, there].map((l) => l.data.map((e) => e.payload.title))).toEqual([['Here'], ['Here'], ['Here'], ['There']]);
    // One change, one event id; each subscriber its own webhook id.
    expect(new Set([here, ofB, ofPriv].map((l) => l.data[0]!.event_id)).size).toBe(1);
    expect(new Set([here, ofB, ofPriv].map((l) => l.data[0]!.webhook_id)).size).toBe(3);
    // A cursor is bound to its store and owner.
    await product(a.f, a.writer, 'Here again');
    const page = await list(a.f, a.token, 'limit=1');
    expect(page.has_more).toBe(true);
    for (const [fx, tok] of [
      [aThere.f, aThere.token],
      [a.f, priv],
    ] as const) {
      const res = await api(t, fx, tok, 'GET', `${V}/events?cursor=${page.cursor}`);
      expect(res.json().code).toBe('InvalidCursor');
    }
    // Requires a valid Access-Token of this store, and counts against the rate limit.
    expect((await api(t, a.f, undefined, 'GET', `${V}/events`)).statusCode).toBe(401);
    expect((await api(t, aThere.f, a.token, 'GET', `${V}/events`)).statusCode).toBe(401);
    const limited = await api(t, a.f, a.token, 'GET', `${V}/events`);
    expect(limited.headers['x-service-api-call-limit']).toMatch(/^\d+\/40$/);
  });

  it('leaves out topics the app may no longer read with its current scopes', async () => {
    t.clock.now = BASE;
    const f = await createFixture(t, { scopes: 'read_products read_customers write_orders' });
    const { token, writer } = await setup('read_products read_customers', f);
    await subscribe(f, token, 'products/create', '/shrink');
    await subscribe(f, token, 'customers/create', '/shrink');
    await product(f, writer, 'Hidden later');
    await customer(f, writer, 'kept@example.test');
    expect((await list(f, token)).data.map((e) => e.topic)).toEqual(['products/create', 'customers/create']);
    // The merchant approves a list without products (a subset alone would not change the grant):
    // the old token ends, and the new one sees less.
    const jar = await login(t, f);
    const code = (await consent(t, f, { scope: 'read_customers write_orders' }, jar)).searchParams.get('code')!;
    const narrow = (await exchange(t, f, code)).access_token;
    expect((await api(t, f, token, 'GET', `${V}/events`)).statusCode).toBe(401);
    expect((await list(f, narrow)).data.map((e) => e.topic)).toEqual(['customers/create']);
    const asked = await api(t, f, narrow, 'GET', `${V}/events?topic=products/create`);
    expect(asked.statusCode).toBe(403);
    expect(asked.json()).toMatchObject({ code: 'Forbidden', message: expect.stringContaining('read_products') });
  });

  it('exists from version 2026-01 on: 2022-01 and 2025-06 answer 404 naming it, before the token is checked', async () => {
    t.clock.now = BASE;
    const { f, token } = await setup();
    for (const version of ['2022-01', '2025-06']) {
      for (const tok of [token, undefined]) {
        const res = await api(t, f, tok, 'GET', `/openapi/${version}/events`);
        expect(res.statusCode, version).toBe(404);
        expect(res.json()).toMatchObject({ code: 'NotFound', message: expect.stringContaining('2026-01') });
        expect(res.json().message).toContain(version);
      }
    }
    const unknown = await api(t, f, token, 'GET', '/openapi/2099-01/events');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().message).toContain('2022-01, 2025-06, 2026-01');
    const post = await api(t, f, token, 'POST', `${V}/events`, {});
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET');
  });

  it('answers bad input clearly: unknown parameters 400 by name, bad values 422 by field, altered cursors 400', async () => {
    t.clock.now = BASE;
    const { f, token, writer } = await setup();
    await subscribe(f, token, 'products/create', '/bad');
    await product(f, writer, 'Unchanged');
    const unknown = async (q: string, names: string[]) => {
      const res = await api(t, f, token, 'GET', `${V}/events?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json()).toMatchObject({ code: 'BadRequest' });
      for (const name of names) {
        expect(res.json().message).toContain(name);
        expect(res.json().errors[name]).toEqual(['is not a supported query parameter']);
      }
    };
    await unknown('status=pending', ['status']);
    await unknown('since_id=1&fields=topic', ['since_id', 'fields']);
    await unknown('pre_cursor=abc', ['pre_cursor']);
    await unknown('created_at_max=2026-11-20T00:00:00Z', ['created_at_max']);
    const invalid = async (q: string, field: string) => {
      const res = await api(t, f, token, 'GET', `${V}/events?${q}`);
      expect(res.statusCode, q).toBe(422);
      expect(res.json().code).toBe('ValidationFailed');
      expect(Object.keys(res.json().errors)).toContain(field);
    };
    await invalid('topic=products/explode', 'topic');
    await invalid('topic=customers/delete', 'topic');
    await invalid('created_at_min=yesterday', 'created_at_min');
    await invalid('created_at_min=2026-11-20', 'created_at_min');
    await invalid('created_at_min=2026-11-20T10:00:00', 'created_at_min');
    for (const q of ['limit=0', 'limit=251', 'limit=abc', 'limit=1.5']) await invalid(q, 'limit');
    const tampered = await api(t, f, token, 'GET', `${V}/events?cursor=abc.def`);
    expect(tampered.statusCode).toBe(400);
    expect(tampered.json().code).toBe('InvalidCursor');
    // Nothing changed, and no error body carries the token.
    expect((await list(f, token)).data.map((e) => e.payload.title)).toEqual(['Unchanged']);
    expect(tampered.body).not.toContain(token);
  });

  it('is in the OpenAPI document and on the API docs page, with its parameters and entry schema', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'localhost:8080' } });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    const op = doc.paths['/openapi/{version}/events'].get;
    expect(op.summary).toContain('events');
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['version', 'topic', 'created_at_min', 'limit', 'cursor']),
    );
    const entry = op.responses['200'].content['application/json'].schema.properties.data.items;
    expect(entry.required).toEqual(expect.arrayContaining(['webhook_id', 'event_id', 'topic', 'created_at', 'payload']));
    const page = await t.app.inject({ method: 'GET', url: '/docs', headers: { host: 'localhost:8080' } });
    expect(page.body).toContain('GET /openapi/{version}/events');
    expect(page.body).toContain('created_at_min');
  });
});
