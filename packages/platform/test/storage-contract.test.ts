import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseConfig } from '../src/config.ts';
import { DuplicateRecordError } from '../src/domain/errors.ts';
import type { WebhookTopic } from '../src/domain/webhook-topics.ts';
import type {
  AppRow,
  ClaimedDelivery,
  CodeRedemption,
  DeliveryOutcome,
  InstallationRow,
  NewApp,
  NewCode,
  NewTokenPair,
  RefreshRotation,
  Repositories,
  ResourceRow,
  Storage,
  StoreRow,
  SubscriptionRow,
} from '../src/storage/ports.ts';
import { MIGRATIONS } from '../src/storage/migrate.ts';
import type { NewRecord } from '../src/storage/ports/bulk-rows.ts';
import { openStorage } from '../src/storage/sql-storage.ts';
import { storageTargets } from './storage-targets.ts';
import { recordingStorage, unroutedQueries, type RecordingStorage } from './partition-routing.ts';

const NOW = Date.UTC(2026, 10, 22);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Later than any time a test uses: claiming at FAR sees every pending delivery. */
const FAR = NOW + 3650 * DAY;

const TARGETS = storageTargets('contract');

// Names, hashes and ids unique within one database: a plain counter, so runs are repeatable.
let seq = 0;
const tag = (prefix: string) => `${prefix}-${++seq}`;

interface World {
  name: string;
  merchantId: number;
  store: StoreRow;
  partnerId: number;
  app: AppRow;
  installation: InstallationRow;
}

function newApp(name: string, partnerId: number | null): NewApp {
  return {
    client_id: `client-${name}`,
    partner_id: partnerId,
    name: `App ${name}`,
    app_url: `https://${name}.example.test/`,
    redirect_uri: `https://${name}.example.test/callback`,
    scopes: 'read_products',
    client_secret_enc: `secret-${name}`,
    created_at: NOW,
  };
}

/** A merchant with a store, a partner with an app, and the app installed in the store. */
async function world(s: Storage): Promise<World> {
  const name = tag('w');
  const merchant = await s.accounts.insertMerchant({ email: `${name}@merchant.test`, passwordHash: 'hash-merchant', now: NOW });
  const store = await s.accounts.insertStore({ name, ownerMerchantId: merchant.id, now: NOW });
  const partner = await s.accounts.insertPartner({ email: `${name}@partner.test`, passwordHash: 'hash-partner', now: NOW });
  const app = await s.apps.insertApp(newApp(name, partner.id));
  const installation = await s.apps.insertInstallation({ storeId: store.id, appId: app.id, scopes: 'read_products', now: NOW });
  return { name, merchantId: merchant.id, store, partnerId: partner.id, app, installation };
}

/** Another app of the world's partner, installed in the world's store. */
async function secondApp(s: Storage, w: World): Promise<{ app: AppRow; installation: InstallationRow }> {
  const app = await s.apps.insertApp(newApp(tag('app'), w.partnerId));
  const installation = await s.apps.insertInstallation({ storeId: w.store.id, appId: app.id, scopes: 'read_products', now: NOW });
  return { app, installation };
}

function product(storeId: number, i: number): Record<string, unknown> {
  return {
    store_id: storeId,
    title: `Product ${i}`,
    body_html: '<p>x</p>',
    vendor: 'Vendor',
    product_type: 'Thing',
    status: 'active',
    price: '19.99',
    sku: `sku-${i}`,
    inventory_quantity: i,
    tags: 'a,b',
    created_at: NOW,
    updated_at: NOW,
  };
}

function customer(storeId: number, email: string): NewRecord<'customers'> {
  return { store_id: storeId, email, first_name: 'Ada', last_name: 'Lovelace', phone: null, created_at: NOW, updated_at: NOW };
}

function order(storeId: number, email: string): NewRecord<'orders'> {
  return {
    store_id: storeId,
    customer_id: null,
    email,
    currency: 'EUR',
    financial_status: 'paid',
    fulfillment_status: null,
    total_price: '10.00',
    line_items: '[]',
    created_at: NOW,
    updated_at: NOW,
  };
}

function newCode(w: World, codeHash: string): NewCode {
  return {
    codeHash,
    appId: w.app.id,
    storeId: w.store.id,
    installationId: w.installation.id,
    redirectUri: w.app.redirect_uri,
    scopes: 'read_products',
    codeChallenge: 'challenge-1',
    expiresAt: NOW + MINUTE,
    now: NOW,
  };
}

function pair(w: World, n: string): NewTokenPair {
  return {
    familyId: `family-${n}`,
    installationId: w.installation.id,
    storeId: w.store.id,
    appId: w.app.id,
    scopes: 'read_products',
    accessHash: `access-${n}`,
    refreshHash: `refresh-${n}`,
    accessExpiresAt: NOW + HOUR,
    refreshExpiresAt: NOW + 30 * DAY,
    now: NOW,
  };
}

/** A token family with one access/refresh pair, issued by a grant. */
async function issue(s: Storage, w: World): Promise<NewTokenPair> {
  const p = pair(w, tag('t'));
  await s.grants.run(async (q) => {
    await q.insertFamily(w.store.id, p.familyId, p.installationId, NOW);
    await q.insertPair(p);
  });
  return p;
}

/** The client of `app`, approved on that row (the contract does not judge secrets). */
const approvedClient = (app: AppRow) => ({ lookupId: app.client_id, approved: app });

async function rotate(s: Storage, app: AppRow, r: RefreshRotation): Promise<{ scopes: string } | undefined> {
  const outcome = await s.grants.rotateRefresh(approvedClient(app), r);
  expect(outcome).toMatchObject({ ran: true, app: { id: app.id } });
  return outcome.ran ? outcome.granted : undefined;
}

async function redeem(s: Storage, app: AppRow, r: CodeRedemption) {
  const outcome = await s.grants.redeemCode(approvedClient(app), r);
  expect(outcome).toMatchObject({ ran: true, app: { id: app.id } });
  return outcome.ran ? outcome.granted : undefined;
}

type Owner = { appId: number } | { privateAppId: number };

function subscribe(
  r: Repositories,
  storeId: number,
  owner: Owner,
  topic: WebhookTopic,
  address = `https://hooks.example.test/${tag('h')}`,
): Promise<SubscriptionRow> {
  const isApp = 'appId' in owner;
  return r.webhooks.insertSubscription({
    store_id: storeId,
    owner: isApp ? `app:${owner.appId}` : `private:${owner.privateAppId}`,
    app_id: isApp ? owner.appId : null,
    private_app_id: isApp ? null : owner.privateAppId,
    topic,
    address,
    api_version: '2026-01',
    created_at: NOW,
    updated_at: NOW,
  });
}

/** Writes an event with one delivery per subscription given; returns the event id. */
async function enqueue(
  r: Repositories,
  storeId: number,
  topic: WebhookTopic,
  subs: readonly SubscriptionRow[],
  now: number,
): Promise<string> {
  const id = tag('evt');
  await r.webhooks.insertEvent(
    { id, storeId, topic, payload: `{"event":"${id}"}`, now },
    subs.map((sub) => ({ subscriptionId: sub.id, appId: sub.app_id, privateAppId: sub.private_app_id, webhookId: `wh-${id}-${sub.id}` })),
  );
  return id;
}

/** The delivery ids of an event, ascending. */
async function deliveriesOf(s: Storage, storeId: number, eventId: string): Promise<number[]> {
  const rows = await s.webhooks.listDeliveries({ storeId, limit: 1000 });
  return rows
    .filter((r) => r.event_id === eventId)
    .map((r) => r.id)
    .sort((a, b) => a - b);
}

async function delivery(s: Storage, id: number) {
  const [row] = await s.webhooks.listDeliveries({ id, limit: 1 });
  if (!row) throw new Error(`no delivery ${id}`);
  return row;
}

function claim(
  s: Storage,
  worker: string,
  now: number,
  options: { limit?: number; exclude?: number[]; leaseMs?: number } = {},
): Promise<ClaimedDelivery[]> {
  return s.deliveryQueue.claim({
    worker,
    now,
    leaseUntil: now + (options.leaseMs ?? MINUTE),
    limit: options.limit ?? 100,
    excludeSubscriptions: options.exclude ?? [],
  });
}

type Next = Extract<DeliveryOutcome, { attempt: unknown }>['next'];

function attempted(
  c: ClaimedDelivery,
  at: number,
  next: Next,
  result: { status?: number | null; error?: string | null; body?: string | null } = {},
): DeliveryOutcome {
  return {
    id: c.id,
    storeId: Number(c.store_id),
    subscriptionId: c.subscription_id,
    attempts: c.attempts,
    attempt: {
      attemptedAt: at,
      status: result.status === undefined ? 200 : result.status,
      latencyMs: 12,
      responseBody: result.body ?? null,
      error: result.error ?? null,
    },
    next,
  };
}

/** Ends every pending delivery of the shared database, so a queue test sees only its own. */
async function drain(s: Storage): Promise<void> {
  for (;;) {
    const rows = await claim(s, 'drain', FAR, { limit: 500 });
    if (rows.length === 0) return;
    await s.deliveryQueue.recordOutcomes(
      rows.map((r) => ({
        id: r.id,
        storeId: Number(r.store_id),
        subscriptionId: r.subscription_id,
        attempts: r.attempts,
        cancelled: 'drained',
      })),
      { worker: 'drain', now: FAR, disableAfterDead: 5 },
    );
  }
}

