// List filters of every Admin API list (ids, since_id, created/updated ranges, fields), with keyset
// pagination in both conventions, on SQLite and PostgreSQL; and the pure rules.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filterDigest, MAX_IDS, parseIsoTime, parseListQuery, selectFields } from '../src/domain/list-filters.ts';
import { api, createFixture, createTestPlatform, DIALECTS, privateToken, type Fixture, type TestPlatform } from './harness.ts';

type Obj = Record<string, unknown> & { id: string };
type Page = { data: Obj[]; cursor: string; has_more?: boolean; pre_cursor?: string | null };
const FIELDS = ['id', 'title', 'created_at', 'updated_at'];

describe('list query rules (pure)', () => {
  it('parses ids from comma lists and repeated keys, sorted and without repeats', () => {
    expect(parseListQuery({ ids: ['3,1', '2', '3'] }, FIELDS).filters.ids).toEqual([1, 2, 3]);
    expect(parseListQuery({ ids: ' 7 , 5 ' }, FIELDS).filters.ids).toEqual([5, 7]);
    expect(parseListQuery({ ids: '1,2' }, FIELDS).params).toEqual([['ids', '1,2']]);
  });
  it('reads ISO 8601 dates and date-times, with Z, offsets, an unencoded + (a blank) and fractions', () => {
    expect(parseIsoTime('2026-01-31')).toBe(Date.UTC(2026, 0, 31));
    expect(parseIsoTime('2026-01-31T09:00:00Z')).toBe(Date.UTC(2026, 0, 31, 9));
    expect(parseIsoTime('2026-01-31T09:00:00-04:00')).toBe(Date.UTC(2026, 0, 31, 13));
    expect(parseIsoTime('2026-01-31T09:00:00 02:00')).toBe(Date.UTC(2026, 0, 31, 7));
    expect(parseIsoTime('2026-01-31T09:00:00.25Z')).toBe(Date.UTC(2026, 0, 31, 9, 0, 0, 250));
    expect(parseIsoTime('2026-01-31T09:00')).toBe(Date.UTC(2026, 0, 31, 9));
    for (const bad of ['yesterday', '2026-02-30', '2026-13-01', '2026-01-31T25:00:00Z', '1706691600', '', '2026-01-31T09:00:00+0']) {
      expect(parseIsoTime(bad), bad).toBeUndefined();
    }
  });
  it('refuses unknown parameters naming them, and bad values naming the parameter', () => {
    expect(() => parseListQuery({ page: '2', status: 'x' }, FIELDS)).toThrow(/Unsupported query parameters: page, status/);
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ ids: '1,x' }, 'ids', /positive whole numbers/],
      [{ ids: '1,,2' }, 'ids', /positive whole numbers/],
      [{ ids: '0' }, 'ids', /positive whole numbers/],
      [{ ids: '99999999999999999' }, 'ids', /positive whole numbers/],
      [{ ids: Array.from({ length: MAX_IDS + 1 }, (_, i) => String(i + 1)).join(',') }, 'ids', /at most 250 ids; got 251/],
      [{ since_id: '-1' }, 'since_id', /whole number/],
      [{ since_id: ['1', '2'] }, 'since_id', /given once/],
      [{ created_at_min: 'soon' }, 'created_at_min', /ISO 8601/],
      [{ updated_at_max: '2026-02-30' }, 'updated_at_max', /ISO 8601/],
      [{ created_at_min: '2026-02-01', created_at_max: '2026-01-01' }, 'created_at_min', /not be after created_at_max/],
      [{ fields: 'id,nope' }, 'fields', /unknown field "nope"; fields are id, title/],
      [{ fields: ',' }, 'fields', /at least one/],
    ];
    for (const [query, param, message] of cases) {
      try {
        parseListQuery(query, FIELDS);
        expect.unreachable(JSON.stringify(query));
      } catch (err) {
        const errors = (err as { details: { errors: Record<string, string[]> } }).details.errors;
        expect(Object.keys(errors), JSON.stringify(query)).toEqual([param]);
        expect(errors[param]!.join(' ')).toMatch(message);
      }
    }
  });
  it('digests only row filters; selects fields in the object order', () => {
    expect(filterDigest({})).toBe('');
    expect(filterDigest({ ids: [1, 2] })).not.toBe(filterDigest({ ids: [1, 3] }));
    expect(filterDigest({ sinceId: 5 })).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(selectFields({ id: '1', title: 't', vendor: 'v' }, ['vendor', 'id'])).toEqual({ id: '1', vendor: 'v' });
    expect(Object.keys(selectFields({ id: '1', title: 't', vendor: 'v' }, ['vendor', 'id']))).toEqual(['id', 'vendor']);
  });
});

