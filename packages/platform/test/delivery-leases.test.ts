// The worker's hold on a delivery is a row of webhook_delivery_leases, not a write of the delivery:
// a claim leaves the delivery row as it is (on PostgreSQL the same row version), its outcome writes
// it once and ends the lease. And the lease behaves as a claim did: a lapsed one is taken over, only
// the holder's outcome, hand-back, release or renewal counts, a cancelled, redelivered or pruned
// delivery does not keep a lease that matters, and on PostgreSQL claims running at once never take
// the same delivery, whether it was free or its lease had lapsed.
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseConfig } from '../src/config.ts';
import type { ClaimedDelivery, DeliveryOutcome } from '../src/storage/ports/rows.ts';
import type { Storage } from '../src/storage/ports/storage.ts';
import { type OpenStorage, openStorage } from '../src/storage/sql-storage.ts';
import { DIALECTS_WITH_PARTITIONED, type Dialect, freshPostgresUrl, TEST_PARTITIONS } from './harness.ts';
import { drain } from './storage-contract/queue.ts';

const NOW = Date.UTC(2026, 10, 30);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let seq = 0;

async function database(dialect: Dialect): Promise<{ config: DatabaseConfig; cleanup(): Promise<void> }> {
  if (dialect === 'sqlite') return { config: { dialect: 'sqlite', path: ':memory:' }, cleanup: async () => {} };
  const schema = await freshPostgresUrl();
  return { config: { dialect: 'postgres', url: schema.url }, cleanup: () => schema.drop() };
}

/** A store with `count` deliveries due at NOW, of `subscriptions` subscriptions in turn (of `appId`); their ids. */
async function queue(
  s: Storage,
  count: number,
  subscriptions = 1,
  appId: number | null = null,
): Promise<{ storeId: number; ids: number[] }> {
  const name = `lease-${++seq}`;
  const merchant = await s.accounts.insertMerchant({ email: `${name}@merchant.test`, passwordHash: 'hash', now: NOW });
  const store = await s.accounts.insertStore({ name, ownerMerchantId: merchant.id, now: NOW });
  const event = `evt-${name}`;
  await s.webhooks.insertEvent(
    { id: event, storeId: store.id, topic: 'products/create', payload: '{}', now: NOW },
    Array.from({ length: count }, (_, i) => ({
      subscriptionId: 1000 + (i % subscriptions),
      appId,
      privateAppId: null,
      webhookId: `wh-${name}-${i}`,
    })),
  );
  const rows = await s.webhooks.listDeliveries({ storeId: store.id, limit: count });
  return { storeId: store.id, ids: rows.map((r) => r.id).sort((a, b) => a - b) };
}

const claim = (s: Storage, worker: string, now: number, limit = 1000, leaseMs = MINUTE) =>
  s.deliveryQueue.claim({ worker, now, leaseUntil: now + leaseMs, limit, excludeSubscriptions: [] });

type Attempted = Extract<DeliveryOutcome, { attempt: unknown }>;

function delivered(c: ClaimedDelivery, at: number, next: Attempted['next'] = { status: 'delivered' }): DeliveryOutcome {
  return {
    id: c.id,
    storeId: Number(c.store_id),
    subscriptionId: c.subscription_id,
    attempts: c.attempts,
    attempt: { attemptedAt: at, status: 200, latencyMs: 5, responseBody: null, error: null },
    next,
  };
}

