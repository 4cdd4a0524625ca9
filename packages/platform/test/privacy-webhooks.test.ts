// Privacy and lifecycle topics end to end on SQLite and PostgreSQL: customers/data_request and
// customers/redact from the store admin's Customers page, shop/redact due after an uninstall (and
// cancelled by a reinstall), app/scopes_update on a grant that grows or shrinks, giving back scopes
// through the consent page, and the privacy webhook address on the app itself. A real worker on the
// platform's frozen clock posts to a local receiver.
import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { ConfigError } from '../src/domain/errors.ts';
import type { WebhookWorker } from '../src/webhooks/webhook-worker.ts';
import {
  DIALECTS,
  Jar,
  accessTokenActive,
  api,
  authorizeUrl,
  consent,
  createFixture,
  createTestPlatform,
  csrfFrom,
  exchange,
  login,
  privateToken,
  testWorker,
  type Fixture,
  type TestPlatform,
} from './harness.ts';
import { Receiver, until } from './webhook-receiver.ts';
import { PLATFORM_HOST, createPartner, decode, expectCsrfRefused, expectGoodPage, get, partnerLogin, post } from './web-pages.ts';

const V = '/openapi/2026-01';
const HOUR = 3_600_000;

describe('--shop-redact-delay', () => {
  it('defaults to 48 hours, takes units, and refuses anything else with a message naming the flag', () => {
    const base = { database: ':memory:', masterKey: 'a'.repeat(64) };
    expect(loadConfig(base).shopRedactDelayMs).toBe(48 * HOUR);
    expect(loadConfig({ ...base, shopRedactDelay: '10m' }).shopRedactDelayMs).toBe(600_000);
    expect(loadConfig({ ...base, shopRedactDelay: '2d' }).shopRedactDelayMs).toBe(2 * 24 * HOUR);
    expect(loadConfig({ ...base, shopRedactDelay: '0' }).shopRedactDelayMs).toBe(0);
    for (const bad of ['-1h', 'soon', '31d', '1.5h', '10 weeks']) {
      expect(() => loadConfig({ ...base, shopRedactDelay: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ ...base, shopRedactDelay: bad }), bad).toThrow(/--shop-redact-delay/);
    }
  });
});

