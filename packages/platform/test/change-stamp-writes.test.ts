// SQLite's change stamp (storage/change-stamp.ts) is what lets the Access-Token lookups be reused
// between calls (services/api-auth.ts): every write must move it, also one made outside a
// transaction that returns rows (INSERT … RETURNING), and a write that changes nothing need not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFixture, createTestPlatform, type TestPlatform } from './harness.ts';

describe('change stamp and the writes that move it (SQLite)', () => {
  let t: TestPlatform;
  let storeId: number;
  beforeAll(async () => {
    t = await createTestPlatform('sqlite', { rateLimit: 'off' });
    const f = await createFixture(t);
    storeId = (await t.services.accounts.findStoreByName(f.storeName))!.id;
  });
  afterAll(() => t?.close());

  const product = () => ({
    store_id: storeId,
    title: 'returned',
    body_html: '',
    vendor: '',
    product_type: '',
    status: 'active',
    price: '1.00',
    sku: '',
    inventory_quantity: 0,
    tags: '',
    created_at: 0,
    updated_at: 0,
  });

  it('an INSERT … RETURNING outside a transaction moves the stamp', async () => {
    const before = t.platform.storage.changeStamp();
    await t.db.kysely.insertInto('products').values(product()).returningAll().execute();
    expect(t.platform.storage.changeStamp()).not.toBe(before);
  });

  it('an UPDATE that changes nothing leaves it; one that changes a row moves it', async () => {
    const { id } = await t.db.kysely.insertInto('products').values(product()).returning('id').executeTakeFirstOrThrow();
    const writes = t.db.writes();
    const stamp = t.platform.storage.changeStamp();
    await t.db.kysely.updateTable('products').set({ title: 'never' }).where('id', '=', -1).execute();
    expect(t.db.writes()).toBe(writes);
    expect(t.platform.storage.changeStamp()).toBe(stamp);
    await t.db.kysely.updateTable('products').set({ title: 'renamed' }).where('id', '=', Number(id)).execute();
    expect(t.db.writes()).toBeGreaterThan(writes);
    expect(t.platform.storage.changeStamp()).not.toBe(stamp);
  });
});
