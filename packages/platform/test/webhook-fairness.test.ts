// Fairness between endpoints with a real worker and real receivers on 127.0.0.1: a receiver that
// accepts and never answers holds at most its cap of requests while a healthy one gets every
// delivery; once it has failed often enough its circuit breaker opens and its other deliveries go
// back to wait in the database, unsent and without an attempt counted; after the cool-down (moved
// by the worker's test clock, not waited for) a probe finds it answering and everything goes out.
// Nothing here is timed: every wait is for a condition.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { seedDeliveries } from './delivery-seed.ts';
import { createTestPlatform, DIALECTS, testWorker, type TestPlatform } from './harness.ts';
import { Receiver, until } from './webhook-receiver.ts';

const CAP = 2;
const COOL_DOWN_MS = 600_000;
const EVENTS = 30;

describe.each(DIALECTS)('endpoint fairness on %s', (dialect) => {
  let t: TestPlatform;
  let healthy: Receiver;
  let hanging: Receiver;
  let answering = false;
  const held: ServerResponse[] = [];
  let active = 0;
  let maxActive = 0;

  beforeAll(async () => {
    // The worker's clock is the frozen test clock, so a retry never comes due: the timeout is long
    // enough that no healthy answer on a loaded machine goes past it.
    t = await createTestPlatform(dialect, { webhooks: { timeoutMs: 2000, retrySchedule: [40, 40, 40], disableAfterDead: 5 } });
    healthy = await Receiver.start();
    hanging = await Receiver.start();
    hanging.handler = (_req, res) => {
      if (answering) return void res.end('ok');
      active++;
      maxActive = Math.max(maxActive, active);
      res.on('close', () => active--);
      held.push(res);
    };
  });
  afterAll(async () => {
    for (const res of held) res.destroy();
    await healthy.close();
    await hanging.close();
    await t.close();
  });

  it('a hanging endpoint holds at most its cap; its breaker opens, hands back the rest unsent, probes once after the cool-down and closes', async () => {
    // The hanging endpoint's deliveries are the oldest, so they are claimed first.
    await seedDeliveries(t.platform, hanging.url('/hooks/orders?token=abc'), EVENTS);
    await seedDeliveries(t.platform, healthy.url('/hooks'), EVENTS);
    const hangingIds = (
      await t.db.kysely
        .selectFrom('webhook_deliveries')
        .innerJoin('webhook_subscriptions as s', (j) =>
          j.onRef('s.store_id', '=', 'webhook_deliveries.store_id').onRef('s.id', '=', 'webhook_deliveries.subscription_id'),
        )
        .select('webhook_deliveries.id')
        .where('s.address', 'like', `${hanging.url('/hooks')}%`)
        .execute()
    ).map((r) => r.id);
    expect(hangingIds).toHaveLength(EVENTS);
    const hangingRows = () =>
      t.db.kysely
        .selectFrom('webhook_deliveries as d')
        .leftJoin('webhook_delivery_leases as l', 'l.delivery_id', 'd.id')
        .select(['d.id', 'd.status', 'd.attempts', 'l.worker as claimed_by', 'd.next_attempt_at'])
        .where('d.id', 'in', hangingIds)
        .orderBy('d.id')
        .execute();
    const lines: { msg: string; obj: Record<string, unknown> }[] = [];
    const log = (obj: object, msg: string) => void lines.push({ msg, obj: obj as Record<string, unknown> });
    const w = await testWorker(t, {
      clock: t.clock.fn,
      perOrigin: CAP,
      // Each endpoint here has one owner, which may use the whole of its cap.
      perOwner: CAP,
      maxInFlight: 8,
      pollMs: 20,
      pruneEveryMs: 0,
      random: () => 0.5,
      breaker: { failures: 2, coolDownMs: COOL_DOWN_MS, maxCoolDownMs: COOL_DOWN_MS },
      logger: { info: log, warn: log, error: log },
    });
    await w.start();
    try {
      const arrived = () => new Set(healthy.received.map((r) => r.headers['x-service-webhook-id'])).size;
      await until(() => arrived() === EVENTS, 20_000, 'every healthy delivery');
      expect(maxActive).toBeLessThanOrEqual(CAP);

      // Two timeouts in a row open the breaker: one more request had gone out when the first
      // timed out; the other 27 deliveries go back unsent, due when the cool-down ends.
      const reopenAt = t.clock.now + COOL_DOWN_MS;
      await until(async () => (await hangingRows()).every((r) => r.claimed_by === null), 20_000, 'the hanging deliveries handed back');
      const rows = await hangingRows();
      expect(hanging.received).toHaveLength(3);
      expect(maxActive).toBe(CAP);
      expect(rows.filter((r) => r.attempts === 1)).toHaveLength(3);
      const waiting = rows.filter((r) => r.attempts === 0);
      expect(waiting).toHaveLength(EVENTS - 3);
      expect(waiting.every((r) => r.status === 'pending' && Number(r.next_attempt_at) === reopenAt)).toBe(true);
      expect(await t.db.kysely.selectFrom('webhook_attempts').select('id').where('delivery_id', 'in', hangingIds).execute()).toHaveLength(
        3,
      );
      const opened = lines.filter((l) => l.msg.startsWith('webhook endpoint circuit opened'));
      expect(opened).toHaveLength(1);
      // The endpoint is named by its origin alone: no path, no query string.
      expect(opened[0]!.obj).toMatchObject({ endpoint: `http://127.0.0.1:${hanging.port}`, failures: 2, reopen_in_ms: COOL_DOWN_MS });
      expect(JSON.stringify(lines.filter((l) => l.msg.startsWith('webhook endpoint circuit')))).not.toContain('/hooks');

      // The endpoint recovers; past the cool-down one probe goes out, succeeds, and the rest follow.
      answering = true;
      t.clock.advance(COOL_DOWN_MS);
      await until(
        async () => (await hangingRows()).every((r) => r.status === 'delivered'),
        20_000,
        'every hanging delivery after recovery',
      );
      expect(lines.filter((l) => l.msg.startsWith('webhook endpoint circuit')).map((l) => l.msg.split(':')[0])).toEqual([
        'webhook endpoint circuit opened',
        'webhook endpoint circuit half-open',
        'webhook endpoint circuit closed',
      ]);
      // Each handed-back delivery was sent once, as its first attempt.
      expect((await hangingRows()).filter((r) => r.attempts === 1)).toHaveLength(EVENTS - 3);
    } finally {
      await w.stop();
    }
  });

  it('--webhook-endpoint-concurrency: 8 by default, an integer from 1 to 64, a clear error otherwise', () => {
    const base = { database: ':memory:' };
    expect(loadConfig(base).webhookEndpointConcurrency).toBe(8);
    expect(loadConfig({ ...base, webhookEndpointConcurrency: '3' }).webhookEndpointConcurrency).toBe(3);
    for (const bad of ['0', '65', '2.5', 'many', '-1'])
      expect(() => loadConfig({ ...base, webhookEndpointConcurrency: bad })).toThrow(
        `--webhook-endpoint-concurrency: expected an integer from 1 to 64, got "${bad}"`,
      );
  });
});