describe.each(DIALECTS)('privacy and lifecycle webhooks on %s', (dialect) => {
  let t: TestPlatform;
  let rx: Receiver;
  const workers: WebhookWorker[] = [];

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off', webhooks: { timeoutMs: 500, retrySchedule: [40], disableAfterDead: 5 } });
    rx = await Receiver.start();
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  /** A worker on the platform's frozen clock: a delivery due later goes out only once the clock is moved. */
  async function worker(): Promise<WebhookWorker> {
    const w = await testWorker(t, { pollMs: 20, random: () => 0.5, pruneEveryMs: 0, clock: t.clock.fn });
    workers.push(w);
    await w.start();
    return w;
  }

  async function ids(f: { storeName: string; clientId: string }) {
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    const app = (await t.services.apps.findByClientId(f.clientId))!;
    return { storeId: store.id, appId: app.id };
  }

  /** Another app installed in the fixture's store with `scopes`, through the consent page. */
  async function secondApp(f: Fixture, jar: Jar, scopes: string, privacyPath?: string): Promise<Fixture> {
    const { app, clientSecret } = await t.services.apps.createApp({
      name: `Other ${scopes}`,
      appUrl: f.appUrl,
      redirectUri: f.redirectUri,
      scopes,
    });
    if (privacyPath) await t.services.apps.setPrivacyWebhookUrl(app.id, rx.url(privacyPath));
    const other = { ...f, clientId: app.client_id, clientSecret };
    await consent(t, other, { scope: scopes }, jar);
    return other;
  }

  function deliveriesOf(appId: number, topic?: string) {
    let q = t.db.kysely
      .selectFrom('webhook_deliveries')
      .select(['id', 'subscription_id', 'topic', 'status', 'last_error', 'next_attempt_at'])
      .where('app_id', '=', appId);
    if (topic) q = q.where('topic', '=', topic);
    return q.orderBy('id').execute();
  }

  function signatureOf(body: string, secret: string): string {
    return createHmac('sha256', secret).update(body).digest('base64');
  }

  /** A store with an app holding read_customers and a privacy address, a customer with two orders. */
  async function customerStore(path: string) {
    const f = await createFixture(t, { scopes: 'read_customers read_orders' });
    const { storeId, appId } = await ids(f);
    await t.services.apps.setPrivacyWebhookUrl(appId, rx.url(path));
    const jar = await login(t, f);
    await consent(t, f, { scope: 'read_customers read_orders' }, jar);
    const writer = await privateToken(t, f.storeName, 'write_customers write_orders');
    const customer = (
      await api(t, f, writer, 'POST', `${V}/customers`, { email: `c-${path.slice(1)}@example.test`, phone: '+1 555 0100' })
    ).json().data as { id: string };
    const orderIds: string[] = [];
    for (const title of ['Mug', 'Tea']) {
      const res = await api(t, f, writer, 'POST', `${V}/orders`, {
        email: `c-${path.slice(1)}@example.test`,
        customer_id: customer.id,
        line_items: [{ title, quantity: 1, price: '3.00' }],
      });
      expect(res.statusCode, res.body).toBe(201);
      orderIds.push(res.json().data.id);
    }
    // An order of someone else is never listed.
    await api(t, f, writer, 'POST', `${V}/orders`, {
      email: 'other@example.test',
      line_items: [{ title: 'X', quantity: 1, price: '1.00' }],
    });
    return { f, storeId, appId, jar, writer, customerId: customer.id, orderIds, email: `c-${path.slice(1)}@example.test` };
  }

  describe('customers/data_request and customers/redact from the store admin', () => {
    it('"Request data for apps": a confirmation page, a CSRF-protected POST, 303 with a notice; only apps with read_customers and a privacy address get it', async () => {
      const s = await customerStore('/dr-a');
      const noScope = await secondApp(s.f, s.jar, 'read_products', '/dr-no-scope');
      const noAddress = await secondApp(s.f, s.jar, 'read_customers');
      const list = await get(t, s.f.host, '/admin/customers', s.jar);
      expectGoodPage(list);
      expect(list.body).toContain(`href="/admin/customers/${s.customerId}/data-request"`);
      expect(list.body).toContain(`href="/admin/customers/${s.customerId}/redact"`);

      const page = await get(t, s.f.host, `/admin/customers/${s.customerId}/data-request`, s.jar);
      expectGoodPage(page);
      expect(page.body).toContain(s.email);
      expect(decode(page.body)).toContain('not sent (it may not read customers)');
      expect(decode(page.body)).toContain('not sent (it has no privacy webhook address)');
      expect(page.body).toContain('<strong>sent</strong>');
      expect(page.body).toContain('>Send the data request</button>');

      const res = await post(t, s.f.host, `/admin/customers/${s.customerId}/data-request`, s.jar, {
        _csrf: csrfFrom(page.body),
        confirm: 'yes',
      });
      expect(res.statusCode).toBe(303);
      const location = new URL(res.headers.location as string, 'http://x');
      expect(location.pathname).toBe('/admin/customers');
      expect(location.searchParams.get('apps')).toBe('1');
      const after = await get(t, s.f.host, `${location.pathname}${location.search}`, s.jar);
      expectGoodPage(after);
      expect(decode(after.body)).toMatch(/Data request \d+ for customer \d+: customers\/data_request was sent to 1 app\./);

      expect((await deliveriesOf(s.appId, 'customers/data_request')).map((d) => [d.subscription_id, d.status])).toEqual([
        [-s.appId, 'pending'],
      ]);
      expect(await deliveriesOf((await ids(noScope)).appId, 'customers/data_request')).toEqual([]);
      expect(await deliveriesOf((await ids(noAddress)).appId, 'customers/data_request')).toEqual([]);

      await worker();
      await until(() => rx.on('/dr-a').length === 1, 5000, 'the data request');
      const got = rx.on('/dr-a')[0]!;
      expect(got.headers['x-service-topic']).toBe('customers/data_request');
      expect(got.headers['x-service-shop-domain']).toBe(`${s.f.storeName}.localhost`);
      expect(got.headers['x-service-api-version']).toBe('2026-01');
      expect(got.headers['x-service-hmac-sha256']).toBe(signatureOf(got.body, s.f.clientSecret));
      expect(JSON.parse(got.body)).toEqual({
        shop_id: String(s.storeId),
        shop_domain: `${s.f.storeName}.localhost`,
        customer: { id: s.customerId, email: s.email, phone: '+1 555 0100' },
        orders_requested: s.orderIds,
        data_request: { id: location.searchParams.get('request') },
      });
      await until(async () => (await deliveriesOf(s.appId, 'customers/data_request'))[0]!.status === 'delivered', 5000, 'recorded');
      // The partner's delivery log and the CLI's list show it, with the privacy address.
      const logged = await t.services.partnerDeliveries.list(s.appId, { limit: 10 });
      expect(logged.rows[0]).toMatchObject({ topic: 'customers/data_request', status: 'delivered', address: rx.url('/dr-a') });
      const cli = await t.services.deliveries.list({ appClientId: s.f.clientId });
      expect(cli[0]).toMatchObject({ topic: 'customers/data_request', status: 'delivered', address: rx.url('/dr-a') });
      // It can be sent again by hand, with the same webhook id.
      await t.services.deliveries.redeliver(cli[0]!.id);
      await until(() => rx.on('/dr-a').length === 2, 5000, 'the redelivery');
      expect(rx.on('/dr-a')[1]!.headers['x-service-webhook-id']).toBe(got.headers['x-service-webhook-id']);
      expect(rx.on('/dr-no-scope')).toHaveLength(0);
    });

    it('"Redact customer" sends customers/redact, replaces the customer\'s identifying data in the store, and refuses a second redaction', async () => {
      const s = await customerStore('/redact-a');
      const page = await get(t, s.f.host, `/admin/customers/${s.customerId}/redact`, s.jar);
      expectGoodPage(page);
      expect(page.body).toContain('>Redact this customer</button>');
      expect(page.body).toContain('cannot be undone');
      const res = await post(t, s.f.host, `/admin/customers/${s.customerId}/redact`, s.jar, { _csrf: csrfFrom(page.body), confirm: 'yes' });
      expect(res.statusCode).toBe(303);
      const after = await get(t, s.f.host, res.headers.location as string, s.jar);
      expect(decode(after.body)).toContain(`Customer ${s.customerId} was redacted: customers/redact was sent to 1 app,`);

      await worker();
      await until(() => rx.on('/redact-a').length === 1, 5000, 'the redaction');
      const got = rx.on('/redact-a')[0]!;
      expect(got.headers['x-service-topic']).toBe('customers/redact');
      expect(got.headers['x-service-hmac-sha256']).toBe(signatureOf(got.body, s.f.clientSecret));
      expect(JSON.parse(got.body)).toEqual({
        shop_id: String(s.storeId),
        shop_domain: `${s.f.storeName}.localhost`,
        customer: { id: s.customerId, email: s.email, phone: '+1 555 0100' },
        orders_to_redact: s.orderIds,
      });
      // The platform's own record keeps no email, name or phone; its orders keep a placeholder.
      const customer = (await api(t, s.f, s.writer, 'GET', `${V}/customers/${s.customerId}`)).json().data;
      expect(customer).toMatchObject({ email: `customer-${s.customerId}@redacted.invalid`, first_name: '', last_name: '', phone: null });
      const order = (await api(t, s.f, s.writer, 'GET', `${V}/orders/${s.orderIds[0]}`)).json().data;
      expect(order.email).toBe(`customer-${s.customerId}@redacted.invalid`);

      // Twice: the page says so and offers no form; a POST anyway is 409 and queues nothing.
      const again = await get(t, s.f.host, `/admin/customers/${s.customerId}/redact`, s.jar);
      expectGoodPage(again);
      expect(again.body).toContain('redacted already');
      expect(again.body).not.toContain('<form method="post" action="/admin/customers/');
      const second = await post(t, s.f.host, `/admin/customers/${s.customerId}/redact`, s.jar, {
        _csrf: csrfFrom(again.body),
        confirm: 'yes',
      });
      expect(second.statusCode).toBe(409);
      expect(await deliveriesOf(s.appId, 'customers/redact')).toHaveLength(1);
    });

    it('bad input changes nothing: missing or wrong CSRF token, unknown or foreign customer, malformed id', async () => {
      const s = await customerStore('/bad-a');
      const other = await customerStore('/bad-other');
      const state = async () => ({
        deliveries: await deliveriesOf(s.appId),
        customer: (await api(t, s.f, s.writer, 'GET', `${V}/customers/${s.customerId}`)).json().data,
      });
      for (const action of ['data-request', 'redact']) {
        await expectCsrfRefused(t, s.f.host, `/admin/customers/${s.customerId}/${action}`, s.jar, { _csrf: 'x', confirm: 'yes' }, state);
      }
      const before = await state();
      const page = await get(t, s.f.host, '/admin/customers', s.jar);
      for (const id of ['999999', other.customerId, 'abc', '0', '-1']) {
        for (const action of ['data-request', 'redact']) {
          expect((await get(t, s.f.host, `/admin/customers/${id}/${action}`, s.jar)).statusCode, `${id} ${action}`).toBe(404);
          const res = await post(t, s.f.host, `/admin/customers/${id}/${action}`, s.jar, { _csrf: csrfFrom(page.body), confirm: 'yes' });
          expect(res.statusCode, `${id} ${action}`).toBe(404);
        }
      }
      expect(await state()).toEqual(before);
      expect(await deliveriesOf(other.appId)).toEqual([]);
      // Logged out: to the login page.
      const anon = await get(t, s.f.host, `/admin/customers/${s.customerId}/redact`, new Jar());
      expect(anon.statusCode).toBe(303);
    });

    it('an app without a privacy address is queued nothing; one that lost read_customers before delivery is cancelled', async () => {
      const s = await customerStore('/lost-a');
      await t.services.apps.setPrivacyWebhookUrl(s.appId, '');
      expect((await t.services.customerPrivacy.requestData(s.storeId, Number(s.customerId))).apps).toBe(0);
      expect(await deliveriesOf(s.appId, 'customers/data_request')).toEqual([]);
      await t.services.apps.setPrivacyWebhookUrl(s.appId, rx.url('/lost-a'));
      expect((await t.services.customerPrivacy.requestData(s.storeId, Number(s.customerId))).apps).toBe(1);
      // Narrowed behind the services' back after the event was queued: the worker checks again.
      await t.db.kysely.updateTable('installations').set({ scopes: 'read_orders' }).where('app_id', '=', s.appId).execute();
      await worker();
      await until(async () => (await deliveriesOf(s.appId, 'customers/data_request'))[0]!.status !== 'pending', 5000, 'decided');
      expect((await deliveriesOf(s.appId, 'customers/data_request'))[0]).toMatchObject({
        status: 'cancelled',
        last_error: 'the app may no longer read this topic',
      });
      expect(rx.on('/lost-a')).toHaveLength(0);
    });
  });

  describe('shop/redact after an uninstall', () => {
    it('is written in the uninstall transaction, due 48 hours later, and sent once the clock gets there', async () => {
      const f = await createFixture(t, { scopes: 'read_products' });
      const { storeId, appId } = await ids(f);
      await t.services.apps.setPrivacyWebhookUrl(appId, rx.url('/shop-redact'));
      const token = (await exchange(t, f, (await consent(t, f, { scope: 'read_products' })).searchParams.get('code')!)).access_token;
      expect((await api(t, f, token, 'POST', `${V}/webhooks`, { address: rx.url('/farewell'), topic: 'app/uninstalled' })).statusCode).toBe(
        201,
      );
      const uninstalledAt = t.clock.now;
      await t.services.apps.uninstall(storeId, appId);
      expect((await deliveriesOf(appId, 'shop/redact')).map((d) => [d.status, Number(d.next_attempt_at)])).toEqual([
        ['pending', uninstalledAt + 48 * HOUR],
      ]);
      const w = await worker();
      // app/uninstalled goes at once; shop/redact waits.
      await until(() => rx.on('/farewell').length === 1, 5000, 'app/uninstalled');
      // One millisecond before it is due: a delivery queued now (a private app's, in the same store)
      // goes out, so the worker has claimed since the clock moved, and shop/redact was left alone.
      t.clock.advance(48 * HOUR - 1);
      const writer = await privateToken(t, f.storeName, 'write_products');
      expect(
        (await api(t, f, writer, 'POST', `${V}/webhooks`, { address: rx.url('/sentinel'), topic: 'products/create' })).statusCode,
      ).toBe(201);
      expect((await api(t, f, writer, 'POST', `${V}/products`, { title: 'Sentinel' })).statusCode).toBe(201);
      await until(() => rx.on('/sentinel').length === 1, 5000, 'the sentinel');
      expect(rx.on('/shop-redact')).toHaveLength(0);
      const waiting = await t.db.kysely
        .selectFrom('webhook_deliveries as d')
        .leftJoin('webhook_delivery_leases as l', 'l.delivery_id', 'd.id')
        .select(['d.status', 'l.worker as claimed_by'])
        .where('d.app_id', '=', appId)
        .where('d.topic', '=', 'shop/redact')
        .executeTakeFirstOrThrow();
      expect(waiting).toEqual({ status: 'pending', claimed_by: null });
      t.clock.advance(1);
      w.wake();
      await until(() => rx.on('/shop-redact').length === 1, 5000, 'shop/redact');
      const got = rx.on('/shop-redact')[0]!;
      expect(got.headers['x-service-topic']).toBe('shop/redact');
      expect(got.headers['x-service-hmac-sha256']).toBe(signatureOf(got.body, f.clientSecret));
      expect(JSON.parse(got.body)).toEqual({ shop_id: String(storeId), shop_domain: `${f.storeName}.localhost` });
    });

    it('a reinstall before it is due cancels it; an app without a privacy address gets none', async () => {
      const f = await createFixture(t, { scopes: 'read_products' });
      const { storeId, appId } = await ids(f);
      await t.services.apps.setPrivacyWebhookUrl(appId, rx.url('/shop-redact-back'));
      const jar = await login(t, f);
      await consent(t, f, { scope: 'read_products' }, jar);
      await t.services.apps.uninstall(storeId, appId);
      t.clock.advance(HOUR);
      await consent(t, f, { scope: 'read_products' }, jar);
      expect((await deliveriesOf(appId, 'shop/redact')).map((d) => [d.status, d.last_error])).toEqual([
        ['cancelled', 'the app was installed again'],
      ]);
      // Uninstalled again: a new one, due 48 hours after this uninstall.
      await t.services.apps.uninstall(storeId, appId);
      expect((await deliveriesOf(appId, 'shop/redact')).map((d) => d.status)).toEqual(['cancelled', 'pending']);

      const g = await createFixture(t, { scopes: 'read_products' });
      const other = await ids(g);
      await consent(t, g, { scope: 'read_products' });
      await t.services.apps.uninstall(other.storeId, other.appId);
      expect(await deliveriesOf(other.appId, 'shop/redact')).toEqual([]);
    });

    it("the worker cancels one whose app was installed again behind the services' back, or whose address was removed", async () => {
      const f = await createFixture(t, { scopes: 'read_products' });
      const { storeId, appId } = await ids(f);
      await t.services.apps.setPrivacyWebhookUrl(appId, rx.url('/shop-redact-late'));
      await consent(t, f, { scope: 'read_products' });
      await t.services.apps.uninstall(storeId, appId);
      await t.db.kysely.updateTable('installations').set({ uninstalled_at: null }).where('app_id', '=', appId).execute();
      const g = await createFixture(t, { scopes: 'read_products' });
      const second = await ids(g);
      await t.services.apps.setPrivacyWebhookUrl(second.appId, rx.url('/shop-redact-gone'));
      await consent(t, g, { scope: 'read_products' });
      await t.services.apps.uninstall(second.storeId, second.appId);
      await t.services.apps.setPrivacyWebhookUrl(second.appId, '');
      t.clock.advance(48 * HOUR);
      await worker();
      await until(
        async () =>
          (await deliveriesOf(appId, 'shop/redact'))[0]!.status !== 'pending' &&
          (await deliveriesOf(second.appId, 'shop/redact'))[0]!.status !== 'pending',
        5000,
        'both decided',
      );
      expect((await deliveriesOf(appId, 'shop/redact'))[0]).toMatchObject({
        status: 'cancelled',
        last_error: 'the app was installed again',
      });
      expect((await deliveriesOf(second.appId, 'shop/redact'))[0]).toMatchObject({
        status: 'cancelled',
        last_error: 'the app has no privacy webhook address',
      });
      expect(rx.on('/shop-redact-late')).toHaveLength(0);
      expect(rx.on('/shop-redact-gone')).toHaveLength(0);
    });
  });

  describe('app/scopes_update and giving back scopes', () => {
    it('a grant that grows, then one that gives back scopes through the consent page, each send app/scopes_update to the app', async () => {
      const f = await createFixture(t, { scopes: 'read_products read_customers write_orders' });
      const { storeId, appId } = await ids(f);
      const jar = await login(t, f);
      const first = await exchange(t, f, (await consent(t, f, { scope: 'read_products write_orders' }, jar)).searchParams.get('code')!);
      const sub = await api(t, f, first.access_token, 'POST', `${V}/webhooks`, { address: rx.url('/scopes'), topic: 'app/scopes_update' });
      expect(sub.statusCode, sub.body).toBe(201);
      // Asking again for the grant as it stands: no consent page, nothing sent.
      const same = await get(t, f.host, authorizeUrl(f, { scope: 'write_orders read_products' }), jar);
      expect(same.statusCode).toBe(303);

      // Grows.
      const grownAt = new Date(t.clock.now).toISOString();
      await consent(t, f, { scope: 'read_products read_customers write_orders' }, jar);
      // Gives back write_orders and read_customers: the consent page names them.
      t.clock.advance(1000);
      const shrinkPage = await get(t, f.host, authorizeUrl(f, { scope: 'read_products', state: 'give-back' }), jar);
      expectGoodPage(shrinkPage);
      expect(shrinkPage.body).toContain('gives back part of its access');
      expect(shrinkPage.body).toContain('(write_orders, given back)');
      expect(shrinkPage.body).toContain('(read_customers, given back)');
      expect(shrinkPage.body).toContain('>Confirm</button>');
      expect(shrinkPage.body).not.toContain(', new)');
      // Nothing changed by looking.
      expect((await t.services.apps.findInstallation(storeId, appId))!.scopes).toBe('read_customers,read_products,write_orders');
      const shrunkAt = new Date(t.clock.now).toISOString();
      const back = await consent(t, f, { scope: 'read_products', state: 'give-back' }, jar);
      expect(back.searchParams.get('state')).toBe('give-back');
      expect((await t.services.apps.findInstallation(storeId, appId))!.scopes).toBe('read_products');
      expect(await accessTokenActive(t, first.access_token)).toBe(false);
      const narrow = await exchange(t, f, back.searchParams.get('code')!);
      expect(narrow.scope).toBe('read_products');

      await worker();
      await until(() => rx.on('/scopes').length === 2, 5000, 'two scopes updates');
      const [grow, shrink] = rx.on('/scopes').map((r) => JSON.parse(r.body) as Record<string, unknown>);
      const installation = (await t.services.apps.findInstallation(storeId, appId))!;
      expect(grow).toEqual({
        id: String(installation.id),
        previous: ['read_products', 'write_orders'],
        current: ['read_customers', 'read_products', 'write_orders'],
        updated_at: grownAt,
        shop_domain: `${f.storeName}.localhost`,
      });
      expect(shrink).toEqual({
        id: String(installation.id),
        previous: ['read_customers', 'read_products', 'write_orders'],
        current: ['read_products'],
        updated_at: shrunkAt,
        shop_domain: `${f.storeName}.localhost`,
      });
      expect(rx.on('/scopes')[0]!.headers['x-service-topic']).toBe('app/scopes_update');
      expect(rx.on('/scopes')[0]!.headers['x-service-hmac-sha256']).toBe(signatureOf(rx.on('/scopes')[0]!.body, f.clientSecret));
    });

    it('a request that both adds and drops names both; Cancel changes nothing; write_x given back for read_x keeps read', async () => {
      const f = await createFixture(t, { scopes: 'read_products write_products read_customers read_orders' });
      const { storeId, appId } = await ids(f);
      const jar = await login(t, f);
      await consent(t, f, { scope: 'write_products read_orders' }, jar);
      const both = await get(t, f.host, authorizeUrl(f, { scope: 'write_products read_customers' }), jar);
      expectGoodPage(both);
      expect(both.body).toContain('(read_customers, new)');
      expect(both.body).toContain('(read_orders, given back)');
      expect(both.body).toContain('>Install app</button>');
      // read_products while holding write_products: write is given back, nothing is new.
      const readOnly = await get(t, f.host, authorizeUrl(f, { scope: 'read_products read_orders' }), jar);
      expect(readOnly.statusCode).toBe(200);
      expect(readOnly.body).toContain('(write_products, given back)');
      expect(readOnly.body).not.toContain(', new)');
      const fields: Record<string, string> = {};
      for (const m of readOnly.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]!] = decode(m[2]!);
      const cancelled = await post(t, f.host, '/admin/oauth/authorize', jar, { ...fields, decision: 'cancel' });
      expect(cancelled.statusCode).toBe(303);
      expect(new URL(cancelled.headers.location as string).searchParams.get('error')).toBe('access_denied');
      expect((await t.services.apps.findInstallation(storeId, appId))!.scopes).toBe('read_orders,write_products');
      expect(await deliveriesOf(appId, 'app/scopes_update')).toEqual([]);
    });
  });

  describe('the privacy webhook address', () => {
    it('privacy topics cannot be subscribed to (422 saying where they go); the OpenAPI enum leaves them out', async () => {
      const f = await createFixture(t, { scopes: 'read_customers' });
      const token = (await exchange(t, f, (await consent(t, f, { scope: 'read_customers' })).searchParams.get('code')!)).access_token;
      for (const topic of ['customers/data_request', 'customers/redact', 'shop/redact']) {
        const res = await api(t, f, token, 'POST', `${V}/webhooks`, { address: 'https://hooks.example.com/p', topic });
        expect(res.statusCode, topic).toBe(422);
        expect(res.json().errors.topic[0]).toContain(`${topic} is a privacy topic`);
      }
      expect((await api(t, f, token, 'GET', `${V}/webhooks`)).json().data).toEqual([]);
      expect(
        (await api(t, f, token, 'POST', `${V}/webhooks`, { address: 'https://hooks.example.com/s', topic: 'app/scopes_update' }))
          .statusCode,
      ).toBe(201);
      const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: PLATFORM_HOST } })).json();
      const body = doc.paths['/openapi/{version}/webhooks'].post.requestBody.content['application/json'].schema;
      expect(body.properties.topic.enum).toContain('app/scopes_update');
      expect(body.properties.topic.enum).not.toContain('customers/redact');
      expect(body.properties.topic.enum).not.toContain('shop/redact');
    });

    it('is edited on the app page of the partner dashboard: checked like a subscription address, cleared when empty, CSRF-protected', async () => {
      const p = await createPartner(t, 1);
      const { app } = await t.services.apps.createApp({
        name: 'Privacy app',
        appUrl: 'https://app.example.test/',
        redirectUri: 'https://app.example.test/cb',
        scopes: 'read_customers',
        partnerId: p.id,
      });
      const jar = await partnerLogin(t, p);
      const url = `/partner/apps/${app.client_id}`;
      const page = await get(t, PLATFORM_HOST, url, jar);
      expectGoodPage(page);
      expect(page.body).toContain('No privacy webhook address is set: this app is sent no privacy webhooks');
      const stored = async () => (await t.services.apps.findByClientId(app.client_id))!.privacy_webhook_url;
      await expectCsrfRefused(
        t,
        PLATFORM_HOST,
        `${url}/privacy-webhook`,
        jar,
        { privacy_webhook_url: 'https://hooks.example.com/p' },
        stored,
      );

      for (const bad of ['ftp://hooks.example.com/', 'http://hooks.example.com/p', 'not a url', 'https://u:p@hooks.example.com/']) {
        const res = await post(t, PLATFORM_HOST, `${url}/privacy-webhook`, jar, { _csrf: csrfFrom(page.body), privacy_webhook_url: bad });
        expect(res.statusCode, bad).toBe(303);
        const back = await get(t, PLATFORM_HOST, res.headers.location as string, jar);
        expectGoodPage(back);
        expect(back.body, bad).toContain('id="privacy_webhook_url-error"');
        expect(await stored()).toBeNull();
      }
      const ok = await post(t, PLATFORM_HOST, `${url}/privacy-webhook`, jar, {
        _csrf: csrfFrom(page.body),
        privacy_webhook_url: 'https://hooks.example.com/privacy',
      });
      expect(ok.headers.location).toBe(`${url}?done=privacy_saved`);
      expect(await stored()).toBe('https://hooks.example.com/privacy');
      const saved = await get(t, PLATFORM_HOST, ok.headers.location as string, jar);
      expect(saved.body).toContain('value="https://hooks.example.com/privacy"');
      expect(saved.body).not.toContain('No privacy webhook address is set');
      const cleared = await post(t, PLATFORM_HOST, `${url}/privacy-webhook`, jar, { _csrf: csrfFrom(page.body), privacy_webhook_url: '' });
      expect(cleared.headers.location).toBe(`${url}?done=privacy_cleared`);
      expect(await stored()).toBeNull();
      // Another partner's app: 404, nothing changed.
      const q = await createPartner(t, 2);
      const otherJar = await partnerLogin(t, q);
      const otherPage = await get(t, PLATFORM_HOST, '/partner', otherJar);
      const foreign = await post(t, PLATFORM_HOST, `${url}/privacy-webhook`, otherJar, {
        _csrf: csrfFrom(otherPage.body),
        privacy_webhook_url: 'https://evil.example.com/',
      });
      expect(foreign.statusCode).toBe(404);
      expect(await stored()).toBeNull();
    });

    it('is checked when an app is created; production refuses plain http and private addresses', async () => {
      await expect(
        t.services.apps.createApp({
          name: 'X',
          appUrl: 'https://a.test/',
          redirectUri: 'https://a.test/cb',
          privacyWebhookUrl: 'ftp://a.test/',
        }),
      ).rejects.toMatchObject({ errors: { privacy_webhook_url: ['must be an https URL'] } });
      const prod = await createTestPlatform('sqlite', { mode: 'production' });
      try {
        for (const bad of ['http://hooks.example.com/', 'https://127.0.0.1/p', 'https://10.0.0.8/p', 'https://localhost/p']) {
          await expect(
            prod.services.apps.createApp({
              name: 'X',
              appUrl: 'https://a.test/',
              redirectUri: 'https://a.test/cb',
              privacyWebhookUrl: bad,
            }),
            bad,
          ).rejects.toMatchObject({ errors: { privacy_webhook_url: [expect.any(String)] } });
        }
        expect(await prod.db.kysely.selectFrom('apps').select('id').execute()).toEqual([]);
      } finally {
        await prod.close();
      }
    });
  });
});