describe.each(DIALECTS_WITH_PARTITIONED)('delivery leases on %s', (dialect) => {
  let s: OpenStorage;
  let config: DatabaseConfig;
  let cleanup: () => Promise<void>;
  const pg = dialect !== 'sqlite';

  beforeAll(async () => {
    const db = await database(dialect);
    cleanup = db.cleanup;
    config = db.config;
    s = openStorage(config, { poolSize: 8 });
    await s.migrate(dialect === 'postgres-partitioned' ? { partitions: TEST_PARTITIONS } : {});
    // Every update of a delivery row, counted per row by a trigger.
    const k = s.db.kysely;
    if (pg) {
      await sql`create table delivery_writes (id bigint primary key, n int not null)`.execute(k);
      await sql`create function count_delivery_write() returns trigger language plpgsql as $$
        begin
          insert into delivery_writes (id, n) values (new.id, 1) on conflict (id) do update set n = delivery_writes.n + 1;
          return null;
        end $$`.execute(k);
      await sql`create trigger delivery_writes after update on webhook_deliveries
        for each row execute function count_delivery_write()`.execute(k);
    } else {
      await sql`create table delivery_writes (id integer primary key, n integer not null)`.execute(k);
      await sql`create trigger delivery_writes after update on webhook_deliveries begin
        insert into delivery_writes (id, n) values (new.id, 1) on conflict (id) do update set n = n + 1;
      end`.execute(k);
    }
  });

  afterAll(async () => {
    await s?.close();
    await cleanup?.();
  });

  beforeEach(() => drain(s));

  const writes = async (ids: number[]) => {
    const rows = await s.db.kysely.selectFrom(sql<{ id: number; n: number }>`delivery_writes`.as('w')).select(['w.id', 'w.n']).execute();
    const by = new Map(rows.map((r) => [Number(r.id), Number(r.n)]));
    return ids.map((id) => by.get(id) ?? 0);
  };
  const leases = async (ids: number[]) =>
    (
      await s.db.kysely
        .selectFrom('webhook_delivery_leases')
        .select(['delivery_id', 'worker', 'leased_until'])
        .where('delivery_id', 'in', ids)
        .orderBy('delivery_id')
        .execute()
    ).map((l) => ({ id: Number(l.delivery_id), worker: l.worker, until: Number(l.leased_until) }));
  /** PostgreSQL: the row version of each delivery (unchanged while nothing writes the row). */
  const versions = async (ids: number[]) =>
    (
      await sql<{ v: string }>`select xmin::text || ':' || ctid::text as v from webhook_deliveries
        where id in (${sql.join(ids)}) order by id`.execute(s.db.kysely)
    ).rows.map((r) => r.v);

  it('a claim writes a lease and leaves the delivery row alone; the outcome writes the row once and ends the lease', async () => {
    const { ids } = await queue(s, 3);
    const before = pg ? await versions(ids) : [];
    const at = NOW + 10 * HOUR;
    const claimed = await claim(s, 'w-once', at);
    expect(claimed.map((c) => c.id)).toEqual(ids);
    expect(await writes(ids)).toEqual([0, 0, 0]);
    if (pg) expect(await versions(ids)).toEqual(before);
    expect(await leases(ids)).toEqual(ids.map((id) => ({ id, worker: 'w-once', until: at + MINUTE })));

    // Two in a batch of their own (PostgreSQL's one statement), the third with a retry.
    await s.deliveryQueue.recordOutcomes([delivered(claimed[0]!, at + 1), delivered(claimed[1]!, at + 1)], {
      worker: 'w-once',
      now: at + 2,
      disableAfterDead: 5,
    });
    // A dead one, recorded by the statements of a batch that is not PostgreSQL's common case, and
    // one already recorded, whose lease has ended: its row is not written again.
    await s.deliveryQueue.recordOutcomes([delivered(claimed[2]!, at + 1, { status: 'dead' }), delivered(claimed[0]!, at + 3)], {
      worker: 'w-once',
      now: at + 4,
      disableAfterDead: 5,
    });
    expect(await writes(ids)).toEqual([1, 1, 1]);
    expect(await leases(ids)).toEqual([]);
    const rows = await s.webhooks.listDeliveries({ id: ids[2]!, limit: 1 });
    expect(rows[0]).toMatchObject({ status: 'dead', attempts: 1 });
    // A retry is written once as well, and its next claim leaves it alone again.
    const [retry] = await queue(s, 1).then((q) => q.ids);
    const [c] = await claim(s, 'w-once', at);
    expect(c?.id).toBe(retry);
    await s.deliveryQueue.recordOutcomes([delivered(c!, at + 1, { status: 'pending', nextAttemptAt: at + HOUR })], {
      worker: 'w-once',
      now: at + 2,
      disableAfterDead: 5,
    });
    expect(await claim(s, 'w-twice', at + HOUR)).toHaveLength(1);
    expect(await writes([retry!])).toEqual([1]);
  });

  it('a lapsed lease is taken over; the old holder then neither records, hands back, renews nor releases it', async () => {
    const [id] = (await queue(s, 1)).ids;
    const at = NOW + 20 * HOUR;
    const [mine] = await claim(s, 'w-old', at, 10, MINUTE);
    expect(mine?.id).toBe(id);
    expect(await claim(s, 'w-new', at + MINUTE)).toEqual([]);
    const [theirs] = await claim(s, 'w-new', at + MINUTE + 1, 10, MINUTE);
    expect(theirs?.id).toBe(id);
    expect(await leases([id!])).toEqual([{ id, worker: 'w-new', until: at + 2 * MINUTE + 1 }]);

    const q = s.deliveryQueue;
    await q.recordOutcomes([delivered(mine!, at + 2 * MINUTE)], { worker: 'w-old', now: at + 2 * MINUTE, disableAfterDead: 5 });
    expect(await q.deferClaims({ worker: 'w-old', ids: [id!], until: at + HOUR, now: at + 2 * MINUTE })).toBe(0);
    expect(await q.renewClaims({ worker: 'w-old', ids: [id!], leaseUntil: at + HOUR })).toBe(0);
    expect(await q.releaseClaims('w-old')).toBe(0);
    expect(await writes([id!])).toEqual([0]);
    expect(await leases([id!])).toEqual([{ id, worker: 'w-new', until: at + 2 * MINUTE + 1 }]);
    expect((await s.webhooks.listDeliveries({ id: id!, limit: 1 }))[0]).toMatchObject({ status: 'pending', attempts: 0 });

    // The holder renews, then hands it back: due later, the lease gone, no attempt counted.
    expect(await q.renewClaims({ worker: 'w-new', ids: [id!], leaseUntil: at + 10 * MINUTE })).toBe(1);
    expect(await leases([id!])).toEqual([{ id, worker: 'w-new', until: at + 10 * MINUTE }]);
    expect(await q.deferClaims({ worker: 'w-new', ids: [id!], until: at + HOUR, now: at + 3 * MINUTE })).toBe(1);
    expect(await leases([id!])).toEqual([]);
    expect((await s.webhooks.listDeliveries({ id: id!, limit: 1 }))[0]).toMatchObject({
      status: 'pending',
      attempts: 0,
      next_attempt_at: at + HOUR,
    });
  });

  it("releaseClaims ends one worker's leases and no one else's; the released deliveries are claimed again at once", async () => {
    const { ids } = await queue(s, 4);
    const at = NOW + 30 * HOUR;
    expect(await claim(s, 'w-a', at, 3, HOUR)).toHaveLength(3);
    expect(await claim(s, 'w-b', at, 3, HOUR)).toHaveLength(1);
    expect(await s.deliveryQueue.releaseClaims('w-a')).toBe(3);
    expect((await leases(ids)).map((l) => l.worker)).toEqual(['w-b']);
    expect((await claim(s, 'w-c', at + 1, 10, HOUR)).map((c) => c.id)).toEqual(ids.slice(0, 3));
    expect(await writes(ids)).toEqual([0, 0, 0, 0]);
  });

  it('a backlog deferral leaves a held delivery alone and deletes the lapsed lease of one it moves', async () => {
    const at = NOW + 40 * HOUR;
    const {
      storeId,
      ids: [held, lapsed, free],
    } = await queue(s, 3, 1);
    expect(await claim(s, 'w-held', at, 1, HOUR)).toHaveLength(1);
    expect(await claim(s, 'w-lapsed', at, 1, 1)).toHaveLength(1);
    const moved = await s.deliveryQueue.deferBacklog({
      storeId,
      subscriptionIds: [1000],
      breakerMadeAt: at,
      until: at + 2 * HOUR,
      now: at + 2,
      limit: 10,
    });
    expect(moved).toBe(2);
    expect(await leases([held!, lapsed!, free!])).toEqual([{ id: held, worker: 'w-held', until: at + HOUR }]);
    // The lapsed holder's late outcome no longer counts.
    const late = { id: lapsed!, store_id: storeId, subscription_id: 1000, attempts: 0 } as ClaimedDelivery;
    await s.deliveryQueue.recordOutcomes([delivered(late, at + 3)], { worker: 'w-lapsed', now: at + 3, disableAfterDead: 5 });
    expect((await s.webhooks.listDeliveries({ id: lapsed!, limit: 1 }))[0]).toMatchObject({
      status: 'pending',
      next_attempt_at: at + 2 * HOUR,
    });
  });

  it("a grant that ends cancels held deliveries too; the holder's late outcome ends its lease, a redelivery or the pruning the rest", async () => {
    const at = NOW + 60 * HOUR;
    const {
      storeId,
      ids: [late, redelivered, abandoned],
    } = await queue(s, 3, 1, 4242);
    const held = await claim(s, 'w-held', at, 10, HOUR);
    expect(held.map((c) => c.id)).toEqual([late, redelivered, abandoned]);
    await s.webhooks.cancelPending(storeId, 4242, 'the app was uninstalled', at + 1);
    const status = async (id: number) => (await s.webhooks.listDeliveries({ id, limit: 1 }))[0]?.status;
    expect(await status(late!)).toBe('cancelled');

    // The holder comes back with an outcome: the cancellation stands, the lease ends.
    await s.deliveryQueue.recordOutcomes([delivered(held[0]!, at + 2)], { worker: 'w-held', now: at + 2, disableAfterDead: 5 });
    expect(await status(late!)).toBe('cancelled');
    expect(await writes([late!])).toEqual([1]);
    expect((await leases([late!, redelivered!, abandoned!])).map((l) => l.id)).toEqual([redelivered, abandoned]);

    // Redelivered by hand while the old lease runs: the lease goes with it, another worker takes it at once.
    await s.webhooks.requeue(redelivered!, at + 3);
    expect(await leases([redelivered!])).toEqual([]);
    const [again] = await claim(s, 'w-next', at + 4);
    expect(again?.id).toBe(redelivered);
    await s.deliveryQueue.recordOutcomes([delivered(again!, at + 5)], { worker: 'w-next', now: at + 5, disableAfterDead: 5 });

    // The holder of the last one never comes back: its lease goes when the pruning takes the delivery.
    expect(await leases([abandoned!])).toEqual([{ id: abandoned, worker: 'w-held', until: at + HOUR }]);
    await s.webhooks.prune(at + 10);
    expect(await s.webhooks.listDeliveries({ id: abandoned!, limit: 1 })).toEqual([]);
    expect(await leases([late!, redelivered!, abandoned!])).toEqual([]);
  });

  it.runIf(pg)('claims running at once never take the same delivery, free or with a lapsed lease', async () => {
    const { ids } = await queue(s, 120, 7);
    const at = NOW + 50 * HOUR;
    const other = openStorage(config, { poolSize: 4 });
    try {
      const race = async (round: string, now: number) => {
        const taken: number[][] = [];
        const worker = async (i: number) => {
          const storage = i % 2 === 0 ? s : other;
          const mine: number[] = [];
          for (;;) {
            const rows = await claim(storage, `${round}-${i}`, now, 5, MINUTE);
            if (rows.length === 0) break;
            mine.push(...rows.map((r) => r.id));
          }
          taken.push(mine);
        };
        await Promise.all([0, 1, 2, 3, 4, 5].map(worker));
        return taken;
      };
      for (const [round, now] of [
        ['free', at],
        ['lapsed', at + 2 * MINUTE],
      ] as const) {
        const taken = await race(round, now);
        const all = taken.flat().filter((id) => ids.includes(id));
        expect(all.length).toBe(new Set(all).size);
        expect([...all].sort((a, b) => a - b)).toEqual(ids);
        const holders = await leases(ids);
        expect(holders.every((l, i) => l.id === ids[i] && l.worker.startsWith(round))).toBe(true);
      }
      expect(new Set(await writes(ids))).toEqual(new Set([0]));
    } finally {
      await other.close();
    }
  });
});
