// App-level webhook subscriptions with a filter and include_fields, end to end on SQLite and
// PostgreSQL (and the partitioned layout): an app declares one once through the partner API, a
// store installs the app later, and only the product changes the filter lets through reach a
// loopback receiver through the worker, each with only the fields asked for, signed with the app's
// secret. A change of the filter or fields reaches every store copy (deliveries already queued keep
// theirs), a receiver that was down gets what was queued when it is back up, and what died while
// it was down is replayed with the same webhook ids.
import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookWorker } from '../src/webhooks/webhook-worker.ts';
import {
  api,
  appToken,
  consent,
  createFixture,
  createTestPlatform,
  DIALECTS_WITH_PARTITIONED,
  type Fixture,
  type TestPlatform,
  testWorker,
} from './harness.ts';
import { unroutedQueries } from './partition-routing.ts';
import { PLATFORM_HOST } from './web-pages.ts';
import { type Received, Receiver, until } from './webhook-receiver.ts';

const V = '/openapi/2026-01';
const FILTER = 'status:active AND price:>=10';
const FIELDS = ['id', 'title', 'price'];

/** The receiver answers 503 while down, as an endpoint that is unreachable or failing would; `up` answers 200 again. */
function outage(rx: Receiver) {
  return {
    down: () => {
      rx.handler = (_req, res) => {
        res.statusCode = 503;
        res.end('down');
      };
    },
    up: () => {
      rx.handler = (_req, res) => res.end('ok');
    },
  };
}

/** Both signatures a delivery carries are the app's, over the body exactly as received. */
function expectSigned(got: Received, secret: string): void {
  expect(got.headers['x-service-hmac-sha256']).toBe(createHmac('sha256', secret).update(got.body).digest('base64'));
  const signed = `${got.headers['webhook-id']}.${got.headers['webhook-timestamp']}.${got.body}`;
  expect(got.headers['webhook-signature']).toBe(`v1,${createHmac('sha256', secret).update(signed).digest('base64')}`);
}

