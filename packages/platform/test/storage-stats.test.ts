// The figures the metrics read from storage (StorageStats), on SQLite and PostgreSQL: the
// webhook outbox's backlog (pending, due now, the oldest due time; finished deliveries left out)
// and the connection pool (PostgreSQL only; SQLite has one connection and no pool).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConfig } from '../src/config.ts';
import { type OpenStorage, openStorage } from '../src/storage/sql-storage.ts';
import { DIALECTS, freshPostgresUrl } from './harness.ts';

const NOW = Date.UTC(2026, 10, 24, 9, 0, 0);
const MINUTE = 60_000;

async function database(dialect: string): Promise<{ config: DatabaseConfig; cleanup(): Promise<void> }> {
  if (dialect === 'sqlite') return { config: { dialect: 'sqlite', path: ':memory:' }, cleanup: async () => {} };
  const schema = await freshPostgresUrl();
  return { config: { dialect: 'postgres', url: schema.url }, cleanup: () => schema.drop() };
}

describe.each(DIALECTS)('StorageStats on %s', (dialect) => {
  let storage: OpenStorage;
  let cleanup: () => Promise<void>;
  let storeId = 0;
  let seq = 0;

  /** One event with one delivery to app 7, written at `at` and due at `dueAt`; returns the delivery's webhook id. */
  async function delivery(at: number, dueAt = at): Promise<string> {
    seq += 1;
    const webhookId = `wh_stats_${seq}`;
    await storage.webhooks.insertEvent({ id: `evt_stats_${seq}`, storeId, topic: 'products/create', payload: '{}', now: at, dueAt }, [
      { subscriptionId: 1, appId: 7, privateAppId: null, webhookId },
    ]);
    return webhookId;
  }

  beforeAll(async () => {
    const db = await database(dialect);
    cleanup = db.cleanup;
    storage = openStorage(db.config, { poolSize: 7 });
    await storage.migrate();
    const merchant = await storage.accounts.insertMerchant({ email: 'stats@example.test', passwordHash: 'x', now: NOW });
    storeId = (await storage.accounts.insertStore({ name: 'stats', ownerMerchantId: merchant.id, now: NOW })).id;
  });
  afterAll(async () => {
    await storage.close();
    await cleanup();
  });

  it('outboxBacklog: nothing pending is zero and no oldest time', async () => {
    expect(await storage.stats.outboxBacklog(NOW)).toEqual({ pending: 0, due: 0, oldestDueAt: null });
  });

  it('outboxBacklog counts pending deliveries, the due ones, and the earliest due time; finished ones are left out', async () => {
    await delivery(NOW - 10 * MINUTE);
    await delivery(NOW - 3 * MINUTE);
    await delivery(NOW - MINUTE, NOW + 30 * MINUTE); // a retry or a delayed topic, not due yet
    const delivered = await delivery(NOW - 20 * MINUTE);
    await storage.db.kysely.updateTable('webhook_deliveries').set({ status: 'delivered' }).where('webhook_id', '=', delivered).execute();
    expect(await storage.stats.outboxBacklog(NOW)).toEqual({ pending: 3, due: 2, oldestDueAt: NOW - 10 * MINUTE });
    // Due exactly now counts as due.
    expect(await storage.stats.outboxBacklog(NOW - 10 * MINUTE)).toEqual({ pending: 3, due: 1, oldestDueAt: NOW - 10 * MINUTE });
    // Later, the scheduled one has come due too.
    expect(await storage.stats.outboxBacklog(NOW + 30 * MINUTE)).toEqual({ pending: 3, due: 3, oldestDueAt: NOW - 10 * MINUTE });

    // Cancelled deliveries leave the backlog.
    await storage.webhooks.cancelPending(storeId, 7, 'test', NOW);
    expect(await storage.stats.outboxBacklog(NOW)).toEqual({ pending: 0, due: 0, oldestDueAt: null });
  });

  it('pool: the PostgreSQL pool with its configured size, none on SQLite', async () => {
    const pool = storage.stats.pool();
    if (dialect === 'sqlite') {
      expect(pool).toBeUndefined();
      return;
    }
    expect(pool).toEqual({ max: 7, inUse: 0, idle: expect.any(Number), waiting: 0 });
    // A transaction holds one connection while it runs.
    const during = await storage.transaction(async () => storage.stats.pool());
    expect(during?.inUse).toBe(1);
    expect(storage.stats.pool()?.inUse).toBe(0);
    expect(storage.stats.pool()?.idle).toBeGreaterThanOrEqual(1);
  });
});
