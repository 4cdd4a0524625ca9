// Migrations that can meet data an earlier version let in, on SQLite and PostgreSQL.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { DatabaseConfig } from '../src/config.ts';
import { MIGRATIONS } from '../src/storage/migrate.ts';
import { openStorage } from '../src/storage/sql-storage.ts';
import { DIALECTS, DIALECTS_WITH_PARTITIONED, freshPostgresUrl, TEST_PARTITIONS } from './harness.ts';

const NOW = Date.UTC(2026, 10, 23);
const UNIQUE_EMAIL = '2026-11-23T00-unique-customer-email';
const REFRESH_SUCCESSORS = '2026-11-24T01-refresh-successors';
const STORE_ROUTED_TOKENS = '2026-11-24T12-store-routed-tokens';
const STORE_ROUTED_WEBHOOKS = '2026-11-24T13-store-routed-webhooks';
const DELIVERY_LEASES = '2026-11-30T03-delivery-leases';

async function database(dialect: string): Promise<{ config: DatabaseConfig; cleanup(): Promise<void> }> {
  if (dialect === 'sqlite') return { config: { dialect: 'sqlite', path: ':memory:' }, cleanup: async () => {} };
  const schema = await freshPostgresUrl();
  return { config: { dialect: 'postgres', url: schema.url }, cleanup: () => schema.drop() };
}

