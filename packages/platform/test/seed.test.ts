// Seeding (`storegate seed`, the demo store) through the storage's bulk insert, on every database
// and layout: the rows it writes, the ids after it, and a bulk insert that fails part-way.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewRecord } from '../src/storage/ports/bulk-rows.ts';
import {
  api,
  createFixture,
  createTestPlatform,
  DIALECTS_WITH_PARTITIONED,
  privateToken,
  type Fixture,
  type TestPlatform,
} from './harness.ts';

// The digest of what seeding 20,123 products, 130 customers and 150 orders into the first store of
// a fresh database wrote before seeding went through the bulk insert (1,000-row multi-row inserts):
// every column but the id, in id order. The rows are the same whatever way they go in.
const SEEDED_DIGEST = 'bcddad15d547238290579ff998e1cd753e300855fa29fbf558c53be124897f37';

async function digest(t: TestPlatform, storeId: number): Promise<string> {
  const hash = createHash('sha256');
  for (const table of ['products', 'customers', 'orders'] as const) {
    const rows = await t.db.kysely.selectFrom(table).selectAll().where('store_id', '=', storeId).orderBy('id').execute();
    for (const row of rows) {
      const { id: _id, ...rest } = row as Record<string, unknown>;
      hash.update(`${table} ${JSON.stringify(Object.entries(rest).sort(([a], [b]) => a.localeCompare(b)))}\n`);
    }
  }
  return hash.digest('hex');
}

const product = (storeId: number, title: string): NewRecord<'products'> => ({
  store_id: storeId,
  title,
  body_html: '<p>x</p>',
  vendor: 'V',
  product_type: 'T',
  status: 'active',
  price: '1.00',
  sku: title,
  inventory_quantity: 1,
  tags: '',
  created_at: 1,
  updated_at: 1,
});

describe.each(DIALECTS_WITH_PARTITIONED)('seeding on %s', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  let storeId: number;

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off' });
    f = await createFixture(t);
    storeId = (await t.services.accounts.findStoreByName(f.storeName))!.id;
  });
  afterAll(async () => t?.close());

  const count = async (table: 'products' | 'customers' | 'orders') =>
    Number(
      (
        await t.db.kysely
          .selectFrom(table)
          .select((e) => e.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('writes the same rows as before, ids in the order they were made', async () => {
    const progress: string[] = [];
    await t.services.seeds.seed(storeId, { products: 20_123, customers: 130, orders: 150 }, (kind, done) =>
      progress.push(`${kind} ${done}`),
    );
    expect(progress).toEqual(['products 20000', 'products 20123', 'customers 130', 'orders 150']);
    expect(await digest(t, storeId)).toBe(SEEDED_DIGEST);
    const skus = await t.db.kysely.selectFrom('products').select('sku').where('store_id', '=', storeId).orderBy('id').execute();
    expect(skus.map((r) => r.sku)).toEqual(Array.from({ length: 20_123 }, (_, i) => `SKU-${storeId}-${i + 1}`));
    expect(await count('orders')).toBe(150);
  });

  it('a product created through the Admin API afterwards takes the next id', async () => {
    const token = await privateToken(t, f.storeName, 'write_products');
    const last = await t.db.kysely.selectFrom('products').select('id').orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow();
    const made = await api(t, f, token, 'POST', '/openapi/2026-01/products', { title: 'After the seed' });
    expect(made.statusCode).toBe(201);
    expect(Number(made.json().data.id)).toBe(Number(last.id) + 1);
    // And a second seed carries on after it.
    await t.services.seeds.seed(storeId, { products: 3, customers: 0, orders: 0 });
    const ids = await t.db.kysely.selectFrom('products').select('id').orderBy('id', 'desc').limit(4).execute();
    expect(ids.map((r) => Number(r.id))).toEqual([4, 3, 2, 1].map((k) => Number(last.id) + k));
  });

  it('a bulk insert takes text with tabs, newlines, backslashes and nulls as it is', async () => {
    const odd = ['tab\there', 'line\nbreak', 'carriage\rreturn', 'back\\slash', '\\N', '\\t', 'ünïcödé ✓'];
    const before = await count('products');
    expect(
      await t.platform.storage.bulkRows.insert(
        'products',
        odd.map((title) => product(storeId, title)),
      ),
    ).toBe(odd.length);
    const rows = await t.db.kysely
      .selectFrom('products')
      .select('title')
      .where('id', '>', 0)
      .orderBy('id', 'desc')
      .limit(odd.length)
      .execute();
    expect(rows.map((r) => r.title).reverse()).toEqual(odd);
    expect(await count('products')).toBe(before + odd.length);
    const email = `null-phone-${dialect}@example.test`;
    await t.platform.storage.bulkRows.insert('customers', [
      { store_id: storeId, email, first_name: 'A', last_name: 'B', phone: null, created_at: 1, updated_at: 1 },
    ]);
    const customer = await t.db.kysely.selectFrom('customers').select('phone').where('email', '=', email).executeTakeFirstOrThrow();
    expect(customer.phone).toBeNull();
  });

  it('all or nothing: a bulk insert that fails part-way leaves no row, and the next one works', async () => {
    const before = await count('products');
    function* failing() {
      for (let i = 0; i < 500; i++) yield product(storeId, `doomed ${i}`);
      throw new Error('made up');
    }
    await expect(t.platform.storage.bulkRows.insert('products', failing())).rejects.toThrow('made up');
    expect(await count('products')).toBe(before);
    // The database refuses a row (a store that does not exist): nothing of the batch stays.
    const rows = [product(storeId, 'fine'), product(999_999, 'no such store')];
    await expect(t.platform.storage.bulkRows.insert('products', rows)).rejects.toThrow();
    expect(await count('products')).toBe(before);
    expect(await t.platform.storage.bulkRows.insert('products', [product(storeId, 'fine')])).toBe(1);
    expect(await count('products')).toBe(before + 1);
  });
});
