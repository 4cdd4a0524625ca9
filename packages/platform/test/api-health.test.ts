// API health on both databases: calls to a deprecated version counted per app in memory and
// flushed as adding upserts (two platforms on one database add up; a shutdown writes the rest;
// the current version is not counted), brown-outs (410 inside the window only, bad input refused
// with nothing stored, every node within the refresh bound), the notice before a sunset sent once,
// and the partner's page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS } from '../src/domain/api-health.ts';
import { createPlatform } from '../src/platform.ts';
import { DIALECTS, api, appToken, createFixture, createTestPlatform, privateToken, type Fixture, type TestPlatform } from './harness.ts';
import { PLATFORM_HOST, createPartner, decode, expectGoodPage, get, partnerLogin } from './web-pages.ts';

describe.each(DIALECTS)('API health (%s)', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  let token: string;
  const usageRows = () =>
    t.db.kysely.selectFrom('api_version_usage').selectAll().orderBy('caller_kind').orderBy('route').orderBy('store_id').execute();
  const brownoutRows = () => t.db.kysely.selectFrom('api_version_brownouts').selectAll().execute();

  beforeAll(async () => {
    t = await createTestPlatform(dialect);
    f = await createFixture(t);
    token = await appToken(t, f, 'read_products write_orders');
  });
  afterAll(async () => t?.close());

  it('counts calls to a deprecated version per app and route in memory, writes them at a flush, not the current version', async () => {
    const startedAt = t.clock.now;
    for (let i = 0; i < 3; i++) expect((await api(t, f, token, 'GET', '/openapi/2022-01/products')).statusCode).toBe(200);
    t.clock.advance(1000);
    expect((await api(t, f, token, 'GET', '/openapi/2022-01/products/123')).statusCode).toBe(404);
    expect((await api(t, f, token, 'GET', '/openapi/2026-01/products')).statusCode).toBe(200);
    const priv = await privateToken(t, f.storeName, 'read_products');
    expect((await api(t, f, priv, 'GET', '/openapi/2022-01/products')).statusCode).toBe(200);
    // Nothing written per request.
    expect(await usageRows()).toEqual([]);
    expect(t.services.apiUsage.pendingKeys).toBe(3);
    await t.services.apiUsage.flush();
    expect(t.services.apiUsage.pendingKeys).toBe(0);
    const rows = await usageRows();
    expect(rows.map((r) => [r.caller_kind, r.route, Number(r.calls)])).toEqual([
      ['app', 'GET /openapi/{version}/products', 3],
      ['app', 'GET /openapi/{version}/products/{id}', 1],
      ['private', 'GET /openapi/{version}/products', 1],
    ]);
    expect(rows.every((r) => r.version === '2022-01')).toBe(true);
    expect(Number(rows[0]!.first_seen_at)).toBe(startedAt);
    expect(Number(rows[1]!.last_seen_at)).toBe(startedAt + 1000);
    // A second flush adds to the rows.
    await api(t, f, token, 'GET', '/openapi/2022-01/products');
    await t.services.apiUsage.flush();
    expect(Number((await usageRows())[0]!.calls)).toBe(4);
  });

  it('two platforms on one database flushing at the same time add up, and stopping one writes what it still held', async () => {
    const g = await createFixture(t);
    const gToken = await appToken(t, g, 'read_products');
    // On PostgreSQL the second platform has a pool of its own, as a second node would.
    const second = await createPlatform(
      { ...t.config },
      { ...(dialect === 'sqlite' ? { db: t.db } : {}), clock: t.clock.fn, migrate: false },
    );
    await second.http.ready();
    try {
      for (let i = 0; i < 25; i++) {
        await api(t, g, gToken, 'GET', '/openapi/2022-01/products/count');
        await second.http.inject({
          method: 'GET',
          url: '/openapi/2022-01/products/count',
          headers: { host: g.host, 'access-token': gToken },
        });
      }
      await Promise.all([t.services.apiUsage.flush(), second.services.apiUsage.flush()]);
      for (let i = 0; i < 5; i++)
        await second.http.inject({
          method: 'GET',
          url: '/openapi/2022-01/products/count',
          headers: { host: g.host, 'access-token': gToken },
        });
      expect(second.services.apiUsage.pendingKeys).toBe(1);
    } finally {
      // On SQLite the platform shares t's handle, which stays open for t.
      if (dialect === 'sqlite') {
        await second.services.apiUsage.stop();
        await second.http.close();
      } else await second.close();
    }
    const rows = (await usageRows()).filter((r) => r.route === 'GET /openapi/{version}/products/count');
    expect(rows.map((r) => Number(r.calls))).toEqual([55]);
  });

  it('a graceful shutdown writes the counts held in memory before the database closes', async () => {
    const other = await createTestPlatform(dialect);
    const g = await createFixture(other);
    const gToken = await appToken(other, g, 'read_products');
    for (let i = 0; i < 4; i++) await api(other, g, gToken, 'GET', '/openapi/2022-01/products');
    const written: number[] = [];
    const stop = other.platform.storage.apiHealth.addUsage.bind(other.platform.storage.apiHealth);
    other.platform.storage.apiHealth.addUsage = async (d) => {
      written.push(...d.map((x) => x.calls));
      await stop(d);
    };
    expect(other.services.apiUsage.pendingKeys).toBe(1);
    await other.platform.shutdown({ drainDelayMs: 0, timeoutMs: 1000 });
    expect(other.services.apiUsage.pendingKeys).toBe(0);
    expect(written).toEqual([4]);
    await other.close();
  });

  it('refuses bad brown-outs with nothing stored', async () => {
    const at = t.clock.now;
    const add = (version: string, startsAt: number, endsAt: number) => t.services.brownouts.add({ version, startsAt, endsAt });
    await expect(add('2019-01', at, at + 1000)).rejects.toMatchObject({
      errors: { brownout: [expect.stringMatching(/unknown API version/)] },
    });
    await expect(add('2026-01', at, at + 1000)).rejects.toMatchObject({ errors: { brownout: [expect.stringMatching(/not deprecated/)] } });
    await expect(add('2026-10', at, at + 1000)).rejects.toMatchObject({ errors: { brownout: [expect.stringMatching(/not deprecated/)] } });
    await expect(add('2022-01', at + 1000, at)).rejects.toMatchObject({ errors: { brownout: ['the window must end after it starts'] } });
    expect(await brownoutRows()).toEqual([]);
    const first = await add('2022-01', at + 10 * DAY_MS, at + 10 * DAY_MS + 3_600_000);
    await expect(add('2022-01', at + 10 * DAY_MS + 1_800_000, at + 11 * DAY_MS)).rejects.toMatchObject({
      errors: { brownout: [expect.stringMatching(/overlaps/)] },
    });
    expect((await brownoutRows()).length).toBe(1);
    await expect(t.services.brownouts.remove(first.id + 1000)).rejects.toThrow(/no brown-out/);
    await t.services.brownouts.remove(first.id);
    expect(await brownoutRows()).toEqual([]);
  });

  it('answers 410 inside a brown-out window only, with the version fields, and every node within the refresh bound', async () => {
    const refresh = t.config.apiHealth.brownoutRefreshMs;
    const second = await createPlatform({ ...t.config }, { db: t.db, clock: t.clock.fn, migrate: false });
    await second.http.ready();
    const onSecond = (version: string) =>
      second.http.inject({ method: 'GET', url: `/openapi/${version}/products`, headers: { host: f.host, 'access-token': token } });
    try {
      // The second node reads the (empty) schedule now and keeps it for the refresh interval.
      expect((await onSecond('2022-01')).statusCode).toBe(200);
      const start = t.clock.now + 60_000;
      const w = await t.services.brownouts.add({ version: '2022-01', startsAt: start, endsAt: start + 600_000 });
      expect((await t.services.brownouts.list()).map((b) => [b.id, b.version, b.use_version])).toEqual([[w.id, '2022-01', '2026-01']]);
      // Before the window: still served.
      expect((await api(t, f, token, 'GET', '/openapi/2022-01/products')).statusCode).toBe(200);
      t.clock.advance(60_000);
      const gone = await api(t, f, token, 'GET', '/openapi/2022-01/products');
      expect(gone.statusCode).toBe(410);
      const body = gone.json();
      expect(Object.keys(body).sort()).toEqual(['code', 'message', 'request_id']);
      expect(body.code).toBe('ApiVersionGone');
      expect(body.message).toContain('2022-01');
      expect(body.message).toContain('2027-06-01');
      expect(body.message).toContain('Move to version 2026-01');
      expect(gone.headers.deprecation).toMatch(/^@\d+$/);
      expect(gone.headers.sunset).toBe('Tue, 01 Jun 2027 00:00:00 GMT');
      // Other versions answer as usual.
      expect((await api(t, f, token, 'GET', '/openapi/2026-01/products')).statusCode).toBe(200);
      expect((await api(t, f, token, 'GET', '/openapi/2025-06/products')).statusCode).toBe(200);
      // The second node's copy is older than the refresh interval once the clock has moved that far.
      t.clock.advance(Math.max(0, refresh - 60_000));
      expect((await onSecond('2022-01')).statusCode).toBe(410);
      // After the window: served again on both.
      t.clock.advance(600_000);
      expect((await api(t, f, token, 'GET', '/openapi/2022-01/products')).statusCode).toBe(200);
      expect((await onSecond('2022-01')).statusCode).toBe(200);
      await t.services.brownouts.remove(w.id);
    } finally {
      await second.services.apiUsage.stop();
      await second.http.close();
    }
  });

  it('sends app/api_version_deprecated once per app and version, to apps that called it recently, near the sunset', async () => {
    const t0 = t.clock.now;
    const sunsetAt = t0 + 51 * DAY_MS;
    const near = await createTestPlatform(dialect, { apiDeprecations: { '2022-01': { deprecatedAt: t0 - DAY_MS, sunsetAt } } });
    try {
      near.clock.now = t0;
      const recent = await createFixture(near);
      const recentToken = await appToken(near, recent, 'read_products');
      const stale = await createFixture(near);
      const staleToken = await appToken(near, stale, 'read_products');
      const quiet = await createFixture(near);
      const quietToken = await appToken(near, quiet, 'read_products');
      for (const [fx, tk] of [
        [recent, recentToken],
        [stale, staleToken],
        [quiet, quietToken],
      ] as const) {
        const sub = await api(near, fx, tk, 'POST', '/openapi/2026-01/webhooks', {
          webhook: { topic: 'app/api_version_deprecated', address: 'https://hooks.example.test/notice' },
        });
        expect(sub.statusCode).toBe(201);
      }
      const deliveries = () =>
        near.db.kysely.selectFrom('webhook_deliveries').select(['app_id']).where('topic', '=', 'app/api_version_deprecated').execute();
      // 51 days before the sunset: not yet within the 30 days.
      await api(near, stale, staleToken, 'GET', '/openapi/2022-01/products');
      await near.services.apiUsage.flush();
      expect(await near.services.apiHealth.sendNotices()).toBe(0);
      near.clock.advance(31 * DAY_MS);
      // Tokens of a month ago have expired: the apps call with new ones.
      expect((await api(near, recent, await appToken(near, recent, 'read_products'), 'GET', '/openapi/2022-01/products')).statusCode).toBe(
        200,
      );
      expect((await api(near, quiet, await appToken(near, quiet, 'read_products'), 'GET', '/openapi/2026-01/products')).statusCode).toBe(
        200,
      );
      // A private app of the store calling the old version is told too, through its own subscription.
      const priv = await privateToken(near, recent.storeName, 'read_products');
      const privSub = await api(near, recent, priv, 'POST', '/openapi/2026-01/webhooks', {
        webhook: { topic: 'app/api_version_deprecated', address: 'https://hooks.example.test/private' },
      });
      expect(privSub.statusCode).toBe(201);
      expect((await api(near, recent, priv, 'GET', '/openapi/2022-01/orders')).statusCode).toBe(403);
      await near.services.apiUsage.flush();
      expect(await near.services.apiHealth.sendNotices()).toBe(2);
      expect(await near.services.apiHealth.sendNotices()).toBe(0);
      const recentApp = await near.services.apps.findByClientId(recent.clientId);
      const sent = await near.db.kysely
        .selectFrom('webhook_deliveries')
        .select(['app_id', 'private_app_id'])
        .where('topic', '=', 'app/api_version_deprecated')
        .execute();
      // Databases order nulls differently: compare as a set.
      expect(sent.map((d) => (d.app_id === null ? 'private app' : `app ${Number(d.app_id)}`)).sort()).toEqual([
        `app ${recentApp!.id}`,
        'private app',
      ]);
      expect((await deliveries()).length).toBe(2);
      const event = await near.db.kysely
        .selectFrom('webhook_events')
        .select('payload')
        .where('topic', '=', 'app/api_version_deprecated')
        .executeTakeFirstOrThrow();
      expect(JSON.parse(event.payload)).toMatchObject({ api_version: '2022-01', days_left: 20, use_version: '2026-01' });
      const report = await near.services.apiHealth.forCaller('app', recentApp!.id);
      expect(report[0]).toMatchObject({ version: '2022-01', days_left: 20, calls: 1, notified_at: new Date(near.clock.now).toISOString() });
    } finally {
      await near.close();
    }
  });

  it('shows the partner the deprecated versions an app calls, with the sunset and the days left', async () => {
    const p = await createPartner(t, 901);
    const g = await createFixture(t);
    await t.db.kysely.updateTable('apps').set({ partner_id: p.id }).where('client_id', '=', g.clientId).execute();
    const gToken = await appToken(t, g, 'read_products');
    const jar = await partnerLogin(t, p);
    const empty = await get(t, PLATFORM_HOST, `/partner/apps/${g.clientId}/api-health`, jar);
    expectGoodPage(empty);
    expect(decode(empty.body)).toContain('This app calls no deprecated API version');
    await api(t, g, gToken, 'GET', '/openapi/2022-01/products');
    await t.services.apiUsage.flush();
    const page = await get(t, PLATFORM_HOST, `/partner/apps/${g.clientId}/api-health`, jar);
    expectGoodPage(page);
    const text = decode(page.body);
    const days = Math.ceil((Date.UTC(2027, 5, 1) - t.clock.now) / DAY_MS);
    expect(text).toContain(`Version 2022-01 stops answering on 2027-06-01, in ${days} days; move to 2026-01.`);
    expect(text).toContain(`${days} days left.`);
    expect(text).toContain('GET /openapi/{version}/products');
    // Another partner's app: 404.
    const other = await createPartner(t, 902);
    expect((await get(t, PLATFORM_HOST, `/partner/apps/${g.clientId}/api-health`, await partnerLogin(t, other))).statusCode).toBe(404);
  });
});