describe.each(DIALECTS)('migrations on %s', (dialect) => {
  it(`${UNIQUE_EMAIL} refuses while customers of one store share an email, changing nothing, and runs once they differ`, async () => {
    const { config, cleanup } = await database(dialect);
    const storage = openStorage(config);
    try {
      await storage.migrate();
      const k = storage.db.kysely;
      // Back to the database as the version before left it: no index, the migration not run, and
      // none of the later ones either (the migrator runs them in order).
      const later = Object.keys(MIGRATIONS).filter((name) => name > UNIQUE_EMAIL);
      for (const name of [...later].reverse()) {
        await MIGRATIONS[name]!.down?.(k);
        await sql`delete from kysely_migration where name = ${name}`.execute(k);
      }
      await k.schema.dropIndex('customers_store_email').execute();
      await k.schema.dropIndex('authorization_codes_installation').execute();
      await sql`delete from kysely_migration where name = ${UNIQUE_EMAIL}`.execute(k);

      const merchant = await storage.accounts.insertMerchant({ email: 'owner@example.test', passwordHash: 'hash', now: NOW });
      const store = await storage.accounts.insertStore({ name: 'dupes', ownerMerchantId: merchant.id, now: NOW });
      const customer = (email: string) => ({
        store_id: store.id,
        email,
        first_name: 'Ada',
        last_name: 'Lovelace',
        phone: null,
        created_at: NOW,
        updated_at: NOW,
      });
      await storage.bulkRows.insert('customers', [customer('twice@example.test'), customer('twice@example.test')]);

      await expect(storage.migrate()).rejects.toThrow(
        `cannot make customer emails unique: 1 email(s) belong to more than one customer of the same store (store ids ${store.id})`,
      );
      // Nothing changed: still no unique key, and the migration is still to run.
      await storage.resources.insert('customers', customer('twice@example.test'));
      const rows = await storage.resources.page('customers').after({ storeId: store.id }, undefined, 10);
      expect(rows).toHaveLength(3);

      // Once every customer has its own email, it runs and the key holds.
      // Plain statements: the repository writes columns that later migrations add.
      await k.updateTable('customers').set({ email: 'second@example.test' }).where('id', '=', rows[1]!.id).execute();
      await k.updateTable('customers').set({ email: 'third@example.test' }).where('id', '=', rows[2]!.id).execute();
      expect(await storage.migrate()).toEqual([UNIQUE_EMAIL, ...later]);
      await expect(storage.resources.insert('customers', customer('twice@example.test'))).rejects.toThrow('customers: another record');
    } finally {
      await storage.close();
      await cleanup();
    }
  });

  it(`${REFRESH_SUCCESSORS} counts access tokens issued before it as used`, async () => {
    const { config, cleanup } = await database(dialect);
    const storage = openStorage(config);
    try {
      await storage.migrate();
      const k = storage.db.kysely;
      // This migration and every later one undone, newest first.
      const undone = Object.keys(MIGRATIONS).filter((name) => name >= REFRESH_SUCCESSORS);
      for (const name of [...undone].reverse()) {
        await MIGRATIONS[name]!.down?.(k);
        await sql`delete from kysely_migration where name = ${name}`.execute(k);
      }
      const merchant = await storage.accounts.insertMerchant({ email: 'old@example.test', passwordHash: 'hash', now: NOW });
      const store = await storage.accounts.insertStore({ name: 'old', ownerMerchantId: merchant.id, now: NOW });
      await sql`insert into token_families (id, installation_id, created_at, revoked_at) values ('fam', 1, ${NOW}, null)`.execute(k);
      await sql`insert into access_tokens (token_hash, family_id, installation_id, store_id, app_id, scopes, expires_at, revoked_at, created_at)
        values ('h', 'fam', 1, ${store.id}, 1, 'read_products', ${NOW + 3_600_000}, null, ${NOW - 5})`.execute(k);
      expect(await storage.migrate()).toEqual(undone);
      expect((await storage.tokens.findAccessToken(store.id, 'h'))?.used_at).toBe(NOW - 5);
    } finally {
      await storage.close();
      await cleanup();
    }
  });
  it(`${STORE_ROUTED_TOKENS} gives every token family the store of its tokens, or else of its installation`, async () => {
    const { config, cleanup } = await database(dialect);
    const storage = openStorage(config);
    try {
      await storage.migrate();
      const k = storage.db.kysely;
      const undone = Object.keys(MIGRATIONS).filter((name) => name >= STORE_ROUTED_TOKENS);
      for (const name of [...undone].reverse()) {
        await MIGRATIONS[name]!.down?.(k);
        await sql`delete from kysely_migration where name = ${name}`.execute(k);
      }
      const merchant = await storage.accounts.insertMerchant({ email: 'families@example.test', passwordHash: 'hash', now: NOW });
      const one = await storage.accounts.insertStore({ name: 'one', ownerMerchantId: merchant.id, now: NOW });
      const two = await storage.accounts.insertStore({ name: 'two', ownerMerchantId: merchant.id, now: NOW });
      // Inserted as the table stood then: the app repository reads columns added since.
      const app = (
        await sql<{
          id: number;
        }>`insert into apps (client_id, partner_id, name, app_url, redirect_uri, scopes, client_secret_enc, created_at)
          values ('families-app', null, 'Families', 'https://app.example.test/', 'https://app.example.test/cb', 'read_products', 'sealed', ${NOW})
          returning id`.execute(k)
      ).rows[0]!;
      const inTwo = await storage.apps.insertInstallation({ storeId: two.id, appId: app.id, scopes: 'read_products', now: NOW });
      // A family with tokens (of store one), and one without tokens whose installation is in store two.
      await sql`insert into token_families (id, installation_id, created_at, revoked_at) values ('with-tokens', 999, ${NOW}, null)`.execute(
        k,
      );
      await sql`insert into token_families (id, installation_id, created_at, revoked_at) values ('bare', ${inTwo.id}, ${NOW}, null)`.execute(
        k,
      );
      await sql`insert into access_tokens (token_hash, family_id, installation_id, store_id, app_id, scopes, expires_at, revoked_at, created_at, used_at)
        values ('h-one', 'with-tokens', 999, ${one.id}, ${app.id}, 'read_products', ${NOW + 3_600_000}, null, ${NOW}, null)`.execute(k);
      expect(await storage.migrate()).toEqual(undone);
      const rows = await sql<{ id: string; store_id: number | string }>`select id, store_id from token_families order by id`.execute(k);
      expect(rows.rows.map((r) => [r.id, Number(r.store_id)])).toEqual([
        ['bare', two.id],
        ['with-tokens', one.id],
      ]);
      // The token is found through its store, and only through it.
      expect((await storage.tokens.findAccessToken(one.id, 'h-one'))?.store_id).toBe(one.id);
      expect(await storage.tokens.findAccessToken(two.id, 'h-one')).toBeUndefined();
    } finally {
      await storage.close();
      await cleanup();
    }
  });

  it(`${STORE_ROUTED_WEBHOOKS} gives each webhook attempt the store of its delivery`, async () => {
    const { config, cleanup } = await database(dialect);
    const storage = openStorage(config);
    try {
      await storage.migrate();
      const k = storage.db.kysely;
      const undone = Object.keys(MIGRATIONS).filter((name) => name >= STORE_ROUTED_WEBHOOKS);
      for (const name of [...undone].reverse()) {
        await MIGRATIONS[name]!.down?.(k);
        await sql`delete from kysely_migration where name = ${name}`.execute(k);
      }
      const merchant = await storage.accounts.insertMerchant({ email: 'attempts@example.test', passwordHash: 'hash', now: NOW });
      await storage.accounts.insertStore({ name: 'first', ownerMerchantId: merchant.id, now: NOW });
      const second = await storage.accounts.insertStore({ name: 'second', ownerMerchantId: merchant.id, now: NOW });
      await sql`insert into webhook_deliveries (id, webhook_id, event_id, subscription_id, store_id, app_id, private_app_id, topic, status, attempts,
          next_attempt_at, claimed_by, claimed_until, last_status, last_error, created_at, updated_at)
        values (41, 'wh-41', 'ev-41', 1, ${second.id}, null, null, 'products/create', 'dead', 1, ${NOW}, null, null, 500, 'HTTP 500', ${NOW}, ${NOW})`.execute(
        k,
      );
      for (const delivery of [41, 42])
        await sql`insert into webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, response_body, error)
          values (${delivery}, ${NOW}, 500, 3, null, null)`.execute(k);
      expect(await storage.migrate()).toEqual(undone);
      const rows = await sql<{ delivery_id: number | string; store_id: number | string }>`
        select delivery_id, store_id from webhook_attempts order by delivery_id`.execute(k);
      // An attempt whose delivery is already gone keeps 0 until the pruning removes it.
      expect(rows.rows.map((r) => [Number(r.delivery_id), Number(r.store_id)])).toEqual([
        [41, second.id],
        [42, 0],
      ]);
      if (dialect === 'postgres')
        await expect(
          sql`insert into webhook_attempts (delivery_id, attempted_at, status_code, latency_ms) values (41, ${NOW}, 200, 1)`.execute(k),
        ).rejects.toThrow(/store_id/);
    } finally {
      await storage.close();
      await cleanup();
    }
  });
});

