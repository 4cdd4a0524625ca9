// Redacting a customer reaches the answers kept for Idempotency-Key replays, on SQLite and
// PostgreSQL: the same create or update of the customer, or of its orders, sent again with its key
// after the redaction answers with the placeholders (ids kept, still a replay, nothing written
// again), whichever app sent it; another customer's answers stay byte for byte; a failure part-way
// leaves every answer as it was. Below, the storage behind it (also on the partitioned layout):
// which stored answers are read, and a rewrite that changes only the answer it read.
import { type CompiledQuery, Kysely, SqliteDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactedAnswer } from '../src/domain/customer-redaction.ts';
import { CustomerPrivacy } from '../src/services/customer-privacy.ts';
import { WebhookOutbox } from '../src/services/webhook-outbox.ts';
import { openDatabase } from '../src/storage/database.ts';
import type { Repositories } from '../src/storage/ports/repositories.ts';
import type { NewReservation } from '../src/storage/ports/rows.ts';
import type { Storage } from '../src/storage/ports/storage.ts';
import type { Database } from '../src/storage/schema.ts';
import { type OpenStorage, openStorage, storageOn } from '../src/storage/sql-storage.ts';
import {
  api,
  appToken,
  createFixture,
  createTestPlatform,
  csrfFrom,
  DIALECTS,
  DIALECTS_WITH_PARTITIONED,
  type Fixture,
  freshPostgresUrl,
  login,
  privateToken,
  TEST_PARTITIONS,
  type TestPlatform,
} from './harness.ts';
import { recordingDb, unroutedQueries } from './partition-routing.ts';
import { get, post } from './web-pages.ts';

const V = '/openapi/2026-01';
const ADA = { email: 'ada.lovelace@example.test', first_name: 'Ada', last_name: 'Lovelace', phone: '+44 20 7946 0000' };
const BOB = { email: 'bob.babbage@example.test', first_name: 'Bob', last_name: 'Babbage', phone: '+1 555 0111' };
/** What must not be left in any stored answer once Ada is redacted (her name after an update included). */
const PERSONAL = ['ada.lovelace', 'Lovelace', 'Augusta', '"Ada"', '7946'];
const leftIn = (text: string) => PERSONAL.filter((p) => text.includes(p));

type Method = 'POST' | 'PUT' | 'PATCH';

