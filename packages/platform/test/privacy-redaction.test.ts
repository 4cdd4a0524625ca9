// Redacting a customer reaches the webhook log, on SQLite and PostgreSQL: the stored bodies of the
// customer's events, its orders' and the privacy requests about it are rewritten with the same
// placeholders as the records, so neither the events list (GET /openapi/{version}/events, for apps
// and private apps) nor a delivery still queued or retrying carries the customer's email, names or
// phone any more; other customers' events keep theirs; customers/redact itself still names the
// customer to the apps that must erase it. All of it in the redaction's one transaction: a failure
// part-way leaves every body as it was. A real worker on the platform's frozen clock posts to a
// local receiver.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CustomerPrivacy } from '../src/services/customer-privacy.ts';
import { WebhookOutbox } from '../src/services/webhook-outbox.ts';
import type { Repositories } from '../src/storage/ports/repositories.ts';
import type { Storage } from '../src/storage/ports/storage.ts';
import type { WebhookWorker } from '../src/webhooks/webhook-worker.ts';
import {
  DIALECTS,
  api,
  appToken,
  createFixture,
  createTestPlatform,
  csrfFrom,
  login,
  privateToken,
  testWorker,
  type Fixture,
  type TestPlatform,
} from './harness.ts';
import { Receiver, until } from './webhook-receiver.ts';
import { get, post } from './web-pages.ts';

const V = '/openapi/2026-01';
const ADA = { email: 'ada.lovelace@example.test', first_name: 'Ada', last_name: 'Lovelace', phone: '+44 20 7946 0000' };
/** What must not be left anywhere once Ada is redacted (her name after an update included). */
const PERSONAL = ['ada.lovelace', 'Lovelace', 'Augusta', '"Ada"', '7946'];

interface Entry {
  webhook_id: string;
  topic: string;
  status: string;
  attempts: number;
  payload: Record<string, unknown>;
}

const leftIn = (text: string) => PERSONAL.filter((p) => text.includes(p));

