// What the platform family's own clients need of the Admin API, on SQLite and PostgreSQL (and the
// partitioned layout): webhook subscription updates, the list filters `title` (products), `topic`
// and `address` (webhooks), the count endpoints, the coded success envelope of version 2026-10,
// `oauth/access_scopes`, and the 404 of resources storegate does not serve. Bad input of each is a
// clear 4xx that changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  appToken,
  createFixture,
  createTestPlatform,
  DIALECTS_WITH_PARTITIONED,
  type Fixture,
  privateToken,
  type TestPlatform,
} from './harness.ts';
import { ALL_SCOPES } from '../src/domain/scopes.ts';
import { unroutedQueries } from './partition-routing.ts';

const V = '/openapi/2026-01';
const CODED = '/openapi/2026-10';

interface Sub {
  id: string;
  address: string;
  topic: string;
  status: string;
  updated_at: string;
}

describe.each(DIALECTS_WITH_PARTITIONED)('family Admin API gaps on %s', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  let other: Fixture;
  let token: string;
  let narrow: string;
  let otherToken: string;

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off' });
    f = await createFixture(t);
    other = await createFixture(t);
    token = await privateToken(t, f.storeName, 'write_products write_orders read_customers');
    narrow = await privateToken(t, f.storeName, 'read_orders');
    otherToken = await privateToken(t, other.storeName, 'read_products');
    for (const title of ['Hat', 'Hat', 'hat', 'Hat ', 'Scarf']) {
      const res = await api(t, f, token, 'POST', `${V}/products`, { product: { title } });
      expect(res.statusCode, res.body).toBe(201);
    }
    expect((await api(t, other, otherToken, 'GET', `${V}/products`)).statusCode).toBe(200);
  });

  afterAll(async () => {
    await t?.close();
  });

  const subscribe = async (tok: string, address: string, topic: string, fix: Fixture = f) => {
    const res = await api(t, fix, tok, 'POST', `${V}/webhooks`, { webhook: { address, topic } });
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { data: Sub }).data;
  };
  const stored = async (id: string) =>
    t.db.kysely.selectFrom('webhook_subscriptions').selectAll().where('id', '=', Number(id)).executeTakeFirst();

  describe('PUT /webhooks/{id}', () => {
    it('changes the address and the topic, wrapped or bare, and answers the subscription', async () => {
      const sub = await subscribe(token, 'http://127.0.0.1:9/a', 'products/create');
      t.clock.advance(1000);
      const res = await api(t, f, token, 'PUT', `${V}/webhooks/${sub.id}`, { webhook: { address: 'http://127.0.0.1:9/b' } });
      expect(res.statusCode, res.body).toBe(200);
      const changed = (res.json() as { data: Sub }).data;
      expect(changed).toMatchObject({ id: sub.id, address: 'http://127.0.0.1:9/b', topic: 'products/create', status: 'active' });
      expect(changed.updated_at > sub.updated_at).toBe(true);
      const bare = await api(t, f, token, 'PUT', `${V}/webhooks/${sub.id}`, { topic: 'products/update' });
      expect(bare.statusCode, bare.body).toBe(200);
      expect(await stored(sub.id)).toMatchObject({ address: 'http://127.0.0.1:9/b', topic: 'products/update' });
      const got = await api(t, f, token, 'GET', `${V}/webhooks/${sub.id}`);
      expect((got.json() as { data: Sub }).data).toMatchObject({ address: 'http://127.0.0.1:9/b', topic: 'products/update' });
    });

    it('refuses bad bodies, bad addresses, topics outside the scopes and duplicates, changing nothing', async () => {
      const sub = await subscribe(token, 'http://127.0.0.1:9/keep', 'orders/create');
      const first = await subscribe(token, 'http://127.0.0.1:9/taken', 'orders/create');
      const before = await stored(sub.id);
      const cases: [unknown, number, string][] = [
        [{}, 422, 'ValidationFailed'],
        [{ webhook: {} }, 422, 'ValidationFailed'],
        [{ webhook: { address: 'http://127.0.0.1:9/x', format: 'json' } }, 422, 'ValidationFailed'],
        [{ address: 42 }, 422, 'ValidationFailed'],
        [{ topic: 'themes/update' }, 422, 'ValidationFailed'],
        [{ topic: 'customers/redact' }, 422, 'ValidationFailed'],
        [{ address: 'ftp://127.0.0.1/x' }, 422, 'ValidationFailed'],
        [{ address: 'http://example.test/x' }, 422, 'ValidationFailed'],
        [{ address: 'not a url' }, 422, 'ValidationFailed'],
        [{ address: 'http://127.0.0.1:9/taken' }, 422, 'ValidationFailed'],
        ['[1,2]', 422, 'ValidationFailed'],
      ];
      for (const [body, status, code] of cases) {
        const res = await api(t, f, token, 'PUT', `${V}/webhooks/${sub.id}`, body);
        expect(res.statusCode, `${JSON.stringify(body)}: ${res.body}`).toBe(status);
        expect(res.json().code).toBe(code);
      }
      const text = await t.app.inject({
        method: 'PUT',
        url: `${V}/webhooks/${sub.id}`,
        headers: { host: f.host, 'access-token': token, 'content-type': 'text/plain' },
        payload: 'address=x',
      });
      expect(text.statusCode).toBe(415);
      expect(await stored(sub.id)).toEqual(before);
      expect(await stored(first.id)).toMatchObject({ address: 'http://127.0.0.1:9/taken' });
      // A topic the caller's scopes do not cover: 403 naming the scope, as on subscribe.
      const own = await subscribe(narrow, 'http://127.0.0.1:9/narrow', 'orders/create');
      const forbidden = await api(t, f, narrow, 'PUT', `${V}/webhooks/${own.id}`, { topic: 'customers/create' });
      expect(forbidden.statusCode).toBe(403);
      expect(forbidden.json().message).toMatch(/read_customers/);
      expect(await stored(own.id)).toMatchObject({ topic: 'orders/create' });
    });

    it('is 404 for a bad id, another owner’s or another store’s subscription, and 401 without a token', async () => {
      const mine = await subscribe(token, 'http://127.0.0.1:9/mine', 'products/delete');
      const theirs = await subscribe(otherToken, 'http://127.0.0.1:9/theirs', 'products/delete', other);
      const sameStore = await privateToken(t, f.storeName, 'read_products');
      for (const [tok, id] of [
        [sameStore, mine.id],
        [token, theirs.id],
        [token, '0'],
        [token, 'abc'],
        [token, '99999999'],
      ] as const) {
        const res = await api(t, f, tok, 'PUT', `${V}/webhooks/${id}`, { address: 'http://127.0.0.1:9/stolen' });
        expect(res.statusCode, `${id}: ${res.body}`).toBe(404);
      }
      expect((await api(t, f, undefined, 'PUT', `${V}/webhooks/${mine.id}`, { address: 'http://127.0.0.1:9/x' })).statusCode).toBe(401);
      expect(await stored(mine.id)).toMatchObject({ address: 'http://127.0.0.1:9/mine' });
      expect(await stored(theirs.id)).toMatchObject({ address: 'http://127.0.0.1:9/theirs' });
      const patch = await api(t, f, token, 'PATCH', `${V}/webhooks/${mine.id}`, { address: 'http://127.0.0.1:9/x' });
      expect(patch.statusCode).toBe(405);
      expect(patch.headers.allow).toBe('GET, PUT, DELETE');
    });

    it('holds to the per-topic cap when the topic changes', async () => {
      const capped = await privateToken(t, f.storeName, 'read_customers');
      const subs: Sub[] = [];
      for (let i = 0; i < 10; i++) subs.push(await subscribe(capped, `http://127.0.0.1:9/cap${i}`, 'customers/create'));
      const spare = await subscribe(capped, 'http://127.0.0.1:9/spare', 'customers/update');
      const res = await api(t, f, capped, 'PUT', `${V}/webhooks/${spare.id}`, { topic: 'customers/create' });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().errors.base[0]).toMatch(/at most 10 webhook subscriptions to customers\/create/);
      expect(await stored(spare.id)).toMatchObject({ topic: 'customers/update' });
      // Changing the address of one at the cap is not adding one.
      const move = await api(t, f, capped, 'PUT', `${V}/webhooks/${subs[0]!.id}`, { address: 'http://127.0.0.1:9/moved' });
      expect(move.statusCode, move.body).toBe(200);
    });

    it('a new address makes a disabled subscription active again; the same address keeps it disabled', async () => {
      const sub = await subscribe(token, 'http://127.0.0.1:9/dead', 'orders/updated');
      await t.db.kysely
        .updateTable('webhook_subscriptions')
        .set({ disabled_at: 1, disabled_reason: 'dead deliveries' })
        .where('id', '=', Number(sub.id))
        .execute();
      const same = await api(t, f, token, 'PUT', `${V}/webhooks/${sub.id}`, { address: 'http://127.0.0.1:9/dead' });
      expect((same.json() as { data: Sub }).data.status).toBe('disabled');
      const moved = await api(t, f, token, 'PUT', `${V}/webhooks/${sub.id}`, { address: 'http://127.0.0.1:9/alive' });
      expect((moved.json() as { data: Sub }).data.status).toBe('active');
      expect(await stored(sub.id)).toMatchObject({ disabled_at: null, disabled_reason: null });
    });

    it('honours Idempotency-Key: a replay answers the first response and writes nothing again', async () => {
      const sub = await subscribe(token, 'http://127.0.0.1:9/idem', 'orders/create');
      const put = (address: string) =>
        t.app.inject({
          method: 'PUT',
          url: `${V}/webhooks/${sub.id}`,
          headers: { host: f.host, 'access-token': token, 'content-type': 'application/json', 'idempotency-key': `move-${sub.id}` },
          payload: JSON.stringify({ address }),
        });
      const first = await put('http://127.0.0.1:9/idem2');
      expect(first.statusCode).toBe(200);
      await api(t, f, token, 'PUT', `${V}/webhooks/${sub.id}`, { address: 'http://127.0.0.1:9/idem3' });
      const again = await put('http://127.0.0.1:9/idem2');
      expect(again.statusCode).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(first.body);
      expect(await stored(sub.id)).toMatchObject({ address: 'http://127.0.0.1:9/idem3' });
      const reused = await put('http://127.0.0.1:9/other');
      expect(reused.statusCode).toBe(422);
      expect(reused.json().code).toBe('IdempotencyKeyReused');
    });
  });

  describe('list filters: title, topic, address', () => {
    it('products?title= matches the whole title exactly, pages and links with it', async () => {
      const res = await api(t, f, token, 'GET', `${V}/products?title=Hat&limit=1`);
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json() as { data: { title: string }[]; cursor: string; has_more: boolean };
      expect(page.data.map((p) => p.title)).toEqual(['Hat']);
      expect(page.has_more).toBe(true);
      expect(res.headers.link).toMatch(/title=Hat&cursor=/);
      const next = await api(t, f, token, 'GET', `${V}/products?title=Hat&limit=1&cursor=${page.cursor}`);
      expect((next.json() as typeof page).data.map((p) => p.title)).toEqual(['Hat']);
      expect((next.json() as typeof page).has_more).toBe(false);
      // The cursor is bound to its filter.
      const mixed = await api(t, f, token, 'GET', `${V}/products?title=Scarf&limit=1&cursor=${page.cursor}`);
      expect(mixed.statusCode).toBe(400);
      expect(mixed.json().code).toBe('InvalidCursor');
      for (const [q, titles] of [
        ['title=hat', ['hat']],
        ['title=Hat%20', ['Hat ']],
        ['title=Ha', []],
        ['title=Hat&since_id=0&fields=title', ['Hat', 'Hat']],
      ] as const) {
        const r = await api(t, f, token, 'GET', `${V}/products?${q}`);
        expect(r.statusCode, r.body).toBe(200);
        expect(
          (r.json() as typeof page).data.map((p) => p.title),
          q,
        ).toEqual(titles);
      }
      const old = await api(t, f, token, 'GET', `/openapi/2022-01/products?title=Scarf`);
      expect(old.json()).toMatchObject({ data: [{ title: 'Scarf' }], cursor: '', pre_cursor: null });
    });

    it('refuses bad title, topic and address filters, and title on lists that do not take it', async () => {
      const long = 'x'.repeat(256);
      for (const [path, status, field] of [
        [`${V}/products?title=`, 422, 'title'],
        [`${V}/products?title=${long}`, 422, 'title'],
        [`${V}/products?title=a&title=b`, 422, 'title'],
        [`${V}/orders?title=Hat`, 400, 'title'],
        [`${V}/customers?topic=orders/create`, 400, 'topic'],
        [`${V}/products?address=http://x`, 400, 'address'],
        [`${V}/webhooks?topic=themes/update`, 422, 'topic'],
        [`${V}/webhooks?topic=customers/redact`, 422, 'topic'],
        [`${V}/webhooks?address=not-a-url`, 422, 'address'],
        [`${V}/webhooks?address=http://x/${'a'.repeat(2001)}`, 422, 'address'],
        [`${V}/webhooks?title=Hat`, 400, 'title'],
      ] as const) {
        const res = await api(t, f, token, 'GET', path);
        expect(res.statusCode, `${path.slice(0, 80)}: ${res.body}`).toBe(status);
        expect(Object.keys(res.json().errors ?? {}), path.slice(0, 80)).toContain(field);
      }
      const unsupported = await api(t, f, token, 'GET', `${V}/orders?title=Hat`);
      expect(unsupported.json().message).not.toMatch(/\btitle\b.*\btitle\b/);
    });

    it('webhooks?topic= and ?address= match exactly, only the caller’s subscriptions', async () => {
      const app = await privateToken(t, f.storeName, 'read_products');
      await subscribe(app, 'http://127.0.0.1:9/one', 'products/create');
      await subscribe(app, 'http://127.0.0.1:9/one', 'products/update');
      await subscribe(app, 'http://127.0.0.1:9/two', 'products/update');
      await subscribe(app, 'http://127.0.0.1:9/One', 'products/delete');
      const list = async (q: string) => {
        const res = await api(t, f, app, 'GET', `${V}/webhooks?${q}`);
        expect(res.statusCode, res.body).toBe(200);
        return (res.json() as { data: Sub[] }).data.map((s) => `${s.topic} ${s.address}`);
      };
      expect(await list('topic=products/update')).toEqual([
        'products/update http://127.0.0.1:9/one',
        'products/update http://127.0.0.1:9/two',
      ]);
      expect(await list(`address=${encodeURIComponent('http://127.0.0.1:9/one')}`)).toEqual([
        'products/create http://127.0.0.1:9/one',
        'products/update http://127.0.0.1:9/one',
      ]);
      expect(await list(`address=${encodeURIComponent('http://127.0.0.1:9/one')}&topic=products/update`)).toEqual([
        'products/update http://127.0.0.1:9/one',
      ]);
      expect(await list('topic=orders/create')).toEqual([]);
      const paged = await api(t, f, app, 'GET', `${V}/webhooks?topic=products/update&limit=1`);
      const cursor = (paged.json() as { cursor: string }).cursor;
      expect(paged.headers.link).toMatch(/topic=products%2Fupdate/);
      const second = await api(t, f, app, 'GET', `${V}/webhooks?topic=products/update&limit=1&cursor=${cursor}`);
      expect((second.json() as { data: Sub[] }).data.map((s) => s.address)).toEqual(['http://127.0.0.1:9/two']);
    });
  });

  describe('count endpoints', () => {
    it('count products, orders, customers and webhooks with the list’s filters', async () => {
      const n = async (path: string, tok = token, fix: Fixture = f) => {
        const res = await api(t, fix, tok, 'GET', path);
        expect(res.statusCode, `${path}: ${res.body}`).toBe(200);
        expect(Object.keys(res.json())).toEqual(['count']);
        return (res.json() as { count: number }).count;
      };
      const products = await t.db.kysely
        .selectFrom('products')
        .innerJoin('stores', 'stores.id', 'products.store_id')
        .select('products.id')
        .where('stores.name', '=', f.storeName)
        .orderBy('products.id')
        .execute();
      expect(await n(`${V}/products/count`)).toBe(products.length);
      expect(await n(`${V}/products/count?title=Hat`)).toBe(2);
      expect(await n(`${V}/products/count?title=Nope`)).toBe(0);
      expect(await n(`${V}/products/count?ids=${products[0]!.id},${products[1]!.id}&ids=999999`)).toBe(2);
      expect(await n(`${V}/products/count?since_id=${products.at(-2)!.id}`)).toBe(1);
      expect(await n(`${V}/products/count?created_at_min=2999-01-01`)).toBe(0);
      expect(await n(`${V}/products/count?updated_at_max=2999-01-01&title=Scarf`)).toBe(1);
      expect(await n(`/openapi/2022-01/products/count`)).toBe(products.length);
      expect(await n(`${V}/orders/count`)).toBe(0);
      expect(await n(`${V}/customers/count`)).toBe(0);
      // Another store's rows are never counted.
      expect(await n(`${V}/products/count`, otherToken, other)).toBe(0);
      const app = await privateToken(t, f.storeName, 'read_orders');
      await subscribe(app, 'http://127.0.0.1:9/c1', 'orders/create');
      await subscribe(app, 'http://127.0.0.1:9/c2', 'orders/create');
      await subscribe(app, 'http://127.0.0.1:9/c1', 'orders/updated');
      expect(await n(`${V}/webhooks/count`, app)).toBe(3);
      expect(await n(`${V}/webhooks/count?topic=orders/create`, app)).toBe(2);
      expect(await n(`${V}/webhooks/count?address=${encodeURIComponent('http://127.0.0.1:9/c1')}`, app)).toBe(2);
    });

    it('needs the list’s scope, refuses page parameters, fields, unknown and bad filters', async () => {
      const forbidden = await api(t, f, narrow, 'GET', `${V}/products/count`);
      expect(forbidden.statusCode).toBe(403);
      expect(forbidden.json().message).toMatch(/read_products/);
      expect((await api(t, f, undefined, 'GET', `${V}/products/count`)).statusCode).toBe(401);
      for (const [q, status] of [
        ['limit=5', 400],
        ['cursor=abc', 400],
        ['fields=id', 400],
        ['status=active', 400],
        ['title=', 422],
        ['created_at_min=yesterday', 422],
        ['ids=1,x', 422],
        ['created_at_min=2026-02-01&created_at_max=2026-01-01', 422],
      ] as const) {
        const res = await api(t, f, token, 'GET', `${V}/products/count?${q}`);
        expect(res.statusCode, `${q}: ${res.body}`).toBe(status);
      }
      const post = await api(t, f, token, 'POST', `${V}/products/count`, { title: 'x' });
      expect(post.statusCode).toBe(405);
      expect(post.headers.allow).toBe('GET');
    });
  });

  describe('version 2026-10: the coded success envelope', () => {
    it('wraps every success body in {code: "Success", data}, lists with their cursor inside; errors keep their shape', async () => {
      const bare = await api(t, f, token, 'GET', `${V}/products?limit=2`);
      const coded = await api(t, f, token, 'GET', `${CODED}/products?limit=2`);
      expect(coded.statusCode).toBe(200);
      expect(coded.headers['content-type']).toMatch(/^application\/json/);
      expect(coded.headers['x-service-api-version']).toBe('2026-10');
      const body = coded.json() as { code: string; data: { data: unknown[]; cursor: string; has_more: boolean } };
      expect(body.code).toBe('Success');
      expect(body.data).toEqual(bare.json());
      // Following the cursor in data, then the Link header, in the coded version.
      const next = await api(t, f, token, 'GET', `${CODED}/products?limit=2&cursor=${body.data.cursor}`);
      expect((next.json() as typeof body).code).toBe('Success');
      expect((next.json() as typeof body).data.data).toEqual(
        (await api(t, f, token, 'GET', `${V}/products?limit=2&cursor=${body.data.cursor}`)).json().data,
      );
      expect(coded.headers.link).toMatch(/\/openapi\/2026-10\/products\?limit=2&cursor=/);
      const id = (body.data.data[0] as { id: string }).id;
      expect((await api(t, f, token, 'GET', `${CODED}/products/${id}`)).json()).toEqual({
        code: 'Success',
        data: (await api(t, f, token, 'GET', `${V}/products/${id}`)).json(),
      });
      expect((await api(t, f, token, 'GET', `${CODED}/products/count?title=Hat`)).json()).toEqual({ code: 'Success', data: { count: 2 } });
      const created = await api(t, f, token, 'POST', `${CODED}/products`, { product: { title: 'Coded' } });
      expect(created.statusCode).toBe(201);
      expect(created.json()).toMatchObject({ code: 'Success', data: { data: { title: 'Coded' } } });
      const scopes = await api(t, f, token, 'GET', `${CODED}/oauth/access_scopes`);
      expect(scopes.json()).toMatchObject({ code: 'Success', data: { access_scopes: expect.any(Array) } });
      // Errors: the same shape as in every version.
      const missing = await api(t, f, token, 'GET', `${CODED}/products/99999999`);
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toMatchObject({ code: 'NotFound', message: expect.any(String), request_id: expect.any(String) });
      expect(missing.json().data).toBeUndefined();
      const invalid = await api(t, f, token, 'POST', `${CODED}/products`, { product: { title: '' } });
      expect(invalid.json()).toMatchObject({ code: 'ValidationFailed', errors: { title: expect.any(Array) } });
      expect((await api(t, f, undefined, 'GET', `${CODED}/products`)).json().code).toBe('Unauthorized');
    });

    it('an Idempotency-Key replay in 2026-10 is wrapped once, like the first answer', async () => {
      const post = () =>
        t.app.inject({
          method: 'POST',
          url: `${CODED}/products`,
          headers: { host: f.host, 'access-token': token, 'content-type': 'application/json', 'idempotency-key': 'coded-once' },
          payload: JSON.stringify({ title: 'Once' }),
        });
      const first = await post();
      const again = await post();
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json()).toEqual(first.json());
      expect(first.json()).toMatchObject({ code: 'Success', data: { data: { title: 'Once' } } });
    });

    it('earlier versions answer exactly as before', async () => {
      const res = await api(t, f, token, 'GET', `${V}/products?limit=1`);
      expect(Object.keys(res.json()).sort()).toEqual(['cursor', 'data', 'has_more']);
      const old = await api(t, f, token, 'GET', `/openapi/2022-01/products?limit=1`);
      expect(Object.keys(old.json()).sort()).toEqual(['cursor', 'data', 'pre_cursor']);
      expect((await api(t, f, token, 'GET', `/openapi/2025-06/products/count`)).json()).toEqual({ count: expect.any(Number) });
    });
  });

  describe('oauth/access_scopes and resources storegate does not serve', () => {
    it('lists the token’s scopes in canonical form, for any valid token, without a scope of its own', async () => {
      const res = await api(t, f, narrow, 'GET', `${V}/oauth/access_scopes`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ access_scopes: [{ handle: 'read_orders' }] });
      const wide = await api(t, f, token, 'GET', `${V}/oauth/access_scopes`);
      expect(wide.json()).toEqual({
        access_scopes: [{ handle: 'read_customers' }, { handle: 'write_orders' }, { handle: 'write_products' }],
      });
      expect((await api(t, f, undefined, 'GET', `${V}/oauth/access_scopes`)).statusCode).toBe(401);
      const bearer = await t.app.inject({
        method: 'GET',
        url: `${V}/oauth/access_scopes`,
        headers: { host: f.host, authorization: `Bearer ${narrow}` },
      });
      expect(bearer.json()).toEqual({ access_scopes: [{ handle: 'read_orders' }] });
      expect((await api(t, other, otherToken, 'GET', `${V}/oauth/access_scopes`)).json()).toEqual({
        access_scopes: [{ handle: 'read_products' }],
      });
      expect((await api(t, f, token, 'POST', `${V}/oauth/access_scopes`, {})).statusCode).toBe(405);
    });

    it('a public app installed with the family’s template scopes: singular aliases stored canonical, unserved ones listed too', async () => {
      const family = await createFixture(t, {
        scopes: 'read_product,write_order read_customer write_cart_transform read_themes write_themes write_shop read_collection',
      });
      const appTok = await appToken(
        t,
        family,
        'read_product,write_order read_customer write_cart_transform read_themes write_themes write_shop read_collection',
      );
      const res = await api(t, family, appTok, 'GET', `${V}/oauth/access_scopes`);
      expect((res.json() as { access_scopes: { handle: string }[] }).access_scopes.map((s) => s.handle)).toEqual([
        'read_collections',
        'read_customers',
        'read_products',
        'read_themes',
        'write_cart_transform',
        'write_orders',
        'write_shop',
        'write_themes',
      ]);
      // write_shop reads the shop and changes nothing of it.
      expect((await api(t, family, appTok, 'GET', `${V}/shop`)).statusCode).toBe(200);
      for (const method of ['PUT', 'PATCH', 'POST', 'DELETE'] as const) {
        const change = await api(t, family, appTok, method, `${V}/shop`, method === 'DELETE' ? undefined : { name: 'stolen' });
        expect(change.statusCode, method).toBe(405);
      }
      expect((await t.services.accounts.findStoreByName(family.storeName))?.name).toBe(family.storeName);
      // Themes are not served, whatever the token holds.
      const themes = await api(t, family, appTok, 'GET', `${V}/themes`);
      expect(themes.statusCode).toBe(404);
      expect(themes.json().message).toMatch(/storegate does not serve themes/);
      const nested = await api(t, family, appTok, 'PUT', `${V}/themes/12/assets`, { asset: {} });
      expect(nested.statusCode).toBe(404);
      expect((await api(t, family, appTok, 'GET', `${V}/custom_collections`)).json().message).toMatch(/does not serve custom collections/);
      expect((await api(t, family, undefined, 'GET', `${V}/themes`)).statusCode).toBe(401);
    });

    it('every scope of the vocabulary at once: consent, the stored grant and the token response hold the whole list', async () => {
      const all = ALL_SCOPES.join(' ');
      const wide = await createFixture(t, { scopes: all });
      const tok = await appToken(t, wide, all);
      const res = await api(t, wide, tok, 'GET', `${V}/oauth/access_scopes`);
      expect((res.json() as { access_scopes: { handle: string }[] }).access_scopes.map((s) => s.handle)).toEqual([...ALL_SCOPES].sort());
      const store = (await t.services.accounts.findStoreByName(wide.storeName))!;
      const grant = await t.db.kysely
        .selectFrom('installations')
        .select('scopes')
        .where('store_id', '=', store.id)
        .executeTakeFirstOrThrow();
      expect(grant.scopes.split(',')).toHaveLength(40);
      const priv = await privateToken(t, wide.storeName, all);
      expect(
        ((await api(t, wide, priv, 'GET', `${V}/oauth/access_scopes`)).json() as { access_scopes: unknown[] }).access_scopes,
      ).toHaveLength(40);
    });
  });

  it.runIf(dialect === 'postgres-partitioned')('every statement of these calls reads one partition of a store table', async () => {
    const url = t.config.database.dialect === 'postgres' ? t.config.database.url : '';
    // The test's own statements (reading a subscription by id, disabling one, listing the store's products) are left out.
    const own = [
      /from "webhook_subscriptions" where "id" = \$1$/,
      /^update "webhook_subscriptions" set "disabled_at" = \$1, "disabled_reason"/,
      /inner join "stores"/,
    ];
    const platformQueries = (t.queries ?? []).filter((q) => !own.some((re) => re.test(q.sql)));
    const unrouted = await unroutedQueries(url, platformQueries);
    expect(unrouted.map((q) => `${q.tables.join(',')}: ${q.sql}`)).toEqual([]);
  });
});
