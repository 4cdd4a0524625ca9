// What every storage contract file shares: the clock, names unique within one database, a merchant/partner
// world to test against, record and token fixtures, and the database each file opens per target.
import { expect, it } from 'vitest';
import type { DatabaseConfig } from '../../src/config.ts';
import { MIGRATIONS } from '../../src/storage/migrate.ts';
import type { AppRow, InstallationRow, NewApp, StoreRow } from '../../src/storage/ports/rows.ts';
import type { Storage } from '../../src/storage/ports/storage.ts';
import type { CodeRedemption, NewCode, NewTokenPair, RefreshRotation } from '../../src/storage/ports/tokens.ts';
import type { NewRecord } from '../../src/storage/ports/bulk-rows.ts';
import { openStorage } from '../../src/storage/sql-storage.ts';
import { type RecordingStorage, recordingStorage, unroutedQueries } from '../partition-routing.ts';
import type { StorageTarget } from '../storage-targets.ts';

export const NOW = Date.UTC(2026, 10, 22);
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
/** Later than any time a test uses: claiming at FAR sees every pending delivery. */
export const FAR = NOW + 3650 * DAY;

// Names, hashes and ids unique within one database: a plain counter, so runs are repeatable. Each test
// file has a database of its own per target, so one counter per file is enough.
let seq = 0;
export const tag = (prefix: string) => `${prefix}-${++seq}`;

/** One target's database for the describe block it is created in; `open` in beforeAll, `close` in afterAll. */
export interface ContractDatabase {
  open(): Promise<Storage>;
  close(): Promise<void>;
  /** The opened database's configuration (valid after `open`). */
  readonly config: DatabaseConfig;
  /** Registers, last in the block, the check that every store-table query of the file read one partition. */
  routingTest(): void;
}

export function contractDatabase(target: StorageTarget): ContractDatabase {
  let storage: Storage | undefined;
  let config: DatabaseConfig | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  let recording: RecordingStorage | undefined;
  return {
    async open() {
      const db = await target.database();
      config = db.config;
      cleanup = db.cleanup;
      // On the partitioned layout every query is recorded, so the last test can check its routing.
      recording = target.partitions && config.dialect === 'postgres' ? recordingStorage(config.url) : undefined;
      const s = recording ? recording.storage : openStorage(config, { poolSize: 10 });
      storage = s;
      expect(await s.migrate({ partitions: target.partitions })).toHaveLength(Object.keys(MIGRATIONS).length);
      return s;
    },
    async close() {
      await (recording ? recording.close() : storage?.close());
      await cleanup?.();
    },
    get config() {
      if (!config) throw new Error('the contract database is not open yet');
      return config;
    },
    routingTest() {
      it.runIf(target.partitions)('every query the contract ran on a store table reads one partition (routed by store_id)', async () => {
        const unrouted = await unroutedQueries((config as { url: string }).url, recording!.queries);
        expect(unrouted.map((q) => `${q.tables.join(',')}: ${q.sql}`)).toEqual([]);
      });
    },
  };
}

export interface World {
  name: string;
  merchantId: number;
  store: StoreRow;
  partnerId: number;
  app: AppRow;
  installation: InstallationRow;
}

export function newApp(name: string, partnerId: number | null): NewApp {
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
export async function world(s: Storage): Promise<World> {
  const name = tag('w');
  const merchant = await s.accounts.insertMerchant({ email: `${name}@merchant.test`, passwordHash: 'hash-merchant', now: NOW });
  const store = await s.accounts.insertStore({ name, ownerMerchantId: merchant.id, now: NOW });
  const partner = await s.accounts.insertPartner({ email: `${name}@partner.test`, passwordHash: 'hash-partner', now: NOW });
  const app = await s.apps.insertApp(newApp(name, partner.id));
  const installation = await s.apps.insertInstallation({ storeId: store.id, appId: app.id, scopes: 'read_products', now: NOW });
  return { name, merchantId: merchant.id, store, partnerId: partner.id, app, installation };
}

/** Another app of the world's partner, installed in the world's store. */
export async function secondApp(s: Storage, w: World): Promise<{ app: AppRow; installation: InstallationRow }> {
  const app = await s.apps.insertApp(newApp(tag('app'), w.partnerId));
  const installation = await s.apps.insertInstallation({ storeId: w.store.id, appId: app.id, scopes: 'read_products', now: NOW });
  return { app, installation };
}

export function product(storeId: number, i: number): Record<string, unknown> {
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

export function customer(storeId: number, email: string): NewRecord<'customers'> {
  return { store_id: storeId, email, first_name: 'Ada', last_name: 'Lovelace', phone: null, created_at: NOW, updated_at: NOW };
}

export function order(storeId: number, email: string): NewRecord<'orders'> {
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

export function newCode(w: World, codeHash: string): NewCode {
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

export function pair(w: World, n: string): NewTokenPair {
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
export async function issue(s: Storage, w: World): Promise<NewTokenPair> {
  const p = pair(w, tag('t'));
  await s.grants.run(async (q) => {
    await q.insertFamily(w.store.id, p.familyId, p.installationId, NOW);
    await q.insertPair(p);
  });
  return p;
}

/** The client of `app`, approved on that row (the contract does not judge secrets). */
const approvedClient = (app: AppRow) => ({ lookupId: app.client_id, approved: app });

export async function rotate(s: Storage, app: AppRow, r: RefreshRotation): Promise<{ scopes: string } | undefined> {
  const outcome = await s.grants.rotateRefresh(approvedClient(app), r);
  expect(outcome).toMatchObject({ ran: true, app: { id: app.id } });
  return outcome.ran ? outcome.granted : undefined;
}

export async function redeem(s: Storage, app: AppRow, r: CodeRedemption) {
  const outcome = await s.grants.redeemCode(approvedClient(app), r);
  expect(outcome).toMatchObject({ ran: true, app: { id: app.id } });
  return outcome.ran ? outcome.granted : undefined;
}