describe.each(DIALECTS_WITH_PARTITIONED)('the delivery leases migration on %s', (dialect) => {
  it(`${DELIVERY_LEASES} moves the claims held into leases and drops the delivery's claim columns`, async () => {
    const { config, cleanup } = await database(dialect === 'sqlite' ? 'sqlite' : 'postgres');
    const storage = openStorage(config);
    try {
      await storage.migrate(dialect === 'postgres-partitioned' ? { partitions: TEST_PARTITIONS } : {});
      const k = storage.db.kysely;
      const undone = Object.keys(MIGRATIONS).filter((name) => name >= DELIVERY_LEASES);
      for (const name of [...undone].reverse()) {
        await MIGRATIONS[name]!.down?.(k);
        await sql`delete from kysely_migration where name = ${name}`.execute(k);
      }
      const merchant = await storage.accounts.insertMerchant({ email: 'leases@example.test', passwordHash: 'hash', now: NOW });
      const store = await storage.accounts.insertStore({ name: 'leases', ownerMerchantId: merchant.id, now: NOW });
      await sql`insert into webhook_events (id, store_id, topic, payload, created_at)
        values ('ev-5', ${store.id}, 'products/create', '{}', ${NOW})`.execute(k);
      // Held, free, and finished with a claim its worker never cleared.
      const claims: [number, string, string | null, number | null][] = [
        [51, 'pending', 'w-1', NOW + 60_000],
        [52, 'pending', null, null],
        [53, 'delivered', 'w-2', NOW + 60_000],
      ];
      for (const [id, status, by, until] of claims)
        await sql`insert into webhook_deliveries (id, webhook_id, event_id, subscription_id, store_id, app_id, private_app_id, topic,
            status, attempts, next_attempt_at, claimed_by, claimed_until, last_status, last_error, created_at, updated_at)
          values (${id}, ${`wh-${id}`}, 'ev-5', 1, ${store.id}, null, null, 'products/create', ${status}, 0, ${NOW}, ${by}, ${until},
            null, null, ${NOW}, ${NOW})`.execute(k);
      expect(await storage.migrate()).toEqual(undone);
      const leases = await k.selectFrom('webhook_delivery_leases').select(['delivery_id', 'store_id', 'worker', 'leased_until']).execute();
      expect(leases.map((l) => [Number(l.delivery_id), Number(l.store_id), l.worker, Number(l.leased_until)])).toEqual([
        [51, store.id, 'w-1', NOW + 60_000],
      ]);
      await expect(sql`select claimed_by from webhook_deliveries`.execute(k)).rejects.toThrow(/claimed_by/);
      // The held one stays held until its lease lapses.
      const claim = (now: number) =>
        storage.deliveryQueue.claim({ worker: 'w-3', now, leaseUntil: now + 3_600_000, limit: 10, excludeSubscriptions: [] });
      expect((await claim(NOW + 1)).map((c) => c.id)).toEqual([52]);
      expect((await claim(NOW + 60_001)).map((c) => c.id)).toEqual([51]);
      if (dialect === 'postgres-partitioned') {
        const parts = await sql<{ n: number }>`select count(*)::int as n from pg_inherits
          where inhparent = 'webhook_delivery_leases'::regclass`.execute(k);
        expect(parts.rows[0]?.n).toBe(TEST_PARTITIONS);
      }
    } finally {
      await storage.close();
      await cleanup();
    }
  });
});
