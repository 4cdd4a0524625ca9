// The worker's claims: a heartbeat moves the lease forward while an attempt hangs (so no other
// worker takes the delivery), and a stopping worker hands back what it still holds at once: the
// attempt in flight finishes and is recorded, the deliveries not sent yet are released, and past
// a stop's timeout the attempt cut off is released unrecorded. Also the lifecycle settings' parsing.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, parseClaimLease, parseShutdown } from '../src/config.ts';
import { ConfigError } from '../src/domain/errors.ts';
import { seedDeliveries } from './delivery-seed.ts';
import { createTestPlatform, DIALECTS, testWorker, type TestPlatform } from './harness.ts';
import { Receiver, until } from './webhook-receiver.ts';

const LEASE_MS = 3000;

describe.each(DIALECTS)('webhook claim lease on %s', (dialect) => {
  let t: TestPlatform;
  let rx: Receiver;
  /** Answers held back by the test, released with `answerAll`. */
  const held: ServerResponse[] = [];
  const answerAll = () => {
    for (const res of held.splice(0)) res.end('ok');
  };
  const rows = () =>
    t.db.kysely
      .selectFrom('webhook_deliveries as d')
      .leftJoin('webhook_delivery_leases as l', 'l.delivery_id', 'd.id')
      .select(['d.id', 'd.status', 'l.worker as claimed_by', 'l.leased_until as claimed_until'])
      .orderBy('d.id')
      .execute();
  const attemptRows = async () => (await t.db.kysely.selectFrom('webhook_attempts').select('delivery_id').execute()).length;

  beforeAll(async () => {
    t = await createTestPlatform(dialect, {
      rateLimit: 'off',
      // Long enough that a held answer never times out while a test looks at its claim.
      webhooks: { timeoutMs: 30_000, retrySchedule: [60_000], disableAfterDead: 5 },
    });
    rx = await Receiver.start();
    rx.handler = (_req, res) => void held.push(res);
  });
  afterAll(async () => {
    answerAll();
    await rx.close();
    await t.close();
  });

  it('the heartbeat renews the claim of a delivery whose attempt hangs; nobody else can claim it meanwhile', async () => {
    await seedDeliveries(t.platform, rx.url('/renew'), 1);
    const start = t.clock.now;
    const w = await testWorker(t, { clock: t.clock.fn, leaseMs: LEASE_MS, pollMs: 20, pruneEveryMs: 0 });
    await w.start();
    try {
      await until(() => rx.on('/renew').length === 1, 10_000, 'the attempt to reach the receiver');
      const [claimed] = await rows();
      expect(claimed).toMatchObject({ status: 'pending', claimed_by: w.id });
      expect(Number(claimed!.claimed_until)).toBe(start + LEASE_MS);

      // Past the first lease (as after a stalled process): the worker's next claim takes the row
      // back for itself, which renews it without sending it a second time.
      t.clock.advance(10_000);
      await until(async () => Number((await rows())[0]!.claimed_until) === start + 10_000 + LEASE_MS, 10_000, 'the claim to be renewed');
      expect(await w.renewClaims()).toBe(1);
      expect(Number((await rows())[0]!.claimed_until)).toBe(start + 10_000 + LEASE_MS);
      const other = await t.platform.storage.deliveryQueue.claim({
        worker: 'w_other',
        now: t.clock.now,
        leaseUntil: t.clock.now + LEASE_MS,
        limit: 10,
        excludeSubscriptions: [],
      });
      expect(other).toEqual([]);

      // The timer does the same by itself, every third of the lease.
      t.clock.advance(5000);
      await until(
        async () => Number((await rows())[0]!.claimed_until) === start + 15_000 + LEASE_MS,
        10_000,
        'the heartbeat to renew the claim',
      );

      answerAll();
      await until(async () => (await rows())[0]!.status === 'delivered', 10_000, 'the delivery to be recorded');
      expect(await rows()).toMatchObject([{ status: 'delivered', claimed_by: null, claimed_until: null }]);
      // A settled delivery is no longer renewed.
      expect(await w.renewClaims()).toBe(0);
      expect(w.attemptsMade).toBe(1);
      expect(rx.on('/renew')).toHaveLength(1);
    } finally {
      answerAll();
      await w.stop();
    }
  });

  it('stop: the attempt in flight finishes and is recorded; claims not sent are released and another worker takes them at once', async () => {
    await t.db.kysely.deleteFrom('webhook_attempts').execute();
    await t.db.kysely.deleteFrom('webhook_deliveries').execute();
    await seedDeliveries(t.platform, rx.url('/stop'), 3);
    // One request at a time to this receiver: the other two stay queued in the worker, claimed.
    const w1 = await testWorker(t, { clock: t.clock.fn, leaseMs: LEASE_MS, pollMs: 20, pruneEveryMs: 0, perOrigin: 1 });
    await w1.start();
    await until(() => rx.on('/stop').length === 1, 10_000, 'the first attempt');
    expect((await rows()).map((r) => r.claimed_by)).toEqual([w1.id, w1.id, w1.id]);

    const stopping = w1.stop();
    await until(() => held.length === 1, 10_000, 'the held answer');
    answerAll();
    expect(await stopping).toEqual({ abandoned: 0, released: 2 });
    expect(rx.on('/stop')).toHaveLength(1);
    const after = await rows();
    expect(after.map((r) => r.status)).toEqual(['delivered', 'pending', 'pending']);
    expect(after.map((r) => r.claimed_by)).toEqual([null, null, null]);
    expect(after.map((r) => r.claimed_until)).toEqual([null, null, null]);
    expect(await attemptRows()).toBe(1);

    // Nothing waits for a lease: a new worker, with the clock where it was, sends both now.
    rx.handler = (_req, res) => res.end('ok');
    const w2 = await testWorker(t, { clock: t.clock.fn, leaseMs: LEASE_MS, pollMs: 20, pruneEveryMs: 0 });
    await w2.start();
    try {
      await until(async () => (await rows()).every((r) => r.status === 'delivered'), 10_000, 'the released deliveries');
      expect(w2.attemptsMade).toBe(2);
      expect(rx.on('/stop')).toHaveLength(3);
    } finally {
      await w2.stop();
      rx.handler = (_req, res) => void held.push(res);
    }
  });

  it('stop past its timeout: the hung attempt is cut off unrecorded and its claim released', async () => {
    await t.db.kysely.deleteFrom('webhook_attempts').execute();
    await t.db.kysely.deleteFrom('webhook_deliveries').execute();
    await seedDeliveries(t.platform, rx.url('/cut'), 1);
    const w = await testWorker(t, { clock: t.clock.fn, leaseMs: LEASE_MS, pollMs: 20, pruneEveryMs: 0 });
    await w.start();
    await until(() => rx.on('/cut').length === 1, 10_000, 'the attempt');
    expect(await w.stop({ timeoutMs: 50 })).toEqual({ abandoned: 1, released: 1 });
    expect(await rows()).toMatchObject([{ status: 'pending', claimed_by: null, claimed_until: null }]);
    expect(await attemptRows()).toBe(0);
    held.splice(0);
  });
});

