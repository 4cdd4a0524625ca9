// Keyset cursor pagination in both conventions (PRODUCT.md §6), on SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CursorCodec } from '../src/domain/cursor.ts';
import { api, createFixture, createTestPlatform, DIALECTS, privateToken, type Fixture, type TestPlatform } from './harness.ts';

type Page = { data: { id: string }[]; cursor: string; has_more?: boolean; pre_cursor?: string | null };

describe('cursor codec', () => {
  const codec = new CursorCodec(Buffer.alloc(32, 3));
  const pos = { storeId: 7, resource: 'products', direction: 'next' as const, id: 1234 };
  it('round-trips and is opaque', () => {
    const c = codec.encode(pos);
    expect(c).not.toContain('1234');
    expect(codec.decode(c, { storeId: 7, resource: 'products', direction: 'next' })).toEqual(pos);
  });
  it('refuses another spelling of the same bytes (unused bits of the last base64url character)', () => {
    const c = codec.encode(pos);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(c.at(-1)!);
    const respelled = c.slice(0, -1) + alphabet[last ^ 1];
    expect(Buffer.from(respelled.split('.')[1]!, 'base64url')).toEqual(Buffer.from(c.split('.')[1]!, 'base64url'));
    expect(() => codec.decode(respelled, { storeId: 7, resource: 'products', direction: 'next' })).toThrow(/malformed/);
  });
  it('refuses tampering, other stores, other resources, other directions, garbage', () => {
    const c = codec.encode(pos);
    const [body, mac] = c.split('.') as [string, string];
    const forged = Buffer.from(Buffer.from(body, 'base64url').toString().replace('1234', '1')).toString('base64url');
    const bad = [
      `${forged}.${mac}`,
      `${body}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
      `${body}.${mac.slice(0, -2)}${mac.endsWith('QQ') ? 'gg' : 'QQ'}`,
      'abc',
      '',
      'a.b.c',
      '.x',
      `${body}.`,
      'x'.repeat(300),
    ];
    for (const b of bad) expect(() => codec.decode(b, { storeId: 7, resource: 'products', direction: 'next' })).toThrow();
    expect(() => codec.decode(c, { storeId: 8, resource: 'products', direction: 'next' })).toThrow(/another list/);
    expect(() => codec.decode(c, { storeId: 7, resource: 'orders', direction: 'next' })).toThrow(/another list/);
    expect(() => codec.decode(c, { storeId: 7, resource: 'products', direction: 'prev' })).toThrow(/not a pre_cursor/);
    expect(() => new CursorCodec(Buffer.alloc(32, 4)).decode(c, { storeId: 7, resource: 'products', direction: 'next' })).toThrow(
      /altered/,
    );
  });
});

describe.each(DIALECTS)('pagination on %s', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  let token: string;
  let ids: string[];
  const get = async (path: string): Promise<Page> => {
    const res = await api(t, f, token, 'GET', path);
    if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${res.body}`);
    return res.json();
  };

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off' });
    f = await createFixture(t);
    const store = await t.services.accounts.findStoreByName(f.storeName);
    await t.services.seeds.seed(store!.id, { products: 23, orders: 0, customers: 0 });
    token = await privateToken(t, f.storeName, 'write_products read_orders');
    ids = (await t.db.kysely.selectFrom('products').select('id').where('store_id', '=', store!.id).orderBy('id').execute()).map((r) =>
      String(r.id),
    );
  });
  afterAll(async () => t.close());

  it('newer convention: {data, cursor, has_more}; default limit 50; cursor "" on the last page', async () => {
    for (const v of ['2025-06', '2026-01']) {
      const all = await get(`/openapi/${v}/products`);
      expect(Object.keys(all).sort()).toEqual(['cursor', 'data', 'has_more']);
      expect(all.data.map((p) => p.id)).toEqual(ids);
      expect(all).toMatchObject({ cursor: '', has_more: false });
      const seen: string[] = [];
      let page = await get(`/openapi/${v}/products?limit=10`);
      const shapes: boolean[] = [];
      for (;;) {
        seen.push(...page.data.map((p) => p.id));
        shapes.push(page.has_more!);
        if (!page.has_more) break;
        page = await get(`/openapi/${v}/products?limit=10&cursor=${encodeURIComponent(page.cursor)}`);
      }
      expect(seen).toEqual(ids);
      expect(shapes).toEqual([true, true, false]);
      expect(page.cursor).toBe('');
    }
  });

  it('page_size and per_page are aliases of limit', async () => {
    expect((await get('/openapi/2026-01/products?page_size=4')).data).toHaveLength(4);
    expect((await get('/openapi/2026-01/products?per_page=6')).data).toHaveLength(6);
  });

  it('older convention: {data, cursor, pre_cursor}; pre_cursor null on the first page and walks back', async () => {
    const first = await get('/openapi/2022-01/products?limit=10');
    expect(Object.keys(first).sort()).toEqual(['cursor', 'data', 'pre_cursor']);
    expect(first.pre_cursor).toBeNull();
    const second = await get(`/openapi/2022-01/products?limit=10&cursor=${encodeURIComponent(first.cursor)}`);
    const third = await get(`/openapi/2022-01/products?limit=10&cursor=${encodeURIComponent(second.cursor)}`);
    expect(third.data.map((p) => p.id)).toEqual(ids.slice(20));
    expect(third.cursor).toBe('');
    expect(third.pre_cursor).toEqual(expect.any(String));
    const back = await get(`/openapi/2022-01/products?limit=10&pre_cursor=${encodeURIComponent(third.pre_cursor!)}`);
    expect(back.data.map((p) => p.id)).toEqual(ids.slice(10, 20));
    const backAgain = await get(`/openapi/2022-01/products?limit=10&pre_cursor=${encodeURIComponent(back.pre_cursor!)}`);
    expect(backAgain.data.map((p) => p.id)).toEqual(ids.slice(0, 10));
    expect(backAgain.pre_cursor).toBeNull();
    // Forward again from a page reached backwards.
    expect((await get(`/openapi/2022-01/products?limit=10&cursor=${encodeURIComponent(backAgain.cursor)}`)).data.map((p) => p.id)).toEqual(
      ids.slice(10, 20),
    );
  });

  it('bad limits, bad cursors, foreign cursors: 422/400, never a page', async () => {
    for (const q of ['limit=0', 'limit=251', 'limit=abc', 'limit=-1', 'limit=1.5', 'page_size=0']) {
      const res = await api(t, f, token, 'GET', `/openapi/2026-01/products?${q}`);
      expect(res.statusCode, q).toBe(422);
      expect(res.json().code).toBe('ValidationFailed');
      expect(Object.keys(res.json().errors)).toHaveLength(1);
    }
    const good = (await get('/openapi/2026-01/products?limit=5')).cursor;
    const tampered = good.slice(0, -2) + (good.endsWith('AA') ? 'BB' : 'AA');
    for (const c of ['garbage', tampered, 'MTIz', good + 'x']) {
      const res = await api(t, f, token, 'GET', `/openapi/2026-01/products?cursor=${encodeURIComponent(c)}`);
      expect(res.statusCode, c).toBe(400);
      expect(res.json().code).toBe('InvalidCursor');
    }
    // A products cursor on orders, and a cursor used as pre_cursor.
    expect((await api(t, f, token, 'GET', `/openapi/2026-01/orders?cursor=${encodeURIComponent(good)}`)).json().code).toBe('InvalidCursor');
    expect((await api(t, f, token, 'GET', `/openapi/2022-01/products?pre_cursor=${encodeURIComponent(good)}`)).json().code).toBe(
      'InvalidCursor',
    );
    expect((await api(t, f, token, 'GET', `/openapi/2026-01/products?pre_cursor=${encodeURIComponent(good)}`)).statusCode).toBe(422);
    // A cursor of another store.
    const g = await createFixture(t);
    const store = await t.services.accounts.findStoreByName(g.storeName);
    await t.services.seeds.seed(store!.id, { products: 3, orders: 0, customers: 0 });
    const theirs = await privateToken(t, g.storeName, 'read_products');
    const theirCursor = (await api(t, g, theirs, 'GET', '/openapi/2026-01/products?limit=1')).json().cursor;
    const res = await api(t, f, token, 'GET', `/openapi/2026-01/products?cursor=${encodeURIComponent(theirCursor)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'InvalidCursor', message: 'cursor belongs to another list' });
  });

  it('rows inserted or deleted during a walk never make it skip or repeat a row that existed throughout', async () => {
    const g = await createFixture(t);
    const tok = await privateToken(t, g.storeName, 'write_products');
    const made: string[] = [];
    for (let i = 0; i < 40; i++) made.push((await api(t, g, tok, 'POST', '/openapi/2026-01/products', { title: `P${i}` })).json().data.id);
    const deleted = new Set<string>();
    const seen: string[] = [];
    let page = (await api(t, g, tok, 'GET', '/openapi/2026-01/products?limit=7')).json() as Page;
    let step = 0;
    for (;;) {
      seen.push(...page.data.map((p) => p.id));
      // Between pages: delete a row already seen, a row not yet seen, and insert two.
      const victimAhead = made.find((id) => !seen.includes(id) && !deleted.has(id) && Number(id) % 3 === step % 3);
      const victimBehind = seen.find((id) => !deleted.has(id));
      for (const id of [victimAhead, victimBehind]) {
        if (!id) continue;
        await api(t, g, tok, 'DELETE', `/openapi/2026-01/products/${id}`);
        deleted.add(id);
      }
      await api(t, g, tok, 'POST', '/openapi/2026-01/products', { title: `late ${step}a` });
      await api(t, g, tok, 'POST', '/openapi/2026-01/products', { title: `late ${step}b` });
      step++;
      if (!page.has_more) break;
      page = (await api(t, g, tok, 'GET', `/openapi/2026-01/products?limit=7&cursor=${encodeURIComponent(page.cursor)}`)).json();
    }
    expect(new Set(seen).size).toBe(seen.length);
    const survivors = made.filter((id) => !deleted.has(id));
    for (const id of survivors) expect(seen).toContain(id);
  });
});
