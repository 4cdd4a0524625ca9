// Endpoint health on both databases: attempts a real worker makes against receivers on 127.0.0.1
// (one answering 200, one 500, one never answering within a short timeout) are added to the hourly
// rollup with the right outcome counts and latency buckets; the breaker's state is written when it
// opens and when it closes; the partner page draws the figures and hides another partner's app;
// old figures are pruned. The worker runs on the frozen test clock, so the hour and the breaker's
// times are known; the test waits for settled rows, never for time.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../src/domain/scopes.ts';
import { HOUR_MS, hourOf, LATENCY_BOUNDS } from '../src/domain/endpoint-health.ts';
import { WebhookOutbox } from '../src/services/webhook-outbox.ts';
import { createTestPlatform, DIALECTS, testWorker, type TestPlatform } from './harness.ts';
import { Receiver, until } from './webhook-receiver.ts';
import { createPartner, get, partnerLogin, PLATFORM_HOST } from './web-pages.ts';

let n = 100;

describe.each(DIALECTS)('endpoint health on %s', (dialect) => {
  let t: TestPlatform;
  let ok: Receiver;
  let hang: Receiver;

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { webhooks: { timeoutMs: 300, retrySchedule: [600_000, 600_000], disableAfterDead: 5 } });
    ok = await Receiver.start();
    ok.handler = (req, res) => {
      res.statusCode = req.url?.startsWith('/fail') ? 500 : 200;
      res.end(res.statusCode === 200 ? 'ok' : 'broken');
    };
    // Never answers: every attempt runs into the 300 ms timeout.
    hang = await Receiver.start();
    hang.handler = () => {};
  });
  afterAll(async () => {
    await ok?.close();
    await hang?.close();
    await t?.close();
  });

  /** A partner's app installed in a new store, subscribed to products/create at each address. */
  async function appWith(addresses: string[]) {
    const suffix = randomBytes(3).toString('hex');
    const partner = await createPartner(t, ++n);
    const store = await t.services.accounts.createStore({
      name: `eh${suffix}`,
      ownerEmail: `o${suffix}@x.test`,
      ownerPassword: 'endpoint-health-pw',
    });
    const { app } = await t.services.apps.createApp({
      name: `Health ${suffix}`,
      appUrl: 'https://app.example.test/',
      redirectUri: 'https://app.example.test/cb',
      scopes: 'read_products',
      partnerId: partner.id,
    });
    await t.services.apps.grant(store.id, app.id, ['read_products'] as Scope[]);
    for (const address of addresses)
      await t.db.kysely
        .insertInto('webhook_subscriptions')
        .values({
          store_id: store.id,
          owner: `app:${app.id}`,
          app_id: app.id,
          private_app_id: null,
          topic: 'products/create',
          address,
          api_version: '2026-01',
          created_at: 0,
          updated_at: 0,
          disabled_at: null,
          disabled_reason: null,
        })
        .execute();
    return { partner, store, app };
  }

  async function productWrite(storeId: number): Promise<void> {
    const outbox = new WebhookOutbox(t.services.clock);
    await t.platform.storage.transaction((tx) =>
      outbox.enqueue(tx, { storeId, topic: 'products/create', payload: { id: '1', title: 'p' } }),
    );
  }

  const settled = (storeId: number) => async () => {
    const rows = await t.db.kysely
      .selectFrom('webhook_deliveries as d')
      .leftJoin('webhook_delivery_leases as l', 'l.delivery_id', 'd.id')
      .select(['d.attempts', 'l.worker as claimed_by'])
      .where('d.store_id', '=', storeId)
      .execute();
    return rows.length > 0 && rows.every((r) => Number(r.attempts) >= 1 && r.claimed_by === null);
  };

  it('counts attempts per endpoint and hour by outcome, with the latency of answers in its buckets', async () => {
    const { store, app } = await appWith([ok.url('/ok'), ok.url('/fail'), hang.url('/hook')]);
    const w = await testWorker(t, { clock: t.clock.fn, pollMs: 20, pruneEveryMs: 0, random: () => 0.5 });
    await w.start();
    try {
      await productWrite(store.id);
      await until(settled(store.id), 20_000, 'three attempts recorded');
      await w.whenIdle();
    } finally {
      await w.stop();
    }
    const hour = hourOf(t.clock.now);
    const rows = await t.platform.storage.endpointHealth.hours(app.id, hour);
    const byOrigin = new Map(rows.map((r) => [r.origin, r]));
    const okRow = byOrigin.get(`http://127.0.0.1:${ok.port}`)!;
    const hangRow = byOrigin.get(`http://127.0.0.1:${hang.port}`)!;
    expect(rows).toHaveLength(2);
    expect(okRow.hour).toBe(hour);
    expect(okRow.counts).toEqual({ delivered: 1, failed: 1, no_answer: 0, not_sent: 0 });
    expect(hangRow.counts).toEqual({ delivered: 0, failed: 0, no_answer: 1, not_sent: 0 });
    // Both answers went into the bucket of their recorded latency; a timeout adds no latency.
    const attempts = await t.db.kysely
      .selectFrom('webhook_attempts')
      .select(['latency_ms', 'status_code'])
      .where('store_id', '=', store.id)
      .execute();
    const expected = LATENCY_BOUNDS.map(() => 0);
    for (const a of attempts.filter((x) => x.status_code !== null))
      expected[LATENCY_BOUNDS.findIndex((b) => Number(a.latency_ms) <= b)]! += 1;
    expect(okRow.latency).toEqual(expected);
    expect(okRow.latency.reduce((s, c) => s + c, 0)).toBe(2);
    expect(hangRow.latency.every((c) => c === 0)).toBe(true);

    // The service's view: one endpoint per origin, the figures in the current hour, percentiles
    // as bucket bounds, and the next attempt of the pending retries (the 500 and the timeout).
    const health = await t.services.endpointHealth.forApp(app.id, 24);
    expect(health.endpoints.map((e) => e.endpoint)).toEqual([`http://127.0.0.1:${hang.port}`, `http://127.0.0.1:${ok.port}`].sort());
    const okFigures = health.endpoints.find((e) => e.endpoint === `http://127.0.0.1:${ok.port}`)!;
    expect(okFigures.hourly).toHaveLength(24);
    expect(okFigures.hourly.at(-1)).toMatchObject({ delivered: 1, failed: 1, attempts: 2 });
    expect(okFigures.totals).toEqual({ delivered: 1, failed: 1, no_answer: 0, not_sent: 0, attempts: 2 });
    expect(LATENCY_BOUNDS).toContain(okFigures.p99_ms);
    expect(okFigures.next_attempt_at).toBe(new Date(t.clock.now + 600_000).toISOString());
    const hangFigures = health.endpoints.find((e) => e.endpoint === `http://127.0.0.1:${hang.port}`)!;
    expect(hangFigures.p50_ms).toBeNull();
    expect(hangFigures.breaker.state).toBe('closed');
  });

  it('records the breaker in the database when it opens and when a probe closes it', async () => {
    const flaky = await Receiver.start();
    flaky.handler = (_req, res) => {
      res.statusCode = 503;
      res.end('down');
    };
    try {
      const { store, app } = await appWith([flaky.url('/a'), flaky.url('/b')]);
      const origin = `http://127.0.0.1:${flaky.port}`;
      const breaker = () =>
        t.db.kysely
          .selectFrom('webhook_endpoint_breakers')
          .selectAll()
          .where('owner_id', '=', app.id)
          .where('owner_kind', '=', 'app')
          .execute();
      const w = await testWorker(t, {
        clock: t.clock.fn,
        pollMs: 20,
        pruneEveryMs: 0,
        random: () => 0.5,
        breaker: { failures: 2, coolDownMs: 10_000, maxCoolDownMs: 60_000 },
      });
      await w.start();
      try {
        const openedAt = t.clock.now;
        await productWrite(store.id);
        await until(async () => (await breaker()).length === 1, 20_000, 'the breaker row');
        const [open] = await breaker();
        expect(open).toMatchObject({ origin, state: 'open', failures: 2 });
        expect(Number(open!.store_id)).toBe(store.id);
        expect(Number(open!.reopen_at)).toBe(openedAt + 10_000);
        const page = await t.services.endpointHealth.forApp(app.id, 1);
        expect(page.endpoints[0]!.breaker).toMatchObject({ state: 'open', reopen_at: new Date(openedAt + 10_000).toISOString() });
        expect(page.endpoints[0]!.breaker.stores.map((s) => s.store_id)).toEqual([store.id]);

        // The endpoint recovers; once the cool-down is over a probe goes out and closes it.
        flaky.handler = (_req, res) => res.end('ok');
        await productWrite(store.id);
        t.clock.advance(10_000);
        await until(async () => (await breaker())[0]?.state === 'closed', 20_000, 'the breaker to close');
        const [closed] = await breaker();
        expect(closed).toMatchObject({ state: 'closed', failures: 0, reopen_at: null });
        expect(Number(closed!.changed_at)).toBe(t.clock.now);
      } finally {
        await w.stop();
      }
    } finally {
      await flaky.close();
    }
  });

  it('batches recorded at once by several workers add up in the rollup', async () => {
    const { store, app } = await appWith([]);
    const at = t.clock.now;
    const outcome = (id: number, origin: string, status: number | null, latencyMs: number) => ({
      id,
      storeId: store.id,
      subscriptionId: 1,
      attempts: 0,
      attempt: { attemptedAt: at, status, latencyMs, responseBody: null, error: status === null ? 'timed out after 300 ms' : null },
      endpoint: { ownerKind: 'app' as const, ownerId: app.id, origin },
      next: { status: 'pending' as const, nextAttemptAt: at + 60_000 },
    });
    // Four workers' batches at the same moment, each naming both endpoints (in opposite orders).
    const batches = Array.from({ length: 4 }, (_, w) =>
      Array.from({ length: 50 }, (_, i) => {
        const id = 1_000_000 + w * 100 + i;
        const first = w % 2 === 0 ? 'https://a.example.test' : 'https://b.example.test';
        const second = w % 2 === 0 ? 'https://b.example.test' : 'https://a.example.test';
        return i % 2 === 0 ? outcome(id, first, 200, 30) : outcome(id, second, i % 3 === 0 ? null : 503, 700);
      }),
    );
    await Promise.all(
      batches.map((b, w) => t.platform.storage.deliveryQueue.recordOutcomes(b, { worker: `w${w}`, now: at, disableAfterDead: 5 })),
    );
    const rows = await t.platform.storage.endpointHealth.hours(app.id, hourOf(at));
    const sum = (origin: string) => rows.find((r) => r.origin === origin)!;
    const a = sum('https://a.example.test');
    const b = sum('https://b.example.test');
    expect(a.counts.delivered + b.counts.delivered).toBe(100);
    expect(a.counts.failed + b.counts.failed + a.counts.no_answer + b.counts.no_answer).toBe(100);
    expect(a.counts.no_answer + b.counts.no_answer).toBe(4 * 8);
    // Answers' latencies only: 100 in (25, 50] ms, the 503s in (400, 800] ms.
    expect(a.latency[1]! + b.latency[1]!).toBe(100);
    expect(a.latency[5]! + b.latency[5]!).toBe(100 - 4 * 8);
  });

  it('an older change never overwrites a newer one (two workers writing out of order)', async () => {
    const { store, app } = await appWith([]);
    const repo = t.platform.storage.endpointHealth;
    const base = { ownerKind: 'app' as const, ownerId: app.id, storeId: store.id, origin: 'https://hooks.example.test' };
    await repo.recordBreakerChanges([{ ...base, state: 'closed', failures: 0, reopenAt: null, changedAt: 2_000 }]);
    await repo.recordBreakerChanges([{ ...base, state: 'open', failures: 10, reopenAt: 11_000, changedAt: 1_000 }]);
    const rows = await repo.breakers(app.id, 10);
    expect(rows).toEqual([
      { origin: base.origin, store_id: store.id, store_name: store.name, state: 'closed', failures: 0, reopen_at: null, changed_at: 2_000 },
    ]);
    // Two changes of one breaker in one write: the later one stands.
    await repo.recordBreakerChanges([
      { ...base, state: 'open', failures: 10, reopenAt: 13_000, changedAt: 3_000 },
      { ...base, state: 'half-open', failures: 10, reopenAt: null, changedAt: 3_000 },
    ]);
    expect((await repo.breakers(app.id, 10))[0]).toMatchObject({ state: 'half-open' });
  });

  it('the page draws each endpoint; another partner gets 404; an app without endpoints gets the empty state', async () => {
    // The address carries a credential in its userinfo and query: neither is ever shown.
    const { partner, store, app } = await appWith([ok.url('/ok?token=s3cret-in-query').replace('http://', 'http://user:pw-in-userinfo@')]);
    const hour = hourOf(t.clock.now);
    const origin = 'https://hooks.example.test';
    // Figures as a worker would have added them: 3 attempts two hours ago, 5 in this hour.
    const rows = [
      { hour: hour - 2 * HOUR_MS, delivered: 2, failed: 1, ms_50: 2, ms_800: 1 },
      { hour, delivered: 4, no_answer: 1, ms_25: 3, ms_1600: 1 },
    ];
    for (const r of rows)
      await t.db.kysely
        .insertInto('webhook_endpoint_hours')
        .values({ owner_kind: 'app', owner_id: app.id, origin, ...r })
        .execute();
    await t.platform.storage.endpointHealth.recordBreakerChanges([
      {
        ownerKind: 'app',
        ownerId: app.id,
        storeId: store.id,
        origin,
        state: 'open',
        failures: 10,
        reopenAt: t.clock.now + 60_000,
        changedAt: t.clock.now,
      },
    ]);
    const jar = await partnerLogin(t, partner);
    const res = await get(t, PLATFORM_HOST, `/partner/apps/${app.client_id}/endpoints`, jar);
    expect(res.statusCode).toBe(200);
    const body = res.body;
    expect(body).toContain('<strong>Endpoint health</strong>');
    expect(body).toContain(`<code>${origin}</code>`);
    expect(body).toContain(`<code>http://127.0.0.1:${ok.port}</code>`);
    // The attempts chart: an image named and described with the totals, one bar segment per outcome and hour.
    expect(body).toContain(`<title id="attempts-1-title">Attempts per hour to ${origin}, by outcome</title>`);
    expect(body).toMatch(/role="img" aria-labelledby="attempts-1-title attempts-1-desc"/);
    expect(body).toContain('8 attempts in 168 hours: 6 delivered, 1 failed answer, 1 with no answer, 0 not sent.');
    expect(body.match(/class="bar-delivered"/g)).toHaveLength(2);
    expect(body.match(/class="bar-failed"/g)).toHaveLength(1);
    expect(body.match(/class="bar-no_answer"/g)).toHaveLength(1);
    expect(body).toContain('Delivered (2xx)</li>');
    // The latency chart: over the window 7 answers, p50 in the 25 ms bucket… the 4th of 7 is in ms_50.
    expect(body).toContain('Over the window, p50 at most 50 ms and p99 at most 1.6 s.');
    expect(body).toContain('p99 (dashed)');
    expect(body).toMatch(/Open<\/strong> in 1 store \(eh[0-9a-f]+\) until /);
    expect(body).not.toContain('s3cret-in-query');
    expect(body).not.toContain('pw-in-userinfo');
    // The second endpoint has no attempts yet: its empty state.
    expect(body).toContain(`No attempts to http://127.0.0.1:${ok.port} in this window.`);

    const other = await appWith([]);
    const otherJar = await partnerLogin(t, other.partner);
    expect((await get(t, PLATFORM_HOST, `/partner/apps/${app.client_id}/endpoints`, otherJar)).statusCode).toBe(404);
    const empty = await get(t, PLATFORM_HOST, `/partner/apps/${other.app.client_id}/endpoints`, otherJar);
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('This app has no webhook endpoint yet');
  });

  it('prunes hours and breaker rows older than 8 days', async () => {
    const { store, app } = await appWith([]);
    const now = t.clock.now;
    const old = hourOf(now) - 9 * 24 * HOUR_MS;
    await t.db.kysely
      .insertInto('webhook_endpoint_hours')
      .values({ owner_kind: 'app', owner_id: app.id, origin: 'https://old.test', hour: old, delivered: 1 })
      .execute();
    await t.db.kysely
      .insertInto('webhook_endpoint_hours')
      .values({ owner_kind: 'app', owner_id: app.id, origin: 'https://old.test', hour: hourOf(now), delivered: 1 })
      .execute();
    await t.platform.storage.endpointHealth.recordBreakerChanges([
      {
        ownerKind: 'app',
        ownerId: app.id,
        storeId: store.id,
        origin: 'https://old.test',
        state: 'closed',
        failures: 0,
        reopenAt: null,
        changedAt: old,
      },
    ]);
    expect(await t.services.endpointHealth.prune()).toBeGreaterThanOrEqual(2);
    expect((await t.platform.storage.endpointHealth.hours(app.id, 0)).map((r) => r.hour)).toEqual([hourOf(now)]);
    expect(await t.platform.storage.endpointHealth.breakers(app.id, 10)).toEqual([]);
    await expect(t.services.endpointHealth.forApp(app.id, 169)).rejects.toThrow('hours must be an integer from 1 to 168');
  });
});