describe.each(TARGETS)('storage contract: $name', (target) => {
  let s: Storage;
  let config: DatabaseConfig;
  let cleanup: () => Promise<void>;

  let recording: RecordingStorage | undefined;

  beforeAll(async () => {
    const db = await target.database();
    config = db.config;
    cleanup = db.cleanup;
    // On the partitioned layout every query is recorded, so the last test can check its routing.
    recording = target.partitions && config.dialect === 'postgres' ? recordingStorage(config.url) : undefined;
    s = recording ? recording.storage : openStorage(config, { poolSize: 10 });
    expect(await s.migrate({ partitions: target.partitions })).toHaveLength(Object.keys(MIGRATIONS).length);
  });

  afterAll(async () => {
    await (recording ? recording.close() : s?.close());
    await cleanup?.();
  });

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
        const other = openStorage(config);
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

  describe('sessions', () => {
    it('insert, find, delete', async () => {
      const w = await world(s);
      const merchantHash = tag('session-hash');
      const partnerHash = tag('session-hash');
      await s.sessions.insertSession({
        idHash: merchantHash,
        kind: 'merchant',
        subjectId: w.merchantId,
        storeId: w.store.id,
        expiresAt: NOW + HOUR,
        now: NOW,
      });
      await s.sessions.insertSession({
        idHash: partnerHash,
        kind: 'partner',
        subjectId: w.partnerId,
        storeId: null,
        expiresAt: NOW + DAY,
        now: NOW,
      });
      expect(await s.sessions.findSession(merchantHash)).toEqual({
        kind: 'merchant',
        subject_id: w.merchantId,
        store_id: w.store.id,
        expires_at: NOW + HOUR,
      });
      expect(await s.sessions.findSession(partnerHash)).toEqual({
        kind: 'partner',
        subject_id: w.partnerId,
        store_id: null,
        expires_at: NOW + DAY,
      });
      expect(await s.sessions.findSession('session-hash-unknown')).toBeUndefined();
      await s.sessions.deleteSession(merchantHash);
      expect(await s.sessions.findSession(merchantHash)).toBeUndefined();
      expect(await s.sessions.findSession(partnerHash)).toBeDefined();
      await expect(s.sessions.deleteSession(merchantHash)).resolves.toBeUndefined();
    });
  });

  describe('throttles', () => {
    const WINDOW = 15 * MINUTE;
    /** Generous limit: these tests are about counting, not locking. */
    const LOOSE = { max: 1000, lockUntil: NOW + DAY };
    const count = (key: string, now: number, limit = LOOSE) => s.throttles.countAttempt(key, now, now - WINDOW, limit);

    it('counts attempts up; concurrent attempts on one key each get their own number', async () => {
      const key = tag('acct');
      expect(await count(key, NOW)).toEqual({ attempts: 1, windowStartedAt: NOW, lockedUntil: null });
      expect(await count(key, NOW + 1)).toEqual({ attempts: 2, windowStartedAt: NOW, lockedUntil: null });

      const hot = tag('addr');
      const results = await Promise.all(Array.from({ length: 10 }, () => count(hot, NOW)));
      expect(results.map((r) => r.attempts).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(await count(hot, NOW)).toEqual({ attempts: 11, windowStartedAt: NOW, lockedUntil: null });
    });

    it('the attempt that goes over the limit locks the key in the same step; a burst locks exactly once', async () => {
      const key = tag('limit');
      const limit = { max: 3, lockUntil: NOW + 15 * MINUTE };
      for (const n of [1, 2, 3]) expect(await count(key, NOW, limit)).toEqual({ attempts: n, windowStartedAt: NOW, lockedUntil: null });
      expect(await count(key, NOW + 1, { max: 3, lockUntil: NOW + 1 + 15 * MINUTE })).toEqual({
        attempts: 4,
        windowStartedAt: NOW,
        lockedUntil: NOW + 1 + 15 * MINUTE,
      });
      // Later attempts keep the lock they found (it is not pushed back).
      expect(await count(key, NOW + 2, { max: 3, lockUntil: NOW + 2 + 15 * MINUTE })).toEqual({
        attempts: 5,
        windowStartedAt: NOW,
        lockedUntil: NOW + 1 + 15 * MINUTE,
      });

      const hot = tag('burst');
      const burst = await Promise.all(Array.from({ length: 25 }, () => count(hot, NOW, { max: 5, lockUntil: NOW + 15 * MINUTE })));
      const sorted = [...burst].sort((a, b) => a.attempts - b.attempts);
      expect(sorted.map((r) => r.attempts)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
      // Exactly the first five were under the limit; every later one saw the lock.
      expect(sorted.filter((r) => r.lockedUntil === null).map((r) => r.attempts)).toEqual([1, 2, 3, 4, 5]);
      expect(sorted.slice(5).every((r) => r.lockedUntil === NOW + 15 * MINUTE)).toBe(true);
      expect(await s.throttles.lockedUntil([hot])).toEqual([NOW + 15 * MINUTE]);

      // A limit of 0 locks on the first attempt.
      expect(await count(tag('zero'), NOW, { max: 0, lockUntil: NOW + MINUTE })).toEqual({
        attempts: 1,
        windowStartedAt: NOW,
        lockedUntil: NOW + MINUTE,
      });
    });

    it('a count whose window started at or before the window start begins again at 1', async () => {
      const key = tag('window');
      await count(key, NOW);
      await count(key, NOW + MINUTE);
      // The window began at NOW; a window starting at NOW + 1 no longer includes it.
      expect(await count(key, NOW + WINDOW + 1)).toEqual({ attempts: 1, windowStartedAt: NOW + WINDOW + 1, lockedUntil: null });
      expect(await count(key, NOW + WINDOW + 2)).toEqual({ attempts: 2, windowStartedAt: NOW + WINDOW + 1, lockedUntil: null });
    });

    it('lock, lockedUntil, a lock that ended restarts the count', async () => {
      const key = tag('lock');
      const other = tag('other');
      await count(key, NOW);
      await count(other, NOW);
      await s.throttles.lock(key, NOW + 5 * MINUTE);
      expect(await s.throttles.lockedUntil([key])).toEqual([NOW + 5 * MINUTE]);
      expect(await s.throttles.lockedUntil([other])).toEqual([null]);
      expect(await s.throttles.lockedUntil([tag('unknown')])).toEqual([]);
      expect((await s.throttles.lockedUntil([key, other, tag('unknown')])).sort()).toEqual([NOW + 5 * MINUTE, null].sort());

      // Still locked: the attempt is counted and the lock stays.
      expect(await count(key, NOW + MINUTE)).toEqual({ attempts: 2, windowStartedAt: NOW, lockedUntil: NOW + 5 * MINUTE });
      // The lock has ended: a fresh count, no lock.
      expect(await count(key, NOW + 6 * MINUTE)).toEqual({ attempts: 1, windowStartedAt: NOW + 6 * MINUTE, lockedUntil: null });
      expect(await s.throttles.lockedUntil([key])).toEqual([null]);
    });

    it('clearIfUnchanged drops a count no attempt has moved on from, and keeps one that has', async () => {
      const key = tag('clear');
      await count(key, NOW);
      const mine = await count(key, NOW + 1);
      await s.throttles.clearIfUnchanged(key, mine);
      expect(await s.throttles.lockedUntil([key])).toEqual([]);
      expect(await count(key, NOW + 2)).toEqual({ attempts: 1, windowStartedAt: NOW + 2, lockedUntil: null });

      // Another attempt came after mine: the count stays.
      const busy = tag('busy');
      const first = await count(busy, NOW);
      await count(busy, NOW);
      await s.throttles.clearIfUnchanged(busy, first);
      expect(await count(busy, NOW)).toEqual({ attempts: 3, windowStartedAt: NOW, lockedUntil: null });
      // The same number in another window is not the same count.
      await s.throttles.clearIfUnchanged(busy, { attempts: 3, windowStartedAt: NOW - 1 });
      expect(await count(busy, NOW)).toEqual({ attempts: 4, windowStartedAt: NOW, lockedUntil: null });
      await s.throttles.clearIfUnchanged(tag('unknown'), { attempts: 1, windowStartedAt: NOW });
    });

    it('uncount takes one attempt off its own window only, never below 0, and keeps a lock', async () => {
      const key = tag('uncount');
      await count(key, NOW);
      const second = await count(key, NOW);
      await s.throttles.uncount(key, second.windowStartedAt);
      expect(await count(key, NOW)).toEqual({ attempts: 2, windowStartedAt: NOW, lockedUntil: null });
      await s.throttles.uncount(key, NOW - 1);
      expect(await count(key, NOW)).toEqual({ attempts: 3, windowStartedAt: NOW, lockedUntil: null });

      const once = tag('uncount-once');
      await count(once, NOW);
      await s.throttles.uncount(once, NOW);
      await s.throttles.uncount(once, NOW);
      expect(await count(once, NOW)).toEqual({ attempts: 1, windowStartedAt: NOW, lockedUntil: null });

      const locked = tag('uncount-locked');
      await count(locked, NOW);
      await s.throttles.lock(locked, NOW + MINUTE);
      await s.throttles.uncount(locked, NOW);
      expect(await s.throttles.lockedUntil([locked])).toEqual([NOW + MINUTE]);
      await s.throttles.uncount(tag('unknown'), NOW);
    });

    it('lockedUntil of no keys is empty', async () => {
      expect(await s.throttles.lockedUntil([])).toEqual([]);
    });

    it('prune drops counts whose window is old and whose lock (if any) has ended', async () => {
      // Times far before the other throttle tests, so pruning here only touches these keys.
      const t0 = NOW - 10 * DAY;
      const oldUnlocked = tag('old');
      const oldLockEnded = tag('old-lock-ended');
      const oldStillLocked = tag('old-locked');
      const recent = tag('recent');
      for (const key of [oldUnlocked, oldLockEnded, oldStillLocked]) await s.throttles.countAttempt(key, t0, t0 - WINDOW, LOOSE);
      await s.throttles.lock(oldLockEnded, t0 + MINUTE);
      await s.throttles.lock(oldStillLocked, t0 + 2 * DAY);
      await s.throttles.countAttempt(recent, t0 + DAY, t0 + DAY - WINDOW, LOOSE);

      await s.throttles.prune(t0 + DAY - WINDOW, t0 + DAY);
      expect(await s.throttles.lockedUntil([oldUnlocked])).toEqual([]);
      expect(await s.throttles.lockedUntil([oldLockEnded])).toEqual([]);
      expect(await s.throttles.lockedUntil([oldStillLocked])).toEqual([t0 + 2 * DAY]);
      expect(await s.throttles.lockedUntil([recent])).toEqual([null]);
    });
  });

  describe('reveals', () => {
    it('put, then take once; another session gets nothing', async () => {
      const id = tag('reveal-hash');
      await s.reveals.put({ idHash: id, sessionHash: 'session-hash-a', payloadEnc: 'sealed-1', expiresAt: NOW + MINUTE, now: NOW });
      expect(await s.reveals.take(id, 'session-hash-b')).toBeUndefined();
      expect(await s.reveals.take(tag('reveal-hash'), 'session-hash-a')).toBeUndefined();
      expect(await s.reveals.take(id, 'session-hash-a')).toEqual({ payload_enc: 'sealed-1', expires_at: NOW + MINUTE });
      expect(await s.reveals.take(id, 'session-hash-a')).toBeUndefined();
    });

    it('concurrent takes of one reveal: exactly one gets it', async () => {
      const id = tag('reveal-hash');
      await s.reveals.put({ idHash: id, sessionHash: 'session-hash-a', payloadEnc: 'sealed-2', expiresAt: NOW + MINUTE, now: NOW });
      const taken = await Promise.all(Array.from({ length: 5 }, () => s.reveals.take(id, 'session-hash-a')));
      expect(taken.filter((t) => t !== undefined)).toEqual([{ payload_enc: 'sealed-2', expires_at: NOW + MINUTE }]);
    });
  });

  describe('apps', () => {
    it('insertApp, findByClientId, findById, listApps, listPartnerApps; a duplicate client id is refused', async () => {
      const w = await world(s);
      const name = tag('app');
      const app = await s.apps.insertApp(newApp(name, w.partnerId));
      const { created_at: _created, ...fields } = newApp(name, w.partnerId);
      expect(app).toEqual({
        id: expect.any(Number),
        ...fields,
        previous_secret_enc: null,
        previous_secret_expires_at: null,
        privacy_webhook_url: null,
        authorization_iss: 0,
        managed_install: 0,
        webhook_signature_ed25519: 0,
      });
      expect(await s.apps.findByClientId(app.client_id)).toEqual(app);
      expect((await s.apps.insertApp({ ...newApp(tag('app'), null), authorization_iss: 1 })).authorization_iss).toBe(1);
      expect(await s.apps.findByClientId('client-unknown')).toBeUndefined();
      expect(await s.apps.findById(app.id)).toEqual(app);
      expect(await s.apps.findById(app.id + 100_000)).toBeUndefined();

      const unowned = await s.apps.insertApp(newApp(tag('app'), null));
      const all = await s.apps.listApps();
      expect(all.map((a) => a.id)).toEqual([...all.map((a) => a.id)].sort((a, b) => a - b));
      expect(all.filter((a) => [w.app.id, app.id, unowned.id].includes(a.id))).toEqual([w.app, app, unowned]);
      expect(await s.apps.listPartnerApps(w.partnerId)).toEqual([w.app, app]);
      expect(await s.apps.listPartnerApps(w.partnerId + 100_000)).toEqual([]);

      await expect(s.apps.insertApp(newApp(name, null))).rejects.toThrow();
    });

    it('updateAuthorizationIss turns it on and off for that app only', async () => {
      const w = await world(s);
      const other = await s.apps.insertApp(newApp(tag('app'), null));
      await s.apps.updateAuthorizationIss(w.app.id, true);
      expect(await s.apps.findByClientId(w.app.client_id)).toEqual({ ...w.app, authorization_iss: 1 });
      expect(await s.apps.findById(other.id)).toEqual(other);
      await s.apps.updateAuthorizationIss(w.app.id, false);
      expect(await s.apps.findById(w.app.id)).toEqual({ ...w.app, authorization_iss: 0 });
    });

    it('updateProfile changes name and scopes of that app only', async () => {
      const w = await world(s);
      const other = await s.apps.insertApp(newApp(tag('app'), null));
      await s.apps.updateProfile(w.app.id, { name: 'Renamed', scopes: 'read_orders,read_products' });
      expect(await s.apps.findByClientId(w.app.client_id)).toEqual({ ...w.app, name: 'Renamed', scopes: 'read_orders,read_products' });
      expect(await s.apps.findById(other.id)).toEqual(other);
    });

    it('updateUrls and updateSecrets', async () => {
      const w = await world(s);
      await s.apps.updateUrls(w.app.id, 'https://new.example.test/', 'https://new.example.test/cb');
      await s.apps.updateSecrets(w.app.id, { current: 'secret-2', previous: w.app.client_secret_enc, previousExpiresAt: NOW + DAY });
      const expected = {
        ...w.app,
        app_url: 'https://new.example.test/',
        redirect_uri: 'https://new.example.test/cb',
        client_secret_enc: 'secret-2',
        previous_secret_enc: w.app.client_secret_enc,
        previous_secret_expires_at: NOW + DAY,
      };
      expect(await s.apps.findById(w.app.id)).toEqual(expected);
      expect(await s.apps.findByClientId(w.app.client_id)).toEqual(expected);
      await s.apps.updateSecrets(w.app.id, { current: 'secret-3', previous: null, previousExpiresAt: null });
      expect(await s.apps.findByClientId(w.app.client_id)).toEqual({
        ...expected,
        client_secret_enc: 'secret-3',
        previous_secret_enc: null,
        previous_secret_expires_at: null,
      });
    });

    it('installations: insert, find, update, listInstalled (uninstalled apps are not listed); one per store and app', async () => {
      const w = await world(s);
      expect(w.installation).toEqual({
        id: expect.any(Number),
        store_id: w.store.id,
        app_id: w.app.id,
        scopes: 'read_products',
        uninstalled_at: null,
      });
      expect(await s.apps.findInstallation(w.store.id, w.app.id)).toEqual(w.installation);
      const two = await secondApp(s, w);
      expect(await s.apps.findInstallation(w.store.id, two.app.id + 100_000)).toBeUndefined();
      await expect(s.apps.insertInstallation({ storeId: w.store.id, appId: w.app.id, scopes: 'read_orders', now: NOW })).rejects.toThrow();

      await s.apps.updateInstallation(w.store.id, w.installation.id, { scopes: 'read_products,write_products' });
      expect((await s.apps.listInstalled(w.store.id)).sort((a, b) => a.app_id - b.app_id)).toEqual([
        { app_id: w.app.id, client_id: w.app.client_id, name: w.app.name, scopes: 'read_products,write_products', installed_at: NOW },
        { app_id: two.app.id, client_id: two.app.client_id, name: two.app.name, scopes: 'read_products', installed_at: NOW },
      ]);

      await s.apps.updateInstallation(w.store.id, two.installation.id, { uninstalledAt: NOW + MINUTE });
      expect((await s.apps.findInstallation(w.store.id, two.app.id))?.uninstalled_at).toBe(NOW + MINUTE);
      expect((await s.apps.listInstalled(w.store.id)).map((a) => a.app_id)).toEqual([w.app.id]);

      // Installing again: the same row, back in the list with the new install time.
      await s.apps.updateInstallation(w.store.id, two.installation.id, {
        uninstalledAt: null,
        installedAt: NOW + HOUR,
        scopes: 'read_orders',
      });
      expect((await s.apps.listInstalled(w.store.id)).find((a) => a.app_id === two.app.id)).toEqual({
        app_id: two.app.id,
        client_id: two.app.client_id,
        name: two.app.name,
        scopes: 'read_orders',
        installed_at: NOW + HOUR,
      });
      expect(await s.apps.listInstalled(w.store.id + 100_000)).toEqual([]);
    });

    it('private apps: insert, list newest first, find, revoke once and only in their own store', async () => {
      const w = await world(s);
      const elsewhere = await world(s);
      const first = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'Sync',
        scopes: 'read_orders',
        tokenHash: tag('private-hash'),
        webhookSecretEnc: 'sealed-a',
        now: NOW,
      });
      const second = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'Report',
        scopes: 'read_products',
        tokenHash: tag('private-hash'),
        webhookSecretEnc: 'sealed-b',
        now: NOW + 1,
      });
      expect(await s.apps.listPrivateApps(w.store.id)).toEqual([
        {
          id: second,
          name: 'Report',
          scopes: 'read_products',
          created_at: NOW + 1,
          revoked_at: null,
          previous_webhook_secret_expires_at: null,
        },
        { id: first, name: 'Sync', scopes: 'read_orders', created_at: NOW, revoked_at: null, previous_webhook_secret_expires_at: null },
      ]);
      expect(await s.apps.listPrivateApps(elsewhere.store.id)).toEqual([]);
      expect(await s.apps.findPrivateApp(w.store.id, first)).toEqual({
        id: first,
        store_id: w.store.id,
        webhook_secret_enc: 'sealed-a',
        revoked_at: null,
      });
      expect(await s.apps.findPrivateApp(w.store.id, second + 100_000)).toBeUndefined();

      expect(await s.apps.revokePrivateApp(elsewhere.store.id, first, NOW + 2)).toBe(false);
      expect(await s.apps.revokePrivateApp(w.store.id, first, NOW + 3)).toBe(true);
      expect(await s.apps.revokePrivateApp(w.store.id, first, NOW + 4)).toBe(false);
      expect(await s.apps.findPrivateApp(w.store.id, first)).toEqual({
        id: first,
        store_id: w.store.id,
        webhook_secret_enc: 'sealed-a',
        revoked_at: NOW + 3,
      });
      expect((await s.apps.listPrivateApps(w.store.id)).map((p) => p.revoked_at)).toEqual([null, NOW + 3]);
    });

    it('countActivePrivateApps counts a store’s private apps that are not revoked', async () => {
      const w = await world(s);
      const elsewhere = await world(s);
      const add = (storeId: number) =>
        s.apps.insertPrivateApp({
          storeId,
          name: 'P',
          scopes: 'read_products',
          tokenHash: tag('private-hash'),
          webhookSecretEnc: 'x',
          now: NOW,
        });
      expect(await s.apps.countActivePrivateApps(w.store.id)).toBe(0);
      const first = await add(w.store.id);
      await add(w.store.id);
      await add(elsewhere.store.id);
      expect(await s.apps.countActivePrivateApps(w.store.id)).toBe(2);
      await s.apps.revokePrivateApp(w.store.id, first, NOW + 1);
      expect(await s.apps.countActivePrivateApps(w.store.id)).toBe(1);
      expect(await s.apps.countActivePrivateApps(elsewhere.store.id)).toBe(1);
    });
  });

  describe('tokens and grants', () => {
    it('codes: codeByHash, claimCode true once then false', async () => {
      const w = await world(s);
      const hash = tag('code-hash');
      await s.tokens.insertCode(newCode(w, hash));
      const code = {
        app_id: w.app.id,
        store_id: w.store.id,
        installation_id: w.installation.id,
        redirect_uri: w.app.redirect_uri,
        scopes: 'read_products',
        code_challenge: 'challenge-1',
        expires_at: NOW + MINUTE,
        used_at: null,
        family_id: null,
        merchant_id: null,
      };
      expect(await s.grants.run((q) => q.codeByHash(w.store.id, hash))).toEqual(code);
      expect(await s.grants.run((q) => q.codeByHash(w.store.id, 'code-hash-unknown'))).toBeUndefined();
      expect(await s.grants.run((q) => q.claimCode(w.store.id, hash, 'family-a', NOW + 1))).toBe(true);
      expect(await s.grants.run((q) => q.claimCode(w.store.id, hash, 'family-b', NOW + 2))).toBe(false);
      expect(await s.grants.run((q) => q.codeByHash(w.store.id, hash))).toEqual({ ...code, used_at: NOW + 1, family_id: 'family-a' });
      expect(await s.grants.run((q) => q.installation(w.store.id, w.installation.id))).toEqual({
        id: w.installation.id,
        uninstalled_at: null,
        scopes: 'read_products',
      });
      // The scopes as they are at this moment, not as they were when the code was issued.
      await s.apps.updateInstallation(w.store.id, w.installation.id, { scopes: 'read_orders' });
      expect((await s.grants.run((q) => q.installation(w.store.id, w.installation.id)))?.scopes).toBe('read_orders');
      expect(await s.grants.run((q) => q.installation(w.store.id, w.installation.id + 100_000))).toBeUndefined();
    });

    it('concurrent grants claiming one code: exactly one wins', async () => {
      const w = await world(s);
      const hash = tag('code-hash');
      await s.tokens.insertCode(newCode(w, hash));
      const wins = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          s.grants.run(async (q) => {
            if (!(await q.claimCode(w.store.id, hash, `family-${hash}-${i}`, NOW + 1))) return false;
            await q.insertFamily(w.store.id, `family-${hash}-${i}`, w.installation.id, NOW + 1);
            return true;
          }),
        ),
      );
      expect(wins.filter(Boolean)).toHaveLength(1);
      expect((await s.grants.run((q) => q.codeByHash(w.store.id, hash)))?.family_id).toBe(`family-${hash}-${wins.indexOf(true)}`);
    });

    it('a token pair: refreshByHash, successor, owners, and the Admin API lookup', async () => {
      const w = await world(s);
      const p = await issue(s, w);
      const refresh = {
        family_id: p.familyId,
        installation_id: w.installation.id,
        store_id: w.store.id,
        app_id: w.app.id,
        scopes: 'read_products',
        expires_at: NOW + 30 * DAY,
        rotated_at: null,
        revoked_at: null,
      };
      const owner = { family_id: p.familyId, app_id: w.app.id, store_id: w.store.id };
      await s.grants.run(async (q) => {
        expect(await q.refreshByHash(p.storeId, p.refreshHash)).toEqual(refresh);
        expect(await q.refreshByHash(p.storeId, p.accessHash)).toBeUndefined();
        expect(await q.successor(p.storeId, p.refreshHash, p.accessHash)).toEqual({
          access_expires_at: NOW + HOUR,
          revoked_at: null,
          rotated_at: null,
          access_used_at: null,
          access_revoked_at: null,
        });
        expect(await q.refreshOwner(p.storeId, p.refreshHash)).toEqual(owner);
        expect(await q.accessOwner(p.storeId, p.accessHash)).toEqual(owner);
        expect(await q.accessOwner(p.storeId, p.refreshHash)).toBeUndefined();
      });
      expect(await s.tokens.findAccessToken(p.storeId, p.accessHash)).toEqual({
        app_id: w.app.id,
        store_id: w.store.id,
        scopes: 'read_products',
        expires_at: NOW + HOUR,
        revoked_at: null,
        used_at: null,
        created_at: NOW,
        merchant_id: null,
      });
      expect(await s.tokens.findAccessToken(p.storeId, p.refreshHash)).toBeUndefined();
      // Token introspection reads a refresh token as the grant does, outside any grant.
      const asGranted = await s.grants.run((q) => q.refreshByHash(p.storeId, p.refreshHash));
      expect(asGranted).toMatchObject({ app_id: w.app.id, rotated_at: null });
      expect(await s.tokens.findRefreshToken(p.storeId, p.refreshHash)).toEqual(asGranted);
      expect(await s.tokens.findRefreshToken(p.storeId, p.accessHash)).toBeUndefined();
    });

    it('every token lookup names its store: with another store the rows are unknown, and writes change nothing', async () => {
      const w = await world(s);
      const other = await world(s);
      const p = await issue(s, w);
      const code = tag('code-hash');
      await s.tokens.insertCode(newCode(w, code));
      const privateHash = tag('private-hash');
      await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'P',
        scopes: 'read_products',
        tokenHash: privateHash,
        webhookSecretEnc: 'x',
        now: NOW,
      });
      const elsewhere = other.store.id;
      await s.grants.run(async (q) => {
        expect(await q.codeByHash(elsewhere, code)).toBeUndefined();
        expect(await q.claimCode(elsewhere, code, 'family-elsewhere', NOW)).toBe(false);
        expect(await q.installation(elsewhere, w.installation.id)).toBeUndefined();
        expect(await q.refreshByHash(elsewhere, p.refreshHash)).toBeUndefined();
        expect(await q.successor(elsewhere, p.refreshHash, p.accessHash)).toBeUndefined();
        expect(await q.refreshOwner(elsewhere, p.refreshHash)).toBeUndefined();
        expect(await q.accessOwner(elsewhere, p.accessHash)).toBeUndefined();
        expect(await q.claimRefresh(elsewhere, p.refreshHash, NOW)).toBe(false);
        expect(await q.markAccessUsed(elsewhere, p.accessHash, NOW)).toBe(false);
        await q.revokeAccess(elsewhere, p.accessHash, NOW);
        await q.revokeFamily(elsewhere, p.familyId, NOW);
      });
      expect(await s.tokens.findAccessToken(elsewhere, p.accessHash)).toBeUndefined();
      expect(await s.tokens.findPrivateToken(elsewhere, privateHash)).toBeUndefined();
      expect(await s.tokens.findRefreshToken(elsewhere, p.refreshHash)).toBeUndefined();
      await s.tokens.revokeInstallation(elsewhere, w.installation.id, NOW);
      expect(await s.tokens.expireCodes(elsewhere, w.installation.id, NOW)).toBe(0);
      await s.apps.updateInstallation(elsewhere, w.installation.id, { uninstalledAt: NOW });
      // Nothing of store w changed.
      expect(await s.tokens.findAccessToken(w.store.id, p.accessHash)).toMatchObject({ revoked_at: null, used_at: null });
      expect(await s.grants.run((q) => q.refreshByHash(w.store.id, p.refreshHash))).toMatchObject({ revoked_at: null, rotated_at: null });
      expect(await s.grants.run((q) => q.codeByHash(w.store.id, code))).toMatchObject({ used_at: null, expires_at: NOW + MINUTE });
      expect((await s.apps.findInstallation(w.store.id, w.app.id))?.uninstalled_at).toBeNull();
      expect((await s.tokens.findPrivateToken(w.store.id, privateHash))?.store_id).toBe(w.store.id);
    });

    it('rotateRefresh: a live token of this app rotates once, its successor pair stored with it; anything else changes nothing', async () => {
      const w = await world(s);
      const p = await issue(s, w);
      const rotation = (from: NewTokenPair, n: string, over: Partial<RefreshRotation> = {}): RefreshRotation => ({
        storeId: from.storeId,
        tokenHash: from.refreshHash,
        accessHash: `access-${n}`,
        refreshHash: `refresh-${n}`,
        accessExpiresAt: NOW + 2 * HOUR,
        refreshExpiresAt: NOW + 40 * DAY,
        now: NOW + 1,
        ...over,
      });
      const unchanged = async (from: NewTokenPair) =>
        expect(await s.grants.run((q) => q.refreshByHash(from.storeId, from.refreshHash))).toMatchObject({
          rotated_at: null,
          revoked_at: null,
        });
      // Refused, nothing written: another app, another store, unknown, expired.
      const other = await secondApp(s, w);
      const elsewhere = await world(s);
      for (const [app, over] of [
        [other.app, {}],
        [w.app, { storeId: elsewhere.store.id }],
        [w.app, { tokenHash: 'refresh-unknown' }],
        [w.app, { now: NOW + 30 * DAY }],
      ] as const) {
        const n = tag('n');
        expect(await rotate(s, app, rotation(p, n, over))).toBeUndefined();
        expect(await s.grants.run((q) => q.refreshByHash(p.storeId, `refresh-${n}`))).toBeUndefined();
        await unchanged(p);
      }
      const n = tag('n');
      expect(await rotate(s, w.app, rotation(p, n))).toEqual({ scopes: 'read_products' });
      expect((await s.grants.run((q) => q.refreshByHash(p.storeId, p.refreshHash)))?.rotated_at).toBe(NOW + 1);
      expect(await s.grants.run((q) => q.refreshByHash(p.storeId, `refresh-${n}`))).toEqual({
        family_id: p.familyId,
        installation_id: w.installation.id,
        store_id: w.store.id,
        app_id: w.app.id,
        scopes: 'read_products',
        expires_at: NOW + 40 * DAY,
        rotated_at: null,
        revoked_at: null,
      });
      expect(await s.tokens.findAccessToken(p.storeId, `access-${n}`)).toEqual({
        app_id: w.app.id,
        store_id: w.store.id,
        scopes: 'read_products',
        expires_at: NOW + 2 * HOUR,
        revoked_at: null,
        used_at: null,
        created_at: NOW + 1,
        merchant_id: null,
      });
      // Rotated already: the second presentation is the full grant's to judge.
      expect(await rotate(s, w.app, rotation(p, tag('n')))).toBeUndefined();
      // A revoked family, a revoked token: nothing.
      const revokedFamily = await issue(s, w);
      await s.grants.run((q) => q.revokeFamily(w.store.id, revokedFamily.familyId, NOW));
      expect(await rotate(s, w.app, rotation(revokedFamily, tag('n')))).toBeUndefined();
      expect((await s.grants.run((q) => q.refreshByHash(w.store.id, revokedFamily.refreshHash)))?.rotated_at).toBeNull();
      const revokedToken = await issue(s, w);
      await s.tokens.revokeInstallation(w.store.id, w.installation.id, NOW);
      expect(await rotate(s, w.app, rotation(revokedToken, tag('n')))).toBeUndefined();
    });

    it('rotateRefresh: of concurrent rotations of one token exactly one stores a pair', async () => {
      const w = await world(s);
      const p = await issue(s, w);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          rotate(s, w.app, {
            storeId: p.storeId,
            tokenHash: p.refreshHash,
            accessHash: `access-${p.familyId}-${i}`,
            refreshHash: `refresh-${p.familyId}-${i}`,
            accessExpiresAt: NOW + HOUR,
            refreshExpiresAt: NOW + DAY,
            now: NOW + 1,
          }),
        ),
      );
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
      const winner = results.findIndex((r) => r !== undefined);
      for (let i = 0; i < 8; i++)
        expect(await s.tokens.findAccessToken(p.storeId, `access-${p.familyId}-${i}`)).toEqual(
          i === winner ? expect.anything() : undefined,
        );
    });

    it('redeemCode: a live code for this app, redirect URI and verifier, of an installation holding exactly its scopes, is used once; anything else changes nothing', async () => {
      const w = await world(s);
      const redemption = (codeHash: string, n: string, over: Partial<CodeRedemption> = {}): CodeRedemption => ({
        storeId: w.store.id,
        codeHash,
        familyId: `family-${n}`,
        redirectUri: w.app.redirect_uri,
        codeChallenge: 'challenge-1',
        accessHash: `access-${n}`,
        refreshHash: `refresh-${n}`,
        accessExpiresAt: NOW + HOUR,
        refreshExpiresAt: NOW + 30 * DAY,
        now: NOW + 1,
        ...over,
      });
      const code = tag('code-hash');
      await s.tokens.insertCode(newCode(w, code));
      const other = await secondApp(s, w);
      const elsewhere = await world(s);
      for (const [app, over] of [
        [other.app, {}],
        [w.app, { storeId: elsewhere.store.id }],
        [w.app, { codeHash: 'code-hash-unknown' }],
        [w.app, { redirectUri: 'https://elsewhere.example.test/callback' }],
        [w.app, { redirectUri: null }],
        [w.app, { codeChallenge: 'challenge-2' }],
        [w.app, { codeChallenge: null }],
        [w.app, { now: NOW + MINUTE }],
      ] as const) {
        const n = tag('n');
        expect(await redeem(s, app, redemption(code, n, over))).toBeUndefined();
        expect(await s.tokens.findAccessToken(w.store.id, `access-${n}`)).toBeUndefined();
        expect(await s.grants.run((q) => q.codeByHash(w.store.id, code))).toMatchObject({ used_at: null, family_id: null });
      }
      const n = tag('n');
      expect(await redeem(s, w.app, redemption(code, n))).toEqual({ scopes: 'read_products', installationId: w.installation.id });
      expect(await s.grants.run((q) => q.codeByHash(w.store.id, code))).toMatchObject({ used_at: NOW + 1, family_id: `family-${n}` });
      expect(await s.grants.run((q) => q.refreshByHash(w.store.id, `refresh-${n}`))).toMatchObject({
        family_id: `family-${n}`,
        installation_id: w.installation.id,
        app_id: w.app.id,
        scopes: 'read_products',
        expires_at: NOW + 30 * DAY,
        revoked_at: null,
      });
      expect(await s.tokens.findAccessToken(w.store.id, `access-${n}`)).toMatchObject({ expires_at: NOW + HOUR, revoked_at: null });
      // Used: a second redemption is the full grant's to judge (a replay).
      expect(await redeem(s, w.app, redemption(code, tag('n')))).toBeUndefined();
      // A code without a challenge needs no verifier.
      const plain = tag('code-hash');
      await s.tokens.insertCode({ ...newCode(w, plain), codeChallenge: null });
      expect(await redeem(s, w.app, redemption(plain, tag('n'), { codeChallenge: null }))).toBeDefined();
      // The installation's scopes changed, or it is uninstalled: nothing.
      const changed = tag('code-hash');
      await s.tokens.insertCode(newCode(w, changed));
      await s.apps.updateInstallation(w.store.id, w.installation.id, { scopes: 'read_products,read_orders' });
      expect(await redeem(s, w.app, redemption(changed, tag('n')))).toBeUndefined();
      await s.apps.updateInstallation(w.store.id, w.installation.id, { scopes: 'read_products', uninstalledAt: NOW });
      expect(await redeem(s, w.app, redemption(changed, tag('n')))).toBeUndefined();
      expect(await s.grants.run((q) => q.codeByHash(w.store.id, changed))).toMatchObject({ used_at: null });
    });

    it('claimRefresh once; revokeAccess ends one access token; revokeFamily is folded into every token of the family', async () => {
      const w = await world(s);
      const p = await issue(s, w);
      expect(await s.grants.run((q) => q.claimRefresh(p.storeId, p.refreshHash, NOW + 1))).toBe(true);
      expect(await s.grants.run((q) => q.claimRefresh(p.storeId, p.refreshHash, NOW + 2))).toBe(false);
      expect((await s.grants.run((q) => q.refreshByHash(p.storeId, p.refreshHash)))?.rotated_at).toBe(NOW + 1);

      const other = await issue(s, w);
      await s.grants.run((q) => q.revokeAccess(other.storeId, other.accessHash, NOW + 3));
      expect((await s.tokens.findAccessToken(other.storeId, other.accessHash))?.revoked_at).toBe(NOW + 3);
      expect((await s.grants.run((q) => q.refreshByHash(other.storeId, other.refreshHash)))?.revoked_at).toBeNull();

      await s.grants.run((q) => q.revokeFamily(w.store.id, p.familyId, NOW + 4));
      await s.grants.run(async (q) => {
        expect(await q.refreshByHash(p.storeId, p.refreshHash)).toMatchObject({ revoked_at: NOW + 4, rotated_at: NOW + 1 });
        expect(await q.successor(p.storeId, p.refreshHash, p.accessHash)).toMatchObject({
          access_expires_at: NOW + HOUR,
          revoked_at: NOW + 4,
        });
      });
      expect((await s.tokens.findAccessToken(p.storeId, p.accessHash))?.revoked_at).toBe(NOW + 4);
      // Another family of the same installation is untouched.
      expect((await s.grants.run((q) => q.refreshByHash(other.storeId, other.refreshHash)))?.revoked_at).toBeNull();
    });

    it('a grant that throws is rolled back; a grant beside it still commits', async () => {
      const w = await world(s);
      const kept = pair(w, tag('t'));
      const dropped = pair(w, tag('t'));
      const refused = new Error('grant refused');
      const [ok, failed] = await Promise.allSettled([
        s.grants.run(async (q) => {
          await q.insertFamily(w.store.id, kept.familyId, w.installation.id, NOW);
          await q.insertPair(kept);
          return 'kept';
        }),
        s.grants.run(async (q) => {
          await q.insertFamily(w.store.id, dropped.familyId, w.installation.id, NOW);
          await q.insertPair(dropped);
          throw refused;
        }),
      ]);
      expect(ok).toEqual({ status: 'fulfilled', value: 'kept' });
      expect(failed).toEqual({ status: 'rejected', reason: refused });
      expect(await s.tokens.findAccessToken(kept.storeId, kept.accessHash)).toBeDefined();
      expect(await s.tokens.findAccessToken(dropped.storeId, dropped.accessHash)).toBeUndefined();
      expect(await s.grants.run((q) => q.refreshByHash(dropped.storeId, dropped.refreshHash))).toBeUndefined();
      // Nothing of it is left behind: the same family and tokens can be written afresh.
      await s.grants.run(async (q) => {
        await q.insertFamily(w.store.id, dropped.familyId, w.installation.id, NOW);
        await q.insertPair(dropped);
      });
      expect(await s.tokens.findAccessToken(dropped.storeId, dropped.accessHash)).toBeDefined();
    });

    it('revokeInstallation ends every family of the installation, and only those', async () => {
      const w = await world(s);
      const other = await world(s);
      const a = await issue(s, w);
      const b = await issue(s, w);
      const elsewhere = await issue(s, other);
      await s.tokens.revokeInstallation(w.store.id, w.installation.id, NOW + 5);
      expect((await s.tokens.findAccessToken(a.storeId, a.accessHash))?.revoked_at).toBe(NOW + 5);
      expect((await s.tokens.findAccessToken(b.storeId, b.accessHash))?.revoked_at).toBe(NOW + 5);
      expect((await s.grants.run((q) => q.refreshByHash(b.storeId, b.refreshHash)))?.revoked_at).toBe(NOW + 5);
      expect((await s.tokens.findAccessToken(elsewhere.storeId, elsewhere.accessHash))?.revoked_at).toBeNull();
    });

    it('expireCodes ends the unredeemed, unexpired codes of one installation now, and only those', async () => {
      const w = await world(s);
      const other = await world(s);
      const [open, alsoOpen, used, expired, elsewhere] = Array.from({ length: 5 }, () => tag('code-hash'));
      await s.tokens.insertCode(newCode(w, open!));
      await s.tokens.insertCode({ ...newCode(w, alsoOpen!), expiresAt: NOW + 10 * MINUTE });
      await s.tokens.insertCode(newCode(w, used!));
      await s.tokens.insertCode({ ...newCode(w, expired!), expiresAt: NOW - 1 });
      await s.tokens.insertCode(newCode(other, elsewhere!));
      expect(await s.grants.run((q) => q.claimCode(w.store.id, used!, 'family-used', NOW))).toBe(true);

      expect(await s.transaction((tx) => tx.tokens.expireCodes(w.store.id, w.installation.id, NOW + 5))).toBe(2);
      const code = (hash: string, storeId = w.store.id) => s.grants.run((q) => q.codeByHash(storeId, hash));
      expect(await code(open!)).toMatchObject({ expires_at: NOW + 5, used_at: null });
      expect(await code(alsoOpen!)).toMatchObject({ expires_at: NOW + 5, used_at: null });
      expect(await code(used!)).toMatchObject({ expires_at: NOW + MINUTE, used_at: NOW });
      expect(await code(expired!)).toMatchObject({ expires_at: NOW - 1 });
      expect(await code(elsewhere!, other.store.id)).toMatchObject({ expires_at: NOW + MINUTE, used_at: null });
      // Nothing left to end.
      expect(await s.tokens.expireCodes(w.store.id, w.installation.id, NOW + 6)).toBe(0);
      expect(await code(open!)).toMatchObject({ expires_at: NOW + 5 });
    });

    it('private tokens: found by hash, revoked with their app', async () => {
      const w = await world(s);
      const hash = tag('private-hash');
      const id = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'Feed',
        scopes: 'read_products',
        tokenHash: hash,
        webhookSecretEnc: 'sealed',
        now: NOW,
      });
      expect(await s.tokens.findPrivateToken(w.store.id, hash)).toEqual({
        id,
        store_id: w.store.id,
        scopes: 'read_products',
        revoked_at: null,
        created_at: NOW,
      });
      expect(await s.tokens.findPrivateToken(w.store.id, 'private-hash-unknown')).toBeUndefined();
      await s.apps.revokePrivateApp(w.store.id, id, NOW + 1);
      expect(await s.tokens.findPrivateToken(w.store.id, hash)).toEqual({
        id,
        store_id: w.store.id,
        scopes: 'read_products',
        revoked_at: NOW + 1,
        created_at: NOW,
      });
    });
  });

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

  describe('appWebhooks', () => {
    it('an app-level list: insert (a duplicate refused), find, list, reshape, recount for installs, delete', async () => {
      const w = await world(s);
      const row = {
        app_id: w.app.id,
        topic: 'products/create',
        address: 'https://hooks.example.test/a',
        api_version: '2026-01',
        filter: 'status:active',
        include_fields: '["id","title"]',
        created_at: NOW,
        updated_at: NOW,
      };
      expect(await s.appWebhooks.countForInstall(w.app.id)).toBe(0);
      const added = await s.transaction(async (tx) => {
        await tx.appWebhooks.lockApp(w.app.id);
        const r = await tx.appWebhooks.insert(row);
        await tx.appWebhooks.recount(w.app.id);
        return r;
      });
      expect(added).toEqual({ id: expect.any(Number), ...row });
      await expect(s.appWebhooks.insert(row)).rejects.toBeInstanceOf(DuplicateRecordError);
      expect(await s.appWebhooks.countForInstall(w.app.id)).toBe(1);
      expect(await s.appWebhooks.find(w.app.id, added.id)).toEqual(added);
      expect(await s.appWebhooks.find(w.app.id + 1000, added.id)).toBeUndefined();
      expect(await s.appWebhooks.list(w.app.id)).toEqual([added]);
      // The filter and fields change in place, on the app's own row only.
      const shape = { filter: null, include_fields: '["id"]' };
      expect(await s.appWebhooks.reshape(w.app.id + 1000, added.id, shape, NOW + 5)).toBeUndefined();
      const reshaped = await s.appWebhooks.reshape(w.app.id, added.id, shape, NOW + 5);
      expect(reshaped).toEqual({ ...added, ...shape, updated_at: NOW + 5 });
      expect(await s.appWebhooks.find(w.app.id, added.id)).toEqual(reshaped);
      expect(await s.appWebhooks.delete(w.app.id + 1000, added.id)).toBe(false);
      expect(await s.appWebhooks.delete(w.app.id, added.id)).toBe(true);
      await s.appWebhooks.recount(w.app.id);
      expect(await s.appWebhooks.countForInstall(w.app.id)).toBe(0);
      expect(await s.appWebhooks.list(w.app.id)).toEqual([]);
    });

    it('store copies: found per store, adopted, counted per source, deleted by id or all but the kept topics; stores walked by id', async () => {
      const w = await world(s);
      const other = await world(s);
      const source = await s.appWebhooks.insert({
        app_id: w.app.id,
        topic: 'products/create',
        address: 'https://hooks.example.test/c',
        api_version: '2026-01',
        filter: 'vendor:Acme',
        include_fields: '["id"]',
        created_at: NOW,
        updated_at: NOW,
      });
      const copy = await s.webhooks.insertSubscription({
        store_id: w.store.id,
        owner: `app:${w.app.id}`,
        app_id: w.app.id,
        private_app_id: null,
        topic: 'app/uninstalled',
        address: 'https://hooks.example.test/gone',
        api_version: '2026-01',
        created_at: NOW,
        updated_at: NOW,
        app_subscription_id: source.id,
      });
      expect(copy.app_subscription_id).toBe(source.id);
      const own = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/c');
      const adopt = {
        storeId: w.store.id,
        owner: `app:${w.app.id}`,
        topic: 'products/create',
        address: 'https://hooks.example.test/c',
        appSubscriptionId: source.id,
        shape: { filter: 'vendor:Acme', include_fields: '["id"]' },
        now: NOW + 1,
      };
      expect(await s.appWebhooks.adopt({ ...adopt, storeId: other.store.id })).toBeUndefined();
      expect(await s.appWebhooks.adopt(adopt)).toMatchObject({
        id: own.id,
        app_subscription_id: source.id,
        version: 2,
        updated_at: NOW + 1,
        filter: 'vendor:Acme',
        include_fields: '["id"]',
      });
      expect(await s.appWebhooks.adopt(adopt)).toBeUndefined();
      expect((await s.appWebhooks.copiesInStore(w.store.id, w.app.id)).sort((a, b) => a.id - b.id)).toEqual([
        { id: copy.id, app_subscription_id: source.id, topic: 'app/uninstalled', filter: null, include_fields: null },
        { id: own.id, app_subscription_id: source.id, topic: 'products/create', filter: 'vendor:Acme', include_fields: '["id"]' },
      ]);
      // Copies take a new filter and fields by id, in their store only, each with a new version.
      const shape = { filter: 'vendor:Beta', include_fields: null };
      expect(await s.appWebhooks.reshapeCopies(other.store.id, [own.id], shape, NOW + 2)).toBe(0);
      expect(await s.appWebhooks.reshapeCopies(w.store.id, [], shape, NOW + 2)).toBe(0);
      expect(await s.appWebhooks.reshapeCopies(w.store.id, [own.id], shape, NOW + 2)).toBe(1);
      expect(await s.webhooks.findSubscription(w.store.id, `app:${w.app.id}`, own.id)).toMatchObject({
        ...shape,
        version: 3,
        updated_at: NOW + 2,
      });
      expect(await s.appWebhooks.copiesInStore(other.store.id, w.app.id)).toEqual([]);
      expect(await s.appWebhooks.copyCounts(w.app.id)).toEqual(new Map([[source.id, 2]]));
      expect(await s.appWebhooks.storesWithCopies(source.id, 0, 10)).toEqual([w.store.id]);
      expect(await s.appWebhooks.storesWithCopies(source.id, w.store.id, 10)).toEqual([]);
      await s.apps.insertInstallation({ storeId: other.store.id, appId: w.app.id, scopes: 'read_products', now: NOW });
      const both = [w.store.id, other.store.id].sort((a, b) => a - b);
      expect(await s.appWebhooks.installedStores(w.app.id, 0, 10)).toEqual(both);
      expect(await s.appWebhooks.installedStores(w.app.id, 0, 1)).toEqual([both[0]]);
      expect(await s.appWebhooks.installedStores(w.app.id, both[0]!, 10)).toEqual([both[1]]);
      // Another store's ids delete nothing; all but the kept topic go.
      expect(await s.appWebhooks.deleteCopies(other.store.id, [own.id])).toBe(0);
      expect(await s.appWebhooks.deleteAppCopies(w.store.id, w.app.id, ['app/uninstalled'])).toBe(1);
      expect((await s.appWebhooks.copiesInStore(w.store.id, w.app.id)).map((c) => c.id)).toEqual([copy.id]);
      expect(await s.appWebhooks.deleteCopies(w.store.id, [copy.id])).toBe(1);
      expect(await s.appWebhooks.copyCounts(w.app.id)).toEqual(new Map());
    });
  });

  describe('webhooks', () => {
    it('subscriptions: insert, exists, find (by owner), delete; a duplicate is refused', async () => {
      const w = await world(s);
      const owner = `app:${w.app.id}`;
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/p');
      expect(sub).toEqual({
        id: expect.any(Number),
        store_id: w.store.id,
        owner,
        app_id: w.app.id,
        private_app_id: null,
        topic: 'products/create',
        address: 'https://hooks.example.test/p',
        api_version: '2026-01',
        created_at: NOW,
        updated_at: NOW,
        disabled_at: null,
        version: 1,
        app_subscription_id: null,
        filter: null,
        include_fields: null,
      });
      expect(await s.webhooks.subscriptionExists(w.store.id, owner, 'products/create', 'https://hooks.example.test/p')).toBe(true);
      expect(await s.webhooks.subscriptionExists(w.store.id, owner, 'products/create', 'https://hooks.example.test/q')).toBe(false);
      expect(await s.webhooks.subscriptionExists(w.store.id, 'app:0', 'products/create', 'https://hooks.example.test/p')).toBe(false);
      expect(await s.webhooks.findSubscription(w.store.id, owner, sub.id)).toEqual(sub);
      expect(await s.webhooks.findSubscription(w.store.id, 'app:0', sub.id)).toBeUndefined();
      await expect(subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/p')).rejects.toBeInstanceOf(
        DuplicateRecordError,
      );
      await s.webhooks.deleteSubscription(w.store.id, sub.id);
      expect(await s.webhooks.findSubscription(w.store.id, owner, sub.id)).toBeUndefined();
      expect(await s.webhooks.subscriptionExists(w.store.id, owner, 'products/create', 'https://hooks.example.test/p')).toBe(false);
    });

    it('updateSubscription: topic and address in its own store only, a duplicate is refused; with enable, not disabled', async () => {
      const w = await world(s);
      const other = await world(s);
      const owner = `app:${w.app.id}`;
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/u1');
      const taken = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/update', 'https://hooks.example.test/u2');
      const values = { topic: 'products/delete', address: 'https://hooks.example.test/u3', updated_at: NOW + 1, enable: false };
      expect(await s.webhooks.updateSubscription(other.store.id, sub.id, values)).toBeUndefined();
      expect(await s.webhooks.findSubscription(w.store.id, owner, sub.id)).toMatchObject({ topic: 'products/create' });
      const changed = await s.webhooks.updateSubscription(w.store.id, sub.id, values);
      expect(changed).toMatchObject({
        id: sub.id,
        topic: 'products/delete',
        address: 'https://hooks.example.test/u3',
        updated_at: NOW + 1,
      });
      await expect(
        s.webhooks.updateSubscription(w.store.id, sub.id, {
          ...values,
          topic: 'products/update',
          address: 'https://hooks.example.test/u2',
        }),
      ).rejects.toBeInstanceOf(DuplicateRecordError);
      expect(await s.webhooks.findSubscription(w.store.id, owner, taken.id)).toEqual(taken);
      await s.transaction((tx) => tx.webhooks.updateSubscription(w.store.id, sub.id, { ...values, enable: true }).then(() => undefined));
      expect(await s.webhooks.findSubscription(w.store.id, owner, sub.id)).toMatchObject({ disabled_at: null });
    });

    it('filter and include_fields: stored, changed (left alone when not given), carried by recipients, kept on each delivery', async () => {
      const w = await world(s);
      const owner = `app:${w.app.id}`;
      const sub = await s.webhooks.insertSubscription({
        store_id: w.store.id,
        owner,
        app_id: w.app.id,
        private_app_id: null,
        topic: 'products/create',
        address: 'https://hooks.example.test/f1',
        api_version: '2026-01',
        filter: 'status:active',
        include_fields: '["id","title"]',
        created_at: NOW,
        updated_at: NOW,
      });
      expect(sub).toMatchObject({ filter: 'status:active', include_fields: '["id","title"]' });
      expect(await s.webhooks.recipients(w.store.id, 'products/create')).toEqual([
        {
          id: sub.id,
          app_id: w.app.id,
          private_app_id: null,
          scopes: 'read_products',
          filter: 'status:active',
          include_fields: '["id","title"]',
        },
      ]);
      const base = { topic: 'products/create', address: 'https://hooks.example.test/f1', updated_at: NOW + 1, enable: false };
      expect(await s.webhooks.updateSubscription(w.store.id, sub.id, base)).toMatchObject({
        filter: 'status:active',
        include_fields: '["id","title"]',
        version: 2,
      });
      expect(await s.webhooks.updateSubscription(w.store.id, sub.id, { ...base, filter: null, include_fields: '["id"]' })).toMatchObject({
        filter: null,
        include_fields: '["id"]',
        version: 3,
      });
      const id = tag('evt');
      await s.webhooks.insertEvent({ id, storeId: w.store.id, topic: 'products/create', payload: '{"id":"1","title":"t"}', now: NOW }, [
        { subscriptionId: sub.id, appId: w.app.id, privateAppId: null, webhookId: `wh-${id}-a`, includeFields: '["id"]' },
        { subscriptionId: sub.id, appId: w.app.id, privateAppId: null, webhookId: `wh-${id}-b`, includeFields: null },
      ]);
      const claimed = (await claim(s, 'worker-f', NOW + MINUTE)).filter((r) => r.event_id === id);
      expect(claimed.map((r) => [r.webhook_id, r.include_fields])).toEqual([
        [`wh-${id}-a`, '["id"]'],
        [`wh-${id}-b`, null],
      ]);
    });

    it('a guarded subscription update or delete changes it only at one of the versions; each change adds one', async () => {
      const w = await world(s);
      const owner = `app:${w.app.id}`;
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/g1');
      const values = { topic: 'products/create', address: 'https://hooks.example.test/g2', updated_at: NOW + 1, enable: false };
      expect(await s.webhooks.updateSubscription(w.store.id, sub.id, values, { versions: [2] })).toBeUndefined();
      expect(await s.webhooks.findSubscription(w.store.id, owner, sub.id)).toEqual(sub);
      expect(await s.webhooks.updateSubscription(w.store.id, sub.id, values, { versions: [1] })).toMatchObject({ version: 2 });
      expect(await s.webhooks.deleteSubscription(w.store.id, sub.id, { versions: [1] })).toBe(false);
      expect(await s.webhooks.deleteSubscription(w.store.id, sub.id, { versions: [2] })).toBe(true);
      expect(await s.webhooks.deleteSubscription(w.store.id, sub.id)).toBe(false);
    });

    it('subscriptions() count, with the owner and the topic and address filters', async () => {
      const w = await world(s);
      const other = await world(s);
      await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/c1');
      await subscribe(s, w.store.id, { appId: w.app.id }, 'products/update', 'https://hooks.example.test/c1');
      await subscribe(s, w.store.id, { appId: w.app.id }, 'products/update', 'https://hooks.example.test/c2');
      await subscribe(s, other.store.id, { appId: w.app.id }, 'products/update', 'https://hooks.example.test/c1');
      const keyset = s.webhooks.subscriptions();
      const q = { storeId: w.store.id, where: { owner: `app:${w.app.id}` } };
      expect(await keyset.count(q)).toBe(3);
      expect(await keyset.count({ ...q, filters: { match: { topic: 'products/update' } } })).toBe(2);
      expect(await keyset.count({ ...q, filters: { match: { topic: 'products/update', address: 'https://hooks.example.test/c1' } } })).toBe(
        1,
      );
      expect(await keyset.count({ ...q, filters: { match: { address: 'https://hooks.example.test/C1' } } })).toBe(0);
      expect(await keyset.count({ storeId: other.store.id, where: { owner: `app:${w.app.id}` } })).toBe(1);
      const page = await keyset.window({ ...q, filters: { match: { address: 'https://hooks.example.test/c1' } } }, 'after', undefined, 10);
      expect(page.rows.map((r) => r.topic)).toEqual(['products/create', 'products/update']);
    });

    it('subscriptions() keyset, filtered by owner and store', async () => {
      const w = await world(s);
      const two = await secondApp(s, w);
      const other = await world(s);
      const mine: SubscriptionRow[] = [];
      for (const topic of ['products/create', 'orders/create', 'customers/create'] as const) {
        mine.push(await subscribe(s, w.store.id, { appId: w.app.id }, topic));
        await subscribe(s, w.store.id, { appId: two.app.id }, topic);
      }
      await subscribe(s, other.store.id, { appId: w.app.id }, 'products/create');
      const keyset = s.webhooks.subscriptions();
      const q = { storeId: w.store.id, where: { owner: `app:${w.app.id}` } };
      // The rows carry every field of SubscriptionRow (an implementation may add columns of its own).
      expect(await keyset.after(q, undefined, 10)).toMatchObject(mine);
      expect(await keyset.after(q, mine[0]!.id, 1)).toMatchObject([mine[1]!]);
      expect(await keyset.before(q, mine[2]!.id, 10)).toMatchObject([mine[1]!, mine[0]!]);
      expect(await keyset.window(q, 'after', mine[2]!.id, 10)).toMatchObject({ rows: [], behind: true });
      expect(await keyset.after({ storeId: w.store.id }, undefined, 10)).toHaveLength(6);
    });

    it('recipients: installed apps and active private apps; with uninstalledAppId that app only', async () => {
      const w = await world(s);
      const gone = await secondApp(s, w);
      const never = await s.apps.insertApp(newApp(tag('app'), w.partnerId));
      const live = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'Live',
        scopes: 'read_products',
        tokenHash: tag('private-hash'),
        webhookSecretEnc: 'sealed',
        now: NOW,
      });
      const revoked = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'Revoked',
        scopes: 'read_products',
        tokenHash: tag('private-hash'),
        webhookSecretEnc: 'sealed',
        now: NOW,
      });
      const installed = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const uninstalled = await subscribe(s, w.store.id, { appId: gone.app.id }, 'products/create');
      await subscribe(s, w.store.id, { appId: never.id }, 'products/create');
      const livePrivate = await subscribe(s, w.store.id, { privateAppId: live }, 'products/create');
      await subscribe(s, w.store.id, { privateAppId: revoked }, 'products/create');
      await subscribe(s, w.store.id, { appId: w.app.id }, 'orders/create');
      const goneUninstalled = await subscribe(s, w.store.id, { appId: gone.app.id }, 'app/uninstalled');
      await s.apps.updateInstallation(w.store.id, gone.installation.id, { uninstalledAt: NOW + 1 });
      await s.apps.revokePrivateApp(w.store.id, revoked, NOW + 1);

      expect(await s.webhooks.recipients(w.store.id, 'products/create')).toEqual([
        { id: installed.id, app_id: w.app.id, private_app_id: null, scopes: 'read_products', filter: null, include_fields: null },
        { id: livePrivate.id, app_id: null, private_app_id: live, scopes: 'read_products', filter: null, include_fields: null },
      ]);
      expect(await s.webhooks.recipients(w.store.id, 'products/create', gone.app.id)).toEqual([
        { id: uninstalled.id, app_id: gone.app.id, private_app_id: null, scopes: 'read_products', filter: null, include_fields: null },
      ]);
      expect(await s.webhooks.recipients(w.store.id, 'app/uninstalled', gone.app.id)).toEqual([
        { id: goneUninstalled.id, app_id: gone.app.id, private_app_id: null, scopes: 'read_products', filter: null, include_fields: null },
      ]);
      expect(await s.webhooks.recipients(w.store.id, 'products/delete')).toEqual([]);
    });

    it('recipients carry the owner’s scopes as they are now (the caller decides who may read the topic)', async () => {
      const w = await world(s);
      const privateId = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'P',
        scopes: 'read_products',
        tokenHash: tag('private-hash'),
        webhookSecretEnc: 'sealed',
        now: NOW,
      });
      const app = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const priv = await subscribe(s, w.store.id, { privateAppId: privateId }, 'products/create');
      await s.apps.updateInstallation(w.store.id, w.installation.id, { scopes: 'read_orders,write_customers' });
      expect(await s.webhooks.recipients(w.store.id, 'products/create')).toEqual([
        { id: app.id, app_id: w.app.id, private_app_id: null, scopes: 'read_orders,write_customers', filter: null, include_fields: null },
        { id: priv.id, app_id: null, private_app_id: privateId, scopes: 'read_products', filter: null, include_fields: null },
      ]);
    });

    it('removeSubscriptions deletes an app’s subscriptions to the topics given in one store and cancels their pending deliveries', async () => {
      const w = await world(s);
      const two = await secondApp(s, w);
      const other = await world(s);
      const subs = {
        products: await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create'),
        productsToo: await subscribe(s, w.store.id, { appId: w.app.id }, 'products/update'),
        orders: await subscribe(s, w.store.id, { appId: w.app.id }, 'orders/create'),
        sibling: await subscribe(s, w.store.id, { appId: two.app.id }, 'products/create'),
        elsewhere: await subscribe(s, other.store.id, { appId: w.app.id }, 'products/create'),
      };
      const [gone] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'products/create', [subs.products], NOW));
      const [kept] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'orders/create', [subs.orders], NOW));
      const [sibling] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'products/create', [subs.sibling], NOW));
      const [elsewhere] = await deliveriesOf(s, other.store.id, await enqueue(s, other.store.id, 'products/create', [subs.elsewhere], NOW));

      const removed = await s.transaction((tx) =>
        tx.webhooks.removeSubscriptions({
          storeId: w.store.id,
          appId: w.app.id,
          topics: ['products/create', 'products/update', 'products/delete'],
          reason: 'no longer allowed',
          now: NOW + 1,
        }),
      );
      expect(removed).toBe(2);
      const owner = `app:${w.app.id}`;
      expect(await s.webhooks.findSubscription(w.store.id, owner, subs.products.id)).toBeUndefined();
      expect(await s.webhooks.findSubscription(w.store.id, owner, subs.productsToo.id)).toBeUndefined();
      expect(await s.webhooks.findSubscription(w.store.id, owner, subs.orders.id)).toEqual(subs.orders);
      expect(await s.webhooks.findSubscription(w.store.id, `app:${two.app.id}`, subs.sibling.id)).toEqual(subs.sibling);
      expect(await s.webhooks.findSubscription(other.store.id, owner, subs.elsewhere.id)).toEqual(subs.elsewhere);
      expect(await delivery(s, gone!)).toMatchObject({ status: 'cancelled', last_error: 'no longer allowed', updated_at: NOW + 1 });
      expect((await delivery(s, kept!)).status).toBe('pending');
      expect((await delivery(s, sibling!)).status).toBe('pending');
      expect((await delivery(s, elsewhere!)).status).toBe('pending');
      expect(await s.webhooks.removeSubscriptions({ storeId: w.store.id, appId: w.app.id, topics: [], reason: 'x', now: NOW + 2 })).toBe(0);
      expect((await delivery(s, kept!)).status).toBe('pending');
    });

    it('countSubscriptions counts one owner’s subscriptions in one store, disabled ones included', async () => {
      const w = await world(s);
      const two = await secondApp(s, w);
      const other = await world(s);
      const owner = `app:${w.app.id}`;
      expect(await s.webhooks.countSubscriptions(w.store.id, owner)).toBe(0);
      const first = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      await subscribe(s, w.store.id, { appId: w.app.id }, 'orders/create');
      await subscribe(s, w.store.id, { appId: two.app.id }, 'orders/create');
      await subscribe(s, other.store.id, { appId: w.app.id }, 'orders/create');
      expect(await s.webhooks.countSubscriptions(w.store.id, owner)).toBe(2);
      await s.webhooks.deleteSubscription(w.store.id, first.id);
      expect(await s.webhooks.countSubscriptions(w.store.id, owner)).toBe(1);
    });

    it('countTopicSubscriptions counts a topic’s subscriptions in one store: one owner’s and everyone’s', async () => {
      const w = await world(s);
      const two = await secondApp(s, w);
      const other = await world(s);
      const owner = `app:${w.app.id}`;
      expect(await s.webhooks.countTopicSubscriptions(w.store.id, 'orders/create', owner)).toEqual({ owner: 0, store: 0 });
      const first = await subscribe(s, w.store.id, { appId: w.app.id }, 'orders/create');
      await subscribe(s, w.store.id, { appId: w.app.id }, 'orders/create');
      await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      await subscribe(s, w.store.id, { appId: two.app.id }, 'orders/create');
      await subscribe(s, other.store.id, { appId: w.app.id }, 'orders/create');
      expect(await s.webhooks.countTopicSubscriptions(w.store.id, 'orders/create', owner)).toEqual({ owner: 2, store: 3 });
      expect(await s.webhooks.countTopicSubscriptions(w.store.id, 'orders/create', `app:${two.app.id}`)).toEqual({ owner: 1, store: 3 });
      await s.webhooks.deleteSubscription(w.store.id, first.id);
      expect(await s.webhooks.countTopicSubscriptions(w.store.id, 'orders/create', owner)).toEqual({ owner: 1, store: 2 });
    });

    it('appIdByClientId and storeIdByName', async () => {
      const w = await world(s);
      expect(await s.webhooks.appIdByClientId(w.app.client_id)).toBe(w.app.id);
      expect(await s.webhooks.appIdByClientId('client-unknown')).toBeUndefined();
      expect(await s.webhooks.storeIdByName(w.store.name)).toBe(w.store.id);
      expect(await s.webhooks.storeIdByName('store-unknown')).toBeUndefined();
    });

    it('insertEvent in a transaction wakes listeners once, after the commit; a throwing transaction wakes nobody and leaves nothing', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      let calls = 0;
      let other = 0;
      const off = s.onDeliveriesQueued(() => calls++);
      const offOther = s.onDeliveriesQueued(() => other++);
      try {
        await s.transaction(async (tx) => {
          await enqueue(tx, w.store.id, 'products/create', [sub], NOW);
          await enqueue(tx, w.store.id, 'products/create', [sub], NOW);
          expect(calls).toBe(0);
        });
        expect(calls).toBe(1);
        expect(other).toBe(1);
        expect(await s.webhooks.listDeliveries({ storeId: w.store.id, limit: 10 })).toHaveLength(2);

        const broken = await world(s);
        const brokenSub = await subscribe(s, broken.store.id, { appId: broken.app.id }, 'products/create');
        await expect(
          s.transaction(async (tx) => {
            await enqueue(tx, broken.store.id, 'products/create', [brokenSub], NOW);
            throw new Error('nope');
          }),
        ).rejects.toThrow('nope');
        expect(calls).toBe(1);
        expect(await s.webhooks.listDeliveries({ storeId: broken.store.id, limit: 10 })).toEqual([]);

        // Outside a transaction the write is its own commit.
        await enqueue(s, w.store.id, 'products/create', [sub], NOW);
        expect(calls).toBe(2);
        off();
        await enqueue(s, w.store.id, 'products/create', [sub], NOW);
        expect(calls).toBe(2);
        expect(other).toBe(3);
      } finally {
        off();
        offOther();
      }
    });

    it('listDeliveries: newest first, with filters and what the log shows', async () => {
      const w = await world(s);
      const two = await secondApp(s, w);
      const other = await world(s);
      const privateId = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'P',
        scopes: 'read_products',
        tokenHash: tag('private-hash'),
        webhookSecretEnc: 'sealed',
        now: NOW,
      });
      const subA = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/a');
      const subB = await subscribe(s, w.store.id, { appId: two.app.id }, 'products/create');
      const subP = await subscribe(s, w.store.id, { privateAppId: privateId }, 'products/create');
      const subElsewhere = await subscribe(s, other.store.id, { appId: w.app.id }, 'products/create');
      const e1 = await enqueue(s, w.store.id, 'products/create', [subA, subB, subP], NOW);
      await enqueue(s, other.store.id, 'products/create', [subElsewhere], NOW);
      const [dA, dB, dP] = await deliveriesOf(s, w.store.id, e1);

      const inStore = await s.webhooks.listDeliveries({ storeId: w.store.id, limit: 10 });
      expect(inStore.map((d) => d.id)).toEqual([dP, dB, dA]);
      expect(inStore[2]).toEqual({
        id: dA,
        webhook_id: `wh-${e1}-${subA.id}`,
        event_id: e1,
        topic: 'products/create',
        status: 'pending',
        attempts: 0,
        last_status: null,
        last_error: null,
        next_attempt_at: NOW,
        created_at: NOW,
        updated_at: NOW,
        private_app_id: null,
        store_name: w.store.name,
        client_id: w.app.client_id,
        address: 'https://hooks.example.test/a',
      });
      expect(inStore[0]).toMatchObject({ private_app_id: privateId, client_id: null });
      expect((await s.webhooks.listDeliveries({ appId: w.app.id, limit: 10 })).map((d) => d.store_name).sort()).toEqual(
        [other.store.name, w.store.name].sort(),
      );
      expect((await s.webhooks.listDeliveries({ appId: w.app.id, storeId: w.store.id, limit: 10 })).map((d) => d.id)).toEqual([dA]);
      expect((await s.webhooks.listDeliveries({ storeId: w.store.id, limit: 2 })).map((d) => d.id)).toEqual([dP, dB]);
      expect(await s.webhooks.listDeliveries({ storeId: w.store.id, status: 'delivered', limit: 10 })).toEqual([]);
      expect((await s.webhooks.listDeliveries({ id: dB, limit: 10 })).map((d) => d.id)).toEqual([dB]);
    });

    it('cancelPending cancels an app’s queued deliveries in a store, except app/uninstalled', async () => {
      const w = await world(s);
      const two = await secondApp(s, w);
      const other = await world(s);
      const subs = {
        mine: await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create'),
        uninstalled: await subscribe(s, w.store.id, { appId: w.app.id }, 'app/uninstalled'),
        sibling: await subscribe(s, w.store.id, { appId: two.app.id }, 'products/create'),
        elsewhere: await subscribe(s, other.store.id, { appId: w.app.id }, 'products/create'),
      };
      const [mine] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'products/create', [subs.mine], NOW));
      const [farewell] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'app/uninstalled', [subs.uninstalled], NOW));
      const [sibling] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'products/create', [subs.sibling], NOW));
      const [elsewhere] = await deliveriesOf(s, other.store.id, await enqueue(s, other.store.id, 'products/create', [subs.elsewhere], NOW));

      await s.webhooks.cancelPending(w.store.id, w.app.id, 'the app was uninstalled', NOW + 1);
      expect(await delivery(s, mine!)).toMatchObject({ status: 'cancelled', last_error: 'the app was uninstalled', updated_at: NOW + 1 });
      expect((await delivery(s, farewell!)).status).toBe('pending');
      expect((await delivery(s, sibling!)).status).toBe('pending');
      expect((await delivery(s, elsewhere!)).status).toBe('pending');
    });

    it('redeliveryCheck and requeue (which wakes listeners)', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const [id] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'products/create', [sub], NOW));
      await s.webhooks.cancelPending(w.store.id, w.app.id, 'stopped', NOW + 1);
      expect(await s.webhooks.redeliveryCheck(id!)).toEqual({ status: 'cancelled', sub_id: sub.id, disabled_at: null });
      expect(await s.webhooks.redeliveryCheck(id! + 100_000)).toBeUndefined();

      let calls = 0;
      const off = s.onDeliveriesQueued(() => calls++);
      try {
        await s.webhooks.requeue(id!, NOW + 2);
      } finally {
        off();
      }
      expect(calls).toBe(1);
      expect(await delivery(s, id!)).toMatchObject({ status: 'pending', attempts: 0, next_attempt_at: NOW + 2, updated_at: NOW + 2 });

      await s.webhooks.deleteSubscription(w.store.id, sub.id);
      expect(await s.webhooks.redeliveryCheck(id!)).toEqual({ status: 'pending', sub_id: null, disabled_at: null });
    });

    it('partnerDeliveries and partnerDelivery: one app’s deliveries only, with filters', async () => {
      const w = await world(s);
      const two = await secondApp(s, w);
      const subP = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/partner');
      const subO = await subscribe(s, w.store.id, { appId: w.app.id }, 'orders/create');
      const subTwo = await subscribe(s, w.store.id, { appId: two.app.id }, 'products/create');
      const e1 = await enqueue(s, w.store.id, 'products/create', [subP, subTwo], NOW);
      const [d1, dTwo] = await deliveriesOf(s, w.store.id, e1);
      const [d2] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'orders/create', [subO], NOW + 1));
      const [d3] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'products/create', [subP], NOW + 2));

      const all = await s.webhooks.partnerDeliveries(w.app.id, { limit: 10 });
      expect(all.map((d) => d.id)).toEqual([d3, d2, d1]);
      expect(all[2]).toEqual({
        id: d1,
        topic: 'products/create',
        status: 'pending',
        attempts: 0,
        last_status: null,
        last_error: null,
        created_at: NOW,
        updated_at: NOW,
        next_attempt_at: NOW,
        store_name: w.store.name,
        address: 'https://hooks.example.test/partner',
      });
      expect((await s.webhooks.partnerDeliveries(w.app.id, { topic: 'products/create', limit: 10 })).map((d) => d.id)).toEqual([d3, d1]);
      expect((await s.webhooks.partnerDeliveries(w.app.id, { before: d3!, limit: 10 })).map((d) => d.id)).toEqual([d2, d1]);
      expect((await s.webhooks.partnerDeliveries(w.app.id, { limit: 1 })).map((d) => d.id)).toEqual([d3]);
      expect(await s.webhooks.partnerDeliveries(w.app.id, { status: 'dead', limit: 10 })).toEqual([]);
      expect((await s.webhooks.partnerDeliveries(two.app.id, { limit: 10 })).map((d) => d.id)).toEqual([dTwo]);

      expect(await s.webhooks.partnerDelivery(w.app.id, d1!)).toEqual({
        id: d1,
        webhook_id: `wh-${e1}-${subP.id}`,
        event_id: e1,
        topic: 'products/create',
        status: 'pending',
        attempts: 0,
        last_status: null,
        last_error: null,
        created_at: NOW,
        next_attempt_at: NOW,
        store_name: w.store.name,
        sub_id: subP.id,
        address: 'https://hooks.example.test/partner',
        disabled_at: null,
      });
      expect(await s.webhooks.partnerDelivery(two.app.id, d1!)).toBeUndefined();
      expect(await s.webhooks.disabledSubscriptions([])).toEqual([]);
      expect(await s.webhooks.disabledSubscriptions([w.app.id])).toEqual([]);
    });
  });

  describe('webhook recovery', () => {
    beforeEach(() => drain(s));

    /** The subscription's deliveries ended with these statuses, in order (claimed and recorded). */
    async function ended(sub: SubscriptionRow, statuses: readonly ('delivered' | 'dead')[], at: number) {
      for (const [i] of statuses.entries()) await enqueue(s, sub.store_id, 'products/create', [sub], at + i);
      const rows = await claim(s, 'recovery', at + MINUTE);
      await s.deliveryQueue.recordOutcomes(
        rows.map((r, i) => attempted(r, at + MINUTE, { status: statuses[i]! }, { status: statuses[i] === 'dead' ? 500 : 200 })),
        { worker: 'recovery', now: at + MINUTE, disableAfterDead: 100 },
      );
      return rows.map((r) => r.id);
    }

    it('find: one subscription with its store and owner state, by owner, by app or by id; nobody else’s', async () => {
      const w = await world(s);
      const other = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const expected = { ...sub, disabled_reason: null, store_name: w.store.name, scopes: 'read_products', reachable: true };
      expect(await s.webhookRecovery.findOwned(w.store.id, `app:${w.app.id}`, sub.id)).toMatchObject(expected);
      expect(await s.webhookRecovery.findOfApp(w.app.id, sub.id)).toMatchObject(expected);
      expect(await s.webhookRecovery.findById(sub.id)).toMatchObject(expected);
      expect(await s.webhookRecovery.findOwned(other.store.id, `app:${w.app.id}`, sub.id)).toBeUndefined();
      expect(await s.webhookRecovery.findOwned(w.store.id, `app:${other.app.id}`, sub.id)).toBeUndefined();
      expect(await s.webhookRecovery.findOfApp(other.app.id, sub.id)).toBeUndefined();
      expect(await s.webhookRecovery.findById(0)).toBeUndefined();
      await s.apps.updateInstallation(w.store.id, w.installation.id, { uninstalledAt: NOW + 1 });
      expect(await s.webhookRecovery.findById(sub.id)).toMatchObject({ reachable: false });
    });

    it('enable: a disabled subscription only, in its store; a clean record and a new version', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      expect(await s.webhookRecovery.enable(w.store.id, sub.id, NOW + 5)).toBeUndefined();
      await ended(sub, ['dead', 'dead'], NOW);
      const [c] = await (async () => {
        await enqueue(s, w.store.id, 'products/create', [sub], NOW + 2);
        return claim(s, 'recovery', NOW + 2 * MINUTE);
      })();
      await s.deliveryQueue.recordOutcomes([attempted(c!, NOW + 2 * MINUTE, { status: 'dead', disable: 'gone' }, { status: 410 })], {
        worker: 'recovery',
        now: NOW + 2 * MINUTE,
        disableAfterDead: 100,
      });
      expect(await s.webhookRecovery.findById(sub.id)).toMatchObject({
        disabled_at: NOW + 2 * MINUTE,
        disabled_reason: 'gone',
        version: 2,
      });
      const other = await world(s);
      expect(await s.webhookRecovery.enable(other.store.id, sub.id, NOW + 5)).toBeUndefined();
      expect(await s.webhookRecovery.enable(w.store.id, sub.id, NOW + 3 * MINUTE)).toMatchObject({
        id: sub.id,
        disabled_at: null,
        version: 3,
        updated_at: NOW + 3 * MINUTE,
      });
      expect(await s.webhookRecovery.findById(sub.id)).toMatchObject({ disabled_reason: null });
      // The claim carries when it was enabled; the next dead delivery starts a new streak.
      await enqueue(s, w.store.id, 'products/create', [sub], NOW + 4 * MINUTE);
      const [next] = await claim(s, 'recovery', NOW + 5 * MINUTE);
      expect(next).toMatchObject({ enabled_at: NOW + 3 * MINUTE, replayed_at: null });
      await s.deliveryQueue.recordOutcomes([attempted(next!, NOW + 5 * MINUTE, { status: 'dead' }, { status: 500 })], {
        worker: 'recovery',
        now: NOW + 5 * MINUTE,
        disableAfterDead: 2,
      });
      expect(await s.webhookRecovery.findById(sub.id)).toMatchObject({ disabled_at: null });
    });

    it('replay: the statuses asked for since a time, oldest first, at most the limit; the same rows marked, pending ones left alone', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const sibling = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/update');
      const ids = await ended(sub, ['delivered', 'dead', 'dead', 'delivered', 'dead'], NOW + HOUR);
      const siblingIds = await ended(sibling, ['dead'], NOW + HOUR);
      const before = await Promise.all(ids.map((id) => delivery(s, id)));
      const request = { storeId: w.store.id, subscriptionId: sub.id, since: NOW + HOUR + 1, now: NOW + 2 * HOUR };
      // Dead ones created at or after `since`, oldest first, two of three: the third is where to go on.
      const first = await s.transaction((tx) => tx.webhookRecovery.replay({ ...request, statuses: ['dead', 'cancelled'], limit: 2 }));
      expect(first).toEqual({ queued: 2, alreadyQueued: 0, nextSince: NOW + HOUR + 4 });
      const after = await Promise.all(ids.map((id) => delivery(s, id)));
      expect(after.map((d) => d.status)).toEqual(['delivered', 'pending', 'pending', 'delivered', 'dead']);
      expect(after.map((d) => d.webhook_id)).toEqual(before.map((d) => d.webhook_id));
      expect(after[1]).toMatchObject({ attempts: 0, next_attempt_at: NOW + 2 * HOUR });
      expect((await delivery(s, siblingIds[0]!)).status).toBe('dead');
      // Again with every status: the queued ones are not queued twice.
      const all = await s.transaction((tx) =>
        tx.webhookRecovery.replay({ ...request, statuses: ['dead', 'cancelled', 'delivered'], limit: 10 }),
      );
      expect(all).toEqual({ queued: 2, alreadyQueued: 2, nextSince: undefined });
      // Claimed, they say they are a replay; a replay's dead outcome leaves the streak alone.
      const claimed = await claim(s, 'recovery', NOW + 3 * HOUR);
      expect(claimed.map((c) => c.id).sort((a, b) => a - b)).toEqual(ids.slice(1).sort((a, b) => a - b));
      expect(claimed.every((c) => c.replayed_at !== null)).toBe(true);
      await s.deliveryQueue.recordOutcomes(
        claimed.map((c) => ({ ...attempted(c, NOW + 3 * HOUR, { status: 'dead' }, { status: 500 }), replay: true })),
        { worker: 'recovery', now: NOW + 3 * HOUR, disableAfterDead: 1 },
      );
      expect(await s.webhookRecovery.findById(sub.id)).toMatchObject({ disabled_at: null });
      // A redelivery by hand is an ordinary send again.
      await s.transaction((tx) => tx.webhooks.requeue(ids[0]!, NOW + 4 * HOUR));
      expect((await claim(s, 'recovery', NOW + 5 * HOUR)).map((c) => [c.id, c.replayed_at])).toEqual([[ids[0], null]]);
    });

    it('disabling a subscription queues subscription/disabled to one subscription per other address, in the same write', async () => {
      const w = await world(s);
      const dying = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/dying');
      await subscribe(s, w.store.id, { appId: w.app.id }, 'products/update', 'https://hooks.example.test/dying');
      const first = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/update', 'https://hooks.example.test/alive');
      await subscribe(s, w.store.id, { appId: w.app.id }, 'products/delete', 'https://hooks.example.test/alive');
      const other = await secondApp(s, w);
      await subscribe(s, w.store.id, { appId: other.app.id }, 'products/update', 'https://hooks.example.test/other-app');
      await enqueue(s, w.store.id, 'products/create', [dying], NOW);
      const [c] = await claim(s, 'recovery', NOW + MINUTE);
      await s.deliveryQueue.recordOutcomes(
        [attempted(c!, NOW + MINUTE, { status: 'dead', disable: 'the receiver answered 410 Gone' }, { status: 410 })],
        {
          worker: 'recovery',
          now: NOW + MINUTE,
          disableAfterDead: 5,
        },
      );
      const notices = (await s.webhooks.listDeliveries({ storeId: w.store.id, limit: 100 })).filter(
        (d) => d.topic === 'subscription/disabled',
      );
      expect(notices).toMatchObject([{ status: 'pending', address: 'https://hooks.example.test/alive' }]);
      const [notice] = await claim(s, 'recovery', NOW + 2 * MINUTE);
      expect(notice).toMatchObject({ subscription_id: first.id, topic: 'subscription/disabled', app_id: w.app.id });
      expect(JSON.parse(notice!.payload)).toEqual({
        subscription: { id: String(dying.id), topic: 'products/create', address: 'https://hooks.example.test/dying' },
        reason: 'the receiver answered 410 Gone',
        disabled_at: new Date(NOW + MINUTE).toISOString(),
      });
    });
  });

  describe('deliveryQueue', () => {
    beforeEach(() => drain(s));

    it(`singleProcess is ${target.dialect === 'sqlite'}`, () => {
      expect(s.deliveryQueue.singleProcess).toBe(target.dialect === 'sqlite');
    });

    it('claim: due pending deliveries, oldest first, with what sending needs', async () => {
      const w = await world(s);
      const privateId = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'P',
        scopes: 'read_products',
        tokenHash: tag('private-hash'),
        webhookSecretEnc: 'sealed-private',
        now: NOW,
      });
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/claim');
      const subP = await subscribe(s, w.store.id, { privateAppId: privateId }, 'orders/create', 'https://hooks.example.test/private');
      // Written first but due later: the order is by due time, not by id.
      const later = await enqueue(s, w.store.id, 'products/create', [sub], NOW + 2);
      const earlier = await enqueue(s, w.store.id, 'products/create', [sub], NOW + 1);
      const priv = await enqueue(s, w.store.id, 'orders/create', [subP], NOW + 3);
      await enqueue(s, w.store.id, 'products/create', [sub], NOW + HOUR);

      const rows = await claim(s, 'worker-1', NOW + MINUTE);
      expect(rows.map((r) => r.event_id)).toEqual([earlier, later, priv]);
      expect(rows[0]).toEqual({
        id: expect.any(Number),
        store_id: w.store.id,
        webhook_id: `wh-${earlier}-${sub.id}`,
        event_id: earlier,
        topic: 'products/create',
        subscription_id: sub.id,
        attempts: 0,
        app_id: w.app.id,
        private_app_id: null,
        replayed_at: null,
        payload: `{"event":"${earlier}"}`,
        include_fields: null,
        event_at: NOW + 1,
        store_name: w.store.name,
        sub_id: sub.id,
        address: 'https://hooks.example.test/claim',
        api_version: '2026-01',
        disabled_at: null,
        enabled_at: null,
        client_secret_enc: w.app.client_secret_enc,
        webhook_signature_ed25519: 0,
        privacy_webhook_url: null,
        previous_secret_enc: null,
        previous_secret_expires_at: null,
        installation_id: w.installation.id,
        uninstalled_at: null,
        installed_at: NOW,
        installation_scopes: 'read_products',
        private_id: null,
        webhook_secret_enc: null,
        previous_webhook_secret_enc: null,
        previous_webhook_secret_expires_at: null,
        revoked_at: null,
        private_scopes: null,
      });
      expect(rows[2]).toMatchObject({
        private_app_id: privateId,
        app_id: null,
        private_id: privateId,
        webhook_secret_enc: 'sealed-private',
        revoked_at: null,
        private_scopes: 'read_products',
        client_secret_enc: null,
        installation_id: null,
        installation_scopes: null,
        address: 'https://hooks.example.test/private',
      });
    });

    it('claim loads an uninstalled app and a revoked private app as they are (the worker decides)', async () => {
      const w = await world(s);
      const privateId = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'P',
        scopes: 'read_products',
        tokenHash: tag('private-hash'),
        webhookSecretEnc: 'sealed',
        now: NOW,
      });
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const subP = await subscribe(s, w.store.id, { privateAppId: privateId }, 'products/create');
      await enqueue(s, w.store.id, 'products/create', [sub, subP], NOW);
      await s.apps.updateInstallation(w.store.id, w.installation.id, { uninstalledAt: NOW + 1 });
      await s.apps.revokePrivateApp(w.store.id, privateId, NOW + 2);
      await s.webhooks.deleteSubscription(w.store.id, sub.id);
      const rows = await claim(s, 'worker-1', NOW + MINUTE);
      expect(rows).toHaveLength(2);
      expect(rows[0]).toMatchObject({
        subscription_id: sub.id,
        sub_id: null,
        address: null,
        uninstalled_at: NOW + 1,
        installation_id: w.installation.id,
      });
      expect(rows[1]).toMatchObject({ subscription_id: subP.id, sub_id: subP.id, revoked_at: NOW + 2 });
    });

    it('claim loads the owner’s scopes as they are when claimed, not as they were when queued', async () => {
      const w = await world(s);
      const privateId = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'P',
        scopes: 'read_products',
        tokenHash: tag('private-hash'),
        webhookSecretEnc: 'sealed',
        now: NOW,
      });
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const subP = await subscribe(s, w.store.id, { privateAppId: privateId }, 'products/create');
      await enqueue(s, w.store.id, 'products/create', [sub, subP], NOW);
      await s.apps.updateInstallation(w.store.id, w.installation.id, { scopes: 'read_orders' });
      const rows = await claim(s, 'worker-1', NOW + MINUTE);
      expect(rows.map((r) => [r.subscription_id, r.installation_scopes, r.private_scopes])).toEqual([
        [sub.id, 'read_orders', null],
        [subP.id, null, 'read_products'],
      ]);
    });

    it('claim respects limit and excludeSubscriptions', async () => {
      const w = await world(s);
      const a = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const b = await subscribe(s, w.store.id, { appId: w.app.id }, 'orders/create');
      const e1 = await enqueue(s, w.store.id, 'products/create', [a], NOW + 1);
      const e2 = await enqueue(s, w.store.id, 'orders/create', [b], NOW + 2);
      const e3 = await enqueue(s, w.store.id, 'products/create', [a], NOW + 3);
      const at = NOW + MINUTE;
      expect((await claim(s, 'worker-1', at, { limit: 1 })).map((r) => r.event_id)).toEqual([e1]);
      expect((await claim(s, 'worker-1', at, { exclude: [a.id] })).map((r) => r.event_id)).toEqual([e2]);
      expect((await claim(s, 'worker-1', at)).map((r) => r.event_id)).toEqual([e3]);
      expect(await claim(s, 'worker-1', at)).toEqual([]);
    });

    it('the lease: nobody else claims a delivery before it ends; afterwards another worker may, and only its outcome counts', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const [id] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'products/create', [sub], NOW));
      const t = NOW + MINUTE;
      const [mine] = await claim(s, 'worker-1', t, { leaseMs: MINUTE });
      expect(mine?.id).toBe(id);
      expect(await claim(s, 'worker-2', t + 1)).toEqual([]);
      expect(await claim(s, 'worker-2', t + MINUTE - 1)).toEqual([]);
      const [theirs] = await claim(s, 'worker-2', t + MINUTE + 1);
      expect(theirs?.id).toBe(id);

      // The first worker's late outcome changes neither the delivery nor the subscription.
      await s.deliveryQueue.recordOutcomes([attempted(mine!, t + 2 * MINUTE, { status: 'dead', disable: 'gone' }, { status: 410 })], {
        worker: 'worker-1',
        now: t + 2 * MINUTE,
        disableAfterDead: 1,
      });
      expect(await delivery(s, id!)).toMatchObject({ status: 'pending', attempts: 0, last_status: null });
      expect((await s.webhooks.findSubscription(w.store.id, sub.owner, sub.id))?.disabled_at).toBeNull();

      await s.deliveryQueue.recordOutcomes([attempted(theirs!, t + 2 * MINUTE, { status: 'delivered' })], {
        worker: 'worker-2',
        now: t + 2 * MINUTE,
        disableAfterDead: 1,
      });
      expect(await delivery(s, id!)).toMatchObject({ status: 'delivered', attempts: 1, last_status: 200, updated_at: t + 2 * MINUTE });
    });

    it('recordOutcomes: one batch spanning two stores records each row in its own store, bodies and errors byte for byte', async () => {
      const a = await world(s);
      const b = await world(s);
      const subA = await subscribe(s, a.store.id, { appId: a.app.id }, 'products/create');
      const subB = await subscribe(s, b.store.id, { appId: b.app.id }, 'products/create');
      await enqueue(s, a.store.id, 'products/create', [subA], NOW + 1);
      await enqueue(s, b.store.id, 'products/create', [subB], NOW + 2);
      await enqueue(s, a.store.id, 'products/create', [subA], NOW + 3);
      const t = NOW + MINUTE;
      const rows = await claim(s, 'worker-x', t, { exclude: [-1, -2] });
      const [da, db, da2] = rows.filter((r) => [subA.id, subB.id].includes(r.subscription_id));
      expect([da!.subscription_id, db!.subscription_id, da2!.subscription_id]).toEqual([subA.id, subB.id, subA.id]);
      const odd = 'quote " backslash \\ tab \t line\nünïcödé ✓ 𝄞 end';
      await s.deliveryQueue.recordOutcomes(
        [
          attempted(da!, t + 1, { status: 'delivered' }, { body: odd }),
          attempted(db!, t + 2, { status: 'pending', nextAttemptAt: t + HOUR }, { status: 503, body: '[1,2]', error: odd }),
          { id: da2!.id, storeId: a.store.id, subscriptionId: subA.id, attempts: 0, cancelled: odd },
        ],
        { worker: 'worker-x', now: t + 10, disableAfterDead: 5 },
      );
      expect(await delivery(s, da!.id)).toMatchObject({ status: 'delivered', attempts: 1, last_status: 200, last_error: null });
      expect(await delivery(s, db!.id)).toMatchObject({
        status: 'pending',
        attempts: 1,
        last_status: 503,
        last_error: odd,
        next_attempt_at: t + HOUR,
      });
      expect(await delivery(s, da2!.id)).toMatchObject({ status: 'cancelled', attempts: 0, last_status: null, last_error: odd });
      expect(await s.webhooks.attempts(da!.id)).toEqual([
        expect.objectContaining({ delivery_id: da!.id, status_code: 200, response_body: odd, error: null }),
      ]);
      expect(await s.webhooks.attempts(db!.id)).toEqual([
        expect.objectContaining({ delivery_id: db!.id, status_code: 503, response_body: '[1,2]', error: odd }),
      ]);
      expect(await s.webhooks.attempts(da2!.id)).toEqual([]);
    });

    it('recordOutcomes: delivered, retry, dead and cancelled; one attempt row per attempt', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      for (let i = 1; i <= 4; i++) await enqueue(s, w.store.id, 'products/create', [sub], NOW + i);
      const t = NOW + MINUTE;
      const [d1, d2, d3, d4] = await claim(s, 'worker-1', t);
      await s.deliveryQueue.recordOutcomes(
        [
          attempted(d1!, t + 1, { status: 'delivered' }, { body: 'ok' }),
          attempted(d2!, t + 2, { status: 'pending', nextAttemptAt: t + HOUR }, { status: null, error: 'connect ECONNREFUSED' }),
          attempted(d3!, t + 3, { status: 'dead' }, { status: 410, error: 'gone for good' }),
          { id: d4!.id, storeId: w.store.id, subscriptionId: sub.id, attempts: 0, cancelled: 'subscription deleted' },
        ],
        { worker: 'worker-1', now: t + 10, disableAfterDead: 5 },
      );
      expect(await delivery(s, d1!.id)).toMatchObject({
        status: 'delivered',
        attempts: 1,
        last_status: 200,
        last_error: null,
        updated_at: t + 10,
      });
      expect(await delivery(s, d2!.id)).toMatchObject({
        status: 'pending',
        attempts: 1,
        last_status: null,
        last_error: 'connect ECONNREFUSED',
        next_attempt_at: t + HOUR,
      });
      expect(await delivery(s, d3!.id)).toMatchObject({ status: 'dead', attempts: 1, last_status: 410, last_error: 'gone for good' });
      expect(await delivery(s, d4!.id)).toMatchObject({ status: 'cancelled', attempts: 0, last_error: 'subscription deleted' });

      expect(await s.webhooks.attempts(d1!.id)).toEqual([
        {
          id: expect.any(Number),
          delivery_id: d1!.id,
          attempted_at: t + 1,
          status_code: 200,
          latency_ms: 12,
          response_body: 'ok',
          error: null,
        },
      ]);
      expect(await s.webhooks.attempts(d4!.id)).toEqual([]);
      const last = await s.webhooks.lastAttempts([d1!.id, d2!.id, d3!.id, d4!.id]);
      expect([...last.keys()].sort((a, b) => a - b)).toEqual([d1!.id, d2!.id, d3!.id]);
      expect(last.get(d2!.id)).toMatchObject({
        delivery_id: d2!.id,
        attempted_at: t + 2,
        status_code: null,
        error: 'connect ECONNREFUSED',
      });
      expect(await s.webhooks.lastAttempts([])).toEqual(new Map());

      // The retry is released and comes due again at its time, with its attempt count.
      expect(await claim(s, 'worker-2', t + HOUR - 1)).toEqual([]);
      const [again] = await claim(s, 'worker-2', t + HOUR);
      expect(again).toMatchObject({ id: d2!.id, attempts: 1 });
      await s.deliveryQueue.recordOutcomes([attempted(again!, t + HOUR + 1, { status: 'delivered' }, { status: 204 })], {
        worker: 'worker-2',
        now: t + HOUR + 2,
        disableAfterDead: 5,
      });
      expect(await delivery(s, d2!.id)).toMatchObject({ status: 'delivered', attempts: 2, last_status: 204 });
      expect((await s.webhooks.attempts(d2!.id)).map((a) => a.attempted_at)).toEqual([t + 2, t + HOUR + 1]);
      expect((await s.webhooks.lastAttempts([d2!.id])).get(d2!.id)).toMatchObject({ attempted_at: t + HOUR + 1, status_code: 204 });
      // Finished deliveries are never claimed again.
      expect(await claim(s, 'worker-3', FAR - 1)).toEqual([]);
    });

    it('a dead outcome with a reason to disable disables the subscription', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/refused');
      const [id] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'products/create', [sub], NOW));
      const [c] = await claim(s, 'worker-1', NOW + 1);
      await s.deliveryQueue.recordOutcomes(
        [attempted(c!, NOW + 2, { status: 'dead', disable: 'the address refused the request' }, { status: 410 })],
        {
          worker: 'worker-1',
          now: NOW + 3,
          disableAfterDead: 5,
        },
      );
      expect((await s.webhooks.findSubscription(w.store.id, sub.owner, sub.id))?.disabled_at).toBe(NOW + 3);
      expect(await s.webhooks.disabledSubscriptions([w.app.id])).toEqual([
        {
          id: sub.id,
          app_id: w.app.id,
          topic: 'products/create',
          address: 'https://hooks.example.test/refused',
          disabled_at: NOW + 3,
          disabled_reason: 'the address refused the request',
          store_name: w.store.name,
        },
      ]);
      expect(await s.webhooks.redeliveryCheck(id!)).toEqual({ status: 'dead', sub_id: sub.id, disabled_at: NOW + 3 });
      expect(await s.webhooks.recipients(w.store.id, 'products/create')).toEqual([]);
      expect((await s.webhooks.partnerDelivery(w.app.id, id!))?.disabled_at).toBe(NOW + 3);
    });

    it('disableAfterDead dead outcomes in a row disable the subscription; a delivered one resets the streak', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      for (let i = 1; i <= 6; i++) await enqueue(s, w.store.id, 'products/create', [sub], NOW + i);
      const rows = await claim(s, 'worker-1', NOW + MINUTE);
      expect(rows).toHaveLength(6);
      const disabledAt = async () => (await s.webhooks.findSubscription(w.store.id, sub.owner, sub.id))?.disabled_at;
      const plan: Next[] = [{ status: 'dead' }, { status: 'dead' }, { status: 'delivered' }, { status: 'dead' }, { status: 'dead' }];
      for (const [i, next] of plan.entries()) {
        await s.deliveryQueue.recordOutcomes(
          [attempted(rows[i]!, NOW + MINUTE + i, next, { status: next.status === 'dead' ? 500 : 200 })],
          {
            worker: 'worker-1',
            now: NOW + MINUTE + i,
            disableAfterDead: 3,
          },
        );
        expect(await disabledAt()).toBeNull();
      }
      await s.deliveryQueue.recordOutcomes([attempted(rows[5]!, NOW + 2 * MINUTE, { status: 'dead' }, { status: 500 })], {
        worker: 'worker-1',
        now: NOW + 2 * MINUTE,
        disableAfterDead: 3,
      });
      expect(await disabledAt()).toBe(NOW + 2 * MINUTE);
      const [disabled] = await s.webhooks.disabledSubscriptions([w.app.id]);
      expect(disabled).toMatchObject({ id: sub.id, disabled_at: NOW + 2 * MINUTE });
      expect(disabled?.disabled_reason).toEqual(expect.any(String));
    });

    // Outcomes reach recordOutcomes in the order the attempts finished. Within one batch a
    // delivered outcome followed by a dead one for the same subscription does not reset the
    // streak before the dead one is counted (the reset is applied at the end of the batch, and the
    // dead outcome cancels it), so the dead one extends the streak from before the success.
    // Marked as failing until it is decided whether the order within a batch counts.
    it('a delivered outcome earlier in the same batch resets the streak before a later dead one', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      for (let i = 1; i <= 3; i++) await enqueue(s, w.store.id, 'products/create', [sub], NOW + i);
      const [d1, d2, d3] = await claim(s, 'worker-1', NOW + MINUTE);
      const ctx = { worker: 'worker-1', now: NOW + MINUTE, disableAfterDead: 2 };
      await s.deliveryQueue.recordOutcomes([attempted(d1!, NOW + MINUTE, { status: 'dead' }, { status: 500 })], ctx);
      await s.deliveryQueue.recordOutcomes(
        [attempted(d2!, NOW + MINUTE, { status: 'delivered' }), attempted(d3!, NOW + MINUTE, { status: 'dead' }, { status: 500 })],
        ctx,
      );
      // Only one dead outcome since the last delivered one: not disabled.
      expect((await s.webhooks.findSubscription(w.store.id, sub.owner, sub.id))?.disabled_at).toBeNull();
    });

    it('releaseAllClaims frees every claim at once', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      await enqueue(s, w.store.id, 'products/create', [sub], NOW);
      await enqueue(s, w.store.id, 'products/create', [sub], NOW);
      expect(await claim(s, 'worker-1', NOW + 1, { leaseMs: HOUR })).toHaveLength(2);
      expect(await claim(s, 'worker-2', NOW + 2)).toEqual([]);
      await s.deliveryQueue.releaseAllClaims();
      const again = await claim(s, 'worker-2', NOW + 2);
      expect(again).toHaveLength(2);
      // The old holder's outcomes no longer count.
      await s.deliveryQueue.recordOutcomes(
        again.map((c) => attempted(c, NOW + 3, { status: 'delivered' })),
        { worker: 'worker-1', now: NOW + 3, disableAfterDead: 5 },
      );
      expect((await s.webhooks.listDeliveries({ storeId: w.store.id, limit: 10 })).map((d) => d.status)).toEqual(['pending', 'pending']);
    });

    it("deferClaims frees the holder's claims and makes them due later, no attempt counted; other holders' rows stay", async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      for (let i = 0; i < 3; i++) await enqueue(s, w.store.id, 'products/create', [sub], NOW);
      const held = await claim(s, 'worker-1', NOW + 1, { limit: 2, leaseMs: HOUR });
      const other = await claim(s, 'worker-2', NOW + 1, { leaseMs: HOUR });
      expect(other).toHaveLength(1);
      const ids = [...held, ...other].map((c) => c.id);
      expect(await s.deliveryQueue.deferClaims({ worker: 'worker-1', ids, until: NOW + HOUR, now: NOW + 2 })).toBe(2);
      // Not due before the time given, then claimable by anyone, as never attempted.
      expect(await claim(s, 'worker-3', NOW + HOUR - 1)).toEqual([]);
      const again = await claim(s, 'worker-3', NOW + HOUR);
      expect(again.map((c) => c.id).sort()).toEqual(held.map((c) => c.id).sort());
      expect(again.every((c) => c.attempts === 0)).toBe(true);
      expect(await s.deliveryQueue.deferClaims({ worker: 'worker-1', ids: [], until: NOW, now: NOW })).toBe(0);
    });

    it("deferBacklog puts off one store's unheld pending deliveries of the subscriptions given that fall due before the time, at most the limit at once, no attempt counted", async () => {
      const w = await world(s);
      const other = await world(s);
      const [sub1, sub2, sub3] = await Promise.all(
        (['products/create', 'products/update', 'orders/create'] as const).map((topic) =>
          subscribe(s, w.store.id, { appId: w.app.id }, topic),
        ),
      );
      // A privacy delivery has no subscription: its id is the app's negated, in every store.
      const privacy = async (storeId: number, at: number) => {
        const id = tag('evt');
        const subscriptionId = -w.app.id;
        await s.webhooks.insertEvent({ id, storeId, topic: 'customers/data_request', payload: '{}', now: at }, [
          { subscriptionId, appId: w.app.id, privateAppId: null, webhookId: `wh-${id}` },
        ]);
        return id;
      };
      // Held by a worker whose lease runs on, and held by one whose lease has ended.
      const held = await enqueue(s, w.store.id, 'products/create', [sub1!], NOW - 3);
      expect(await claim(s, 'worker-1', NOW - 3, { limit: 1, leaseMs: 2 * HOUR })).toHaveLength(1);
      const lapsed = await enqueue(s, w.store.id, 'products/create', [sub1!], NOW - 2);
      expect(await claim(s, 'worker-2', NOW - 2, { limit: 1, leaseMs: 1 })).toHaveLength(1);
      const due = await enqueue(s, w.store.id, 'products/create', [sub1!], NOW);
      const dueSoon = await enqueue(s, w.store.id, 'products/update', [sub2!], NOW + MINUTE);
      const dueAfter = await enqueue(s, w.store.id, 'products/create', [sub1!], NOW + 2 * HOUR);
      const notListed = await enqueue(s, w.store.id, 'orders/create', [sub3!], NOW);
      const ownPrivacy = await privacy(w.store.id, NOW);
      const otherStorePrivacy = await privacy(other.store.id, NOW);

      const input = {
        storeId: w.store.id,
        subscriptionIds: [sub1!.id, sub2!.id, -w.app.id],
        breakerMadeAt: NOW,
        until: NOW + HOUR,
        now: NOW,
      };
      expect(await s.deliveryQueue.deferBacklog({ ...input, limit: 3 })).toBe(3);
      expect(await s.deliveryQueue.deferBacklog({ ...input, limit: 3 })).toBe(1);
      expect(await s.deliveryQueue.deferBacklog({ ...input, limit: 3 })).toBe(0);
      expect(await s.deliveryQueue.deferBacklog({ ...input, subscriptionIds: [], limit: 3 })).toBe(0);

      // Before the time: only what was not put off (another subscription, another store's privacy
      // delivery of the same app) is due; the held one stays with its holder.
      const leaseMs = DAY;
      const early = await claim(s, 'worker-3', NOW + HOUR - 1, { leaseMs });
      expect(early.map((c) => c.event_id).sort()).toEqual([notListed, otherStorePrivacy].sort());
      const late = await claim(s, 'worker-3', NOW + HOUR, { leaseMs });
      expect(late.map((c) => c.event_id).sort()).toEqual([lapsed, due, dueSoon, ownPrivacy].sort());
      expect(late.every((c) => c.attempts === 0)).toBe(true);
      // The held one comes back once its lease has run out, as before; the later one when it is due.
      const last = await claim(s, 'worker-3', NOW + 2 * HOUR, { leaseMs });
      expect(last.map((c) => c.event_id).sort()).toEqual([held, dueAfter].sort());
    });

    it('deferBacklog leaves out a subscription enabled again after the breaker was made, however late it runs', async () => {
      const w = await world(s);
      const [again, steady] = await Promise.all(
        (['products/create', 'products/update'] as const).map((topic) => subscribe(s, w.store.id, { appId: w.app.id }, topic)),
      );
      // Disabled by a dead delivery (gone), then enabled again at NOW + 3 min.
      await enqueue(s, w.store.id, 'products/create', [again!], NOW);
      const [c] = await claim(s, 'enabler', NOW + MINUTE);
      await s.deliveryQueue.recordOutcomes([attempted(c!, NOW + MINUTE, { status: 'dead', disable: 'gone' }, { status: 410 })], {
        worker: 'enabler',
        now: NOW + MINUTE,
        disableAfterDead: 100,
      });
      expect(await s.webhookRecovery.enable(w.store.id, again!.id, NOW + 3 * MINUTE)).toBeDefined();
      const afterEnable = await enqueue(s, w.store.id, 'products/create', [again!], NOW + 4 * MINUTE);
      const steadyOne = await enqueue(s, w.store.id, 'products/update', [steady!], NOW + 4 * MINUTE);
      const input = { storeId: w.store.id, subscriptionIds: [again!.id, steady!.id], until: NOW + HOUR, now: NOW + 5 * MINUTE, limit: 10 };

      // A breaker made before the enabling (its deferral written after it): only the other
      // subscription is put off, with the notice that the first was disabled, sent to it.
      expect(await s.deliveryQueue.deferBacklog({ ...input, breakerMadeAt: NOW + 2 * MINUTE })).toBe(2);
      const due = await claim(s, 'worker-1', NOW + 5 * MINUTE, { leaseMs: 1 });
      expect(due.map((d) => d.event_id)).toEqual([afterEnable]);
      // A breaker made at or after the enabling holds both.
      expect(await s.deliveryQueue.deferBacklog({ ...input, now: NOW + 6 * MINUTE, breakerMadeAt: NOW + 3 * MINUTE })).toBe(1);
      expect(await claim(s, 'worker-1', NOW + HOUR - 1)).toEqual([]);
      const late = await claim(s, 'worker-1', NOW + HOUR);
      const notice = late.find((d) => d.topic === 'subscription/disabled')?.event_id;
      expect(
        late
          .map((d) => d.event_id)
          .filter((e) => e !== notice)
          .sort(),
      ).toEqual([afterEnable, steadyOne].sort());
      expect(late.map((d) => d.topic).sort()).toEqual(['products/create', 'products/update', 'subscription/disabled']);
    });

    it('prune deletes old finished deliveries, their attempts and unreferenced events; pending deliveries stay', async () => {
      // Times long before every other test's rows, so the counts are this test's alone.
      const old = NOW - 30 * DAY;
      const w = await world(s);
      const a = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const b = await subscribe(s, w.store.id, { appId: w.app.id }, 'orders/create');
      const event = await enqueue(s, w.store.id, 'products/create', [a, b], old);
      const [dDone, dRetry] = await deliveriesOf(s, w.store.id, event);
      const rows = await claim(s, 'worker-1', old + 1);
      expect(rows.map((r) => r.id)).toEqual([dDone, dRetry]);
      await s.deliveryQueue.recordOutcomes(
        [
          attempted(rows[0]!, old + 2, { status: 'delivered' }),
          attempted(rows[1]!, old + 2, { status: 'pending', nextAttemptAt: old + 2 * DAY }, { status: 503 }),
        ],
        { worker: 'worker-1', now: old + 3, disableAfterDead: 5 },
      );

      expect(await s.webhooks.prune(old + DAY)).toEqual({ attempts: 2, deliveries: 1, events: 0 });
      expect(await s.webhooks.listDeliveries({ id: dDone!, limit: 1 })).toEqual([]);
      expect(await delivery(s, dRetry!)).toMatchObject({ status: 'pending', attempts: 1 });

      const [retry] = await claim(s, 'worker-1', old + 2 * DAY);
      expect(retry?.id).toBe(dRetry);
      // The event is still there for the retry to send.
      expect(retry?.payload).toBe(`{"event":"${event}"}`);
      await s.deliveryQueue.recordOutcomes([attempted(retry!, old + 2 * DAY, { status: 'dead' }, { status: 500 })], {
        worker: 'worker-1',
        now: old + 2 * DAY,
        disableAfterDead: 5,
      });
      expect(await s.webhooks.prune(old + 3 * DAY)).toEqual({ attempts: 1, deliveries: 1, events: 1 });
      expect(await s.webhooks.listDeliveries({ storeId: w.store.id, limit: 10 })).toEqual([]);
      expect(await s.webhooks.prune(old + 3 * DAY)).toEqual({ attempts: 0, deliveries: 0, events: 0 });
    });
  });

  it.runIf(target.partitions)('every query the contract ran on a store table reads one partition (routed by store_id)', async () => {
    const unrouted = await unroutedQueries((config as { url: string }).url, recording!.queries);
    expect(unrouted.map((q) => `${q.tables.join(',')}: ${q.sql}`)).toEqual([]);
  });
});
