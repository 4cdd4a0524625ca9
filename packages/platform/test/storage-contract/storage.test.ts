// The storage contract for the storage as a whole and its accounts: migrating, pinging, transactions and their
// rollback, the change stamp, accounts (merchants, stores, partners) and the per-store lock.
// Every target (storage-targets.ts) gets a database of its own for this file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Storage } from '../../src/storage/ports/storage.ts';
import { openStorage } from '../../src/storage/sql-storage.ts';
import { storageTargets } from '../storage-targets.ts';
import { subscribe } from './queue.ts';
import { NOW, HOUR, DAY, tag, world, product, issue, contractDatabase } from './support.ts';

describe.each(storageTargets('contract-storage'))('storage contract: $name', (target) => {
  const db = contractDatabase(target);
  let s: Storage;

  beforeAll(async () => {
    s = await db.open();
  });

  afterAll(() => db.close());

  describe('storage', () => {
    it('migrate is idempotent and ping answers', async () => {
      expect(await s.migrate()).toEqual([]);
      await expect(s.ping()).resolves.toBeUndefined();
    });

    it('a transaction commits all of its writes and returns what the work returned', async () => {
      const name = tag('tx');
      const result = await s.transaction(async (tx) => {
        const m = await tx.accounts.insertMerchant({ email: `${name}@example.test`, passwordHash: 'hash-1', now: NOW });
        const store = await tx.accounts.insertStore({ name, ownerMerchantId: m.id, now: NOW });
        // The transaction sees its own writes.
        expect(await tx.accounts.findStoreByName(name)).toEqual(store);
        return store.id;
      });
      expect(await s.accounts.findStoreNameById(result)).toBe(name);
    });

    it('everything done in a throwing transaction is rolled back and the error reaches the caller', async () => {
      const w = await world(s);
      const name = tag('tx');
      const failure = new Error('changed my mind');
      let productId = 0;
      await expect(
        s.transaction(async (tx) => {
          const m = await tx.accounts.insertMerchant({ email: `${name}@example.test`, passwordHash: 'hash-1', now: NOW });
          await tx.accounts.insertStore({ name, ownerMerchantId: m.id, now: NOW });
          productId = (await tx.resources.insert('products', product(w.store.id, 1))).id;
          await tx.apps.updateUrls(w.app.id, 'https://changed.example.test/', 'https://changed.example.test/cb');
          await tx.apps.updateInstallation(w.store.id, w.installation.id, { uninstalledAt: NOW });
          await tx.sessions.insertSession({
            idHash: `session-${name}`,
            kind: 'merchant',
            subjectId: m.id,
            storeId: null,
            expiresAt: NOW + HOUR,
            now: NOW,
          });
          await tx.throttles.countAttempt(`key-${name}`, NOW, NOW - HOUR, { max: 5, lockUntil: NOW + HOUR });
          await subscribe(tx, w.store.id, { appId: w.app.id }, 'products/create');
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(productId).toBeGreaterThan(0);
      expect(await s.accounts.findMerchantByEmail(`${name}@example.test`)).toBeUndefined();
      expect(await s.accounts.storeNameTaken(name)).toBe(false);
      expect(await s.resources.exists('products', w.store.id, productId)).toBe(false);
      expect(await s.apps.findById(w.app.id)).toEqual(w.app);
      expect(await s.apps.findInstallation(w.store.id, w.app.id)).toEqual(w.installation);
      expect(await s.sessions.findSession(`session-${name}`)).toBeUndefined();
      expect(await s.throttles.lockedUntil([`key-${name}`])).toEqual([]);
      expect(await s.webhooks.subscriptions().after({ storeId: w.store.id }, undefined, 10)).toEqual([]);
    });

    // The port allows the hot-path lookups to see a transaction's writes while it is open (on SQLite
    // they run on the one connection the transaction holds); once it has rolled back, they see the
    // committed state again, on every dialect.
    it('a rolled-back transaction leaves nothing behind for the hot-path lookups', async () => {
      const w = await world(s);
      await expect(
        s.transaction(async (tx) => {
          await tx.apps.updateSecrets(w.app.id, {
            current: 'secret-uncommitted',
            previous: w.app.client_secret_enc,
            previousExpiresAt: NOW + DAY,
          });
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect((await s.apps.findByClientId(w.app.client_id))?.client_secret_enc).toBe(w.app.client_secret_enc);
    });

    it.runIf(target.dialect === 'sqlite')('changeStamp: a string that stays put without writes and moves after any write', async () => {
      const a = s.changeStamp();
      expect(typeof a).toBe('string');
      expect(s.changeStamp()).toBe(a);
      await s.accounts.findStoreByName('no-such-store');
      expect(s.changeStamp()).toBe(a);

      const w = await world(s);
      const b = s.changeStamp();
      expect(b).not.toBe(a);

      await s.transaction((tx) =>
        tx.sessions.insertSession({
          idHash: tag('stamp'),
          kind: 'merchant',
          subjectId: w.merchantId,
          storeId: null,
          expiresAt: NOW,
          now: NOW,
        }),
      );
      const c = s.changeStamp();
      expect(c).not.toBe(b);

      await issue(s, w);
      const d = s.changeStamp();
      expect(d).not.toBe(c);

      await s.apps.updateUrls(w.app.id, 'https://moved.example.test/', w.app.redirect_uri);
      expect(s.changeStamp()).not.toBe(d);
    });

    it.runIf(target.dialect === 'sqlite' && target.file)(
      'changeStamp: a write by another connection to the same file moves it (after the turn)',
      async () => {
        const other = openStorage(db.config);
        try {
          const before = s.changeStamp();
          await other.accounts.insertMerchant({ email: `${tag('other')}@example.test`, passwordHash: 'hash-1', now: NOW });
          await new Promise<void>((resolve) => setImmediate(resolve));
          expect(s.changeStamp()).not.toBe(before);
        } finally {
          await other.close();
        }
      },
    );

    it.runIf(target.dialect === 'postgres')('changeStamp is undefined on PostgreSQL (nothing may be cached against it)', async () => {
      expect(s.changeStamp()).toBeUndefined();
      await world(s);
      expect(s.changeStamp()).toBeUndefined();
    });

    it.runIf(target.dialect === 'postgres')('ping rejects when the server does not answer', async () => {
      const url = new URL(process.env.TEST_PG_URL!);
      url.port = '1';
      const dead = openStorage({ dialect: 'postgres', url: url.toString() }, { poolSize: 1 });
      try {
        await expect(dead.ping()).rejects.toThrow();
      } finally {
        await dead.close();
      }
    });
  });

  describe('accounts', () => {
    it('merchants and stores: insert, find, name taken; a second store of the same name or merchant of the same email is refused', async () => {
      const name = tag('shop');
      const merchant = await s.accounts.insertMerchant({ email: `${name}@example.test`, passwordHash: 'hash-1', now: NOW });
      expect(merchant).toEqual({ id: expect.any(Number), email: `${name}@example.test`, password_hash: 'hash-1' });
      expect(await s.accounts.findMerchantByEmail(`${name}@example.test`)).toEqual(merchant);
      expect(await s.accounts.findMerchantByEmail(`nobody-${name}@example.test`)).toBeUndefined();
      await expect(s.accounts.insertMerchant({ email: `${name}@example.test`, passwordHash: 'hash-2', now: NOW })).rejects.toThrow();

      const store = await s.accounts.insertStore({ name, ownerMerchantId: merchant.id, now: NOW });
      expect(store).toEqual({ id: expect.any(Number), name, owner_merchant_id: merchant.id });
      expect(await s.accounts.findStoreByName(name)).toEqual(store);
      expect(await s.accounts.findStoreByName(`${name}-missing`)).toBeUndefined();
      expect(await s.accounts.findStoreNameById(store.id)).toBe(name);
      expect(await s.accounts.findStoreNameById(store.id + 100_000)).toBeUndefined();
      expect(await s.accounts.storeNameTaken(name)).toBe(true);
      expect(await s.accounts.storeNameTaken(`${name}-missing`)).toBe(false);
      await expect(s.accounts.insertStore({ name, ownerMerchantId: merchant.id, now: NOW })).rejects.toThrow();
      expect(await s.accounts.findStoreByName(name)).toEqual(store);
    });

    it('partners: insert, find by email (with the hash) and by id; a second partner of the same email is refused', async () => {
      const email = `${tag('partner')}@example.test`;
      const partner = await s.accounts.insertPartner({ email, passwordHash: 'hash-1', now: NOW });
      expect(partner).toEqual({ id: expect.any(Number), email });
      expect(await s.accounts.findPartnerByEmail(email)).toEqual({ id: partner.id, email, password_hash: 'hash-1' });
      expect(await s.accounts.findPartnerById(partner.id)).toEqual(partner);
      expect(await s.accounts.findPartnerById(partner.id + 100_000)).toBeUndefined();
      expect(await s.accounts.findPartnerByEmail(`x-${email}`)).toBeUndefined();
      await expect(s.accounts.insertPartner({ email, passwordHash: 'hash-2', now: NOW })).rejects.toThrow();
      expect(await s.accounts.findPartnerByEmail(email)).toEqual({ id: partner.id, email, password_hash: 'hash-1' });
    });
  });

  describe('store lock', () => {
    it('lockStore: a second transaction locking the same store waits until the first one ends', async () => {
      const w = await world(s);
      const order: string[] = [];
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked = () => {};
      const firstLocked = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const first = s.transaction(async (tx) => {
        await tx.accounts.lockStore(w.store.id);
        order.push('first locked');
        locked();
        await held;
        order.push('first done');
      });
      // (Racing the transaction itself: should it fail before locking, the test fails instead of hanging.)
      await Promise.race([firstLocked, first]);
      const second = s.transaction(async (tx) => {
        await tx.accounts.lockStore(w.store.id);
        order.push('second locked');
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      release();
      await Promise.all([first, second]);
      expect(order).toEqual(['first locked', 'first done', 'second locked']);
    });

    it.runIf(target.dialect === 'postgres')('lockStore does not hold up writes that only reference the store', async () => {
      const w = await world(s);
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked = () => {};
      const firstLocked = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const holder = s.transaction(async (tx) => {
        await tx.accounts.lockStore(w.store.id);
        locked();
        await held;
      });
      await Promise.race([firstLocked, holder]);
      try {
        // A product of the store is written while the lock is held (its foreign key only shares the row).
        const row = await s.resources.insert('products', product(w.store.id, 1));
        expect(row.store_id).toBe(w.store.id);
      } finally {
        release();
        await holder;
      }
    });
  });

  db.routingTest();
});