describe.each(DIALECTS)('customer redaction in the webhook log on %s', (dialect) => {
  let t: TestPlatform;
  let rx: Receiver;
  const workers: WebhookWorker[] = [];

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off', webhooks: { timeoutMs: 500, retrySchedule: [40], disableAfterDead: 5 } });
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

  async function worker(): Promise<WebhookWorker> {
    const w = await testWorker(t, { pollMs: 20, random: () => 0.5, pruneEveryMs: 0, clock: t.clock.fn });
    workers.push(w);
    await w.start();
    return w;
  }

  async function call(f: Fixture, token: string, method: 'POST' | 'PUT', path: string, body: unknown) {
    const res = await api(t, f, token, method, `${V}${path}`, body);
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json().data as Record<string, unknown> & { id: string };
  }

  async function events(f: Fixture, token: string): Promise<Entry[]> {
    const res = await api(t, f, token, 'GET', `${V}/events?limit=250`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }

  /** A store whose app reads customers and orders (privacy address, subscriptions) and a private app that writes them. */
  async function store(prefix: string) {
    const f = await createFixture(t, { scopes: 'read_customers read_orders' });
    const storeId = (await t.services.accounts.findStoreByName(f.storeName))!.id;
    const appId = (await t.services.apps.findByClientId(f.clientId))!.id;
    await t.services.apps.setPrivacyWebhookUrl(appId, rx.url(`${prefix}-privacy`));
    const token = await appToken(t, f, 'read_customers read_orders');
    const writer = await privateToken(t, f.storeName, 'write_customers write_orders');
    return { f, storeId, appId, token, writer };
  }

  function deliveries(storeId: number) {
    return t.db.kysely
      .selectFrom('webhook_deliveries')
      .select(['id', 'webhook_id', 'event_id', 'topic', 'status', 'attempts'])
      .where('store_id', '=', storeId)
      .orderBy('id')
      .execute();
  }

  function storedPayloads(storeId: number) {
    return t.db.kysely
      .selectFrom('webhook_events')
      .select(['id', 'topic', 'payload'])
      .where('store_id', '=', storeId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  it('the events list and every queued or retrying delivery carry placeholders for the customer, its orders and its data request; others keep theirs', async () => {
    const s = await store('/rd');
    for (const [topic, path] of [
      ['customers/create', '/rd-customers'],
      ['customers/update', '/rd-customers'],
      ['orders/create', '/rd-orders'],
      ['orders/updated', '/rd-retry'],
    ] as const) {
      await call(s.f, s.token, 'POST', '/webhooks', { address: rx.url(path), topic });
    }
    await call(s.f, s.writer, 'POST', '/webhooks', { address: rx.url('/rd-private'), topic: 'customers/update' });
    // The first orders/updated fails: that delivery is retrying when the customer is redacted.
    let failures = 1;
    rx.handler = (req, res) => {
      if (req.url === '/rd-retry' && failures-- > 0) res.writeHead(500).end('try later');
      else res.end('ok');
    };

    // Sent before the redaction: Ada's creation, her order, its update (failed once) and her data request.
    const w = await worker();
    const ada = await call(s.f, s.writer, 'POST', '/customers', ADA);
    const order = await call(s.f, s.writer, 'POST', '/orders', {
      email: ADA.email,
      customer_id: ada.id,
      line_items: [{ title: 'Analytical engine', quantity: 1, price: '9.00' }],
    });
    await call(s.f, s.writer, 'PUT', `/orders/${order.id}`, { financial_status: 'paid' });
    await t.services.customerPrivacy.requestData(s.storeId, Number(ada.id));
    const settled = async () => {
      const ds = await deliveries(s.storeId);
      return ds.length === 4 && ds.every((d) => (d.topic === 'orders/updated' ? d.attempts === 1 : d.status === 'delivered'));
    };
    await until(settled, 5000, 'the first deliveries and the failed attempt');
    await w.stop();
    expect(rx.on('/rd-retry')).toHaveLength(1);
    expect(leftIn(rx.on('/rd-retry')[0]!.body)).not.toEqual([]);

    // Queued, not sent yet: Ada's update (to the app and the private app), Bob and his order.
    await call(s.f, s.writer, 'PUT', `/customers/${ada.id}`, { first_name: 'Augusta' });
    const bob = await call(s.f, s.writer, 'POST', '/customers', { email: 'bob@example.test', first_name: 'Bob', phone: '+1 555 0111' });
    await call(s.f, s.writer, 'POST', '/orders', {
      email: 'bob@example.test',
      customer_id: bob.id,
      line_items: [{ title: 'Tea', quantity: 1, price: '2.00' }],
    });
    expect(leftIn((await storedPayloads(s.storeId)).map((e) => e.payload).join('\n'))).toEqual(PERSONAL);

    // Redact Ada from the store admin.
    const jar = await login(t, s.f);
    const page = await get(t, s.f.host, `/admin/customers/${ada.id}/redact`, jar);
    const res = await post(t, s.f.host, `/admin/customers/${ada.id}/redact`, jar, { _csrf: csrfFrom(page.body), confirm: 'yes' });
    expect(res.statusCode).toBe(303);

    const placeholder = `customer-${ada.id}@redacted.invalid`;
    const aboutAda = (e: Entry) =>
      e.payload.id === ada.id || e.payload.customer_id === ada.id || (e.payload.customer as { id?: string } | undefined)?.id === ada.id;
    const listed = await events(s.f, s.token);
    expect(listed.filter((e) => e.topic !== 'customers/redact').map((e) => [e.topic, e.status, e.attempts, aboutAda(e)])).toEqual([
      ['customers/create', 'delivered', 1, true],
      ['orders/create', 'delivered', 1, true],
      ['orders/updated', 'pending', 1, true],
      ['customers/data_request', 'delivered', 1, true],
      ['customers/update', 'pending', 0, true],
      ['customers/create', 'pending', 0, false],
      ['orders/create', 'pending', 0, false],
    ]);
    for (const e of listed.filter((x) => aboutAda(x) && x.topic !== 'customers/redact')) {
      expect(leftIn(JSON.stringify(e.payload)), e.topic).toEqual([]);
      if (e.topic.startsWith('customers/') && e.topic !== 'customers/data_request') {
        expect(e.payload).toMatchObject({ id: ada.id, email: placeholder, first_name: '', last_name: '', phone: null });
      } else if (e.topic.startsWith('orders/')) {
        expect(e.payload).toMatchObject({ id: order.id, customer_id: ada.id, email: placeholder, total_price: '9.00' });
      } else {
        expect(e.payload).toMatchObject({ customer: { id: ada.id, email: placeholder, phone: null }, orders_requested: [order.id] });
      }
    }
    // Bob's events are his as they were.
    expect(listed.filter((e) => e.payload.id === bob.id || e.payload.customer_id === bob.id).map((e) => e.payload.email)).toEqual([
      'bob@example.test',
      'bob@example.test',
    ]);
    // customers/redact names Ada on purpose: each app finds her by it and erases what it holds.
    const redact = listed.find((e) => e.topic === 'customers/redact')!;
    expect(redact.payload).toMatchObject({ customer: { id: ada.id, email: ADA.email, phone: ADA.phone }, orders_to_redact: [order.id] });
    // The private app's list too.
    const own = await events(s.f, s.writer);
    expect(own.map((e) => [e.topic, e.payload.email])).toEqual([['customers/update', placeholder]]);
    // Nothing stored names her but customers/redact.
    const stored = await storedPayloads(s.storeId);
    expect(stored.filter((e) => leftIn(e.payload).length > 0).map((e) => e.topic)).toEqual(['customers/redact']);

    // The queued and retrying deliveries go out with the placeholders, under their own webhook ids.
    const sentBefore = rx.received.length;
    t.clock.advance(1000);
    await worker();
    await until(async () => (await deliveries(s.storeId)).every((d) => d.status === 'delivered'), 5000, 'every delivery');
    const after = rx.received.slice(sentBefore);
    expect(after.map((r) => [r.path, r.headers['x-service-topic']]).sort()).toEqual(
      [
        ['/rd-customers', 'customers/update'],
        ['/rd-customers', 'customers/create'],
        ['/rd-orders', 'orders/create'],
        ['/rd-private', 'customers/update'],
        ['/rd-privacy', 'customers/redact'],
        ['/rd-retry', 'orders/updated'],
      ].sort(),
    );
    for (const r of after.filter((x) => x.headers['x-service-topic'] !== 'customers/redact')) expect(leftIn(r.body), r.path).toEqual([]);
    const retried = after.find((r) => r.path === '/rd-retry')!;
    expect(retried.headers['x-service-webhook-id']).toBe(rx.on('/rd-retry')[0]!.headers['x-service-webhook-id']);
    expect(JSON.parse(retried.body)).toMatchObject({ id: order.id, email: placeholder });
  });

  it('in one transaction: a failure after the bodies were rewritten leaves them, the deliveries and the customer as they were', async () => {
    const s = await store('/rd-atomic');
    await call(s.f, s.token, 'POST', '/webhooks', { address: rx.url('/rd-atomic-customers'), topic: 'customers/create' });
    await call(s.f, s.token, 'POST', '/webhooks', { address: rx.url('/rd-atomic-orders'), topic: 'orders/create' });
    const ada = await call(s.f, s.writer, 'POST', '/customers', ADA);
    await call(s.f, s.writer, 'POST', '/orders', {
      email: ADA.email,
      customer_id: ada.id,
      line_items: [{ title: 'Analytical engine', quantity: 1, price: '9.00' }],
    });
    const state = async () => ({
      events: await storedPayloads(s.storeId),
      deliveries: await deliveries(s.storeId),
      customer: (await api(t, s.f, s.writer, 'GET', `${V}/customers/${ada.id}`)).json().data,
    });
    const before = await state();

    // The redaction as the platform runs it, on a storage where writing customers/redact fails:
    // it comes last, after the records and the bodies are rewritten.
    const storage = t.platform.storage;
    let rewritten = 0;
    const failing: Storage = Object.assign(Object.create(storage) as Storage, {
      transaction: <T>(work: (tx: Repositories) => Promise<T>) =>
        storage.transaction((tx) => {
          const webhooks = Object.assign(Object.create(tx.webhooks) as Repositories['webhooks'], {
            insertEvent: async () => {
              throw new Error('injected failure');
            },
          });
          const eventPayloads: Repositories['eventPayloads'] = {
            namingCustomer: (storeId, customerId) => tx.eventPayloads.namingCustomer(storeId, customerId),
            replace: async (storeId, rows) => (rewritten = await tx.eventPayloads.replace(storeId, rows)),
          };
          return work({ ...tx, webhooks, eventPayloads });
        }),
    });
    const privacy = new CustomerPrivacy(failing, t.config, t.clock.fn, new WebhookOutbox(t.clock.fn));
    await expect(privacy.redact(s.storeId, Number(ada.id))).rejects.toThrow('injected failure');
    expect(rewritten).toBe(2);
    expect(await state()).toEqual(before);

    // Run for real, it rewrites both and queues customers/redact.
    expect(await t.services.customerPrivacy.redact(s.storeId, Number(ada.id))).toEqual({ apps: 1, events: 2, answers: 0 });
    const after = await storedPayloads(s.storeId);
    // All three share the frozen clock's time: compared in topic order.
    expect(after.map((e) => [e.topic, leftIn(e.payload).length > 0]).sort()).toEqual([
      ['customers/create', false],
      ['customers/redact', true],
      ['orders/create', false],
    ]);
  });
});