describe.each(DIALECTS)('customer redaction in the answers kept for Idempotency-Key replays on %s', (dialect) => {
  let t: TestPlatform;
  let n = 0;

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off' });
  });
  afterAll(() => t.close());

  function send(f: Fixture, token: string, method: Method, path: string, body: unknown, key: string) {
    return t.app.inject({
      method,
      url: `${V}${path}`,
      headers: { host: f.host, 'access-token': token, 'content-type': 'application/json', 'idempotency-key': key },
      payload: JSON.stringify(body),
    });
  }

  /**
   * A store with a private app and a public app that both write customers and orders; the public
   * app has a privacy address (nothing is delivered here: no worker runs).
   */
  async function store() {
    n += 1;
    const f = await createFixture(t, { scopes: 'write_customers write_orders' });
    const storeId = (await t.services.accounts.findStoreByName(f.storeName))!.id;
    const appId = (await t.services.apps.findByClientId(f.clientId))!.id;
    await t.services.apps.setPrivacyWebhookUrl(appId, 'http://127.0.0.1:9/privacy');
    const app = await appToken(t, f, 'write_customers write_orders');
    const writer = await privateToken(t, f.storeName, 'write_customers write_orders');
    return { f, storeId, app, writer, key: (name: string) => `${dialect}-${n}-${name}` };
  }

  /** Every request sent with a key: what was sent and the first answer. */
  interface Sent {
    token: string;
    method: Method;
    path: string;
    body: unknown;
    key: string;
    status: number;
    answer: string;
  }

  async function write(s: Awaited<ReturnType<typeof store>>, token: string, method: Method, path: string, body: unknown, name: string) {
    const key = s.key(name);
    const res = await send(s.f, token, method, path, body, key);
    expect(res.statusCode, res.body).toBeLessThan(300);
    const sent: Sent = { token, method, path, body, key, status: res.statusCode, answer: res.body };
    return { sent, data: res.json().data as Record<string, unknown> & { id: string } };
  }

  const replay = (s: Awaited<ReturnType<typeof store>>, w: Sent) => send(s.f, w.token, w.method, w.path, w.body, w.key);

  /** Ada and Bob, each with an order, written with keys by both apps; Ada renamed and her order paid. */
  async function history(s: Awaited<ReturnType<typeof store>>) {
    const ada = await write(s, s.writer, 'POST', '/customers', ADA, 'ada');
    const order = await write(
      s,
      s.app,
      'POST',
      '/orders',
      { email: ADA.email, customer_id: ada.data.id, line_items: [{ title: 'Analytical engine', quantity: 1, price: '9.00' }] },
      'ada-order',
    );
    const renamed = await write(s, s.app, 'PUT', `/customers/${ada.data.id}`, { first_name: 'Augusta' }, 'ada-renamed');
    const paid = await write(s, s.writer, 'PATCH', `/orders/${order.data.id}`, { financial_status: 'paid' }, 'ada-order-paid');
    const bob = await write(s, s.writer, 'POST', '/customers', BOB, 'bob');
    const bobOrder = await write(
      s,
      s.app,
      'POST',
      '/orders',
      { email: BOB.email, customer_id: bob.data.id, line_items: [{ title: 'Difference engine', quantity: 2, price: '4.50' }] },
      'bob-order',
    );
    return { ada, order, renamed, paid, bob, bobOrder };
  }

  function storedAnswers(storeId: number) {
    return t.db.kysely
      .selectFrom('idempotency_keys')
      .select(['owner', 'idem_key', 'token', 'status_code', 'response_body', 'response_headers'])
      .where('store_id', '=', storeId)
      .orderBy('owner')
      .orderBy('idem_key')
      .execute();
  }

  async function count(table: 'customers' | 'orders' | 'webhook_events', storeId: number): Promise<number> {
    const r = await t.db.kysely
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as('n'))
      .where('store_id', '=', storeId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  it("a replay after the redaction answers with the placeholders, ids kept, and writes nothing; Bob's answers are his", async () => {
    const s = await store();
    const h = await history(s);
    const adaId = h.ada.data.id;
    expect(leftIn((await storedAnswers(s.storeId)).map((a) => a.response_body).join('\n'))).toEqual(PERSONAL);
    // Each key keeps the resource its write was on: the redaction reads those of customers and orders.
    const resources = await t.db.kysely
      .selectFrom('idempotency_keys')
      .select(['idem_key', 'resource'])
      .where('store_id', '=', s.storeId)
      .orderBy('idem_key')
      .execute();
    expect(resources.map((r) => [r.idem_key.replace(s.key(''), ''), r.resource])).toEqual([
      ['ada', 'customers'],
      ['ada-order', 'orders'],
      ['ada-order-paid', 'orders'],
      ['ada-renamed', 'customers'],
      ['bob', 'customers'],
      ['bob-order', 'orders'],
    ]);

    // Redact Ada from the store admin.
    const jar = await login(t, s.f);
    const page = await get(t, s.f.host, `/admin/customers/${adaId}/redact`, jar);
    const res = await post(t, s.f.host, `/admin/customers/${adaId}/redact`, jar, { _csrf: csrfFrom(page.body), confirm: 'yes' });
    expect(res.statusCode).toBe(303);
    const before = { customers: await count('customers', s.storeId), orders: await count('orders', s.storeId) };

    // Each of Ada's requests sent again with its key and body: the same status, marked as a
    // replay, the first answer with her email, names and phone replaced and nothing else changed.
    const placeholder = `customer-${adaId}@redacted.invalid`;
    const expected = [
      [h.ada, { email: placeholder, first_name: '', last_name: '', phone: null }],
      [h.renamed, { email: placeholder, first_name: '', last_name: '', phone: null }],
      [h.order, { email: placeholder }],
      [h.paid, { email: placeholder }],
    ] as const;
    for (const [w, replaced] of expected) {
      const again = await replay(s, w.sent);
      expect(again.statusCode, w.sent.key).toBe(w.sent.status);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(leftIn(again.body), w.sent.key).toEqual([]);
      expect(again.json(), w.sent.key).toEqual({ data: { ...JSON.parse(w.sent.answer).data, ...replaced } });
    }
    expect(JSON.parse((await replay(s, h.paid.sent)).body).data).toMatchObject({
      id: h.order.data.id,
      customer_id: adaId,
      financial_status: 'paid',
      total_price: '9.00',
    });
    // Nothing was written again.
    expect({ customers: await count('customers', s.storeId), orders: await count('orders', s.storeId) }).toEqual(before);

    // Bob's answers are sent again exactly as they were first sent.
    for (const w of [h.bob, h.bobOrder]) {
      const again = await replay(s, w.sent);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(w.sent.answer);
    }
    expect(JSON.parse(h.bob.sent.answer).data).toMatchObject(BOB);
    // No stored answer of the store names Ada any more.
    expect((await storedAnswers(s.storeId)).filter((a) => leftIn(a.response_body ?? '').length > 0)).toEqual([]);
  });

  it('in one transaction: a failure after the answers were rewritten leaves them, the customer and the events as they were', async () => {
    const s = await store();
    const h = await history(s);
    const adaId = Number(h.ada.data.id);
    const state = async () => ({
      answers: await storedAnswers(s.storeId),
      events: await count('webhook_events', s.storeId),
      customer: (await api(t, s.f, s.writer, 'GET', `${V}/customers/${adaId}`)).json().data,
    });
    const before = await state();

    // The redaction as the platform runs it, on a storage where writing customers/redact fails:
    // it comes last, after the records, the webhook bodies and the answers are rewritten.
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
          const idempotentAnswers: Repositories['idempotentAnswers'] = {
            namingCustomer: (storeId, customerId) => tx.idempotentAnswers.namingCustomer(storeId, customerId),
            replace: async (storeId, rows) => (rewritten = await tx.idempotentAnswers.replace(storeId, rows)),
          };
          return work({ ...tx, webhooks, idempotentAnswers });
        }),
    });
    const privacy = new CustomerPrivacy(failing, t.config, t.clock.fn, new WebhookOutbox(t.clock.fn));
    await expect(privacy.redact(s.storeId, adaId)).rejects.toThrow('injected failure');
    expect(rewritten).toBe(4);
    expect(await state()).toEqual(before);
    const unchanged = await replay(s, h.ada.sent);
    expect(unchanged.body).toBe(h.ada.sent.answer);

    // Run for real, it rewrites Ada's four answers.
    expect(await t.services.customerPrivacy.redact(s.storeId, adaId)).toMatchObject({ answers: 4 });
    expect(leftIn((await replay(s, h.ada.sent)).body)).toEqual([]);
  });
});

