// Rotation in the browser pages, on SQLite and PostgreSQL, without JavaScript: the partner
// dashboard's "Rotate client secret" and "Finish rotation", the store admin's "Rotate webhook
// secret" and "Finish rotation" for private apps; CSRF on each form, 303 after each POST, the new
// secret shown once, and bad or foreign requests refused without changing anything.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFixture, createTestPlatform, csrfFrom, DIALECTS, login, type TestPlatform } from './harness.ts';
import { createPartner, expectCsrfRefused, expectGoodPage, get, PLATFORM_HOST, partnerLogin, post, secretValue } from './web-pages.ts';

const H = PLATFORM_HOST;
let n = 0;

describe.each(DIALECTS)('rotation pages (%s)', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect);
  });
  afterAll(async () => t?.close());

  const appRow = (clientId: string) =>
    t.db.kysely.selectFrom('apps').selectAll().where('client_id', '=', clientId).executeTakeFirstOrThrow();
  const privateRow = (id: number) => t.db.kysely.selectFrom('private_apps').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('partner dashboard: rotate, the new secret once, "Rotation in progress" with what finishing does, Finish rotation', async () => {
    const p = await createPartner(t, ++n);
    const { app, clientSecret } = await t.services.apps.createApp({
      name: 'Rotating app',
      appUrl: 'https://app.example.test/',
      redirectUri: 'https://app.example.test/callback',
      partnerId: p.id,
    });
    const jar = await partnerLogin(t, p);
    const settings = await get(t, H, `/partner/apps/${app.client_id}`, jar);
    expectGoodPage(settings);
    expect(settings.body).toContain(`href="/partner/apps/${app.client_id}/rotate-secret">Rotate client secret</a>`);
    expect(settings.body).toContain('at the latest after 24 hours');
    expect(settings.body).not.toContain('Finish rotation');
    const csrf = csrfFrom(settings.body);
    // Nothing to finish yet: a 409 page, nothing changed.
    const before = await appRow(app.client_id);
    const early = await post(t, H, `/partner/apps/${app.client_id}/finish-rotation`, jar, { _csrf: csrf, confirm: 'yes' });
    expect(early.statusCode).toBe(409);
    expect(early.body).toContain('nothing to finish');
    expect(await appRow(app.client_id)).toEqual(before);

    const rotate = await post(t, H, `/partner/apps/${app.client_id}/rotate-secret`, jar, { _csrf: csrf, confirm: 'yes' });
    expect(rotate.statusCode).toBe(303);
    const shown = await get(t, H, String(rotate.headers.location), jar);
    expectGoodPage(shown);
    expect(shown.body).toContain('Finish rotation');
    const fresh = secretValue(shown.body, 'client-secret')!;
    expect(fresh).toMatch(/^sg_cs_/);
    expect((await get(t, H, String(rotate.headers.location), jar)).body).not.toContain(fresh);

    const during = await get(t, H, `/partner/apps/${app.client_id}`, jar);
    expectGoodPage(during);
    expect(during.body).toContain('Rotation in progress');
    expect(during.body).toContain('Finishing signs install links and webhooks with the new secret only');
    expect(during.body).toContain('the previous secret stops working at the token endpoint');
    expect(during.body).toContain(`href="/partner/apps/${app.client_id}/finish-rotation">Finish rotation</a>`);
    expect(during.body).not.toContain('/rotate-secret"');
    // Rotating again meanwhile is refused (409) and the secrets stay as they are.
    const rotating = await appRow(app.client_id);
    const again = await post(t, H, `/partner/apps/${app.client_id}/rotate-secret`, jar, { _csrf: csrf, confirm: 'yes' });
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('already in progress');
    expect(await appRow(app.client_id)).toEqual(rotating);

    await expectCsrfRefused(t, H, `/partner/apps/${app.client_id}/finish-rotation`, jar, { _csrf: csrf, confirm: 'yes' }, () =>
      appRow(app.client_id),
    );
    const finish = await post(t, H, `/partner/apps/${app.client_id}/finish-rotation`, jar, { _csrf: csrf, confirm: 'yes' });
    expect(finish.statusCode).toBe(303);
    expect(finish.headers.location).toBe(`/partner/apps/${app.client_id}?done=finished`);
    const done = await get(t, H, String(finish.headers.location), jar);
    expectGoodPage(done);
    expect(done.body).toContain('The rotation is finished');
    expect(done.body).toContain(`href="/partner/apps/${app.client_id}/rotate-secret">Rotate client secret</a>`);
    await expect(t.services.apps.authenticateClient(app.client_id, clientSecret)).rejects.toThrow();
    await expect(t.services.apps.authenticateClient(app.client_id, fresh)).resolves.toBeTruthy();

    // Another partner (or an unknown app): 404, nothing changes.
    const intruder = await createPartner(t, ++n);
    const other = await partnerLogin(t, intruder);
    const otherCsrf = csrfFrom((await get(t, H, '/partner', other)).body);
    await t.services.rotations.rotateClientSecret(app.id);
    const state = await appRow(app.client_id);
    for (const id of [app.client_id, 'unknown-client-id']) {
      expect((await post(t, H, `/partner/apps/${id}/finish-rotation`, other, { _csrf: otherCsrf, confirm: 'yes' })).statusCode).toBe(404);
    }
    expect(await appRow(app.client_id)).toEqual(state);
    const logs = t.logs.join('');
    expect(logs).toContain('client secret rotation finished');
    for (const secret of [clientSecret, fresh]) expect(logs).not.toContain(secret);
  });

  it("store admin: rotate a private app's webhook secret (shown once), then Finish rotation", async () => {
    const f = await createFixture(t);
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    const created = await t.services.apps.createPrivateApp({ storeId: store.id, name: 'Sync job', scopes: 'read_products' });
    const jar = await login(t, f);
    const page = await get(t, f.host, '/admin/private-apps', jar);
    expectGoodPage(page);
    expect(page.body).toContain('>Rotate webhook secret<span class="visually-hidden"> of Sync job</span></a>');
    expect(page.body).toContain('at the latest after 24 hours');
    const csrf = csrfFrom(page.body);
    const url = `/admin/private-apps/${created.id}/rotate-webhook-secret`;
    await expectCsrfRefused(t, f.host, url, jar, { _csrf: csrf, confirm: 'yes' }, () => privateRow(created.id));

    const rotate = await post(t, f.host, url, jar, { _csrf: csrf, confirm: 'yes' });
    expect(rotate.statusCode).toBe(303);
    expect(String(rotate.headers.location)).toMatch(/^\/admin\/private-apps\/rotated\?reveal=/);
    const shown = await get(t, f.host, String(rotate.headers.location), jar);
    expectGoodPage(shown);
    expect(shown.body).toContain('New webhook secret for "Sync job"');
    const fresh = secretValue(shown.body, 'webhook-secret')!;
    expect(fresh).toMatch(/^sg_whs_/);
    expect(fresh).not.toBe(created.webhookSecret);
    const reload = await get(t, f.host, String(rotate.headers.location), jar);
    expect(reload.body).toContain('Already shown');
    expect(reload.body).not.toContain(fresh);

    const during = await get(t, f.host, '/admin/private-apps', jar);
    expectGoodPage(during);
    expect(during.body).toContain('Rotation in progress until');
    expect(during.body).toContain('Finishing signs webhooks with the new secret only');
    expect(during.body).toContain('>Finish rotation<span class="visually-hidden"> of Sync job</span></a>');
    const rotating = await privateRow(created.id);
    expect((await post(t, f.host, url, jar, { _csrf: csrf, confirm: 'yes' })).statusCode).toBe(409);
    expect(await privateRow(created.id)).toEqual(rotating);

    const finishUrl = `/admin/private-apps/${created.id}/finish-rotation`;
    await expectCsrfRefused(t, f.host, finishUrl, jar, { _csrf: csrf, confirm: 'yes' }, () => privateRow(created.id));
    const finish = await post(t, f.host, finishUrl, jar, { _csrf: csrf, confirm: 'yes' });
    expect(finish.statusCode).toBe(303);
    expect(finish.headers.location).toBe('/admin/private-apps?done=finished');
    expect((await get(t, f.host, '/admin/private-apps?done=finished', jar)).body).toContain('The rotation is finished');
    const row = await privateRow(created.id);
    expect(row.previous_webhook_secret_enc).toBeNull();
    expect(t.services.box.open(row.webhook_secret_enc)).toBe(fresh);
    expect((await post(t, f.host, finishUrl, jar, { _csrf: csrf, confirm: 'yes' })).statusCode).toBe(409);

    // Another store's private app, an unknown or malformed id, a revoked app: refused, nothing changes.
    const g = await createFixture(t);
    const elsewhere = await login(t, g);
    const otherCsrf = csrfFrom((await get(t, g.host, '/admin/private-apps', elsewhere)).body);
    const state = await privateRow(created.id);
    for (const path of [url, finishUrl])
      expect((await post(t, g.host, path, elsewhere, { _csrf: otherCsrf, confirm: 'yes' })).statusCode).toBe(404);
    expect(
      (await post(t, f.host, '/admin/private-apps/999999999/rotate-webhook-secret', jar, { _csrf: csrf, confirm: 'yes' })).statusCode,
    ).toBe(404);
    expect(
      (await post(t, f.host, '/admin/private-apps/abc/rotate-webhook-secret', jar, { _csrf: csrf, confirm: 'yes' })).statusCode,
    ).toBeGreaterThanOrEqual(400);
    expect(await privateRow(created.id)).toEqual(state);
    await t.services.apps.revokePrivateApp(store.id, created.id);
    expect((await post(t, f.host, url, jar, { _csrf: csrf, confirm: 'yes' })).statusCode).toBe(404);
    const revokedPage = await get(t, f.host, '/admin/private-apps', jar);
    expect(revokedPage.body).not.toContain('rotate-webhook-secret');
    expect((await get(t, f.host, url, jar)).statusCode).toBe(404);

    const logs = t.logs.join('');
    expect(logs).toContain('webhook secret rotation started');
    for (const secret of [created.webhookSecret, fresh]) expect(logs).not.toContain(secret);
  });
});
