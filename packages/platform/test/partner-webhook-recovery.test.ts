// Recovery of a subscription from the partner dashboard: the disabled notice's "Enable again"
// (CSRF), the subscription page with its replay form, errors shown on the form with nothing
// changed, and another partner's or app's subscription → 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../src/domain/scopes.ts';
import { DIALECTS, createFixture, createTestPlatform, csrfFrom, type TestPlatform } from './harness.ts';
import { PLATFORM_HOST, createPartner, expectCsrfRefused, expectGoodPage, get, partnerLogin, post } from './web-pages.ts';

const H = PLATFORM_HOST;
let n = 0;

describe.each(DIALECTS)('partner webhook recovery (%s)', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect);
  });
  afterAll(async () => t?.close());

  /** A partner's app installed in a store, with a disabled subscription that has one dead delivery. */
  async function disabledSubscription() {
    const p = await createPartner(t, ++n);
    const { app } = await t.services.apps.createApp({
      name: 'Recovering app',
      appUrl: 'https://app.example.test/',
      redirectUri: 'https://app.example.test/callback',
      scopes: 'read_products',
      partnerId: p.id,
    });
    const f = await createFixture(t);
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    await t.services.apps.grant(store.id, app.id, ['read_products'] as Scope[]);
    const now = t.clock.now;
    const sub = await t.db.kysely
      .insertInto('webhook_subscriptions')
      .values({
        store_id: store.id,
        owner: `app:${app.id}`,
        app_id: app.id,
        private_app_id: null,
        topic: 'products/create',
        address: 'https://hooks.example.test/in',
        api_version: '2026-01',
        created_at: now,
        updated_at: now,
        disabled_at: now,
        disabled_reason: '5 deliveries in a row failed every retry',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const id = Number(sub.id);
    await t.db.kysely
      .insertInto('webhook_events')
      .values({ id: `evt_r${n}`, store_id: store.id, topic: 'products/create', payload: '{}', created_at: now - 1000 })
      .execute();
    await t.db.kysely
      .insertInto('webhook_deliveries')
      .values({
        webhook_id: `wh_r${n}`,
        event_id: `evt_r${n}`,
        subscription_id: id,
        store_id: store.id,
        app_id: app.id,
        private_app_id: null,
        topic: 'products/create',
        status: 'dead',
        attempts: 3,
        next_attempt_at: now - 1000,
        created_at: now - 1000,
        updated_at: now - 1000,
      })
      .execute();
    return { p, app, id, base: `/partner/apps/${app.client_id}/subscriptions/${id}` };
  }

  const state = (id: number) =>
    Promise.all([
      t.db.kysely.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
      t.db.kysely.selectFrom('webhook_deliveries').selectAll().where('subscription_id', '=', id).execute(),
    ]);

  it('the notice of a disabled subscription enables it again in place (CSRF); the page then replays its deliveries', async () => {
    const { p, app, id, base } = await disabledSubscription();
    const jar = await partnerLogin(t, p);
    const list = await get(t, H, `/partner/apps/${app.client_id}/deliveries`, jar);
    expectGoodPage(list);
    expect(list.body).toContain(`action="${base}/enable"`);
    expect(list.body).toContain(`aria-label="Enable subscription ${id} again">Enable again</button>`);
    const page = await get(t, H, base, jar);
    expectGoodPage(page);
    expect(page.body).toContain('5 deliveries in a row failed every retry');
    expect(page.body).toContain('Enable subscription again');

    // A replay of a disabled subscription is refused on the form; nothing changes.
    const before = await state(id);
    const early = await post(t, H, `${base}/replay`, jar, {
      _csrf: csrfFrom(page.body),
      since: new Date(t.clock.now - 60_000).toISOString(),
    });
    expect(early.statusCode).toBe(422);
    expect(early.body).toContain('enable it first');
    expect(await state(id)).toEqual(before);

    await expectCsrfRefused(t, H, `${base}/enable`, jar, { _csrf: csrfFrom(list.body) }, () => state(id));
    const enabled = await post(t, H, `${base}/enable`, jar, { _csrf: csrfFrom(list.body) });
    expect(enabled.statusCode).toBe(303);
    expect(enabled.headers.location).toBe(`${base}?done=enabled`);
    const [sub, deliveries] = await state(id);
    expect(sub).toMatchObject({ id, disabled_at: null, disabled_reason: null, dead_streak: 0 });
    expect(deliveries).toEqual(before[1]);
    const after = await get(t, H, String(enabled.headers.location), jar);
    expectGoodPage(after);
    expect(after.body).toContain('active again');
    expect(after.body).not.toContain('Enable subscription again');

    // Bad input is shown on the form, nothing changes.
    for (const fields of [{ since: 'last tuesday' }, { since: new Date(t.clock.now).toISOString(), status: 'some' }] as Record<
      string,
      string
    >[]) {
      const bad = await post(t, H, `${base}/replay`, jar, { _csrf: csrfFrom(after.body), ...fields });
      expect(bad.statusCode).toBe(422);
      expect(bad.body).toContain('role="alert"');
      expect((await state(id))[1]).toEqual(before[1]);
    }
    await expectCsrfRefused(
      t,
      H,
      `${base}/replay`,
      jar,
      { _csrf: csrfFrom(after.body), since: new Date(t.clock.now - 60_000).toISOString() },
      async () => (await state(id))[1],
    );
    const replayed = await post(t, H, `${base}/replay`, jar, {
      _csrf: csrfFrom(after.body),
      since: new Date(t.clock.now - 60_000).toISOString(),
      status: 'failed',
    });
    expect(replayed.statusCode).toBe(303);
    expect(replayed.headers.location).toBe(`${base}?done=replayed&queued=1`);
    expect((await state(id))[1]).toMatchObject([
      { status: 'pending', attempts: 0, replayed_at: t.clock.now, webhook_id: before[1][0]!.webhook_id },
    ]);
    expect((await get(t, H, String(replayed.headers.location), jar)).body).toContain('1 delivery was queued again.');
  });

  it("another partner's or another app's subscription is a 404 and stays as it was", async () => {
    const mine = await disabledSubscription();
    const theirs = await disabledSubscription();
    const jar = await partnerLogin(t, mine.p);
    const csrf = csrfFrom((await get(t, H, mine.base, jar)).body);
    const before = await state(theirs.id);
    const foreign = [
      theirs.base,
      `/partner/apps/${mine.app.client_id}/subscriptions/${theirs.id}`,
      `/partner/apps/${mine.app.client_id}/subscriptions/999999`,
      `/partner/apps/${mine.app.client_id}/subscriptions/abc`,
    ];
    for (const path of foreign) {
      expect((await get(t, H, path, jar)).statusCode, path).toBe(404);
      expect((await post(t, H, `${path}/enable`, jar, { _csrf: csrf })).statusCode, path).toBe(404);
      expect(
        (await post(t, H, `${path}/replay`, jar, { _csrf: csrf, since: new Date(t.clock.now - 1000).toISOString() })).statusCode,
        path,
      ).toBe(404);
    }
    expect(await state(theirs.id)).toEqual(before);
  });
});
