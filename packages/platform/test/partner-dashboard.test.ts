// The partner dashboard (issue 5): pages and headers, CSRF on every form, apps (create, URLs checked
// as the seed demands, reveal, rotate with 24 h for the old secret), deliveries with filters,
// attempts and "Send again", the disabled-subscription notice, and other partners' records → 404.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, Jar, createFixture, createTestPlatform, csrfFrom, type TestPlatform } from './harness.ts';
import {
  PLATFORM_HOST,
  createPartner,
  decode,
  expectCsrfRefused,
  expectGoodPage,
  get,
  partnerLogin,
  post,
  secretValue,
} from './web-pages.ts';

const H = PLATFORM_HOST;
let n = 0;

describe.each(DIALECTS)('partner dashboard (%s)', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect);
  });
  afterAll(async () => t?.close());

  const appRow = (clientId: string) =>
    t.db.kysely.selectFrom('apps').selectAll().where('client_id', '=', clientId).executeTakeFirstOrThrow();
  const appsOf = (partnerId: number) =>
    t.db.kysely
      .selectFrom('apps')
      .select(['client_id', 'name', 'app_url', 'redirect_uri'])
      .where('partner_id', '=', partnerId)
      .orderBy('id')
      .execute();
  const partnerApp = async (partnerId: number, name = 'Partner app') =>
    await t.services.apps.createApp({
      name,
      appUrl: 'https://app.example.test/',
      redirectUri: 'https://app.example.test/callback',
      scopes: 'read_products',
      partnerId,
    });

  it('serves the login page and, logged in, every page with the security headers; store hosts do not serve it', async () => {
    const p = await createPartner(t, ++n);
    const { app } = await partnerApp(p.id);
    const anon = new Jar();
    expectGoodPage(await get(t, H, '/partner/login', anon));
    const root = await get(t, H, '/', anon);
    expect(root.statusCode).toBe(303);
    expect(root.headers.location).toBe('/partner');
    for (const path of ['/partner', '/partner/apps/new', `/partner/apps/${app.client_id}`, `/partner/apps/${app.client_id}/deliveries`]) {
      const res = await get(t, H, path, anon);
      expect(res.statusCode, path).toBe(303);
      expect(res.headers.location).toBe(`/partner/login?return_to=${encodeURIComponent(path)}`);
    }
    const jar = await partnerLogin(t, p);
    for (const path of ['/partner', '/partner/apps/new', `/partner/apps/${app.client_id}`, `/partner/apps/${app.client_id}/deliveries`]) {
      const res = await get(t, H, path, jar);
      expectGoodPage(res);
      expect(res.headers['cache-control']).toBe('no-store');
    }
    const f = await createFixture(t);
    expect((await get(t, f.host, '/partner/login', new Jar())).statusCode).toBe(404);
    expect((await get(t, H, '/admin/login', new Jar())).statusCode).toBe(404);
    // The partner's cookie is host-only: never a merchant session on a store host.
    expect((await get(t, f.host, '/admin', jar)).statusCode).toBe(303);
  });

  it('creates an app (CSRF-protected); the client secret is shown once and authenticates', async () => {
    const p = await createPartner(t, ++n);
    const jar = await partnerLogin(t, p);
    const form = await get(t, H, '/partner/apps/new', jar);
    expectGoodPage(form);
    const fields = {
      _csrf: csrfFrom(form.body),
      name: 'Reviews',
      app_url: 'http://localhost:4000/',
      redirect_uri: 'http://localhost:4000/auth/callback',
      scopes: ['read_products', 'read_customers'],
    };
    await expectCsrfRefused(t, H, '/partner/apps', jar, fields, () => appsOf(p.id));
    expect(await appsOf(p.id)).toHaveLength(0);
    const res = await post(t, H, '/partner/apps', jar, fields);
    expect(res.statusCode).toBe(303);
    const [created] = await appsOf(p.id);
    expect(created).toMatchObject({
      name: 'Reviews',
      app_url: 'http://localhost:4000/',
      redirect_uri: 'http://localhost:4000/auth/callback',
    });
    expect(res.headers.location).toMatch(new RegExp(`^/partner/apps/${created!.client_id}/secret\\?reveal=`));
    const shown = await get(t, H, String(res.headers.location), jar);
    expectGoodPage(shown);
    expect(shown.body).toContain('App created');
    const secret = secretValue(shown.body, 'client-secret')!;
    expect(secret).toMatch(/^sg_cs_/);
    await expect(t.services.apps.authenticateClient(created!.client_id, secret)).resolves.toBeTruthy();
    const again = await get(t, H, String(res.headers.location), jar);
    expect(again.body).toContain('Already shown');
    expect(again.body).not.toContain(secret);
    const list = await get(t, H, '/partner', jar);
    expect(list.body).toContain('Reviews');
    expect(list.body).toContain(created!.client_id);
    expect(list.body).not.toContain(secret);
  });

  it('refuses App URLs and redirect URLs the seed forbids: the form comes back with the error, nothing is saved', async () => {
    const p = await createPartner(t, ++n);
    const jar = await partnerLogin(t, p);
    const form = await get(t, H, '/partner/apps/new', jar);
    const cases: [Record<string, string>, string][] = [
      [{ app_url: 'http://localhost:4000/', redirect_uri: 'http://localhost:4000/cb#frag' }, 'must not contain &quot;#&quot;'],
      [{ app_url: '/relative', redirect_uri: 'http://localhost:4000/cb' }, 'must be an absolute URL'],
      [{ app_url: 'javascript:alert(1)', redirect_uri: 'http://localhost:4000/cb' }, 'must be an http or https URL'],
      [{ app_url: 'http://user:pw@localhost:4000/', redirect_uri: 'http://localhost:4000/cb' }, 'must not contain credentials'],
      [{ app_url: 'http://localhost:4000/', redirect_uri: '' }, 'is required'],
    ];
    for (const [urls, message] of cases) {
      const res = await post(t, H, '/partner/apps', jar, { _csrf: csrfFrom(form.body), name: 'Bad', ...urls });
      expect(res.statusCode).toBe(303);
      expect(String(res.headers.location)).toMatch(/^\/partner\/apps\/new\?check=1/);
      const again = await get(t, H, String(res.headers.location), jar);
      expectGoodPage(again);
      expect(again.body).toContain(message);
      expect(decode(again.body)).toContain(`value="${urls.app_url}"`);
    }
    expect(await appsOf(p.id)).toHaveLength(0);

    // Editing an existing app: the same checks, and a refused edit changes nothing.
    const { app } = await partnerApp(p.id);
    const settings = await get(t, H, `/partner/apps/${app.client_id}`, jar);
    const bad = await post(t, H, `/partner/apps/${app.client_id}`, jar, {
      _csrf: csrfFrom(settings.body),
      app_url: 'https://ok.example.test/',
      redirect_uri: 'https://ok.example.test/cb#x',
    });
    expect(bad.statusCode).toBe(303);
    const shown = await get(t, H, String(bad.headers.location), jar);
    expect(shown.body).toContain('must not contain &quot;#&quot;');
    expect(shown.body).toContain('value="https://ok.example.test/cb#x"');
    expect((await appRow(app.client_id)).redirect_uri).toBe('https://app.example.test/callback');
  });

  it('edits the URLs (CSRF-protected)', async () => {
    const p = await createPartner(t, ++n);
    const { app } = await partnerApp(p.id);
    const jar = await partnerLogin(t, p);
    const settings = await get(t, H, `/partner/apps/${app.client_id}`, jar);
    const fields = { _csrf: csrfFrom(settings.body), app_url: 'https://new.example.test/', redirect_uri: 'https://new.example.test/cb' };
    await expectCsrfRefused(t, H, `/partner/apps/${app.client_id}`, jar, fields, () => appRow(app.client_id));
    const res = await post(t, H, `/partner/apps/${app.client_id}`, jar, fields);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/partner/apps/${app.client_id}?done=saved`);
    expect(await appRow(app.client_id)).toMatchObject({
      app_url: 'https://new.example.test/',
      redirect_uri: 'https://new.example.test/cb',
    });
    const after = await get(t, H, String(res.headers.location), jar);
    expect(after.body).toContain('were saved');
    expect(after.body).toContain('value="https://new.example.test/cb"');
  });

  it('reveals the secret on an explicit POST, once per reveal; rotation keeps the old secret working for 24 hours', async () => {
    const p = await createPartner(t, ++n);
    const { app, clientSecret } = await partnerApp(p.id);
    const jar = await partnerLogin(t, p);
    const settings = await get(t, H, `/partner/apps/${app.client_id}`, jar);
    expect(settings.body).not.toContain(clientSecret);
    const csrf = csrfFrom(settings.body);

    await expectCsrfRefused(t, H, `/partner/apps/${app.client_id}/reveal-secret`, jar, { _csrf: csrf }, () =>
      t.db.kysely.selectFrom('one_time_reveals').select('id_hash').execute(),
    );
    const reveal = await post(t, H, `/partner/apps/${app.client_id}/reveal-secret`, jar, { _csrf: csrf });
    expect(reveal.statusCode).toBe(303);
    const revealed = await get(t, H, String(reveal.headers.location), jar);
    expect(secretValue(revealed.body, 'client-secret')).toBe(clientSecret);
    expect((await get(t, H, String(reveal.headers.location), jar)).body).not.toContain(clientSecret);

    await expectCsrfRefused(t, H, `/partner/apps/${app.client_id}/rotate-secret`, jar, { _csrf: csrf, confirm: 'yes' }, () =>
      appRow(app.client_id),
    );
    const rotate = await post(t, H, `/partner/apps/${app.client_id}/rotate-secret`, jar, { _csrf: csrf, confirm: 'yes' });
    expect(rotate.statusCode).toBe(303);
    const rotated = await get(t, H, String(rotate.headers.location), jar);
    expect(rotated.body).toContain('New client secret');
    const fresh = secretValue(rotated.body, 'client-secret')!;
    expect(fresh).toMatch(/^sg_cs_/);
    expect(fresh).not.toBe(clientSecret);
    const row = await appRow(app.client_id);
    expect(Number(row.previous_secret_expires_at)).toBe(t.clock.now + 24 * 3600_000);
    await expect(t.services.apps.authenticateClient(app.client_id, fresh)).resolves.toBeTruthy();
    await expect(t.services.apps.authenticateClient(app.client_id, clientSecret)).resolves.toBeTruthy();
    expect((await get(t, H, `/partner/apps/${app.client_id}`, jar)).body).toContain('The previous secret keeps working until');
    t.clock.advance(24 * 3600_000 + 1);
    await expect(t.services.apps.authenticateClient(app.client_id, clientSecret)).rejects.toThrow();
    await expect(t.services.apps.authenticateClient(app.client_id, fresh)).resolves.toBeTruthy();
    // The platform signs with the new secret from now on.
    expect(t.services.apps.clientSecret(await appRow(app.client_id))).toBe(fresh);
    // The secret never reaches the logs.
    expect(t.logs.join('')).not.toContain(fresh);
    expect(t.logs.join('')).not.toContain(clientSecret);
  });

  it("another partner's app, or an unknown one, is a 404 on every page and form, and nothing changes", async () => {
    const owner = await createPartner(t, ++n);
    const intruder = await createPartner(t, ++n);
    const { app } = await partnerApp(owner.id);
    const jar = await partnerLogin(t, intruder);
    const page = await get(t, H, '/partner', jar);
    expect(page.body).not.toContain(app.client_id);
    const csrf = csrfFrom(page.body);
    const before = await appRow(app.client_id);
    for (const id of [app.client_id, 'unknown-client-id']) {
      for (const path of [
        `/partner/apps/${id}`,
        `/partner/apps/${id}/deliveries`,
        `/partner/apps/${id}/deliveries/1`,
        `/partner/apps/${id}/secret?reveal=x`,
        `/partner/apps/${id}/rotate-secret`,
        `/partner/apps/${id}/finish-rotation`,
      ]) {
        expect((await get(t, H, path, jar)).statusCode, path).toBe(404);
      }
      expect(
        (
          await post(t, H, `/partner/apps/${id}`, jar, {
            _csrf: csrf,
            app_url: 'https://evil.example/',
            redirect_uri: 'https://evil.example/cb',
          })
        ).statusCode,
      ).toBe(404);
      expect((await post(t, H, `/partner/apps/${id}/reveal-secret`, jar, { _csrf: csrf })).statusCode).toBe(404);
      expect((await post(t, H, `/partner/apps/${id}/managed-install`, jar, { _csrf: csrf, managed_install: 'on' })).statusCode).toBe(404);
      expect((await post(t, H, `/partner/apps/${id}/rotate-secret`, jar, { _csrf: csrf, confirm: 'yes' })).statusCode).toBe(404);
      expect((await post(t, H, `/partner/apps/${id}/finish-rotation`, jar, { _csrf: csrf, confirm: 'yes' })).statusCode).toBe(404);
      expect((await post(t, H, `/partner/apps/${id}/deliveries/1/redeliver`, jar, { _csrf: csrf })).statusCode).toBe(404);
    }
    expect(await appRow(app.client_id)).toEqual(before);
    expect(await t.db.kysely.selectFrom('one_time_reveals').select('id_hash').execute()).toHaveLength(0);
  });

  /** A subscription of the app with one delivery that failed every attempt. */
  async function deadDelivery(appId: number, storeName: string, topic = 'products/create') {
    const store = (await t.services.accounts.findStoreByName(storeName))!;
    const now = t.clock.now;
    const sub = await t.db.kysely
      .insertInto('webhook_subscriptions')
      .values({
        store_id: store.id,
        owner: `app:${appId}`,
        app_id: appId,
        private_app_id: null,
        topic,
        address: 'https://hooks.example.test/in',
        api_version: '2026-01',
        created_at: now,
        updated_at: now,
        disabled_at: null,
        disabled_reason: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const eventId = randomBytes(8).toString('hex');
    await t.db.kysely
      .insertInto('webhook_events')
      .values({ id: eventId, store_id: store.id, topic, payload: '{}', created_at: now })
      .execute();
    const d = await t.db.kysely
      .insertInto('webhook_deliveries')
      .values({
        webhook_id: randomBytes(8).toString('hex'),
        event_id: eventId,
        subscription_id: Number(sub.id),
        store_id: store.id,
        app_id: appId,
        private_app_id: null,
        topic,
        status: 'dead',
        attempts: 2,
        next_attempt_at: now,
        last_status: 500,
        last_error: 'HTTP 500',
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    for (const [status, latency] of [
      [500, 12],
      [503, 34],
    ]) {
      await t.db.kysely
        .insertInto('webhook_attempts')
        .values({
          store_id: store.id,
          delivery_id: Number(d.id),
          attempted_at: now,
          status_code: status!,
          latency_ms: latency!,
          response_body: 'receiver <broke>',
          error: null,
        })
        .execute();
    }
    return { subscriptionId: Number(sub.id), deliveryId: Number(d.id) };
  }

  it('lists deliveries with attempts, status and latency, filters them, and sends one again (CSRF-protected)', async () => {
    const p = await createPartner(t, ++n);
    const { app } = await partnerApp(p.id);
    const f = await createFixture(t);
    const { deliveryId } = await deadDelivery(app.id, f.storeName);
    await deadDelivery(app.id, f.storeName, 'orders/create');
    const jar = await partnerLogin(t, p);
    const base = `/partner/apps/${app.client_id}/deliveries`;
    const list = await get(t, H, base, jar);
    expectGoodPage(list);
    expect(list.body).toContain(`#${deliveryId}`);
    expect(list.body).toContain('<span class="status-dead">dead</span>');
    expect(list.body).toContain('34 ms');
    expect(list.body).toContain('>503<');
    expect(list.body).toContain(`aria-label="Send delivery ${deliveryId} again">Send again</button>`);
    const byTopic = await get(t, H, `${base}?topic=products%2Fcreate`, jar);
    expectGoodPage(byTopic);
    expect(byTopic.body).toContain(`#${deliveryId}`);
    expect(byTopic.body).not.toContain('<td>orders/create</td>');
    const delivered = await get(t, H, `${base}?status=delivered`, jar);
    expect(delivered.body).toContain('No deliveries match these filters');
    expect((await get(t, H, `${base}?status=bogus`, jar)).statusCode).toBe(400);
    expect((await get(t, H, `${base}?topic=nope%2Fnope`, jar)).statusCode).toBe(400);
    expect((await get(t, H, `${base}?before=abc`, jar)).statusCode).toBe(404);

    const detail = await get(t, H, `${base}/${deliveryId}`, jar);
    expectGoodPage(detail);
    expect(detail.body).toContain('12 ms');
    expect(detail.body).toContain('34 ms');
    expect(detail.body).toContain('receiver &lt;broke&gt;');
    expect((await get(t, H, `${base}/999999`, jar)).statusCode).toBe(404);

    const status = () =>
      t.db.kysely.selectFrom('webhook_deliveries').select(['status', 'attempts']).where('id', '=', deliveryId).executeTakeFirstOrThrow();
    await expectCsrfRefused(t, H, `${base}/${deliveryId}/redeliver`, jar, { _csrf: csrfFrom(detail.body) }, status);
    expect((await status()).status).toBe('dead');
    const res = await post(t, H, `${base}/${deliveryId}/redeliver`, jar, { _csrf: csrfFrom(detail.body), back: 'detail' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`${base}/${deliveryId}?done=resent`);
    expect(await status()).toEqual({ status: 'pending', attempts: 0 });
    const queued = await get(t, H, String(res.headers.location), jar);
    expect(queued.body).toContain('queued again');
    // The earlier attempts stay in the log.
    expect(queued.body).toContain('34 ms');
    // A queued delivery is not sent twice.
    const twice = await post(t, H, `${base}/${deliveryId}/redeliver`, jar, { _csrf: csrfFrom(detail.body) });
    expect(twice.headers.location).toBe(`${base}?done=queued`);
  });

  it('shows a notice when a subscription was disabled after a run of dead deliveries', async () => {
    const p = await createPartner(t, ++n);
    const { app } = await partnerApp(p.id, 'Flaky app');
    const f = await createFixture(t);
    const { subscriptionId, deliveryId } = await deadDelivery(app.id, f.storeName);
    await t.db.kysely
      .updateTable('webhook_subscriptions')
      .set({ disabled_at: t.clock.now, disabled_reason: '5 deliveries in a row failed every retry' })
      .where('id', '=', subscriptionId)
      .execute();
    const jar = await partnerLogin(t, p);
    const home = await get(t, H, '/partner', jar);
    expect(home.body).toContain('Webhook subscription disabled:');
    expect(home.body).toContain('5 deliveries in a row failed every retry');
    const list = await get(t, H, `/partner/apps/${app.client_id}/deliveries`, jar);
    expect(list.body).toContain('Subscription disabled:');
    const res = await post(t, H, `/partner/apps/${app.client_id}/deliveries/${deliveryId}/redeliver`, jar, { _csrf: csrfFrom(list.body) });
    expect(res.headers.location).toBe(`/partner/apps/${app.client_id}/deliveries?done=disabled`);
    expect(
      (await t.db.kysely.selectFrom('webhook_deliveries').select('status').where('id', '=', deliveryId).executeTakeFirstOrThrow()).status,
    ).toBe('dead');
  });

  it('log out needs the CSRF token and ends the session on the server', async () => {
    const p = await createPartner(t, ++n);
    const jar = await partnerLogin(t, p);
    const page = await get(t, H, '/partner', jar);
    const cookie = jar.header();
    const sessions = () =>
      t.db.kysely.selectFrom('web_sessions').select('id_hash').where('kind', '=', 'partner').where('subject_id', '=', p.id).execute();
    await expectCsrfRefused(t, H, '/partner/logout', jar, { _csrf: csrfFrom(page.body) }, sessions);
    expect(await sessions()).toHaveLength(1);
    const out = await post(t, H, '/partner/logout', jar, { _csrf: csrfFrom(page.body) });
    expect(out.statusCode).toBe(303);
    expect(await sessions()).toHaveLength(0);
    const stale = await t.app.inject({ method: 'GET', url: '/partner', headers: { host: H, cookie } });
    expect(stale.statusCode).toBe(303);
  });
});
