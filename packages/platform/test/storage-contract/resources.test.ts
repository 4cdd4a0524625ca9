// The storage contract for the store records of the Admin API (products, customers, orders): plain and guarded
// writes, unique emails, keyset pages.
// Every target (storage-targets.ts) gets a database of its own for this file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuplicateRecordError } from '../../src/domain/errors.ts';
import type { ResourceRow } from '../../src/storage/ports/rows.ts';
import type { Storage } from '../../src/storage/ports/storage.ts';
import { storageTargets } from '../storage-targets.ts';
import { NOW, world, product, customer, order, contractDatabase } from './support.ts';

describe.each(storageTargets('contract-resources'))('storage contract: $name', (target) => {
  const db = contractDatabase(target);
  let s: Storage;

  beforeAll(async () => {
    s = await db.open();
  });

  afterAll(() => db.close());

  describe('resources', () => {
    it('insert, get, update, delete, exists, always within the store', async () => {
      const w = await world(s);
      const other = await world(s);
      const row = await s.resources.insert('products', product(w.store.id, 7));
      expect(row).toEqual({ id: expect.any(Number), ...product(w.store.id, 7), version: 1 });
      expect(await s.resources.get('products', w.store.id, row.id)).toEqual(row);
      expect(await s.resources.get('products', other.store.id, row.id)).toBeUndefined();
      expect(await s.resources.exists('products', w.store.id, row.id)).toBe(true);
      expect(await s.resources.exists('products', other.store.id, row.id)).toBe(false);
      expect(await s.resources.exists('orders', w.store.id, row.id + 100_000)).toBe(false);

      const updated = await s.resources.update('products', w.store.id, row.id, {
        title: 'Renamed',
        inventory_quantity: 3,
        updated_at: NOW + 1,
      });
      expect(updated).toEqual({ ...row, title: 'Renamed', inventory_quantity: 3, updated_at: NOW + 1, version: 2 });
      expect(await s.resources.update('products', other.store.id, row.id, { title: 'Hijacked' })).toBeUndefined();
      expect(await s.resources.get('products', w.store.id, row.id)).toEqual(updated);

      expect(await s.resources.delete('products', other.store.id, row.id)).toBeUndefined();
      expect(await s.resources.delete('products', w.store.id, row.id)).toEqual(updated);
      expect(await s.resources.get('products', w.store.id, row.id)).toBeUndefined();
      expect(await s.resources.exists('products', w.store.id, row.id)).toBe(false);
      expect(await s.resources.delete('products', w.store.id, row.id)).toBeUndefined();

      const o = await s.resources.insert('orders', order(w.store.id, 'buyer@example.test'));
      expect(await s.resources.get('orders', w.store.id, o.id)).toEqual({
        id: o.id,
        ...order(w.store.id, 'buyer@example.test'),
        version: 1,
      });
    });

    it('a guarded update or delete changes the row only while it holds one of the versions and the inventory quantity', async () => {
      const w = await world(s);
      const row = await s.resources.insert('products', product(w.store.id, 8));
      const qty = Number(row.inventory_quantity);
      expect(await s.resources.update('products', w.store.id, row.id, { title: 'A' }, { versions: [2, 3] })).toBeUndefined();
      expect(await s.resources.update('products', w.store.id, row.id, { title: 'A' }, { versions: [] })).toBeUndefined();
      expect(await s.resources.update('products', w.store.id, row.id, { title: 'A' }, { inventoryQuantity: qty + 1 })).toBeUndefined();
      expect(await s.resources.get('products', w.store.id, row.id)).toEqual(row);
      const changed = await s.resources.update(
        'products',
        w.store.id,
        row.id,
        { title: 'A' },
        { versions: [1, 5], inventoryQuantity: qty },
      );
      expect(changed).toMatchObject({ title: 'A', version: 2 });
      expect(await s.resources.delete('products', w.store.id, row.id, { versions: [1] })).toBeUndefined();
      expect(await s.resources.delete('products', w.store.id, row.id, { versions: [2] })).toEqual(changed);
      const redacted = await s.resources.insert('customers', customer(w.store.id, 'guard@example.test'));
      await s.resources.redactCustomer(w.store.id, redacted.id, 'redacted@example.invalid', NOW + 2);
      expect(await s.resources.get('customers', w.store.id, redacted.id)).toMatchObject({ version: 2 });
    });

    it('customerEmailTaken (per store, except one customer), someCustomers', async () => {
      const w = await world(s);
      const other = await world(s);
      await s.bulkRows.insert('customers', []);
      await s.bulkRows.insert(
        'customers',
        ['c1@example.test', 'c2@example.test', 'c3@example.test'].map((e) => customer(w.store.id, e)),
      );
      const some = await s.resources.someCustomers(w.store.id, 2);
      expect(some.map((c) => c.email)).toEqual(['c1@example.test', 'c2@example.test']);
      expect(some[0]!.id).toBeLessThan(some[1]!.id);
      expect(await s.resources.someCustomers(other.store.id, 5)).toEqual([]);

      const c1 = some[0]!;
      expect(await s.resources.customerEmailTaken(w.store.id, 'c1@example.test', undefined)).toBe(true);
      expect(await s.resources.customerEmailTaken(w.store.id, 'c1@example.test', c1.id)).toBe(false);
      expect(await s.resources.customerEmailTaken(w.store.id, 'c1@example.test', some[1]!.id)).toBe(true);
      expect(await s.resources.customerEmailTaken(w.store.id, 'nobody@example.test', undefined)).toBe(false);
      expect(await s.resources.customerEmailTaken(other.store.id, 'c1@example.test', undefined)).toBe(false);
    });

    it('a customer email is unique per store: insert and update of a taken one throw DuplicateRecordError and change nothing', async () => {
      const w = await world(s);
      const other = await world(s);
      const first = await s.resources.insert('customers', customer(w.store.id, 'same@example.test'));
      const second = await s.resources.insert('customers', customer(w.store.id, 'second@example.test'));
      await expect(s.resources.insert('customers', customer(w.store.id, 'same@example.test'))).rejects.toBeInstanceOf(DuplicateRecordError);
      await expect(
        s.resources.update('customers', w.store.id, second.id, { email: 'same@example.test', updated_at: NOW + 1 }),
      ).rejects.toBeInstanceOf(DuplicateRecordError);
      // Inside a transaction too; the transaction rolls back as a whole.
      await expect(
        s.transaction(async (tx) => {
          await tx.resources.insert('products', product(w.store.id, 1));
          await tx.resources.insert('customers', customer(w.store.id, 'same@example.test'));
        }),
      ).rejects.toBeInstanceOf(DuplicateRecordError);
      expect(await s.resources.page('products').after({ storeId: w.store.id }, undefined, 10)).toEqual([]);
      expect(await s.resources.get('customers', w.store.id, second.id)).toEqual(second);
      expect((await s.resources.page('customers').after({ storeId: w.store.id }, undefined, 10)).map((c) => c.id)).toEqual([
        first.id,
        second.id,
      ]);
      // Another store may have a customer with the same email; a customer may keep its own.
      expect(await s.resources.insert('customers', customer(other.store.id, 'same@example.test'))).toMatchObject({
        email: 'same@example.test',
      });
      expect(
        await s.resources.update('customers', w.store.id, first.id, { email: 'same@example.test', updated_at: NOW + 2 }),
      ).toMatchObject({
        updated_at: NOW + 2,
      });
    });

    it('concurrent inserts of one customer email: exactly one succeeds, the others throw DuplicateRecordError', async () => {
      const w = await world(s);
      const results = await Promise.allSettled(
        Array.from({ length: 4 }, () =>
          s.transaction(async (tx) => {
            if (await tx.resources.customerEmailTaken(w.store.id, 'race@example.test', undefined)) return 'taken';
            return (await tx.resources.insert('customers', customer(w.store.id, 'race@example.test'))).id;
          }),
        ),
      );
      const inserted = results.filter((r) => r.status === 'fulfilled' && typeof r.value === 'number');
      expect(inserted).toHaveLength(1);
      for (const r of results) {
        if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(DuplicateRecordError);
        else if (r !== inserted[0]) expect(r.value).toBe('taken');
      }
      expect(await s.resources.someCustomers(w.store.id, 10)).toHaveLength(1);
    });

    it('keyset pages of products: after, before (descending), window; never another store’s rows', async () => {
      const a = await world(s);
      const b = await world(s);
      // Interleaved inserts, so the two stores' ids interleave too.
      for (let i = 1; i <= 5; i++) {
        await s.resources.insert('products', product(a.store.id, i));
        if (i <= 3) await s.resources.insert('products', product(b.store.id, 100 + i));
      }
      const page = s.resources.page('products');
      const qa = { storeId: a.store.id };
      const all = await page.after(qa, undefined, 100);
      expect(all.map((r) => r.sku)).toEqual(['sku-1', 'sku-2', 'sku-3', 'sku-4', 'sku-5']);
      expect(all.every((r) => r.store_id === a.store.id)).toBe(true);
      const ids = all.map((r) => r.id);

      const first = await page.after(qa, undefined, 2);
      expect(first.map((r) => r.id)).toEqual(ids.slice(0, 2));
      expect(first[0]).toEqual({ id: ids[0], ...product(a.store.id, 1), version: 1 });
      expect((await page.after(qa, ids[1], 2)).map((r) => r.id)).toEqual(ids.slice(2, 4));
      expect((await page.after(qa, ids[3], 2)).map((r) => r.id)).toEqual(ids.slice(4));
      expect(await page.after(qa, ids[4], 2)).toEqual([]);

      expect((await page.before(qa, ids[4]!, 2)).map((r) => r.id)).toEqual([ids[3], ids[2]]);
      expect((await page.before(qa, ids[1]!, 10)).map((r) => r.id)).toEqual([ids[0]]);
      expect(await page.before(qa, ids[0]!, 10)).toEqual([]);

      // A page and whether rows lie on the other side of its cursor, `from` included.
      expect(await page.window(qa, 'after', ids[1]!, 2)).toEqual({ rows: [all[2], all[3]], behind: true });
      expect(await page.window(qa, 'after', ids[0]! - 1, 10)).toEqual({ rows: all, behind: false });
      expect(await page.window(qa, 'after', ids[4]!, 2)).toEqual({ rows: [], behind: true });
      expect(await page.window(qa, 'before', ids[4]!, 2)).toEqual({ rows: [all[3], all[2]], behind: true });
      expect(await page.window(qa, 'before', ids[4]! + 1, 10)).toEqual({ rows: [...all].reverse(), behind: false });
      expect(await page.window(qa, 'before', ids[0]!, 2)).toEqual({ rows: [], behind: true });
      expect(await page.window({ storeId: b.store.id }, 'after', ids[4]!, 10)).toEqual({ rows: [], behind: true });
      expect((await page.window({ storeId: b.store.id }, 'before', ids[0]!, 10)).rows).toEqual([]);

      const bRows = await page.after({ storeId: b.store.id }, undefined, 100);
      expect(bRows.map((r) => r.sku)).toEqual(['sku-101', 'sku-102', 'sku-103']);
      // A cursor taken from store A reveals nothing of store A in store B's pages.
      const bFromA = await page.after({ storeId: b.store.id }, ids[0], 100);
      expect(bFromA.every((r: ResourceRow) => r.store_id === b.store.id)).toBe(true);
    });

    it('keyset pages of customers and orders, with an equality filter', async () => {
      const w = await world(s);
      await s.bulkRows.insert('customers', [
        customer(w.store.id, 'k1@example.test'),
        { ...customer(w.store.id, 'k2@example.test'), first_name: 'Grace' },
        customer(w.store.id, 'k3@example.test'),
      ]);
      await s.bulkRows.insert('orders', [order(w.store.id, 'o1@example.test'), order(w.store.id, 'o2@example.test')]);
      const customers = await s.resources.page('customers').after({ storeId: w.store.id, where: { first_name: 'Ada' } }, undefined, 10);
      expect(customers.map((c) => c.email)).toEqual(['k1@example.test', 'k3@example.test']);
      const orders = await s.resources.page('orders').after({ storeId: w.store.id }, undefined, 10);
      expect(orders.map((o) => o.email)).toEqual(['o1@example.test', 'o2@example.test']);
      const o2 = { storeId: w.store.id, where: { email: 'o2@example.test' } };
      expect((await s.resources.page('orders').window(o2, 'before', orders[1]!.id, 10)).rows).toEqual([]);
    });
  });

  db.routingTest();
});