describe('API health rules', () => {
  it('names routes, days left, notice windows and brown-out problems', async () => {
    const { routePattern, daysLeft, noticeDue, brownoutProblem, activeWindow } = await import('../src/domain/api-health.ts');
    expect(routePattern('get', '/openapi/:version/products/:id')).toBe('GET /openapi/{version}/products/{id}');
    expect(daysLeft(10 * DAY_MS, 0)).toBe(10);
    expect(daysLeft(10 * DAY_MS, 1)).toBe(10);
    expect(daysLeft(10 * DAY_MS, 9 * DAY_MS + 1)).toBe(1);
    expect(daysLeft(0, 1)).toBe(0);
    expect(noticeDue(31 * DAY_MS, 0, 30)).toBe(false);
    expect(noticeDue(30 * DAY_MS, 0, 30)).toBe(true);
    expect(noticeDue(0, 1, 30)).toBe(false);
    const deprecated = { '2022-01': {} };
    const w = { version: '2022-01', startsAt: 100, endsAt: 200 };
    expect(brownoutProblem(w, deprecated, [])).toBeUndefined();
    // Windows that only touch do not overlap.
    expect(brownoutProblem({ ...w, startsAt: 200, endsAt: 300 }, deprecated, [w])).toBeUndefined();
    expect(brownoutProblem({ ...w, startsAt: 199, endsAt: 300 }, deprecated, [w])).toMatch(/overlaps/);
    expect(brownoutProblem({ ...w, endsAt: 100 }, deprecated, [])).toBe('the window must end after it starts');
    expect(activeWindow([w], '2022-01', 99)).toBeUndefined();
    expect(activeWindow([w], '2022-01', 100)).toBe(w);
    expect(activeWindow([w], '2022-01', 200)).toBeUndefined();
  });
});
