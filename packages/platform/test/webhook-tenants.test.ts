// Tenants sharing one receiving origin, with a real worker and a real receiver on 127.0.0.1: one
// owner's failing path opens that owner's circuit breaker only. Another store's app on a healthy
// path of the same origin keeps getting its deliveries at once, with no cool-down waited out. The
// worker runs on the frozen test clock, so a delivery handed back until a cool-down ends would
// never come due: the test waits for each delivery to be settled one way or the other, then looks
// at which way, and never measures time.
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../src/domain/scopes.ts';
import { WebhookOutbox } from '../src/services/webhook-outbox.ts';
import type { DeliveryQueue } from '../src/storage/ports/delivery-queue.ts';
import type { ClaimedDelivery } from '../src/storage/ports/rows.ts';
import { WebhookWorker, type WebhookWorkerOptions } from '../src/webhooks/webhook-worker.ts';
import { buildWorkerParts } from '../src/webhooks/worker-parts.ts';
import { createTestPlatform, DIALECTS, testWorker, type TestPlatform } from './harness.ts';
import { Receiver, until } from './webhook-receiver.ts';

const FAILING_SUBSCRIPTIONS = 10;

describe.each(DIALECTS)('webhook tenants on one origin on %s', (dialect) => {
  let t: TestPlatform;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { webhooks: { timeoutMs: 120_000, retrySchedule: [60_000, 60_000], disableAfterDead: 5 } });
    receiver = await Receiver.start();
    // One server for everyone: the /fail paths are broken, every other path answers.
    receiver.handler = (req, res) => {
      res.statusCode = req.url?.startsWith('/fail') ? 503 : 200;
      res.end(res.statusCode === 200 ? 'ok' : 'down');
    };
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  async function newStore(): Promise<number> {
    const suffix = randomBytes(3).toString('hex');
    const store = await t.services.accounts.createStore({
      name: `tenant${suffix}`,
      ownerEmail: `o${suffix}@x.test`,
      ownerPassword: 'tenant-test-password',
    });
    return store.id;
  }

  async function subscribe(storeId: number, owner: { appId: number } | { privateAppId: number }, address: string): Promise<void> {
    await t.db.kysely
      .insertInto('webhook_subscriptions')
      .values({
        store_id: storeId,
        owner: 'appId' in owner ? `app:${owner.appId}` : `private:${owner.privateAppId}`,
        app_id: 'appId' in owner ? owner.appId : null,
        private_app_id: 'privateAppId' in owner ? owner.privateAppId : null,
        topic: 'products/create',
        address,
        api_version: '2026-01',
        created_at: 0,
        updated_at: 0,
        disabled_at: null,
        disabled_reason: null,
      })
      .execute();
  }

  /** One product write in the store (or `n` in one transaction): one products/create event to every subscription. */
  async function productWrite(storeId: number, n = 1): Promise<void> {
    const outbox = new WebhookOutbox(t.services.clock);
    await t.platform.storage.transaction(async (tx) => {
      for (let i = 0; i < n; i++)
        await outbox.enqueue(tx, { storeId, topic: 'products/create', payload: { id: String(i + 1), title: 'p' } });
    });
  }

  const deliveriesOf = (storeId: number) =>
    t.db.kysely
      .selectFrom('webhook_deliveries as d')
      .leftJoin('webhook_delivery_leases as l', 'l.delivery_id', 'd.id')
      .select(['d.id', 'd.status', 'd.attempts', 'l.worker as claimed_by', 'd.next_attempt_at'])
      .where('d.store_id', '=', storeId)
      .orderBy('d.id')
      .execute();

  it("a private app's failing path opens its own breaker; another store's app on a healthy path of the same origin is delivered at once", async () => {
    // Owner X: a private app whose subscriptions all point at a broken path of the origin.
    const storeX = await newStore();
    const privateApp = await t.services.apps.createPrivateApp({ storeId: storeX, name: 'broken', scopes: 'read_products' });
    for (let i = 0; i < FAILING_SUBSCRIPTIONS; i++) await subscribe(storeX, { privateAppId: privateApp.id }, receiver.url(`/fail/${i}`));
    // Owner Y: a public app installed in another store, on a healthy path of the same origin.
    const storeY = await newStore();
    const { app } = await t.services.apps.createApp({
      name: 'Healthy',
      appUrl: 'http://localhost:3000/',
      redirectUri: 'http://localhost:3000/cb',
      scopes: 'read_products',
    });
    await t.services.apps.grant(storeY, app.id, ['read_products'] as Scope[]);
    await subscribe(storeY, { appId: app.id }, receiver.url('/ok'));

    const lines: { msg: string; obj: Record<string, unknown> }[] = [];
    const log = (obj: object, msg: string) => void lines.push({ msg, obj: obj as Record<string, unknown> });
    const w = await testWorker(t, {
      clock: t.clock.fn,
      pollMs: 20,
      pruneEveryMs: 0,
      random: () => 0.5,
      breaker: { failures: FAILING_SUBSCRIPTIONS, coolDownMs: 10_000, maxCoolDownMs: 300_000 },
      logger: { info: log, warn: log, error: log },
    });
    await w.start();
    try {
      // One product write of X's store: every one of its deliveries fails, and that opens a breaker.
      await productWrite(storeX);
      const opened = () => lines.filter((l) => l.msg.startsWith('webhook endpoint circuit opened'));
      await until(() => opened().length === 1, 20_000, "X's breaker to open");
      await until(async () => (await deliveriesOf(storeX)).every((r) => r.attempts === 1 && r.claimed_by === null), 20_000, 'X settled');
      expect(receiver.received.filter((r) => r.path.startsWith('/fail'))).toHaveLength(FAILING_SUBSCRIPTIONS);

      // Y's write: its delivery is either sent or handed back until a cool-down that the frozen
      // clock never reaches. Wait for whichever happens, then require the first.
      await productWrite(storeY);
      await until(
        async () => {
          const [row] = await deliveriesOf(storeY);
          return row !== undefined && (row.status !== 'pending' || (row.claimed_by === null && Number(row.next_attempt_at) > t.clock.now));
        },
        20_000,
        "Y's delivery settled",
      );
      const [yRow] = await deliveriesOf(storeY);
      expect(yRow).toMatchObject({ status: 'delivered', attempts: 1 });
      expect(receiver.on('/ok')).toHaveLength(1);
      // The breaker that opened is X's: named by the origin alone and X's owner.
      expect(opened()[0]!.obj).toMatchObject({
        endpoint: `http://127.0.0.1:${receiver.port}`,
        owner: `${storeX}/private/${privateApp.id}`,
      });
      // Only X's breaker is open; nothing was opened, probed or handed back on Y's account.
      expect(opened()).toHaveLength(1);
      expect(
        lines.filter((l) => l.msg.startsWith('webhook endpoint circuit') && l.obj.owner !== `${storeX}/private/${privateApp.id}`),
      ).toEqual([]);

      // X's next write while its breaker is open goes back unsent; Y's next write still goes out.
      await productWrite(storeX);
      await productWrite(storeY);
      await until(async () => (await deliveriesOf(storeY)).every((r) => r.status === 'delivered'), 20_000, "Y's second delivery");
      expect(receiver.on('/ok')).toHaveLength(2);
      await until(
        async () => (await deliveriesOf(storeX)).filter((r) => r.attempts === 0 && r.claimed_by === null).length === FAILING_SUBSCRIPTIONS,
        20_000,
        "X's second write handed back",
      );
      expect(receiver.received.filter((r) => r.path.startsWith('/fail'))).toHaveLength(FAILING_SUBSCRIPTIONS);
    } finally {
      await w.stop();
    }
  });

  it("a failing owner's backlog is put off when its breaker opens: another store's next delivery to the origin is in the very next claim; after the cool-down one probe per owner", async () => {
    const FAILURES = 4;
    const COOL_DOWN = 10_000;
    // Two failing owners of the same origin in two stores, each with a backlog of several claim
    // batches (a claim takes 250): a private app, and a public app installed in its store.
    const storeA = await newStore();
    const a = await t.services.apps.createPrivateApp({ storeId: storeA, name: 'broken-a', scopes: 'read_products' });
    for (let i = 0; i < 4; i++) await subscribe(storeA, { privateAppId: a.id }, receiver.url(`/fail/backlog-a/${i}`));
    const storeB = await newStore();
    const { app: b } = await t.services.apps.createApp({
      name: 'Broken B',
      appUrl: 'http://localhost:3000/',
      redirectUri: 'http://localhost:3000/cb',
      scopes: 'read_products',
    });
    await t.services.apps.grant(storeB, b.id, ['read_products'] as Scope[]);
    for (let i = 0; i < 4; i++) await subscribe(storeB, { appId: b.id }, receiver.url(`/fail/backlog-b/${i}`));
    // Y: a private app of a third store on a healthy path of the same origin.
    const storeY = await newStore();
    const y = await t.services.apps.createPrivateApp({ storeId: storeY, name: 'healthy', scopes: 'read_products' });
    await subscribe(storeY, { privateAppId: y.id }, receiver.url('/ok/backlog'));
    await productWrite(storeA, 200);
    await productWrite(storeB, 200);
    const failing = [storeA, storeB];

    // The worker's claims go through this queue. Once both breakers are open the next claim is held
    // until the test lets it go, so the test knows which claim comes first after Y's write.
    const real = t.platform.storage.deliveryQueue;
    let gate: Promise<void> | undefined;
    let release = () => {};
    let waiting = 0;
    let firstAfter: ClaimedDelivery[] | undefined;
    const queue: DeliveryQueue = {
      singleProcess: real.singleProcess,
      releaseAllClaims: () => real.releaseAllClaims(),
      releaseClaims: (worker) => real.releaseClaims(worker),
      deferClaims: (input) => real.deferClaims(input),
      deferBacklog: (input) => real.deferBacklog(input),
      renewClaims: (input) => real.renewClaims(input),
      recordOutcomes: (outcomes, ctx) => real.recordOutcomes(outcomes, ctx),
      claim: async (input) => {
        const held = gate;
        if (held) {
          gate = undefined;
          waiting++;
          await held;
        }
        const rows = await real.claim(input);
        if (held) firstAfter = rows;
        return rows;
      },
    };
    const lines: { msg: string; obj: Record<string, unknown> }[] = [];
    const log = (obj: object, msg: string) => {
      lines.push({ msg, obj: obj as Record<string, unknown> });
      if (opened().length === 2 && waiting === 0 && !firstAfter)
        gate ??= new Promise<void>((resolve) => {
          release = resolve;
        });
    };
    // (Deliveries of the other tests in this file come due too once the clock moves: only A's and
    // B's breakers are counted.)
    const owners = [`${storeA}/private/${a.id}`, `${storeB}/app/${b.id}`];
    const opened = () => lines.filter((l) => l.msg.startsWith('webhook endpoint circuit opened') && owners.includes(String(l.obj.owner)));
    const settings: WebhookWorkerOptions = {
      queue,
      onDeliveriesQueued: (listener) => t.platform.storage.onDeliveriesQueued(listener),
      box: t.services.box,
      config: t.config,
      clock: t.clock.fn,
      pollMs: 20,
      pruneEveryMs: 0,
      random: () => 0.5,
      breaker: { failures: FAILURES, coolDownMs: COOL_DOWN, maxCoolDownMs: 300_000 },
      logger: { info: log, warn: log, error: log },
    };
    const w = new WebhookWorker(buildWorkerParts(settings), settings);
    const rowsOf = async () => (await Promise.all(failing.map((s) => deliveriesOf(s)))).flat();
    const sentTo = (owner: 'a' | 'b') => receiver.received.filter((r) => r.path.startsWith(`/fail/backlog-${owner}/`)).length;
    await w.start();
    try {
      await until(() => opened().length === 2, 20_000, 'both breakers to open');
      // Everything the failing owners' attempts and hand-backs wrote is in; a claim is waiting.
      await until(async () => waiting === 1 && (await rowsOf()).every((r) => r.claimed_by === null), 20_000, 'the failing owners settled');
      const reopenAt = t.clock.now + COOL_DOWN;
      expect(opened().map((l) => l.obj.owner)).toEqual(expect.arrayContaining(owners));

      await productWrite(storeY);
      release();
      await until(async () => (await deliveriesOf(storeY))[0]?.status === 'delivered', 20_000, "Y's delivery");
      // The first claim after Y's write brought Y's delivery and nothing of the failing owners.
      expect(firstAfter?.map((r) => r.store_id)).toEqual([storeY]);
      // Their backlogs wait in the database until the cool-down ends, never attempted; only the
      // attempts that opened the breakers were sent (and counted).
      const rows = await rowsOf();
      expect(rows).toHaveLength(1_600);
      const untried = rows.filter((r) => r.attempts === 0);
      expect(untried.length).toBeGreaterThan(1_500);
      expect(untried.every((r) => r.status === 'pending' && Number(r.next_attempt_at) === reopenAt)).toBe(true);
      expect(rows.filter((r) => r.attempts === 1)).toHaveLength(sentTo('a') + sentTo('b'));
      expect(rows.every((r) => r.attempts <= 1)).toBe(true);

      // After the cool-down: one probe per owner, which fails and puts the backlog off again.
      const before = { a: sentTo('a'), b: sentTo('b') };
      t.clock.advance(COOL_DOWN);
      w.wake();
      await until(
        async () =>
          opened().length === 4 && (await rowsOf()).every((r) => r.claimed_by === null && Number(r.next_attempt_at) > t.clock.now),
        20_000,
        'the probes to fail and the backlogs to be put off again',
      );
      expect({ a: sentTo('a'), b: sentTo('b') }).toEqual({ a: before.a + 1, b: before.b + 1 });
      const after = await rowsOf();
      expect(after.filter((r) => r.attempts === 0)).toHaveLength(untried.length - 2);
      expect(after.filter((r) => r.attempts === 0).every((r) => Number(r.next_attempt_at) === t.clock.now + 2 * COOL_DOWN)).toBe(true);
      expect(receiver.on('/ok/backlog')).toHaveLength(1);
    } finally {
      release();
      await w.stop();
    }
  });

  it("a private app's hanging path holds at most its own share of the origin's slots; another store's app is delivered while it hangs", async () => {
    const hanging = await Receiver.start();
    const held: ServerResponse[] = [];
    let active = 0;
    let maxActive = 0;
    hanging.handler = (req, res) => {
      if (!req.url?.startsWith('/hang')) return void res.end('ok');
      active++;
      maxActive = Math.max(maxActive, active);
      res.on('close', () => active--);
      held.push(res);
    };
    const storeX = await newStore();
    const privateApp = await t.services.apps.createPrivateApp({ storeId: storeX, name: 'hanging', scopes: 'read_products' });
    for (let i = 0; i < FAILING_SUBSCRIPTIONS; i++) await subscribe(storeX, { privateAppId: privateApp.id }, hanging.url(`/hang/${i}`));
    const storeY = await newStore();
    const y = await t.services.apps.createPrivateApp({ storeId: storeY, name: 'healthy', scopes: 'read_products' });
    await subscribe(storeY, { privateAppId: y.id }, hanging.url('/ok'));
    // The timeout is far longer than the test: a slot X holds is never freed by it.
    const w = await testWorker(t, { clock: t.clock.fn, perOrigin: 4, pollMs: 20, pruneEveryMs: 0, random: () => 0.5 });
    await w.start();
    try {
      await productWrite(storeX);
      await until(() => active >= 2, 20_000, "X's requests to hang");
      await productWrite(storeY);
      await until(() => hanging.on('/ok').length === 1, 20_000, "Y's delivery while X hangs");
      // X never had more than its half of the origin's 4 slots, and still holds them.
      expect(maxActive).toBe(2);
      expect(active).toBe(2);
      await until(async () => (await deliveriesOf(storeY))[0]?.status === 'delivered', 20_000, "Y's delivery recorded");
    } finally {
      for (const res of held) res.destroy();
      await w.stop();
      await hanging.close();
    }
  });
});
