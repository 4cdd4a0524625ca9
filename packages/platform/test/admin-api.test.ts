// The Admin API over inject(), on SQLite and PostgreSQL: versions, Access-Token, scopes, resources,
// validation, webhook subscriptions, the OpenAPI document checked against real responses.
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  appToken,
  codeFor,
  createFixture,
  createTestPlatform,
  DIALECTS_WITH_PARTITIONED,
  exchange,
  privateToken,
  type Fixture,
  type TestPlatform,
} from './harness.ts';
import { unroutedQueries } from './partition-routing.ts';

const V = '/openapi/2026-01';

async function count(t: TestPlatform, table: 'products' | 'orders' | 'customers' | 'webhook_subscriptions'): Promise<number> {
  const r = await t.db.kysely
    .selectFrom(table)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

describe.each(DIALECTS_WITH_PARTITIONED)('Admin API on %s', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  let other: Fixture;
  let token: string; // read_products write_orders read_customers write_customers? see below
  let full: string;
  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off' });
    f = await createFixture(t, { scopes: 'read_products write_orders' });
    other = await createFixture(t);
    token = await appToken(t, f, 'read_products write_orders');
    full = await privateToken(t, f.storeName, 'write_products write_orders write_customers');
  });
  afterAll(async () => t.close());

  // Direct writes of these tests name the store too, as every statement on a store table must.
  const storeIdOf = async (fx: Fixture) =>
    (await t.db.kysely.selectFrom('stores').select('id').where('name', '=', fx.storeName).executeTakeFirstOrThrow()).id;

  describe('authentication (401, never saying why)', () => {
    it('missing, unknown, malformed, expired, revoked and foreign-store tokens all get the same 401', async () => {
      const foreign = await appToken(t, other, 'read_products');
      const revokedPrivate = await privateToken(t, f.storeName, 'read_products');
      await t.db.kysely
        .updateTable('private_apps')
        .set({ revoked_at: t.clock.now })
        .where('store_id', '=', await storeIdOf(f))
        .where('scopes', '=', 'read_products')
        .execute();
      const cases = [undefined, '', 'sg_at_' + 'A'.repeat(43), 'garbage', 'Bearer ' + token, foreign, revokedPrivate];
      for (const tok of cases) {
        const res = await api(t, f, tok, 'GET', `${V}/products`);
        expect(res.statusCode, String(tok)).toBe(401);
        expect(res.json()).toEqual({
          code: 'Unauthorized',
          message: 'Missing or invalid Access-Token',
          request_id: res.headers['x-request-id'],
        });
      }
      // The same foreign token works on its own store.
      expect((await api(t, other, foreign, 'GET', `${V}/products`)).statusCode).toBe(200);
    });

    it('a token that was just used is refused on the very next request once it is revoked or expires', async () => {
      const priv = await privateToken(t, f.storeName, 'read_products');
      expect((await api(t, f, priv, 'GET', `${V}/products`)).statusCode).toBe(200);
      expect((await api(t, f, priv, 'GET', `${V}/products`)).statusCode).toBe(200);
      await t.db.kysely
        .updateTable('private_apps')
        .set({ revoked_at: t.clock.now })
        .where('store_id', '=', await storeIdOf(f))
        .where('token_hash', '=', (await import('../src/domain/tokens.ts')).hashToken(priv))
        .execute();
      expect((await api(t, f, priv, 'GET', `${V}/products`)).statusCode).toBe(401);
      const g = await createFixture(t, { scopes: 'read_products' });
      const pair = await exchange(t, g, await codeFor(t, g, { scope: 'read_products' }));
      expect((await api(t, g, pair.access_token, 'GET', `${V}/products`)).statusCode).toBe(200);
      t.clock.advance(3600_000);
      expect((await api(t, g, pair.access_token, 'GET', `${V}/products`)).statusCode).toBe(401);
      t.clock.advance(-3600_000);
      const revoke = await t.app.inject({
        method: 'POST',
        url: '/admin/oauth/revoke',
        headers: { host: g.host, 'content-type': 'application/json' },
        payload: JSON.stringify({ client_id: g.clientId, client_secret: g.clientSecret, token: pair.refresh_token }),
      });
      expect(revoke.statusCode).toBe(200);
      expect((await api(t, g, pair.access_token, 'GET', `${V}/products`)).statusCode).toBe(401);
    });

    it('an expired access token is refused; a refreshed one works', async () => {
      const g = await createFixture(t, { scopes: 'read_products' });
      const pair = await exchange(t, g, await codeFor(t, g, { scope: 'read_products' }));
      t.clock.advance(3600_000);
      expect((await api(t, g, pair.access_token, 'GET', `${V}/products`)).statusCode).toBe(401);
      // Time goes back so the other tests' tokens stay valid; the new pair is issued at the earlier time.
      t.clock.advance(-3600_000);
      const reused = await api(t, g, pair.access_token, 'GET', `${V}/products`);
      expect(reused.statusCode).toBe(200);
      t.clock.advance(3600_000);
      const refreshed = await t.app.inject({
        method: 'POST',
        url: '/admin/oauth/token',
        headers: { host: g.host, 'content-type': 'application/json' },
        payload: JSON.stringify({
          client_id: g.clientId,
          client_secret: g.clientSecret,
          grant_type: 'refresh_token',
          refresh_token: pair.refresh_token,
        }),
      });
      expect((await api(t, g, refreshed.json().access_token, 'GET', `${V}/products`)).statusCode).toBe(200);
      t.clock.advance(-3600_000);
    });
  });

  describe('versions and methods', () => {
    it('an unknown version is 404 naming the supported ones', async () => {
      for (const v of ['2099-01', 'latest', '2022-1']) {
        const res = await api(t, f, token, 'GET', `/openapi/${v}/products`);
        expect(res.statusCode).toBe(404);
        expect(res.json().message).toContain('2022-01, 2025-06, 2026-01');
      }
    });
    it('wrong methods are 405 with Allow; unknown resources 404', async () => {
      const del = await api(t, f, full, 'DELETE', `${V}/orders/1`);
      expect(del.statusCode).toBe(405);
      expect(del.headers.allow).toBe('GET, PUT, PATCH');
      const put = await api(t, f, full, 'PUT', `${V}/products`, {});
      expect(put.statusCode).toBe(405);
      expect((await api(t, f, full, 'GET', `${V}/secrets`)).statusCode).toBe(404);
    });
  });

  describe('scopes (403 naming the scope)', () => {
    it('read needs read_x or write_x; write needs write_x', async () => {
      expect((await api(t, f, token, 'GET', `${V}/products`)).statusCode).toBe(200);
      expect((await api(t, f, token, 'GET', `${V}/orders`)).statusCode).toBe(200); // write_orders implies read
      const noCustomers = await api(t, f, token, 'GET', `${V}/customers`);
      expect(noCustomers.statusCode).toBe(403);
      expect(noCustomers.json().message).toBe('This request needs the read_customers scope (or write_customers)');
      const before = await count(t, 'products');
      const create = await api(t, f, token, 'POST', `${V}/products`, { title: 'Nope' });
      expect(create.statusCode).toBe(403);
      expect(create.json().message).toBe('This request needs the write_products scope');
      expect(await count(t, 'products')).toBe(before);
    });
    it('singular aliases grant the plural scope', async () => {
      const alias = await privateToken(t, f.storeName, 'read_product');
      expect((await api(t, f, alias, 'GET', `${V}/products`)).statusCode).toBe(200);
    });
  });

  describe('products', () => {
    it('create, get, update, list, delete', async () => {
      const created = await api(t, f, full, 'POST', `${V}/products`, {
        title: 'Blue Mug',
        price: '12.5',
        inventory_quantity: 3,
        tags: 'kitchen',
      });
      expect(created.statusCode).toBe(201);
      const p = created.json().data;
      expect(p).toMatchObject({
        id: expect.stringMatching(/^\d+$/),
        title: 'Blue Mug',
        price: '12.50',
        status: 'active',
        inventory_quantity: 3,
        body_html: '',
        vendor: '',
      });
      expect(new Date(p.created_at).toISOString()).toBe(p.created_at);
      expect((await api(t, f, full, 'GET', `${V}/products/${p.id}`)).json().data).toEqual(p);
      t.clock.advance(1000);
      const updated = await api(t, f, full, 'PUT', `${V}/products/${p.id}`, { product: { status: 'draft' } });
      expect(updated.statusCode).toBe(200);
      expect(updated.json().data).toMatchObject({ id: p.id, title: 'Blue Mug', status: 'draft' });
      expect(updated.json().data.updated_at).not.toBe(p.updated_at);
      const del = await api(t, f, full, 'DELETE', `${V}/products/${p.id}`);
      expect(del.statusCode).toBe(200);
      expect((await api(t, f, full, 'GET', `${V}/products/${p.id}`)).statusCode).toBe(404);
      expect((await api(t, f, full, 'DELETE', `${V}/products/${p.id}`)).statusCode).toBe(404);
    });

    it('validation: 422 ValidationFailed naming every bad field; nothing written', async () => {
      const before = await count(t, 'products');
      const cases: [unknown, Record<string, string[]>][] = [
        [{}, { title: ['is required'] }],
        [{ title: '' }, { title: ['must NOT have fewer than 1 characters'] }],
        [{ title: 'x', price: 12.5 }, { price: ['must be string'] }],
        [{ title: 'x', price: '-1' }, { price: [expect.stringContaining('must match pattern')] as any }],
        [{ title: 'x', inventory_quantity: '5' }, { inventory_quantity: ['must be integer'] }],
        [{ title: 'x', status: 'gone' }, { status: ['must be one of: "active", "draft", "archived"'] }],
        [{ title: 'x', owner: 'me' }, { owner: ['is not a known field'] }],
        [
          { title: 'x'.repeat(256), id: '5' },
          { title: ['must NOT have more than 255 characters'], id: ['is not a known field'] },
        ],
      ];
      for (const [body, errors] of cases) {
        const res = await api(t, f, full, 'POST', `${V}/products`, body);
        expect(res.statusCode, JSON.stringify(body)).toBe(422);
        expect(res.json()).toMatchObject({ code: 'ValidationFailed', errors });
      }
      expect((await api(t, f, full, 'PUT', `${V}/products/1`, {})).json().errors).toEqual({
        body: ['must NOT have fewer than 1 properties'],
      });
      expect(await count(t, 'products')).toBe(before);
    });

    it('non-JSON, garbage JSON, arrays and huge bodies are refused', async () => {
      const before = await count(t, 'products');
      const form = await t.app.inject({
        method: 'POST',
        url: `${V}/products`,
        headers: { host: f.host, 'access-token': full, 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'title=x',
      });
      expect(form.statusCode).toBe(415);
      expect(form.json().code).toBe('UnsupportedMediaType');
      expect((await api(t, f, full, 'POST', `${V}/products`, '{"title": ')).statusCode).toBe(400);
      expect((await api(t, f, full, 'POST', `${V}/products`, '[{"title":"x"}]')).statusCode).toBe(422);
      const huge = await api(t, f, full, 'POST', `${V}/products`, JSON.stringify({ title: 'x', body_html: 'y'.repeat(10 * 1024 * 1024) }));
      expect(huge.statusCode).toBe(413);
      expect(huge.json().code).toBe('PayloadTooLarge');
      expect(await count(t, 'products')).toBe(before);
    });

    it("ids that do not exist or belong to another store are 404, never the other store's data", async () => {
      const theirs = await privateToken(t, other.storeName, 'write_products');
      const p = (await api(t, other, theirs, 'POST', `${V}/products`, { title: 'Theirs' })).json().data;
      for (const [method, body] of [['GET'], ['PUT', { title: 'Mine now' }], ['DELETE']] as const) {
        const res = await api(t, f, full, method, `${V}/products/${p.id}`, body);
        expect(res.statusCode).toBe(404);
        expect(res.body).not.toContain('Theirs');
      }
      for (const id of ['0', 'abc', '99999999999', '1;drop', '-1', '1e3'])
        expect((await api(t, f, full, 'GET', `${V}/products/${encodeURIComponent(id)}`)).statusCode).toBe(404);
      expect((await api(t, other, theirs, 'GET', `${V}/products/${p.id}`)).json().data.title).toBe('Theirs');
    });
  });

  describe('customers and orders', () => {
    it('customers: unique email per store, phone format', async () => {
      const c = await api(t, f, full, 'POST', `${V}/customers`, { email: 'Ada@Example.com', first_name: 'Ada', phone: '+44 20 7946 0000' });
      expect(c.statusCode).toBe(201);
      expect(c.json().data).toMatchObject({ email: 'ada@example.com', first_name: 'Ada', last_name: '', phone: '+44 20 7946 0000' });
      const dup = await api(t, f, full, 'POST', `${V}/customers`, { email: 'ada@example.com' });
      expect(dup.statusCode).toBe(422);
      expect(dup.json().errors).toEqual({ email: ['has already been taken'] });
      expect((await api(t, f, full, 'POST', `${V}/customers`, { email: 'x@y.z', phone: 'call me' })).json().errors.phone).toBeDefined();
      const theirs = await privateToken(t, other.storeName, 'write_customers');
      expect((await api(t, other, theirs, 'POST', `${V}/customers`, { email: 'ada@example.com' })).statusCode).toBe(201);
    });

    it('orders: line items, computed total, customer in the same store, no delete', async () => {
      const customer = (await api(t, f, full, 'POST', `${V}/customers`, { email: 'buyer@example.com' })).json().data;
      const res = await api(t, f, full, 'POST', `${V}/orders`, {
        email: 'buyer@example.com',
        customer_id: customer.id,
        line_items: [
          { title: 'Mug', quantity: 2, price: '12.5' },
          { title: 'Tea', quantity: 1, price: '3.99' },
        ],
      });
      expect(res.statusCode).toBe(201);
      const o = res.json().data;
      expect(o).toMatchObject({
        customer_id: customer.id,
        currency: 'USD',
        financial_status: 'pending',
        fulfillment_status: null,
        total_price: '28.99',
      });
      expect(o.line_items).toEqual([
        { title: 'Mug', quantity: 2, price: '12.50' },
        { title: 'Tea', quantity: 1, price: '3.99' },
      ]);
      const paid = await api(t, f, token, 'PATCH', `${V}/orders/${o.id}`, { financial_status: 'paid', fulfillment_status: 'fulfilled' });
      expect(paid.json().data).toMatchObject({ financial_status: 'paid', fulfillment_status: 'fulfilled', total_price: '28.99' });
      expect((await api(t, f, token, 'PATCH', `${V}/orders/${o.id}`, { total_price: '0.00' })).json().errors).toEqual({
        total_price: ['is not a known field'],
      });
      const theirCustomer = (
        await api(t, other, await privateToken(t, other.storeName, 'write_customers'), 'POST', `${V}/customers`, { email: 'z@z.z' })
      ).json().data;
      const bad = await api(t, f, full, 'POST', `${V}/orders`, {
        email: 'a@b.c',
        customer_id: theirCustomer.id,
        line_items: [{ title: 'x', quantity: 1, price: '1' }],
      });
      expect(bad.statusCode).toBe(422);
      expect(bad.json().errors).toEqual({ customer_id: ['does not exist in this store'] });
      expect((await api(t, f, full, 'POST', `${V}/orders`, { email: 'a@b.c', line_items: [] })).json().errors).toEqual({
        line_items: ['must NOT have fewer than 1 items'],
      });
    });
  });

  describe('webhook subscriptions', () => {
    it('create, list, get, delete; only the owner sees them', async () => {
      const created = await api(t, f, token, 'POST', `${V}/webhooks`, { address: 'http://localhost:4000/hooks', topic: 'orders/create' });
      expect(created.statusCode).toBe(201);
      const w = created.json().data;
      expect(w).toMatchObject({ address: 'http://localhost:4000/hooks', topic: 'orders/create', api_version: '2026-01', status: 'active' });
      const list = await api(t, f, token, 'GET', `${V}/webhooks`);
      expect(list.json().data.map((x: { id: string }) => x.id)).toEqual([w.id]);
      expect((await api(t, f, full, 'GET', `${V}/webhooks`)).json().data).toEqual([]);
      expect((await api(t, f, full, 'GET', `${V}/webhooks/${w.id}`)).statusCode).toBe(404);
      expect((await api(t, f, token, 'GET', `${V}/webhooks/${w.id}`)).json().data).toEqual(w);
      expect((await api(t, f, token, 'DELETE', `${V}/webhooks/${w.id}`)).statusCode).toBe(200);
      expect((await api(t, f, token, 'GET', `${V}/webhooks`)).json().data).toEqual([]);
    });

    it('refuses a topic without its scope (403), malformed or plain-http remote URLs (422), duplicates (422), unknown topics', async () => {
      const before = await count(t, 'webhook_subscriptions');
      const noScope = await api(t, f, token, 'POST', `${V}/webhooks`, {
        address: 'https://hooks.example.com/x',
        topic: 'customers/create',
      });
      expect(noScope.statusCode).toBe(403);
      expect(noScope.json().message).toBe('The topic customers/create needs the read_customers scope');
      for (const address of [
        'not a url',
        'ftp://hooks.example.com/',
        'http://hooks.example.com/x',
        'https://user:pw@hooks.example.com/',
        'https://hooks.example.com/#x',
        '',
      ]) {
        const res = await api(t, f, token, 'POST', `${V}/webhooks`, { address, topic: 'orders/create' });
        expect(res.statusCode, address).toBe(422);
        expect(res.json().errors.address).toHaveLength(1);
      }
      expect(
        (await api(t, f, token, 'POST', `${V}/webhooks`, { address: 'https://hooks.example.com/x', topic: 'orders/explode' })).json().errors
          .topic,
      ).toBeDefined();
      expect(await count(t, 'webhook_subscriptions')).toBe(before);
      expect(
        (await api(t, f, token, 'POST', `${V}/webhooks`, { address: 'https://hooks.example.com/x', topic: 'app/uninstalled' })).statusCode,
      ).toBe(201);
      const dup = await api(t, f, token, 'POST', `${V}/webhooks`, { address: 'https://hooks.example.com/x', topic: 'app/uninstalled' });
      expect(dup.statusCode).toBe(422);
      expect(dup.json().errors).toEqual({ address: ['is already subscribed to app/uninstalled'] });
    });
  });

  it('the OpenAPI 3.1 document describes the real responses', async () => {
    const docRes = await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'localhost:8080' } });
    expect(docRes.statusCode).toBe(200);
    const doc = docRes.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/openapi/{version}/products',
        '/openapi/{version}/products/{id}',
        '/openapi/{version}/orders',
        '/openapi/{version}/customers/{id}',
        '/openapi/{version}/webhooks',
      ]),
    );
    expect(doc.paths['/openapi/{version}/orders/{id}'].delete).toBeUndefined();
    const ajv = new Ajv({ strict: false });
    addFormats.default(ajv);
    const check = (path: string, method: string, status: string, body: unknown) => {
      const schema = doc.paths[path][method].responses[status].content['application/json'].schema;
      const valid = ajv.validate(schema, body);
      expect(valid, `${method} ${path} ${status}: ${ajv.errorsText()}`).toBe(true);
    };
    const p = await api(t, f, full, 'POST', `${V}/products`, { title: 'Doc check' });
    check('/openapi/{version}/products', 'post', '201', p.json());
    check('/openapi/{version}/products', 'get', '200', (await api(t, f, full, 'GET', `${V}/products`)).json());
    check('/openapi/{version}/products', 'get', '200', (await api(t, f, full, 'GET', '/openapi/2022-01/products')).json());
    check('/openapi/{version}/products/{id}', 'get', '200', (await api(t, f, full, 'GET', `${V}/products/${p.json().data.id}`)).json());
    check('/openapi/{version}/orders', 'get', '200', (await api(t, f, full, 'GET', `${V}/orders`)).json());
    check('/openapi/{version}/customers', 'get', '200', (await api(t, f, full, 'GET', `${V}/customers`)).json());
    check('/openapi/{version}/webhooks', 'get', '200', (await api(t, f, token, 'GET', `${V}/webhooks`)).json());
    check('/openapi/{version}/products', 'post', '422', (await api(t, f, full, 'POST', `${V}/products`, {})).json());
    check(
      '/openapi/{version}/products',
      'get',
      '403',
      (await api(t, f, await privateToken(t, f.storeName, 'read_orders'), 'GET', `${V}/products`)).json(),
    );
    const docs = await t.app.inject({ method: 'GET', url: '/docs', headers: { host: 'localhost:8080' } });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toContain('GET /openapi/{version}/products');
    expect(docs.body).not.toContain('<script');
  });

  // Last in this block: it checks what every test above made the platform run.
  it.runIf(dialect === 'postgres-partitioned')(
    'every query the Admin API ran on a store table reads one partition (routed by store_id)',
    async () => {
      expect(t.queries?.length).toBeGreaterThan(100);
      const url = t.config.database.dialect === 'postgres' ? t.config.database.url : '';
      // The `count` helper of this file counts whole tables to show a refused write changed nothing:
      // the test's own query, not the platform's.
      const platformQueries = (t.queries ?? []).filter((q) => !/^select count\(\*\) as "n" from "\w+"$/.test(q.sql));
      const unrouted = await unroutedQueries(url, platformQueries);
      expect(unrouted.map((q) => `${q.tables.join(',')}: ${q.sql}`)).toEqual([]);
    },
  );
});
