// A list page without filters is written as JSON by the database (storage/repositories/json-page.ts):
// its bytes must be exactly those of the rows read and serialised by JSON.stringify through the
// resource's toJson, for every value a column may hold (quotes, backslashes, control characters,
// characters beyond ASCII, null) and every page of both conventions, forward and back. A page
// with a time the database does not write as toISOString does is answered from rows instead.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customers, products, type ResourceDef } from '../src/domain/resources.ts';
import type { PageRequest } from '../src/services/pagination.ts';
import { createTestPlatform, DIALECTS, type TestPlatform } from './harness.ts';

const NASTY = [
  'plain',
  'quote " and backslash \\ and slash /',
  'controls \b\f\n\r\t \u0001\u001f\u007f end',
  'beyond ASCII: é ü 中文 😀 \u2028 \u2029 \ufeff',
  '',
  '<script>&amp;</script>',
];

describe.each(DIALECTS)('list pages written by the database (%s)', (dialect) => {
  let t: TestPlatform;
  let storeId: number;
  const N = 23;

  beforeAll(async () => {
    t = await createTestPlatform(dialect);
    // Another store's rows lie on both sides of this store's, as on a shared platform.
    const other = await t.services.accounts.createStore({ name: 'jsonother', ownerEmail: 'o2@example.test', ownerPassword: 'pw-pw-pw-pw' });
    const store = await t.services.accounts.createStore({ name: 'jsonpage', ownerEmail: 'o@example.test', ownerPassword: 'pw-pw-pw-pw' });
    storeId = store.id;
    const k = t.db.kysely;
    for (let i = 0; i < N; i++) {
      for (const [j, s] of [other.id, storeId, other.id].entries()) {
        const text = NASTY[i % NASTY.length]!;
        const at = Date.UTC(2026, 0, 1) + i * 1_234_567 + (i % 7);
        await k
          .insertInto('products')
          .values({
            store_id: s,
            title: `${text} ${i}`,
            body_html: text,
            vendor: text.slice(0, 3),
            product_type: 'T',
            status: 'active',
            price: `${i}.5${i % 10}`,
            sku: '',
            inventory_quantity: i % 3 === 0 ? -i : i * 1000,
            tags: text,
            created_at: i === 5 ? 0 : at,
            updated_at: i === 6 ? 253402300799999 : at + 1,
          })
          .execute();
        await k
          .insertInto('customers')
          .values({
            store_id: s,
            email: `c${i}-${j}@example.test`,
            first_name: text,
            last_name: 'L',
            phone: i % 2 === 0 ? null : '+1 555 0100',
            created_at: at,
            updated_at: at,
          })
          .execute();
      }
    }
  });
  afterAll(() => t?.close());

  // The rows path: the page read as rows and serialised by JSON.stringify.
  const byRows = async (def: ResourceDef, req: PageRequest) => JSON.stringify(await t.services.resources.page(def, storeId, req));
  const byDatabase = async (def: ResourceDef, req: PageRequest) => (await t.services.resources.listPage(def, storeId, req)).body.toString();

  for (const def of [products, customers]) {
    for (const convention of ['newer', 'older'] as const) {
      it(`${def.name}, ${convention}: every page forward and back is byte for byte the rows' serialisation`, async () => {
        for (const limit of [1, 5, N, N + 3]) {
          const req = (cursor?: string, preCursor?: string): PageRequest => ({ limit, cursor, preCursor, convention });
          let page = await t.services.resources.listPage(def, storeId, req());
          expect(page.body.toString()).toBe(await byRows(def, req()));
          let pages = 1;
          while (page.next !== '') {
            const next = req(page.next);
            page = await t.services.resources.listPage(def, storeId, next);
            expect(page.body.toString()).toBe(await byRows(def, next));
            pages++;
          }
          expect(pages).toBe(Math.max(1, Math.ceil(N / limit)));
          expect(JSON.parse(page.body.toString()).data.length).toBe(N - (pages - 1) * limit);
          // And back from the last page to the first.
          while (page.previous !== null) {
            const back = convention === 'older' ? req(undefined, page.previous) : req(page.previous);
            page = await t.services.resources.listPage(def, storeId, back);
            expect(page.body.toString()).toBe(await byRows(def, back));
          }
          expect(JSON.parse(page.body.toString()).data[0].id).toBe(JSON.parse(await byDatabase(def, req())).data[0].id);
        }
      });
    }
  }

  it('the database writes the page: plain times give a page, not the answer to read rows', async () => {
    const read = (side: 'after' | 'before', from: number | undefined, limit: number) =>
      t.platform.storage.resources.jsonPage('products', { storeId, side, from, limit });
    const first = await read('after', undefined, 5);
    expect(first).toMatchObject({ count: 5, more: true, behind: false });
    const back = await read('before', first!.last! + 1, 3);
    expect(back).toMatchObject({ count: 3, more: true, behind: true, last: first!.last });
    expect(await read('after', first!.last! + 1000, 5)).toMatchObject({ count: 0, objects: '', more: false, behind: true });
  });

  it('an empty store answers an empty page in the same bytes', async () => {
    const empty = await t.services.accounts.createStore({ name: 'jsonempty', ownerEmail: 'e@example.test', ownerPassword: 'pw-pw-pw-pw' });
    for (const convention of ['newer', 'older'] as const) {
      const req: PageRequest = { limit: 10, cursor: undefined, preCursor: undefined, convention };
      const body = (await t.services.resources.listPage(products, empty.id, req)).body.toString();
      expect(body).toBe(JSON.stringify(await t.services.resources.page(products, empty.id, req)));
    }
  });

  it('a time the database would write otherwise than toISOString is answered from the rows', async () => {
    const store = await t.services.accounts.createStore({ name: 'jsonfar', ownerEmail: 'f@example.test', ownerPassword: 'pw-pw-pw-pw' });
    for (const at of [253402300800000, -1]) {
      await t.db.kysely
        .insertInto('customers')
        .values({
          store_id: store.id,
          email: `far${at}@example.test`,
          first_name: 'F',
          last_name: 'L',
          phone: null,
          created_at: at,
          updated_at: 1,
        })
        .execute();
    }
    const req: PageRequest = { limit: 10, cursor: undefined, preCursor: undefined, convention: 'newer' };
    const q = { storeId: store.id, side: 'after' as const, from: undefined, limit: 10 };
    expect(await t.platform.storage.resources.jsonPage('customers', q)).toBeUndefined();
    const body = (await t.services.resources.listPage(customers, store.id, req)).body.toString();
    expect(body).toBe(JSON.stringify(await t.services.resources.page(customers, store.id, req)));
    expect(JSON.parse(body).data.map((c: { created_at: string }) => c.created_at)).toEqual([
      '+010000-01-01T00:00:00.000Z',
      '1969-12-31T23:59:59.999Z',
    ]);
  });

  it('the database writes the fields of toJson, in its order', () => {
    for (const def of [products, customers]) {
      const row = Object.fromEntries(def.jsonFields!.map((f) => [f.column, f.as === 'value' ? 'v' : 1]));
      expect(def.jsonFields!.map((f) => f.key)).toEqual(Object.keys(def.toJson(row)));
    }
  });
});