describe.each(DIALECTS_WITH_PARTITIONED)('app-level webhook filters and include_fields end to end (%s)', (dialect) => {
  let t: TestPlatform;
  let rx: Receiver;
  const workers: WebhookWorker[] = [];

  async function worker(): Promise<WebhookWorker> {
    const w = await testWorker(t, { pollMs: 25, random: () => 0.5, pruneEveryMs: 0 });
    workers.push(w);
    await w.start();
    return w;
  }

  /** The partner API as the app itself calls it (HTTP Basic with its client credentials). */
  const partnerApi = (f: Fixture, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path = '', body?: unknown) =>
    t.app.inject({
      method,
      url: `/partner/api/apps/${f.clientId}/webhook_subscriptions${path}`,
      headers: {
        host: PLATFORM_HOST,
        authorization: `Basic ${Buffer.from(`${f.clientId}:${f.clientSecret}`).toString('base64')}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });

  /** The app installed into another store (its owner consents), as a later install in a second store. */
  async function installElsewhere(f: Fixture): Promise<Fixture> {
    const other = await createFixture(t);
    const there = { ...f, storeName: other.storeName, host: other.host, email: other.email, password: other.password };
    await consent(t, there, { scope: 'write_products' });
    return there;
  }

  const copiesOf = async (clientId: string) => {
    const app = (await t.services.apps.findByClientId(clientId))!;
    return t.db.kysely
      .selectFrom('webhook_subscriptions')
      .select(['id', 'store_id', 'filter', 'include_fields', 'app_subscription_id'])
      .where('app_id', '=', app.id)
      .orderBy('store_id')
      .execute();
  };
  const deliveriesTo = (subscriptionIds: number[]) =>
    t.db.kysely
      .selectFrom('webhook_deliveries')
      .select(['id', 'status', 'include_fields', 'subscription_id'])
      .where('subscription_id', 'in', subscriptionIds)
      .orderBy('id')
      .execute();

  beforeAll(async () => {
    t = await createTestPlatform(dialect, {
      rateLimit: 'off',
      webhooks: { timeoutMs: 2000, retrySchedule: [300, 300], disableAfterDead: 5 },
    });
    // Real time: the worker schedules attempts by the wall clock.
    t.clock.now = Date.now() - 1000;
    rx = await Receiver.start();
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
    outage(rx).up();
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  it('declared once through the partner API; a store that installs later gets only the changes the filter lets through, with only the fields asked for, signed', async () => {
    const f = await createFixture(t, { scopes: 'write_products' });
    const path = `/e2e-${dialect}`;
    // Bad ones are refused naming the field, before anything is written.
    for (const [body, field] of [
      [{ filter: 'colour:red' }, 'filter'],
      [{ filter: 'price:cheap' }, 'filter'],
      [{ include_fields: ['id', 'colour'] }, 'include_fields'],
      [{ include_fields: [] }, 'include_fields'],
      [{ include_fields: 'id,title' }, 'include_fields'],
    ] as const) {
      const res = await partnerApi(f, 'POST', '', { topic: 'products/update', address: rx.url(path), ...body });
      expect(res.statusCode, res.body).toBe(422);
      expect(Object.keys(res.json().errors).join(' ')).toContain(field);
    }
    const uninstalled = await partnerApi(f, 'POST', '', { topic: 'app/uninstalled', address: rx.url(path), filter: 'id:1' });
    expect(uninstalled.statusCode).toBe(422);
    expect(uninstalled.json().errors.filter[0]).toMatch(/app\/uninstalled is not about a product/);
    expect((await partnerApi(f, 'GET')).json().data).toEqual([]);

    const declared = await partnerApi(f, 'POST', '', {
      topic: 'products/update',
      address: rx.url(path),
      filter: FILTER,
      include_fields: FIELDS,
    });
    expect(declared.statusCode, declared.body).toBe(201);
    expect(declared.json().data).toMatchObject({ topic: 'products/update', filter: FILTER, include_fields: FIELDS, stores: 0 });
    expect((await partnerApi(f, 'GET')).json().data).toEqual([declared.json().data]);

    // The store installs the app later: its copy, made in the install's transaction, carries both.
    const token = await appToken(t, f, 'write_products');
    const listed = (await api(t, f, token, 'GET', `${V}/webhooks`)).json().data;
    expect(listed).toEqual([
      expect.objectContaining({
        topic: 'products/update',
        address: rx.url(path),
        source: 'app_config',
        filter: FILTER,
        include_fields: FIELDS,
      }),
    ]);

    await worker();
    const product = (await api(t, f, token, 'POST', `${V}/products`, { title: 'Lamp', price: '5.00', vendor: 'Acme' })).json().data;
    const update = async (body: Record<string, unknown>) => {
      const res = await api(t, f, token, 'PUT', `${V}/products/${product.id}`, body);
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data as Record<string, unknown>;
    };
    await update({ price: '6.00' }); // active, too cheap
    await update({ status: 'draft', price: '20.00' }); // a draft
    const first = await update({ status: 'active' }); // active at 20.00: sent
    await update({ price: '9.99' }); // too cheap again
    const second = await update({ title: 'Lamp XL', price: '12.50' }); // sent
    await update({ status: 'archived' }); // not active

    const copy = listed[0].id as string;
    expect((await deliveriesTo([Number(copy)])).map((d) => d.include_fields)).toEqual([JSON.stringify(FIELDS), JSON.stringify(FIELDS)]);
    await until(() => rx.on(path).length === 2, 10_000, 'the two matching changes');
    const bodies = rx.on(path).map((r) => JSON.parse(r.body));
    expect(bodies).toEqual([
      { id: product.id, title: 'Lamp', price: first.price },
      { id: product.id, title: 'Lamp XL', price: second.price },
    ]);
    for (const got of rx.on(path)) {
      expect(Object.keys(JSON.parse(got.body))).toEqual(FIELDS);
      expect(got.headers['x-service-topic']).toBe('products/update');
      expectSigned(got, f.clientSecret);
    }
    await until(async () => (await deliveriesTo([Number(copy)])).every((d) => d.status === 'delivered'), 5000, 'recorded');
  });

  it('a change of the filter and fields reaches every store copy; queued deliveries keep theirs; a receiver back up gets them', async () => {
    const f = await createFixture(t, { scopes: 'write_products' });
    const path = `/changed-${dialect}`;
    const token = await appToken(t, f, 'write_products');
    const declared = await partnerApi(f, 'POST', '', {
      topic: 'products/create',
      address: rx.url(path),
      filter: 'vendor:Acme',
      include_fields: ['id'],
    });
    expect(declared.statusCode, declared.body).toBe(201);
    expect(declared.json().data.stores).toBe(1);
    const id = declared.json().data.id as string;
    const elsewhere = await installElsewhere(f);
    const copies = await copiesOf(f.clientId);
    expect(copies.map((c) => [c.filter, c.include_fields])).toEqual([
      ['vendor:Acme', '["id"]'],
      ['vendor:Acme', '["id"]'],
    ]);

    // Queued before the change (no worker yet): keeps the fields it was queued with.
    const acme = (await api(t, f, token, 'POST', `${V}/products`, { title: 'Anvil', vendor: 'Acme' })).json().data;
    const bad = await partnerApi(f, 'PUT', `/${id}`, { filter: 'vendor:Beta AND', include_fields: ['id', 'colour'] });
    expect(bad.statusCode).toBe(422);
    expect(Object.keys(bad.json().errors).sort()).toEqual(['filter', 'include_fields']);
    expect((await partnerApi(f, 'PUT', `/${id}`, { topic: 'products/update' })).statusCode).toBe(422);
    expect((await partnerApi(f, 'PUT', '/999999', { filter: null })).statusCode).toBe(404);
    expect(await copiesOf(f.clientId)).toEqual(copies);

    const changed = await partnerApi(f, 'PUT', `/${id}`, { filter: 'vendor:Beta', include_fields: ['id', 'vendor'] });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({
      changed: true,
      stores_changed: 2,
      data: { id, filter: 'vendor:Beta', include_fields: ['id', 'vendor'], stores: 2 },
    });
    expect((await copiesOf(f.clientId)).map((c) => [c.filter, c.include_fields])).toEqual([
      ['vendor:Beta', '["id","vendor"]'],
      ['vendor:Beta', '["id","vendor"]'],
    ]);
    // The same values again change nothing.
    const again = await partnerApi(f, 'PUT', `/${id}`, { filter: 'vendor:Beta' });
    expect(again.json()).toMatchObject({ changed: false, stores_changed: 0 });

    // After the change: Acme no longer passes, Beta does; in the other store too.
    await api(t, f, token, 'POST', `${V}/products`, { title: 'Hammer', vendor: 'Acme' });
    const beta = (await api(t, f, token, 'POST', `${V}/products`, { title: 'Saw', vendor: 'Beta' })).json().data;
    const otherToken = await appToken(t, elsewhere, 'write_products');
    const betaThere = (await api(t, elsewhere, otherToken, 'POST', `${V}/products`, { title: 'Drill', vendor: 'Beta' })).json().data;
    const queued = await deliveriesTo(copies.map((c) => c.id));
    expect(queued.map((d) => d.include_fields)).toEqual(['["id"]', '["id","vendor"]', '["id","vendor"]']);

    // The receiver is down when the worker starts: attempts fail and are retried once it is back.
    const endpoint = outage(rx);
    endpoint.down();
    await worker();
    await until(() => rx.on(path).length >= 1, 10_000, 'a failed attempt');
    endpoint.up();
    const sent = () => new Set(rx.on(path).map((r) => r.headers['webhook-id'])).size;
    await until(() => sent() === 3, 10_000, 'every queued delivery');
    await until(async () => (await deliveriesTo(copies.map((c) => c.id))).every((d) => d.status === 'delivered'), 10_000, 'all delivered');
    // At least one was tried while the receiver was down, and sent again after.
    expect(rx.on(path).length).toBeGreaterThan(3);
    const byId = new Map(rx.on(path).map((r) => [JSON.parse(r.body).id as number, r]));
    expect(JSON.parse(byId.get(acme.id)!.body)).toEqual({ id: acme.id });
    expect(JSON.parse(byId.get(beta.id)!.body)).toEqual({ id: beta.id, vendor: 'Beta' });
    expect(JSON.parse(byId.get(betaThere.id)!.body)).toEqual({ id: betaThere.id, vendor: 'Beta' });
    for (const got of byId.values()) expectSigned(got, f.clientSecret);

    // null removes both: the whole object of every change again.
    const cleared = await partnerApi(f, 'PUT', `/${id}`, { filter: null, include_fields: null });
    expect(cleared.json()).toMatchObject({ changed: true, stores_changed: 2, data: { filter: null, include_fields: null } });
    const plain = (await api(t, f, token, 'POST', `${V}/products`, { title: 'Nails', vendor: 'Other' })).json().data;
    await until(() => rx.on(path).some((r) => JSON.parse(r.body).id === plain.id), 10_000, 'the whole object');
    expect(JSON.parse(rx.on(path).find((r) => JSON.parse(r.body).id === plain.id)!.body)).toEqual(plain);
  });

  it('what was missed while the endpoint was down is replayed through the Admin API: the same webhook ids, still filtered and narrowed', async () => {
    const f = await createFixture(t, { scopes: 'write_products' });
    const path = `/missed-${dialect}`;
    const declared = await partnerApi(f, 'POST', '', {
      topic: 'products/create',
      address: rx.url(path),
      filter: 'vendor:Acme',
      include_fields: FIELDS,
    });
    expect(declared.statusCode, declared.body).toBe(201);
    // The platform's clock stands still in this file (set once above): the window starts before it.
    const since = new Date(t.clock.now - 60_000).toISOString();
    const token = await appToken(t, f, 'write_products');
    const [copy] = (await api(t, f, token, 'GET', `${V}/webhooks`)).json().data as { id: string }[];

    // Down long enough for every attempt of the matching changes to fail: they end dead.
    const endpoint = outage(rx);
    endpoint.down();
    await worker();
    const anvil = (await api(t, f, token, 'POST', `${V}/products`, { title: 'Anvil', vendor: 'Acme', price: '30.00' })).json().data;
    await api(t, f, token, 'POST', `${V}/products`, { title: 'Rope', vendor: 'Other' }); // filtered out: never queued
    const tongs = (await api(t, f, token, 'POST', `${V}/products`, { title: 'Tongs', vendor: 'Acme', price: '8.00' })).json().data;
    const dead = async () => (await deliveriesTo([Number(copy!.id)])).filter((d) => d.status === 'dead').length;
    await until(async () => (await dead()) === 2, 15_000, 'both deliveries dead');
    const missed = new Set(rx.on(path).map((r) => r.headers['webhook-id']));
    expect(missed.size).toBe(2);
    const attemptsWhileDown = rx.on(path).length;

    // Back up: nothing arrives by itself; the app replays the failed ones since before the outage.
    endpoint.up();
    const replay = await api(t, f, token, 'POST', `${V}/webhooks/${copy!.id}/replay`, { since, status: 'failed' });
    expect(replay.statusCode, replay.body).toBe(202);
    expect(replay.json().data).toMatchObject({ queued: 2, already_queued: 0, capped: false });
    await until(() => rx.on(path).length === attemptsWhileDown + 2, 10_000, 'the replayed deliveries');
    const replayed = rx.on(path).slice(attemptsWhileDown);
    expect(new Set(replayed.map((r) => r.headers['webhook-id']))).toEqual(missed);
    expect(replayed.map((r) => JSON.parse(r.body)).sort((a, b) => a.id - b.id)).toEqual(
      [anvil, tongs].map((p) => ({ id: p.id, title: p.title, price: p.price })).sort((a, b) => a.id - b.id),
    );
    for (const got of replayed) expectSigned(got, f.clientSecret);
    await until(async () => (await deliveriesTo([Number(copy!.id)])).every((d) => d.status === 'delivered'), 5000, 'recorded');
  });

  // Last: what the tests above made the platform and its worker run, on the partitioned layout.
  it.runIf(dialect === 'postgres-partitioned')(
    'every query reads one partition of a store table, or is a listed fleet-wide one',
    async () => {
      const url = t.config.database.dialect === 'postgres' ? t.config.database.url : '';
      // The statements this file runs itself to look at rows across stores.
      const own = ['select "id", "store_id", "filter", "include_fields"', 'select "id", "status", "include_fields", "subscription_id"'];
      const recorded = (t.queries ?? []).filter((q) => !own.some((o) => q.sql.startsWith(o)));
      expect(recorded.some((q) => q.sql.includes('"filter" = $'))).toBe(true);
      const unrouted = await unroutedQueries(url, recorded);
      expect(unrouted.map((q) => `${q.tables.join(',')}: ${q.sql}`)).toEqual([]);
    },
  );
});