describe.each(DIALECTS)('list filters on %s', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  let token: string;
  /** Product ids in creation order; product i was created at T0 + i minutes. */
  const products: string[] = [];
  const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
  const iso = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();
  const get = async (path: string) => {
    const res = await api(t, f, token, 'GET', path);
    return { status: res.statusCode, body: res.json() as Page & { code?: string; message?: string; errors?: Record<string, string[]> } };
  };
  const ids = (p: Page) => p.data.map((o) => o.id);
  /** Follows `cursor` (and stops at "") collecting every id; asserts each page stays within `limit`. */
  const walk = async (first: string, limit: number, extra = '') => {
    const seen: string[] = [];
    let res = await get(first);
    for (let i = 0; i < 100; i++) {
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(limit);
      seen.push(...ids(res.body));
      if (res.body.cursor === '') return seen;
      res = await get(`${first}${first.includes('?') ? '&' : '?'}cursor=${res.body.cursor}${extra}`);
    }
    throw new Error('did not end');
  };

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off' });
    f = await createFixture(t);
    token = await privateToken(t, f.storeName, 'write_products write_orders write_customers');
    for (let i = 0; i < 12; i++) {
      const res = await api(t, f, token, 'POST', '/openapi/2026-01/products', { title: `P${i}` });
      products.push(res.json().data.id);
      t.clock.advance(60_000);
    }
    // Products 0 and 5 change later: their updated_at moves on.
    for (const i of [0, 5]) await api(t, f, token, 'PUT', `/openapi/2026-01/products/${products[i]}`, { vendor: 'Later' });
  });
  afterAll(async () => t.close());

  it('ids: a comma list, repeated keys and both mixed select exactly those rows, in id order', async () => {
    const [a, b, c] = [products[1]!, products[4]!, products[9]!];
    for (const q of [`ids=${c},${a},${b}`, `ids=${a}&ids=${b}&ids=${c}`, `ids=${a},${b}&ids=${c}&ids=${a}`]) {
      const res = await get(`/openapi/2026-01/products?${q}`);
      expect(res.status).toBe(200);
      expect(ids(res.body)).toEqual([a, b, c]);
    }
    // An id of another store or an unknown one is simply not there.
    expect(ids((await get('/openapi/2026-01/products?ids=999999')).body)).toEqual([]);
  });

  it('since_id and the time ranges (inclusive bounds) narrow the rows', async () => {
    expect(ids((await get(`/openapi/2026-01/products?since_id=${products[8]}`)).body)).toEqual(products.slice(9));
    expect(ids((await get(`/openapi/2026-01/products?since_id=0&limit=2`)).body)).toEqual(products.slice(0, 2));
    const created = await get(`/openapi/2026-01/products?created_at_min=${iso(3)}&created_at_max=${iso(6)}`);
    expect(ids(created.body)).toEqual(products.slice(3, 7));
    // A date-time with an offset (its + percent-encoded) means the same instant.
    const offset = encodeURIComponent('2026-11-22T14:03:00+02:00');
    expect(ids((await get(`/openapi/2026-01/products?created_at_max=${offset}`)).body)).toEqual(products.slice(0, 4));
    const updated = await get(`/openapi/2026-01/products?updated_at_min=${iso(12)}`);
    expect(ids(updated.body)).toEqual([products[0], products[5]]);
    expect(ids((await get(`/openapi/2026-01/products?updated_at_max=${iso(1)}`)).body)).toEqual([products[1]]);
    expect(ids((await get(`/openapi/2026-01/products?created_at_min=2026-11-23`)).body)).toEqual([]);
  });

  it('fields: only the fields asked for, for every object of a page', async () => {
    const res = await get(`/openapi/2026-01/products?fields=title,id&limit=3`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(products.slice(0, 3).map((id, i) => ({ id, title: `P${i}` })));
    expect(res.body).toMatchObject({ has_more: true });
  });

  it('filters combine with keyset pages in both conventions: every matching row once, none other', async () => {
    const wanted = products.filter((_, i) => i % 2 === 0);
    const filter = `ids=${wanted.join(',')}&created_at_min=${iso(1)}`;
    const expected = wanted.slice(1);
    for (const v of ['2022-01', '2025-06', '2026-01']) {
      expect(await walk(`/openapi/${v}/products?${filter}&limit=2`, 2), v).toEqual(expected);
      expect(await walk(`/openapi/${v}/products?since_id=${products[2]}&limit=4`, 4), v).toEqual(products.slice(3));
    }
    // Backwards in 2022-01 with the same filters gives the same rows.
    const p1 = await get(`/openapi/2022-01/products?${filter}&limit=2`);
    const p2 = await get(`/openapi/2022-01/products?${filter}&limit=2&cursor=${p1.body.cursor}`);
    expect(p2.body.pre_cursor).toEqual(expect.any(String));
    const back = await get(`/openapi/2022-01/products?${filter}&limit=2&pre_cursor=${p2.body.pre_cursor}`);
    expect(ids(back.body)).toEqual(ids(p1.body));
    expect(back.body.pre_cursor).toBeNull();
  });

  it('a cursor only continues the filters it was issued for: other filters (or none) are 400 InvalidCursor', async () => {
    const first = await get(`/openapi/2026-01/products?since_id=${products[0]}&limit=2`);
    const cursor = first.body.cursor;
    for (const q of ['', `&since_id=${products[1]}`, `&ids=${products[5]}`, `&since_id=${products[0]}&updated_at_min=${iso(0)}`]) {
      const res = await get(`/openapi/2026-01/products?limit=2&cursor=${cursor}${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body).toMatchObject({ code: 'InvalidCursor' });
      expect(res.body.message).toMatch(/other filters/);
    }
    // An unfiltered cursor is refused on a filtered request too.
    const plain = await get('/openapi/2026-01/products?limit=2');
    expect((await get(`/openapi/2026-01/products?limit=2&since_id=1&cursor=${plain.body.cursor}`)).status).toBe(400);
    // Changing only `fields` or `limit` keeps the cursor valid (the rows are the same list).
    const same = await get(`/openapi/2026-01/products?since_id=${products[0]}&limit=3&fields=id&cursor=${cursor}`);
    expect(same.status).toBe(200);
    expect(ids(same.body)).toEqual(products.slice(3, 6));
  });

  it('every list takes the filters: orders, customers and webhook subscriptions', async () => {
    const customers: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await api(t, f, token, 'POST', '/openapi/2025-06/customers', { email: `c${i}@example.test`, first_name: `C${i}` });
      customers.push(res.json().data.id);
    }
    const orders: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await api(t, f, token, 'POST', '/openapi/2025-06/orders', {
        email: `o${i}@example.test`,
        line_items: [{ title: 'x', quantity: 1, price: '1.00' }],
      });
      orders.push(res.json().data.id);
    }
    const hooks: string[] = [];
    for (const topic of ['products/create', 'products/update', 'orders/create']) {
      const res = await api(t, f, token, 'POST', '/openapi/2025-06/webhooks', { address: 'http://localhost:9/hook', topic });
      hooks.push(res.json().data.id);
    }
    const cases: [string, string[], string][] = [
      ['customers', customers, 'email'],
      ['orders', orders, 'total_price'],
      ['webhooks', hooks, 'topic'],
    ];
    for (const [list, made, field] of cases) {
      const res = await get(`/openapi/2025-06/${list}?ids=${made[2]}&ids=${made[0]}&fields=id,${field}`);
      expect(res.status, list).toBe(200);
      expect(
        res.body.data.map((o) => Object.keys(o).sort()),
        list,
      ).toEqual([['id', field].sort(), ['id', field].sort()]);
      expect(ids(res.body), list).toEqual([made[0], made[2]]);
      expect(ids((await get(`/openapi/2025-06/${list}?since_id=${made[0]}`)).body), list).toEqual(made.slice(1));
      expect(await walk(`/openapi/2022-01/${list}?ids=${made.join(',')}&limit=1`, 1), list).toEqual(made);
      const bad = await get(`/openapi/2025-06/${list}?fields=id,secret`);
      expect(bad.status, list).toBe(422);
      expect(bad.body.errors?.fields?.[0], list).toMatch(/unknown field "secret"/);
      const unknown = await get(`/openapi/2025-06/${list}?status=any`);
      expect(unknown.status, list).toBe(400);
      expect(unknown.body.message, list).toMatch(/Unsupported query parameter: status/);
    }
  });

  it('bad input: 400 for an unsupported parameter, 422 naming each bad filter; never a page, nothing changed', async () => {
    const before = await get('/openapi/2026-01/products?limit=250');
    const cases: [string, number, string | RegExp][] = [
      ['page=2', 400, /Unsupported query parameter: page\b/],
      ['ids=1&colour=red', 400, /colour/],
      ['ids=abc', 422, 'ids'],
      [`ids=${Array.from({ length: 251 }, (_, i) => i + 1).join(',')}`, 422, 'ids'],
      [Array.from({ length: 251 }, (_, i) => `ids=${i + 1}`).join('&'), 422, 'ids'],
      ['since_id=x', 422, 'since_id'],
      ['since_id=1&since_id=2', 422, 'since_id'],
      ['created_at_min=2026-02-30', 422, 'created_at_min'],
      ['created_at_max=tomorrow', 422, 'created_at_max'],
      ['updated_at_min=1700000000', 422, 'updated_at_min'],
      ['updated_at_max=', 422, 'updated_at_max'],
      ['fields=id,password_hash', 422, 'fields'],
      ['fields=', 422, 'fields'],
    ];
    for (const [q, status, naming] of cases) {
      const res = await get(`/openapi/2026-01/products?${q}`);
      expect(res.status, q).toBe(status);
      expect(res.body.data, q).toBeUndefined();
      if (typeof naming === 'string') {
        expect(res.body.code, q).toBe('ValidationFailed');
        expect(Object.keys(res.body.errors ?? {}), q).toEqual([naming]);
      } else expect(res.body.message, q).toMatch(naming);
    }
    expect(await get('/openapi/2026-01/products?limit=250')).toEqual(before);
  });

  it('filtered, unfiltered and field-limited pages asked in turn never answer for one another', async () => {
    for (let round = 0; round < 2; round++) {
      expect(ids((await get('/openapi/2026-01/products?limit=3')).body)).toEqual(products.slice(0, 3));
      expect(ids((await get(`/openapi/2026-01/products?limit=3&ids=${products[7]}`)).body)).toEqual([products[7]]);
      expect(ids((await get(`/openapi/2026-01/products?limit=3&since_id=${products[9]}`)).body)).toEqual(products.slice(10));
      const slim = await get('/openapi/2026-01/products?limit=3&fields=id');
      expect(slim.body.data).toEqual(products.slice(0, 3).map((id) => ({ id })));
    }
  });
});
