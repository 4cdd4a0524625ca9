// The events list's storage method (EventLogRepository.page) on SQLite and PostgreSQL: one owner's
// deliveries in a store, in (created_at, id) order from an exclusive position, inside a window and
// a set of topics, with the body and API version each delivery carries; and the partial indexes
// that keep a page one range scan.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConfig } from '../src/config.ts';
import type { WebhookTopic } from '../src/domain/webhook-topics.ts';
import type { EventLogQuery } from '../src/storage/ports/event-log.ts';
import type { Storage } from '../src/storage/ports/storage.ts';
import { openStorage } from '../src/storage/sql-storage.ts';
import { DIALECTS, freshPostgresUrl } from './harness.ts';

const NOW = Date.UTC(2026, 10, 22);
const MINUTE = 60_000;

async function database(dialect: string): Promise<{ config: DatabaseConfig; cleanup(): Promise<void> }> {
  if (dialect === 'sqlite') return { config: { dialect: 'sqlite', path: ':memory:' }, cleanup: async () => {} };
  const schema = await freshPostgresUrl();
  return { config: { dialect: 'postgres', url: schema.url }, cleanup: () => schema.drop() };
}

describe.each(DIALECTS)('EventLogRepository on %s', (dialect) => {
  let storage: Storage & { db: { kysely: import('kysely').Kysely<unknown> } };
  let cleanup: () => Promise<void>;
  let storeId = 0;
  let otherStoreId = 0;
  let subscriptionId = 0;
  let seq = 0;

  /** One event with a delivery to each owner given; returns the webhook ids in that order. */
  async function event(
    at: number,
    topic: WebhookTopic,
    owners: Array<{ app?: number; priv?: number; store?: number; sub?: number }>,
  ): Promise<string[]> {
    seq += 1;
    const ids = owners.map((_, i) => `wh_${seq}_${i}`);
    const byStore = new Map<number, number[]>();
    for (const [i, o] of owners.entries()) byStore.set(o.store ?? storeId, [...(byStore.get(o.store ?? storeId) ?? []), i]);
    for (const [store, indexes] of byStore) {
      await storage.webhooks.insertEvent(
        { id: `evt_${seq}_${store}`, storeId: store, topic, payload: JSON.stringify({ seq, topic, note: 'é ✓' }), now: at },
        indexes.map((i) => ({
          subscriptionId: owners[i]!.sub ?? 999_999,
          appId: owners[i]!.app ?? null,
          privateAppId: owners[i]!.priv ?? null,
          webhookId: ids[i]!,
        })),
      );
    }
    return ids;
  }

  const ALL: WebhookTopic[] = ['products/create', 'products/update', 'customers/create', 'app/uninstalled'];
  const page = async (q: Partial<EventLogQuery> & Pick<EventLogQuery, 'owner'>) =>
    (await storage.events.page({ storeId, topics: ALL, since: NOW - 60 * MINUTE, limit: 50, ...q })).rows;

  beforeAll(async () => {
    const db = await database(dialect);
    cleanup = db.cleanup;
    storage = openStorage(db.config) as typeof storage;
    await storage.migrate();
    const merchant = await storage.accounts.insertMerchant({ email: 'events@example.test', passwordHash: 'x', now: NOW });
    storeId = (await storage.accounts.insertStore({ name: 'events', ownerMerchantId: merchant.id, now: NOW })).id;
    otherStoreId = (await storage.accounts.insertStore({ name: 'events-other', ownerMerchantId: merchant.id, now: NOW })).id;
    const sub = await storage.webhooks.insertSubscription({
      store_id: storeId,
      owner: 'app:7',
      app_id: 7,
      private_app_id: null,
      topic: 'products/create',
      address: 'https://example.test/hook',
      api_version: '2025-06',
      created_at: NOW,
      updated_at: NOW,
    });
    subscriptionId = sub.id;
  });
  afterAll(async () => {
    await storage.close();
    await cleanup();
  });

  it('reads one owner in one store, ordered by time then id, with body, ids, status and API version', async () => {
    // Written out of time order: the later event gets the lower id.
    const [late] = await event(NOW + 5 * MINUTE, 'products/create', [{ app: 7, sub: subscriptionId }]);
    const [early, earlyPriv, earlyOther] = await event(NOW + MINUTE, 'customers/create', [{ app: 7 }, { priv: 7 }, { app: 8 }]);
    const [sameTimeA] = await event(NOW + 2 * MINUTE, 'products/update', [{ app: 7 }]);
    const [sameTimeB] = await event(NOW + 2 * MINUTE, 'products/update', [{ app: 7 }]);
    await event(NOW + 3 * MINUTE, 'products/create', [
      { app: 7, store: otherStoreId },
      { priv: 7, store: otherStoreId },
    ]);

    const rows = await page({ owner: { appId: 7 } });
    expect(rows.map((r) => r.webhook_id)).toEqual([early, sameTimeA, sameTimeB, late]);
    const first = rows[0]!;
    expect(first).toEqual({
      id: expect.any(Number),
      webhook_id: early,
      event_id: expect.stringMatching(/^evt_/),
      topic: 'customers/create',
      status: 'pending',
      attempts: 0,
      created_at: NOW + MINUTE,
      payload: expect.stringContaining('"note":"é ✓"'),
      include_fields: null,
      api_version: null,
    });
    expect(rows.at(-1)!.api_version).toBe('2025-06');
    // A private app with the same numeric id is another owner.
    expect((await page({ owner: { privateAppId: 7 } })).map((r) => r.webhook_id)).toEqual([earlyPriv]);
    expect((await page({ owner: { appId: 8 } })).map((r) => r.webhook_id)).toEqual([earlyOther]);
    expect((await page({ owner: { appId: 7 }, storeId: otherStoreId })).map((r) => r.topic)).toEqual(['products/create']);
    expect(rows.map((r) => r.event_id)).not.toContain(undefined);
  });

  it('pages from an exclusive (created_at, id) position with no repeat or skip, honouring since and topics', async () => {
    const owner = { appId: 70 };
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push(...(await event(NOW + Math.floor(i / 3) * MINUTE, 'products/create', [{ app: 70 }])));
    const seen: string[] = [];
    let after: EventLogQuery['after'];
    for (let n = 0; n < 10; n++) {
      const rows = await page({ owner, after, limit: 3 });
      seen.push(...rows.map((r) => r.webhook_id));
      if (rows.length < 3) break;
      after = { createdAt: rows.at(-1)!.created_at, id: rows.at(-1)!.id };
    }
    expect(seen).toEqual(made);
    // since: inclusive lower bound on created_at.
    expect((await page({ owner, since: NOW + MINUTE })).map((r) => r.webhook_id)).toEqual(made.slice(3));
    expect(await page({ owner, since: NOW + 3 * MINUTE })).toEqual([]);
    // topics: only those listed; none listed reads nothing.
    expect(await page({ owner, topics: ['products/update'] })).toEqual([]);
    expect(await page({ owner, topics: [] })).toEqual([]);
    expect(await page({ owner, limit: 0 })).toEqual([]);
  });

  it('has the two partial indexes, and a page is an index range scan on them', async () => {
    const k = storage.db.kysely;
    if (dialect === 'sqlite') {
      const names = (await sql<{ name: string }>`select name from sqlite_master where type = 'index'`.execute(k)).rows.map((r) => r.name);
      expect(names).toEqual(expect.arrayContaining(['webhook_deliveries_app_events', 'webhook_deliveries_private_events']));
      for (const [column, index] of [
        ['app_id', 'webhook_deliveries_app_events'],
        ['private_app_id', 'webhook_deliveries_private_events'],
      ] as const) {
        const plan = await sql<{ detail: string }>`explain query plan
          select d.id from webhook_deliveries d join webhook_events e on e.id = d.event_id
          where d.store_id = 1 and d.${sql.ref(column)} = 7 and d.created_at >= 5 and d.topic in ('products/create')
            and (d.created_at, d.id) > (6, 9) order by d.created_at, d.id limit 51`.execute(k);
        const details = plan.rows.map((r) => r.detail).join('\n');
        expect(details).toContain(`USING INDEX ${index}`);
        expect(details).not.toContain('TEMP B-TREE');
      }
    } else {
      const names = (await sql<{ indexname: string }>`select indexname from pg_indexes where tablename = 'webhook_deliveries'`.execute(k))
        .rows;
      expect(names.map((r) => r.indexname)).toEqual(
        expect.arrayContaining(['webhook_deliveries_app_events', 'webhook_deliveries_private_events']),
      );
      for (const [column, index] of [
        ['app_id', 'webhook_deliveries_app_events'],
        ['private_app_id', 'webhook_deliveries_private_events'],
      ] as const) {
        const plan = await k.transaction().execute(async (tx) => {
          // The test table is tiny: make the planner show the plan it would pick for a big one.
          await sql`set local enable_seqscan = off`.execute(tx);
          await sql`set local enable_sort = off`.execute(tx);
          return sql<{ 'QUERY PLAN': string }>`explain
            select d.id from webhook_deliveries d
            where d.store_id = 1 and d.${sql.ref(column)} = 7 and d.created_at >= 5 and d.topic in ('products/create')
              and (d.created_at, d.id) > (6, 9) order by d.created_at, d.id limit 51`.execute(tx);
        });
        const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
        expect(text).toContain(index);
        expect(text).not.toMatch(/\bSort\b/);
      }
    }
  });
});
