// App-level webhook subscriptions on SQLite and PostgreSQL: declared once for an app, copied into a
// store in the transaction that installs the app there, kept in line with the grant (a wider grant
// adds copies, a narrower one removes them), removed on uninstall but for the copy that carries
// app/uninstalled, spread to installed stores when the list changes; read-only through the Admin
// API; the caps of a store skip a copy without failing the install.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SUBSCRIPTIONS_PER_TOPIC } from '../src/domain/limits.ts';
import { copiesOnGrant } from '../src/services/app-webhook-copies.ts';
import { openStorage } from '../src/storage/sql-storage.ts';
import type { WebhookWorker } from '../src/webhooks/webhook-worker.ts';
import {
  api,
  appToken,
  createFixture,
  createTestPlatform,
  DIALECTS_WITH_PARTITIONED,
  privateToken,
  testWorker,
  type Fixture,
  type TestPlatform,
} from './harness.ts';
import { unroutedQueries } from './partition-routing.ts';
import { Receiver, until } from './webhook-receiver.ts';

const V = '/openapi/2026-01';

describe.each(DIALECTS_WITH_PARTITIONED)('app-level webhook subscriptions (%s)', (dialect) => {
  let t: TestPlatform;
  let rx: Receiver;
  const workers: WebhookWorker[] = [];

  async function worker(): Promise<WebhookWorker> {
    const w = await testWorker(t, { pollMs: 25, random: () => 0.5, pruneEveryMs: 0 });
    workers.push(w);
    await w.start();
    return w;
  }

  const ids = async (f: Fixture) => {
    const app = (await t.services.apps.findByClientId(f.clientId))!;
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    return { appId: app.id, storeId: store.id };
  };

  const storeSubs = (appId: number) =>
    t.db.kysely
      .selectFrom('webhook_subscriptions')
      .select(['id', 'store_id', 'topic', 'address', 'app_subscription_id'])
      .where('app_id', '=', appId)
      .orderBy('id')
      .execute();

  beforeAll(async () => {
    t = await createTestPlatform(dialect, {
      rateLimit: 'off',
      webhooks: { timeoutMs: 300, retrySchedule: [40, 40, 40], disableAfterDead: 2 },
    });
    // Real time: the worker schedules attempts by the wall clock.
    t.clock.now = Date.now() - 1000;
    rx = await Receiver.start();
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  it('an install made later gets the copy in its own transaction, and the product webhook reaches the app', async () => {
    const f = await createFixture(t, { scopes: 'read_products' });
    const { appId, storeId } = await ids(f);
    const declared = await t.services.appWebhooks.add(appId, { topic: 'products/create', address: rx.url('/later') });
    expect(declared).toMatchObject({ topic: 'products/create', stores: 0, skipped: [] });
    expect(await storeSubs(appId)).toEqual([]);

    // The install through the real consent: the copy is there when the grant returns.
    const token = await appToken(t, f, 'read_products');
    expect(await storeSubs(appId)).toEqual([
      { id: expect.any(Number), store_id: storeId, topic: 'products/create', address: rx.url('/later'), app_subscription_id: declared.id },
    ]);
    expect((await t.services.appWebhooks.list(appId)).map((r) => r.stores)).toEqual([1]);

    // The Admin API lists it, marked, and refuses to change it.
    const listed = await api(t, f, token, 'GET', `${V}/webhooks`);
    expect(listed.json().data).toEqual([expect.objectContaining({ topic: 'products/create', source: 'app_config' })]);
    const copyId = listed.json().data[0].id as string;
    for (const [method, body] of [
      ['PUT', { address: rx.url('/elsewhere') }],
      ['DELETE', undefined],
    ] as const) {
      const res = await api(t, f, token, method, `${V}/webhooks/${copyId}`, body);
      expect(res.statusCode, res.body).toBe(422);
      expect(res.body).toContain("managed by the app's configuration");
    }
    expect((await storeSubs(appId)).map((r) => r.address)).toEqual([rx.url('/later')]);
    // A store-level subscription of its own beside it still works as before, marked as such.
    const own = await api(t, f, token, 'POST', `${V}/webhooks`, { topic: 'products/update', address: rx.url('/own') });
    expect(own.statusCode, own.body).toBe(201);
    expect(own.json().data.source).toBe('api');
    expect((await api(t, f, token, 'DELETE', `${V}/webhooks/${own.json().data.id}`)).statusCode).toBe(200);

    await worker();
    const priv = await privateToken(t, f.storeName, 'write_products');
    const created = await api(t, f, priv, 'POST', `${V}/products`, { title: 'Declared once', price: '1.00' });
    expect(created.statusCode, created.body).toBe(201);
    await until(() => rx.on('/later').length === 1, 5000, 'the product webhook');
    expect(rx.on('/later')[0]!.headers['x-service-topic']).toBe('products/create');
    expect(JSON.parse(rx.on('/later')[0]!.body)).toEqual(created.json().data);
  });

  it('a wider grant adds copies, a narrower one removes them, an uninstall keeps only the app/uninstalled copy, which is delivered', async () => {
    const f = await createFixture(t, { scopes: 'read_products read_orders' });
    const { appId, storeId } = await ids(f);
    const products = await t.services.appWebhooks.add(appId, { topic: 'products/create', address: rx.url('/p') });
    const orders = await t.services.appWebhooks.add(appId, { topic: 'orders/create', address: rx.url('/o') });
    const gone = await t.services.appWebhooks.add(appId, { topic: 'app/uninstalled', address: rx.url('/gone') });
    const copies = async () => (await storeSubs(appId)).map((r) => r.app_subscription_id).sort();

    await t.services.apps.grant(storeId, appId, ['read_products']);
    expect(await copies()).toEqual([products.id, gone.id].sort());
    await t.services.apps.grant(storeId, appId, ['read_products', 'read_orders']);
    expect(await copies()).toEqual([products.id, orders.id, gone.id].sort());
    await t.services.apps.grant(storeId, appId, ['read_orders']);
    expect(await copies()).toEqual([orders.id, gone.id].sort());

    await t.services.apps.uninstall(storeId, appId);
    expect(await storeSubs(appId)).toEqual([expect.objectContaining({ topic: 'app/uninstalled', app_subscription_id: gone.id })]);
    await worker();
    await until(() => rx.on('/gone').length === 1, 5000, 'app/uninstalled');
    expect(JSON.parse(rx.on('/gone')[0]!.body)).toMatchObject({ client_id: f.clientId });

    // Installed again: the kept copy is the copy again, the others come back.
    await t.services.apps.grant(storeId, appId, ['read_products']);
    expect(await copies()).toEqual([products.id, gone.id].sort());
  });

  it('adding one reaches every store the app is installed in; removing one removes its copies and cancels their queued deliveries', async () => {
    const a = await createFixture(t, { scopes: 'read_products' });
    const { appId, storeId: first } = await ids(a);
    const secondName = `${a.storeName}b`;
    await t.services.accounts.createStore({ name: secondName, ownerEmail: `o@${secondName}.test`, ownerPassword: 'correct horse battery' });
    const third = `${a.storeName}c`;
    await t.services.accounts.createStore({ name: third, ownerEmail: `o@${third}.test`, ownerPassword: 'correct horse battery' });
    const second = (await t.services.accounts.findStoreByName(secondName))!.id;
    const notInstalled = (await t.services.accounts.findStoreByName(third))!.id;
    await t.services.apps.grant(first, appId, ['read_products']);
    await t.services.apps.grant(second, appId, ['read_orders']);

    const added = await t.services.appWebhooks.add(appId, { topic: 'products/create', address: rx.url('/spread') });
    expect(added.stores).toBe(1);
    const both = await t.services.appWebhooks.add(appId, { topic: 'app/uninstalled', address: rx.url('/spread-gone') });
    expect(both.stores).toBe(2);
    expect((await storeSubs(appId)).map((r) => [r.store_id, r.topic]).sort()).toEqual(
      [
        [first, 'products/create'],
        [first, 'app/uninstalled'],
        [second, 'app/uninstalled'],
      ].sort(),
    );
    expect((await storeSubs(appId)).some((r) => r.store_id === notInstalled)).toBe(false);

    // A queued delivery of the copy (no worker running) is cancelled once the copy goes.
    const priv = await privateToken(t, a.storeName, 'write_products');
    expect((await api(t, a, priv, 'POST', `${V}/products`, { title: 'Queued', price: '1.00' })).statusCode).toBe(201);
    const removed = await t.services.appWebhooks.remove(appId, added.id);
    expect(removed.stores).toBe(1);
    expect((await storeSubs(appId)).map((r) => r.topic)).toEqual(['app/uninstalled', 'app/uninstalled']);
    await worker();
    const queued = () =>
      t.db.kysely
        .selectFrom('webhook_deliveries')
        .select(['status', 'last_error'])
        .where('app_id', '=', appId)
        .where('topic', '=', 'products/create')
        .execute();
    await until(async () => (await queued())[0]?.status === 'cancelled', 5000, 'the cancelled delivery');
    expect(await queued()).toEqual([{ status: 'cancelled', last_error: 'the subscription was deleted' }]);
    expect(rx.on('/spread')).toHaveLength(0);
    await expect(t.services.appWebhooks.remove(appId, added.id)).rejects.toMatchObject({ statusCode: 404 });
  });

  it('a store at a cap is skipped and reported, never failing the install; bad input changes nothing', async () => {
    const f = await createFixture(t, { scopes: 'read_products' });
    const { appId, storeId } = await ids(f);
    await t.services.apps.grant(storeId, appId, ['read_products']);
    const token = await appToken(t, f, 'read_products');
    for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_TOPIC; i++) {
      const res = await api(t, f, token, 'POST', `${V}/webhooks`, { topic: 'products/create', address: rx.url(`/own-${i}`) });
      expect(res.statusCode, res.body).toBe(201);
    }
    const added = await t.services.appWebhooks.add(appId, { topic: 'products/create', address: rx.url('/capped') });
    expect(added.stores).toBe(0);
    expect(added.skipped).toEqual([
      {
        store: f.storeName,
        topic: 'products/create',
        address: rx.url('/capped'),
        reason: expect.stringContaining('10 webhook subscriptions'),
      },
    ]);
    // A reinstall with the store still at the cap: installed, the copy left out.
    await t.services.apps.uninstall(storeId, appId);
    await expect(t.services.apps.grant(storeId, appId, ['read_products'])).resolves.toMatchObject({ uninstalled_at: null });
    expect((await storeSubs(appId)).filter((r) => r.app_subscription_id !== null)).toEqual([]);

    const before = await t.services.appWebhooks.list(appId);
    for (const bad of [
      { topic: 'customers/redact', address: rx.url('/x') },
      { topic: 'no/such', address: rx.url('/x') },
      { topic: 'products/create', address: 'ftp://example.test/' },
      { topic: 'products/create', address: rx.url('/capped') },
      { topic: 'products/create' },
    ]) {
      await expect(t.services.appWebhooks.add(appId, bad as { topic: string; address: string })).rejects.toMatchObject({ statusCode: 422 });
    }
    expect(await t.services.appWebhooks.list(appId)).toEqual(before);
  });

  it.runIf(dialect === 'postgres')('an add while a reinstall is open waits for it, then copies into that store too', async () => {
    const f = await createFixture(t, { scopes: 'read_products' });
    const { appId, storeId } = await ids(f);
    // A storage of its own (another node, its own connections) holds an install open as AppService.grant runs it.
    if (t.config.database.dialect !== 'postgres') throw new Error('PostgreSQL only');
    const storage = openStorage({ dialect: 'postgres', url: t.config.database.url }, { poolSize: 2 });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let counted!: () => void;
    const read = new Promise<void>((resolve) => (counted = resolve));
    // A reinstall: no new row whose foreign key would lock the app row by itself.
    await t.services.apps.grant(storeId, appId, ['read_products']);
    await t.services.apps.uninstall(storeId, appId);
    const installation = (await t.services.apps.findInstallation(storeId, appId))!;
    const install = storage.transaction(async (tx) => {
      await tx.apps.updateInstallation(storeId, installation.id, { uninstalledAt: null, installedAt: Date.now() });
      const sync = await copiesOnGrant(tx, { storeId, appId, scopes: ['read_products'], now: Date.now() });
      counted();
      await gate;
      return sync;
    });
    await read;
    let settled = false;
    const add = t.services.appWebhooks.add(appId, { topic: 'products/create', address: rx.url('/raced') }).finally(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(settled).toBe(false);
    release();
    expect((await install).created).toEqual([]);
    const added = await add;
    expect(added.stores).toBe(1);
    expect(await storeSubs(appId)).toEqual([expect.objectContaining({ store_id: storeId, app_subscription_id: added.id })]);
    await storage.close();
  });

  // Last: what every test above made the platform and its worker run, on the partitioned layout.
  it.runIf(dialect === 'postgres-partitioned')(
    'every query reads one partition of a store table, or is a listed fleet-wide one',
    async () => {
      const url = t.config.database.dialect === 'postgres' ? t.config.database.url : '';
      // The statements this file runs itself to look at rows.
      const own = new Set([
        'select "id", "store_id", "topic", "address", "app_subscription_id" from "webhook_subscriptions" where "app_id" = $1 order by "id"',
        'select "status", "last_error" from "webhook_deliveries" where "app_id" = $1 and "topic" = $2',
      ]);
      const recorded = (t.queries ?? []).filter((q) => !own.has(q.sql));
      expect(recorded.some((q) => q.sql.includes('app_subscription_id'))).toBe(true);
      const unrouted = await unroutedQueries(url, recorded);
      expect(unrouted.map((q) => `${q.tables.join(',')}: ${q.sql}`)).toEqual([]);
    },
  );
});