describe('lifecycle settings', () => {
  it('durations take ms, s or m (a bare number is ms); defaults depend on the mode', () => {
    expect(parseShutdown({}, 'production')).toEqual({ drainDelayMs: 5000, timeoutMs: 10_000 });
    expect(parseShutdown({}, 'development')).toEqual({ drainDelayMs: 0, timeoutMs: 10_000 });
    expect(parseShutdown({ drainDelay: '1500ms', shutdownTimeout: '2m' }, 'production')).toEqual({
      drainDelayMs: 1500,
      timeoutMs: 120_000,
    });
    expect(parseShutdown({ drainDelay: '0', shutdownTimeout: '250' }, 'production')).toEqual({ drainDelayMs: 0, timeoutMs: 250 });
    expect(parseClaimLease(undefined)).toBe(30_000);
    expect(parseClaimLease('2s')).toBe(2000);
    expect(parseClaimLease(' 1m ')).toBe(60_000);
    const config = loadConfig({ database: ':memory:', drainDelay: '3s', shutdownTimeout: '4s', webhookClaimLease: '5s' });
    expect(config.shutdown).toEqual({ drainDelayMs: 3000, timeoutMs: 4000 });
    expect(config.webhookClaimLeaseMs).toBe(5000);
  });

  it.each([
    [{ drainDelay: 'soon' }, '--drain-delay: expected a duration such as "500ms", "5s" or "2m", got "soon"'],
    [{ drainDelay: '6m' }, '--drain-delay: must be from 0 to 5m, got "6m"'],
    [{ drainDelay: '-1s' }, '--drain-delay: expected a duration'],
    [{ shutdownTimeout: '1h' }, '--shutdown-timeout: expected a duration'],
    [{ shutdownTimeout: '601s' }, '--shutdown-timeout: must be from 0 to 10m, got "601s"'],
    [{ webhookClaimLease: '999ms' }, '--webhook-claim-lease: must be from 1s to 60m, got "999ms"'],
    [{ webhookClaimLease: '2.5s' }, '--webhook-claim-lease: expected a duration'],
  ])('%o is refused with a message naming the flag', (raw, message) => {
    expect(() => loadConfig({ database: ':memory:', ...raw })).toThrow(ConfigError);
    expect(() => loadConfig({ database: ':memory:', ...raw })).toThrow(message);
  });
});