const NOW = Date.UTC(2026, 10, 26);
const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

describe.each(DIALECTS_WITH_PARTITIONED)('stored answers naming a customer on %s', (dialect) => {
  let storage: OpenStorage;
  let close: () => Promise<void>;
  let url = '';
  let queries: CompiledQuery[] = [];
  let n = 0;

  beforeAll(async () => {
    if (dialect === 'sqlite') {
      // Every statement the storage runs through Kysely is recorded, so its plan can be read.
      const real = openDatabase({ dialect: 'sqlite', path: ':memory:' });
      const kysely = new Kysely<Database>({
        dialect: new SqliteDialect({ database: real.sqlite! }),
        log: (event) => {
          if (event.level === 'query') queries.push(event.query);
        },
      });
      storage = storageOn({ ...real, kysely });
      await storage.migrate();
      close = () => storage.close();
      return;
    }
    const pg = await freshPostgresUrl();
    url = pg.url;
    if (dialect === 'postgres-partitioned') {
      const first = openStorage({ dialect: 'postgres', url }, { poolSize: 1 });
      await first.migrate({ partitions: TEST_PARTITIONS }).finally(() => first.close());
    }
    const recording = recordingDb(url);
    storage = storageOn(recording.db);
    queries = recording.queries;
    await storage.migrate();
    close = async () => {
      await storage.close();
      await pg.drop();
    };
  });
  afterAll(() => close());

  async function store(): Promise<number> {
    n += 1;
    const merchant = await storage.accounts.insertMerchant({ email: `m${n}@answers.test`, passwordHash: 'x', now: NOW });
    return (await storage.accounts.insertStore({ name: `answers${n}`, ownerMerchantId: merchant.id, now: NOW })).id;
  }

  /** A key of `owner` in the store with its answer stored (none when `status` is null), by the reservation `token`. */
  async function answer(
    storeId: number,
    key: string,
    resource: string | undefined,
    status: number | null,
    body: unknown,
    owner = 'app:1',
  ): Promise<NewReservation> {
    const r: NewReservation = {
      storeId,
      owner,
      key,
      resource,
      fingerprint: `fp-${key}`,
      token: `token-${key}`,
      requestId: `req-${key}`,
      now: NOW,
      lockedUntil: NOW + 60_000,
    };
    expect(await storage.idempotency.reserve(r)).toBe(true);
    if (status !== null) {
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      expect(await storage.idempotency.complete(r, r.token, { status, body: text, headers: JSON_HEADERS })).toBe(true);
    }
    return r;
  }

  const customer = { id: '41', email: 'ada@example.test', first_name: 'Ada', last_name: 'L', phone: '+1 555 0100' };
  const order = { id: '7', customer_id: '41', email: 'ada@example.test', total_price: '9.00', line_items: [] };

  it("reads the customer and order answers carrying the customer's id, of every caller, and no others", async () => {
    const s = await store();
    const other = await store();
    await answer(s, 'created', 'customers', 201, { data: customer });
    await answer(s, 'renamed', 'customers', 200, { data: { ...customer, first_name: 'Augusta' } }, 'private:3');
    await answer(s, 'order', 'orders', 201, { data: order });
    // Stored before the resource was kept with the key.
    await answer(s, 'legacy-customer', undefined, 201, { data: customer });
    await answer(s, 'legacy-order', undefined, 201, { data: order });
    // A guest order numbered like the customer, and a product numbered like it stored before the
    // resource was kept: read (their id is the customer's), then told apart by resource and shape.
    const guest = { ...order, id: '41', customer_id: null, email: 'guest@example.test' };
    await answer(s, 'guest-order', 'orders', 201, { data: guest });
    await answer(s, 'legacy-product', undefined, 201, { data: { id: '41', title: 'Mug' } });
    // Never read: another customer; a product numbered like the customer; a deleted customer's
    // empty answer; a refusal; a request still running; a body of another shape; another store.
    await answer(s, 'bob', 'customers', 201, { data: { ...customer, id: '42', email: 'bob@example.test' } });
    await answer(s, 'product', 'products', 201, { data: { id: '41', title: 'Mug' } });
    await answer(s, 'deleted', 'customers', 200, {});
    await answer(s, 'refused', 'customers', 422, { code: 'ValidationFailed', errors: { email: ['has already been taken'] } });
    await answer(s, 'running', 'customers', null, undefined);
    await answer(s, 'not-json', 'customers', 200, 'not json at all');
    await answer(other, 'created', 'customers', 201, { data: customer });

    const found = await storage.transaction((tx) => tx.idempotentAnswers.namingCustomer(s, 41));
    expect(found.map((a) => [a.owner, a.key, a.resource])).toEqual([
      ['app:1', 'created', 'customers'],
      ['app:1', 'guest-order', 'orders'],
      ['app:1', 'legacy-customer', null],
      ['app:1', 'legacy-order', null],
      ['app:1', 'legacy-product', null],
      ['app:1', 'order', 'orders'],
      ['private:3', 'renamed', 'customers'],
    ]);
    expect(found[0]).toEqual({
      owner: 'app:1',
      key: 'created',
      token: 'token-created',
      resource: 'customers',
      body: JSON.stringify({ data: customer }),
    });
    // Which of them name the customer, and how they read once it is redacted.
    const email = 'customer-41@redacted.invalid';
    const redacted = found.map((a) => [a.key, redactedAnswer(a.resource, JSON.parse(a.body), 41, email)]);
    const redactedCustomer = { ...customer, email, first_name: '', last_name: '', phone: null };
    expect(redacted).toEqual([
      ['created', { data: redactedCustomer }],
      ['guest-order', undefined],
      ['legacy-customer', { data: redactedCustomer }],
      ['legacy-order', { data: { ...order, email } }],
      ['legacy-product', undefined],
      ['order', { data: { ...order, email } }],
      ['renamed', { data: redactedCustomer }],
    ]);
    expect(await storage.idempotentAnswers.namingCustomer(s, 43)).toEqual([]);
    expect((await storage.idempotentAnswers.namingCustomer(other, 41)).map((a) => a.key)).toEqual(['created']);
  });

  it('rewrites only the answer it read: not a key taken over since, not another store’s; more than one statement takes', async () => {
    const s = await store();
    const other = await store();
    const kept = await answer(s, 'kept', 'customers', 201, { data: customer });
    const taken = await answer(s, 'taken', 'customers', 201, { data: customer });
    const foreign = await answer(other, 'foreign', 'customers', 201, { data: customer });
    const many: NewReservation[] = [];
    for (let i = 0; i < 450; i++) many.push(await answer(s, `order-${i}`, 'orders', 201, { data: { ...order, id: String(100 + i) } }));
    // The expired key "taken" is taken over by a new request: its answer is no longer the one read.
    expect(await storage.idempotency.replace({ ...taken, token: 'newer', fingerprint: 'fp-newer' }, taken.token, NOW)).toBe(true);
    const bodyOf = async (r: NewReservation) => (await storage.idempotency.find(r))?.response?.body;

    const rewrite = (r: NewReservation, i: number) => ({ owner: r.owner, key: r.key, token: r.token, body: JSON.stringify({ n: i }) });
    expect(await storage.idempotentAnswers.replace(s, [rewrite(foreign, 0)])).toBe(0);
    expect(await storage.transaction((tx) => tx.idempotentAnswers.replace(s, [kept, taken, ...many].map(rewrite)))).toBe(451);
    expect(await bodyOf(kept)).toBe('{"n":0}');
    expect(await storage.idempotency.find(taken)).toMatchObject({ token: 'newer', response: null });
    expect(await bodyOf(many.at(-1)!)).toBe('{"n":451}');
    expect(await bodyOf(foreign)).toBe(JSON.stringify({ data: customer }));
    // Only the body changed: the status and headers stay, so the key still replays.
    expect((await storage.idempotency.find(kept))?.response).toEqual({ status: 201, body: '{"n":0}', headers: JSON_HEADERS });
  });

  it.runIf(dialect === 'sqlite')("reads the store's keys through the primary key, never scanning the table", async () => {
    const s = await store();
    await answer(s, 'plan', 'customers', 201, { data: customer });
    const from = queries.length;
    await storage.idempotentAnswers.namingCustomer(s, 41);
    const search = queries.slice(from).find((q) => /from idempotency_keys k/.test(q.sql))!;
    const plan = (storage.db.sqlite!.prepare(`explain query plan ${search.sql}`).all(...search.parameters) as { detail: string }[]).map(
      (r) => r.detail,
    );
    expect(plan.some((l) => /^SEARCH k USING INDEX sqlite_autoindex_idempotency_keys_1 \(store_id=\?\)/.test(l))).toBe(true);
    expect(plan.filter((l) => l.startsWith('SCAN'))).toEqual([]);
  });

  it.runIf(dialect === 'postgres-partitioned')('each statement of the search and the rewrite reads one partition', async () => {
    const s = await store();
    const r = await answer(s, 'routed', 'customers', 201, { data: customer });
    const from = queries.length;
    await storage.idempotentAnswers.namingCustomer(s, 41);
    await storage.idempotentAnswers.replace(s, [{ owner: r.owner, key: r.key, token: r.token, body: '{}' }]);
    const mine = queries.slice(from).filter((q) => /idempotency_keys/.test(q.sql));
    expect(mine).toHaveLength(2);
    expect(await unroutedQueries(url, mine)).toEqual([]);
  });
});
