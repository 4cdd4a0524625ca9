// Recovering webhook subscriptions end to end on SQLite and PostgreSQL (and the partitioned
// layout): a disabled subscription announced to the app's other addresses (subscription/disabled)
// through a real worker posting to loopback receivers, enabling it again in place, replaying its
// deliveries with their original webhook ids (failed only or all, capped, never twice, nothing
// after the grant went away), replays that never trip the breaker nor the dead streak, and bad
// input that changes nothing.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../src/domain/scopes.ts';
import type { WorkerSettings } from '../src/platform.ts';
import { MAX_REPLAY } from '../src/services/webhook-recovery.ts';
import type { WebhookWorker } from '../src/webhooks/webhook-worker.ts';
import {
  api,
  appToken,
  createFixture,
  createTestPlatform,
  DIALECTS_WITH_PARTITIONED,
  privateToken,
  testWorker,
  type Fixture,
  type TestPlatform,
} from './harness.ts';
import { unroutedQueries } from './partition-routing.ts';
import { Receiver, until } from './webhook-receiver.ts';

const V = '/openapi/2026-01';
const WEBHOOKS = { timeoutMs: 300, retrySchedule: [30, 30], disableAfterDead: 3 };

describe.each(DIALECTS_WITH_PARTITIONED)('webhook recovery on %s', (dialect) => {
  let t: TestPlatform;
  let rx: Receiver;
  const workers: WebhookWorker[] = [];
  const lines: { msg: string; obj: Record<string, unknown> }[] = [];

  async function worker(extra: WorkerSettings = {}): Promise<WebhookWorker> {
    const log = (obj: object, msg: string) => void lines.push({ msg, obj: obj as Record<string, unknown> });
    const w = await testWorker(t, {
      pollMs: 20,
      random: () => 0.5,
      pruneEveryMs: 0,
      logger: { info: log, warn: log, error: log },
      ...extra,
    });
    workers.push(w);
    await w.start();
    return w;
  }

  async function stopWorkers(): Promise<void> {
    for (const w of workers.splice(0)) await w.stop();
  }

  /** A store with an installed app (its token) and ids. */
  async function installed(scopes = 'write_products write_orders') {
    const f = await createFixture(t, { scopes });
    const token = await appToken(t, f, scopes);
    const storeId = (await t.services.accounts.findStoreByName(f.storeName))!.id;
    const appId = (await t.platform.storage.webhooks.appIdByClientId(f.clientId))!;
    return { f, token, storeId, appId };
  }

  async function subscribe(f: Fixture, token: string, topic: string, path: string): Promise<string> {
    const res = await api(t, f, token, 'POST', `${V}/webhooks`, { address: rx.url(path), topic });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.id;
  }

  const sub = (id: string) =>
    t.db.kysely.selectFrom('webhook_subscriptions').selectAll().where('id', '=', Number(id)).executeTakeFirstOrThrow();
  const deliveriesOf = (id: string) =>
    t.db.kysely.selectFrom('webhook_deliveries').selectAll().where('subscription_id', '=', Number(id)).orderBy('id').execute();
  const product = (f: Fixture, token: string, title: string) => api(t, f, token, 'POST', `${V}/products`, { title, price: '1' });

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off', webhooks: WEBHOOKS });
    // Real time: the worker schedules retries by the wall clock.
    t.clock.now = Date.now() - 1000;
    rx = await Receiver.start();
  });
  afterEach(async () => {
    await stopWorkers();
    rx.handler = (_req, res) => res.end('ok');
    lines.length = 0;
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  it('a disabled subscription is announced once to each other address of the app, never to its own; enabling it keeps its id and history', async () => {
    const { f, token } = await installed();
    const gone = await subscribe(f, token, 'products/create', '/gone');
    // Another topic at the dead address: not an address the app can be reached at now.
    await subscribe(f, token, 'products/update', '/gone');
    const first = await subscribe(f, token, 'products/update', '/notice-1');
    await subscribe(f, token, 'products/delete', '/notice-1');
    const second = await subscribe(f, token, 'orders/create', '/notice-2');
    rx.handler = (req, res) => {
      res.statusCode = req.url === '/gone' ? 410 : 200;
      res.end();
    };
    await worker();
    await product(f, token, 'Gone mug');
    await until(() => rx.on('/notice-1').length === 1 && rx.on('/notice-2').length === 1, 5000, 'the notices');
    const disabled = await sub(gone);
    expect(disabled).toMatchObject({ disabled_reason: 'the receiver answered 410 Gone' });
    for (const got of [rx.on('/notice-1')[0]!, rx.on('/notice-2')[0]!]) {
      expect(got.headers['x-service-topic']).toBe('subscription/disabled');
      expect(JSON.parse(got.body)).toEqual({
        subscription: { id: gone, topic: 'products/create', address: rx.url('/gone') },
        reason: 'the receiver answered 410 Gone',
        disabled_at: new Date(Number(disabled.disabled_at)).toISOString(),
      });
    }
    // One delivery per address, to the lowest subscription there, none to the dead address.
    const notices = await t.db.kysely.selectFrom('webhook_deliveries').selectAll().where('topic', '=', 'subscription/disabled').execute();
    expect(notices.map((d) => String(d.subscription_id)).sort()).toEqual([first, second].sort());
    expect(rx.on('/gone')).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(rx.on('/notice-1')).toHaveLength(1);

    // Enabled again in place: same id, its delivery and attempts kept, a clean record, a new ETag.
    const before = await deliveriesOf(gone);
    const enabled = await api(t, f, token, 'POST', `${V}/webhooks/${gone}/enable`, {});
    expect(enabled.statusCode, enabled.body).toBe(200);
    expect(enabled.json().data).toMatchObject({ id: gone, status: 'active', topic: 'products/create' });
    expect(enabled.headers.etag).toBe(`"${gone}-${disabled.version + 1}"`);
    expect(await sub(gone)).toMatchObject({ disabled_at: null, disabled_reason: null, dead_streak: 0, enabled_at: t.clock.now });
    expect(await deliveriesOf(gone)).toEqual(before);
    // Enabling an active subscription changes nothing.
    const again = await api(t, f, token, 'POST', `${V}/webhooks/${gone}/enable`, {});
    expect(again.statusCode).toBe(200);
    expect(again.headers.etag).toBe(enabled.headers.etag);
    // Deliveries flow to it again.
    rx.handler = (_req, res) => res.end('ok');
    await product(f, token, 'Back mug');
    await until(() => rx.on('/gone').length === 2, 5000, 'a delivery to the enabled subscription');
    await until(async () => (await deliveriesOf(gone)).at(-1)?.status === 'delivered', 5000, 'delivered');
    expect((await deliveriesOf(gone)).map((d) => d.status)).toEqual(['dead', 'delivered']);
  });

  it("without another address the notice goes to the app's privacy address; a private app's only subscription tells no one", async () => {
    const { f, token, appId } = await installed();
    await t.services.apps.setPrivacyWebhookUrl(appId, rx.url('/privacy'));
    const only = await subscribe(f, token, 'products/create', '/only-gone');
    const privToken = await privateToken(t, f.storeName, 'read_products');
    const privateOnly = await subscribe(f, privToken, 'products/create', '/private-gone');
    rx.handler = (req, res) => {
      res.statusCode = req.url?.endsWith('-gone') ? 410 : 200;
      res.end();
    };
    await worker();
    await product(f, token, 'Lonely mug');
    await until(() => rx.on('/privacy').length === 1, 5000, 'the notice at the privacy address');
    expect(JSON.parse(rx.on('/privacy')[0]!.body).subscription).toEqual({
      id: only,
      topic: 'products/create',
      address: rx.url('/only-gone'),
    });
    await until(async () => (await sub(privateOnly)).disabled_at !== null, 5000, 'the private subscription disabled');
    const events = await t.db.kysely
      .selectFrom('webhook_deliveries')
      .select(['private_app_id', 'app_id'])
      .where('topic', '=', 'subscription/disabled')
      .execute();
    expect(events.filter((e) => e.private_app_id !== null)).toEqual([]);
    // No app may subscribe to it.
    const refused = await api(t, f, token, 'POST', `${V}/webhooks`, { address: rx.url('/x'), topic: 'subscription/disabled' });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().errors.topic[0]).toMatch(/needs no subscription/);
  });

  it('a replay resends failed deliveries (or all) with their original webhook ids, never twice while queued', async () => {
    const { f, token } = await installed();
    const s = await subscribe(f, token, 'products/create', '/replay');
    const since = new Date(t.clock.now - 60_000).toISOString();
    await worker();
    await product(f, token, 'Delivered mug');
    await until(() => rx.on('/replay').length === 1, 5000, 'the first delivery');
    rx.handler = (_req, res) => {
      res.statusCode = 503;
      res.end();
    };
    await product(f, token, 'Dead mug 1');
    await product(f, token, 'Dead mug 2');
    await until(async () => (await deliveriesOf(s)).filter((d) => d.status === 'dead').length === 2, 5000, 'two dead deliveries');
    const originals = await deliveriesOf(s);
    const idOf = new Map(originals.map((d) => [d.webhook_id, d.id]));
    expect(await sub(s)).toMatchObject({ dead_streak: 2, disabled_at: null });
    rx.handler = (_req, res) => res.end('ok');
    const sent = rx.on('/replay').length;

    const failed = await api(t, f, token, 'POST', `${V}/webhooks/${s}/replay`, { since, status: 'failed' });
    expect(failed.statusCode, failed.body).toBe(202);
    expect(failed.json().data).toEqual({
      subscription_id: s,
      since,
      status: 'failed',
      queued: 2,
      already_queued: 0,
      capped: false,
      next_since: null,
    });
    await until(() => rx.on('/replay').length === sent + 2, 5000, 'the replayed deliveries');
    const resent = rx.on('/replay').slice(sent);
    const dead = originals.filter((d) => d.status === 'dead').map((d) => d.webhook_id);
    expect(resent.map((r) => r.headers['webhook-id']).sort()).toEqual([...dead].sort());
    expect(resent.every((r) => idOf.has(r.headers['webhook-id']!))).toBe(true);
    await until(async () => (await deliveriesOf(s)).every((d) => d.status === 'delivered'), 5000, 'all delivered');
    // The same rows, no new ones; a success ends the dead streak as any other does.
    expect((await deliveriesOf(s)).map((d) => d.id)).toEqual(originals.map((d) => d.id));
    expect(await sub(s)).toMatchObject({ dead_streak: 0 });

    // "all" takes the delivered ones too; wrapped like the API's other writes. Replayed again while
    // those are still queued (the worker stopped), nothing is queued twice.
    await stopWorkers();
    const all = await api(t, f, token, 'POST', `${V}/webhooks/${s}/replay`, { replay: { since, status: 'all' } });
    expect(all.json().data).toMatchObject({ queued: 3, already_queued: 0, capped: false });
    const twice = await api(t, f, token, 'POST', `${V}/webhooks/${s}/replay`, { since, status: 'all' });
    expect(twice.json().data).toMatchObject({ queued: 0, already_queued: 3 });
    expect((await deliveriesOf(s)).every((d) => d.status === 'pending' && d.replayed_at !== null)).toBe(true);
    const before = rx.on('/replay').length;
    await worker();
    await until(async () => (await deliveriesOf(s)).every((d) => d.status === 'delivered'), 5000, 'all replayed');
    expect(rx.on('/replay').length).toBe(before + 3);
    expect(
      new Set(
        rx
          .on('/replay')
          .slice(before)
          .map((r) => r.headers['webhook-id']),
      ),
    ).toEqual(new Set(idOf.keys()));
  });

  it("a replay's failures trip neither the breaker nor the dead streak; ordinary failures still do", async () => {
    const { f, token, storeId, appId } = await installed();
    const opened = () =>
      lines.filter((l) => l.msg.startsWith('webhook endpoint circuit opened') && l.obj.owner === `${storeId}/app/${appId}`);
    const s = await subscribe(f, token, 'products/create', '/flaky');
    for (let i = 0; i < 4; i++) await product(f, token, `Backlog mug ${i}`);
    // A backlog that died while the endpoint was down (no worker ran).
    await t.db.kysely
      .updateTable('webhook_deliveries')
      .set({ status: 'dead', attempts: 3, last_error: 'HTTP 503' })
      .where('subscription_id', '=', Number(s))
      .execute();
    rx.handler = (_req, res) => {
      res.statusCode = 503;
      res.end();
    };
    const since = new Date(t.clock.now - 60_000).toISOString();
    const replayed = await api(t, f, token, 'POST', `${V}/webhooks/${s}/replay`, { since });
    expect(replayed.json().data).toMatchObject({ queued: 4 });
    await worker({ breaker: { failures: 2, coolDownMs: 60_000, maxCoolDownMs: 60_000 } });
    await until(async () => (await deliveriesOf(s)).every((d) => d.status === 'dead'), 10_000, 'the replay dead again');
    // Every delivery got its three attempts: no breaker held any back, none opened.
    expect(rx.on('/flaky')).toHaveLength(12);
    expect(opened()).toEqual([]);
    // Four dead replays, above the three that disable: the subscription stays active, its streak untouched.
    expect(await sub(s)).toMatchObject({ disabled_at: null, dead_streak: 0 });

    // An ordinary delivery failing does count (the breaker opens after two failures in a row).
    await product(f, token, 'Ordinary mug');
    await product(f, token, 'Ordinary mug 2');
    await until(() => opened().length > 0, 10_000, 'the breaker to open');
  });

  it("enabling a subscription again drops its owner's open breaker at the endpoint: the next delivery goes out at once", async () => {
    const { f, token, storeId, appId } = await installed();
    // Deliveries left failing by the tests above may open breakers of their own owners: only this one's counts.
    const owner = `${storeId}/app/${appId}`;
    const ours = (msg: string) => lines.filter((l) => l.msg.startsWith(msg) && l.obj.owner === owner);
    const a = await subscribe(f, token, 'products/create', '/bk-a');
    await subscribe(f, token, 'products/create', '/bk-b');
    rx.handler = (_req, res) => {
      res.statusCode = 503;
      res.end();
    };
    await worker({ breaker: { failures: 2, coolDownMs: 120_000, maxCoolDownMs: 120_000 } });
    await product(f, token, 'Breaking mug');
    await until(() => ours('webhook endpoint circuit opened').length > 0, 5000, 'the breaker to open');
    // The worker disabled the subscription meanwhile (as after a run of dead deliveries); the
    // endpoint recovers and the app enables it.
    await t.db.kysely
      .updateTable('webhook_subscriptions')
      .set({ disabled_at: t.clock.now, disabled_reason: 'x' })
      .where('id', '=', Number(a))
      .execute();
    rx.handler = (_req, res) => res.end('ok');
    t.clock.now = Date.now() + 1;
    expect((await api(t, f, token, 'POST', `${V}/webhooks/${a}/enable`, {})).statusCode).toBe(200);
    await product(f, token, 'Recovered mug');
    await until(async () => (await deliveriesOf(a)).at(-1)?.status === 'delivered', 5000, 'a delivery despite the breaker opened before');
    expect(rx.on('/bk-a').some((r) => JSON.parse(r.body).title === 'Recovered mug')).toBe(true);
    expect(ours('webhook endpoint circuit closed').map((l) => l.obj.from)).toEqual(['open']);
  });

  it("a replay sends nothing once the app lost the topic's scope or was uninstalled: the worker checks at send time", async () => {
    const { f, token, storeId, appId } = await installed();
    const s = await subscribe(f, token, 'products/create', '/lost');
    const o = await subscribe(f, token, 'orders/create', '/lost-orders');
    await product(f, token, 'Lost mug');
    await api(t, f, token, 'POST', `${V}/orders`, { email: 'lost@x.test', line_items: [{ title: 'm', quantity: 1, price: '1' }] });
    await t.db.kysely
      .updateTable('webhook_deliveries')
      .set({ status: 'dead' })
      .where('subscription_id', 'in', [Number(s), Number(o)])
      .execute();
    const since = new Date(t.clock.now - 60_000).toISOString();
    expect((await api(t, f, token, 'POST', `${V}/webhooks/${s}/replay`, { since })).json().data.queued).toBe(1);
    expect((await api(t, f, token, 'POST', `${V}/webhooks/${o}/replay`, { since })).json().data.queued).toBe(1);
    // The grant shrinks before the worker sends: products go; then the app is uninstalled.
    await t.services.apps.grant(storeId, appId, ['write_orders'] as Scope[]);
    await t.services.apps.uninstall(storeId, appId);
    await worker();
    await until(
      async () =>
        (await t.db.kysely.selectFrom('webhook_deliveries').select('status').where('app_id', '=', appId).execute()).every(
          (d) => d.status !== 'pending',
        ),
      5000,
      'the replays settled',
    );
    expect(rx.on('/lost')).toHaveLength(0);
    expect(rx.on('/lost-orders')).toHaveLength(0);
    const ended = await t.db.kysely
      .selectFrom('webhook_deliveries')
      .select(['topic', 'status', 'last_error'])
      .where('app_id', '=', appId)
      .where('topic', '!=', 'app/uninstalled')
      .execute();
    expect(ended.every((d) => d.status === 'cancelled')).toBe(true);
  });

  it(`a replay queues at most ${MAX_REPLAY} and says where to go on from`, async () => {
    const { f, token, storeId, appId } = await installed();
    const s = await subscribe(f, token, 'products/create', '/capped');
    const base = t.clock.now - 3_600_000;
    await t.db.kysely
      .insertInto('webhook_events')
      .values({ id: 'evt_capped', store_id: storeId, topic: 'products/create', payload: '{}', created_at: base })
      .execute();
    const rows = Array.from({ length: MAX_REPLAY + 1 }, (_, i) => ({
      webhook_id: `wh_capped_${i}`,
      event_id: 'evt_capped',
      subscription_id: Number(s),
      store_id: storeId,
      app_id: appId,
      private_app_id: null,
      topic: 'products/create',
      status: 'dead' as const,
      attempts: 3,
      next_attempt_at: base + i,
      created_at: base + i,
      updated_at: base + i,
    }));
    for (let i = 0; i < rows.length; i += 250)
      await t.db.kysely
        .insertInto('webhook_deliveries')
        .values(rows.slice(i, i + 250))
        .execute();
    const since = new Date(base).toISOString();
    const first = (await api(t, f, token, 'POST', `${V}/webhooks/${s}/replay`, { since })).json().data;
    expect(first).toMatchObject({ queued: MAX_REPLAY, capped: true, next_since: new Date(base + MAX_REPLAY).toISOString() });
    const rest = (await api(t, f, token, 'POST', `${V}/webhooks/${s}/replay`, { since: first.next_since })).json().data;
    expect(rest).toMatchObject({ queued: 1, already_queued: 0, capped: false, next_since: null });
    const left = await t.db.kysely
      .selectFrom('webhook_deliveries')
      .select('status')
      .where('subscription_id', '=', Number(s))
      .where('status', '!=', 'pending')
      .execute();
    expect(left).toEqual([]);
  });

  it('bad input, unknown ids, another app’s subscription and a disabled one change nothing', async () => {
    const { f, token } = await installed();
    const other = await installed();
    const s = await subscribe(f, token, 'products/create', '/bad');
    const theirs = await subscribe(other.f, other.token, 'products/create', '/theirs');
    await product(f, token, 'Bad mug');
    await t.db.kysely.updateTable('webhook_deliveries').set({ status: 'dead' }).where('subscription_id', '=', Number(s)).execute();
    const snapshot = async () => ({
      deliveries: await t.db.kysely.selectFrom('webhook_deliveries').selectAll().orderBy('id').execute(),
      subscriptions: await t.db.kysely.selectFrom('webhook_subscriptions').selectAll().orderBy('id').execute(),
    });
    const before = await snapshot();
    const now = t.clock.now;
    const cases: [string, unknown, number, string?][] = [
      [s, { since: 'yesterday' }, 422, 'since'],
      [s, { since: '2026-02-30T00:00:00Z' }, 422, 'since'],
      [s, { since: new Date(now + 60_000).toISOString() }, 422, 'since'],
      [s, { since: new Date(now - 31 * 86_400_000).toISOString() }, 422, 'since'],
      [s, { since: new Date(now).toISOString(), status: 'dead' }, 422],
      [s, { since: new Date(now).toISOString(), extra: 1 }, 422],
      [s, {}, 422],
      ['999999', { since: new Date(now).toISOString() }, 404],
      ['abc', { since: new Date(now).toISOString() }, 404],
      [theirs, { since: new Date(now).toISOString() }, 404],
    ];
    for (const [id, body, status, field] of cases) {
      const res = await api(t, f, token, 'POST', `${V}/webhooks/${id}/replay`, body);
      expect(res.statusCode, `${id} ${JSON.stringify(body)}: ${res.body}`).toBe(status);
      if (field) expect(Object.keys(res.json().errors)).toEqual([field]);
    }
    expect((await api(t, f, token, 'POST', `${V}/webhooks/${theirs}/enable`, {})).statusCode).toBe(404);
    expect((await api(t, f, token, 'POST', `${V}/webhooks/999999/enable`, {})).statusCode).toBe(404);
    expect((await api(t, f, token, 'POST', `${V}/webhooks/${s}/enable`, { address: 'x' })).statusCode).toBe(422);
    expect((await api(t, f, token, 'POST', `${V}/webhooks/${s}/replay`, 'since=now')).statusCode).toBe(400);
    expect((await api(t, f, undefined, 'POST', `${V}/webhooks/${s}/replay`, { since: new Date(now).toISOString() })).statusCode).toBe(401);
    // Older versions do not have the routes.
    expect(
      (await api(t, f, token, 'POST', `/openapi/2025-06/webhooks/${s}/replay`, { since: new Date(now).toISOString() })).statusCode,
    ).toBe(404);
    expect(await snapshot()).toEqual(before);

    // A disabled subscription: enable it first.
    await t.db.kysely
      .updateTable('webhook_subscriptions')
      .set({ disabled_at: now, disabled_reason: 'test' })
      .where('id', '=', Number(s))
      .execute();
    const refused = await api(t, f, token, 'POST', `${V}/webhooks/${s}/replay`, { since: new Date(now - 60_000).toISOString() });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().errors.base[0]).toMatch(/enable it first/);
    expect((await snapshot()).deliveries).toEqual(before.deliveries);
  });

  it('a new address (PUT) starts the dead streak over, as enabling does', async () => {
    const { f, token } = await installed();
    const s = await subscribe(f, token, 'products/create', '/streak');
    await t.db.kysely
      .updateTable('webhook_subscriptions')
      .set({ disabled_at: t.clock.now, disabled_reason: 'x', dead_streak: 3 })
      .where('id', '=', Number(s))
      .execute();
    const moved = await api(t, f, token, 'PUT', `${V}/webhooks/${s}`, { address: rx.url('/streak-new') });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(await sub(s)).toMatchObject({ disabled_at: null, dead_streak: 0 });
  });

  it.runIf(dialect === 'sqlite')('the OpenAPI document and /docs describe enable and replay', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'localhost:8080' } })).json();
    const enable = doc.paths['/openapi/{version}/webhooks/{id}/enable'].post;
    const replay = doc.paths['/openapi/{version}/webhooks/{id}/replay'].post;
    expect(enable.description).toMatch(/same id, history and deliveries/);
    expect(Object.keys(enable.responses)).toEqual(expect.arrayContaining(['200', '404', '409']));
    expect(replay.description).toMatch(/original webhook id/);
    expect(Object.keys(replay.requestBody.content['application/json'].schema.properties)).toEqual(['since', 'status']);
    expect(replay.responses['202']).toBeDefined();
    expect(
      doc.paths['/openapi/{version}/webhooks'].post.requestBody.content['application/json'].schema.properties.topic.enum,
    ).not.toContain('subscription/disabled');
    const docs = (await t.app.inject({ method: 'GET', url: '/docs', headers: { host: 'localhost:8080' } })).body;
    expect(docs).toContain('Enable a disabled webhook subscription again');
    expect(docs).toContain('Replay a webhook subscription');
  });

  // Last in this block: it checks what every test above made the platform and its worker run.
  it.runIf(dialect === 'postgres-partitioned')(
    'every recovery query reads one partition of a store table, or is a listed fleet-wide one',
    async () => {
      const url = t.config.database.dialect === 'postgres' ? t.config.database.url : '';
      // The statements this file runs itself to look at or age rows (the platform runs none of them).
      const own = new Set([
        'select * from "webhook_subscriptions" where "id" = $1',
        'select * from "webhook_deliveries" where "topic" = $1',
        'select * from "webhook_deliveries" where "subscription_id" = $1 order by "id"',
        'select "private_app_id", "app_id" from "webhook_deliveries" where "topic" = $1',
        'update "webhook_deliveries" set "status" = $1, "attempts" = $2, "last_error" = $3 where "subscription_id" = $4',
        'update "webhook_deliveries" set "status" = $1 where "subscription_id" in ($2, $3)',
        'select "status" from "webhook_deliveries" where "app_id" = $1',
        'select "topic", "status", "last_error" from "webhook_deliveries" where "app_id" = $1 and "topic" != $2',
        'select "status" from "webhook_deliveries" where "subscription_id" = $1 and "status" != $2',
        'update "webhook_deliveries" set "status" = $1 where "subscription_id" = $2',
        'select * from "webhook_deliveries" order by "id"',
        'select * from "webhook_subscriptions" order by "id"',
        'update "webhook_subscriptions" set "disabled_at" = $1, "disabled_reason" = $2 where "id" = $3',
        'update "webhook_subscriptions" set "disabled_at" = $1, "disabled_reason" = $2, "dead_streak" = $3 where "id" = $4',
      ]);
      expect((t.queries ?? []).length).toBeGreaterThan(100);
      const unrouted = await unroutedQueries(
        url,
        (t.queries ?? []).filter((q) => !own.has(q.sql)),
      );
      expect(unrouted.map((q) => `${q.tables.join(',')}: ${q.sql}`)).toEqual([]);
    },
  );
});
