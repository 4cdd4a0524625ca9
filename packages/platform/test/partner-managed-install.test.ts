// Managed install from the partner dashboard: the app page explains it and turns it on and off
// (CSRF-protected; a bad value, an app without declared scopes or another partner's app change
// nothing), and the create form's checkbox creates an app the platform installs. An app the
// platform installs keeps some declared scopes, whoever edits them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationFailedError } from '../src/domain/errors.ts';
import { DIALECTS, createTestPlatform, csrfFrom, type TestPlatform } from './harness.ts';
import { PLATFORM_HOST as H, createPartner, decode, expectCsrfRefused, expectGoodPage, get, partnerLogin, post } from './web-pages.ts';

let n = 100;

describe.each(DIALECTS)('managed install in the partner dashboard (%s)', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect);
  });
  afterAll(async () => t?.close());

  const stored = async (clientId: string) => {
    const row = (await t.services.apps.findByClientId(clientId))!;
    return { managed_install: row.managed_install, scopes: row.scopes };
  };
  const appsOf = (partnerId: number) =>
    t.db.kysely
      .selectFrom('apps')
      .select(['name', 'scopes', 'managed_install', 'authorization_iss'])
      .where('partner_id', '=', partnerId)
      .orderBy('id')
      .execute();
  const partnerApp = (partnerId: number, scopes: string) =>
    t.services.apps.createApp({
      name: 'Managed app',
      appUrl: 'https://app.example.test/',
      redirectUri: 'https://app.example.test/cb',
      scopes,
      partnerId,
    });

  it('the app page explains managed install and turns it on and off; a bad value, no CSRF token or another partner change nothing', async () => {
    const p = await createPartner(t, ++n);
    const { app } = await partnerApp(p.id, 'read_products write_orders');
    const jar = await partnerLogin(t, p);
    const url = `/partner/apps/${app.client_id}`;
    const page = await get(t, H, url, jar);
    expectGoodPage(page);
    const text = decode(page.body).replace(/\s+/g, ' ');
    expect(text).toContain('<h2>Managed install</h2>');
    expect(text).toContain('the platform shows them the scopes the app declares and asks for their consent');
    expect(text).toContain('launch token (<code>id_token</code>). Your app exchanges that token at the token endpoint');
    expect(text).toContain('When the declared scopes change, merchants are asked for them the next time they open the app');
    expect(text).toContain('managed install is <strong>off</strong>');
    expect(page.body).toContain('value="on">Turn managed install on</button>');
    const before = await stored(app.client_id);
    expect(before).toEqual({ managed_install: 0, scopes: 'read_products,write_orders' });

    await expectCsrfRefused(t, H, `${url}/managed-install`, jar, { managed_install: 'on' }, () => stored(app.client_id));
    for (const value of ['yes', '1', 'ON', '']) {
      const bad = await post(t, H, `${url}/managed-install`, jar, { _csrf: csrfFrom(page.body), managed_install: value });
      expect(bad.statusCode, value).toBe(422);
      expect(bad.body).toContain('managed_install');
    }
    expect(await stored(app.client_id)).toEqual(before);

    const on = await post(t, H, `${url}/managed-install`, jar, { _csrf: csrfFrom(page.body), managed_install: 'on' });
    expect(on.statusCode).toBe(303);
    expect(on.headers.location).toBe(`${url}?done=managed_on`);
    expect(await stored(app.client_id)).toEqual({ ...before, managed_install: 1 });
    const after = await get(t, H, String(on.headers.location), jar);
    expectGoodPage(after);
    expect(after.body).toContain('Managed install is on: merchants install this app from their store admin');
    expect(after.body).toContain('managed install is <strong>on</strong>');
    expect(after.body).toContain('value="off">Turn managed install off</button>');

    const other = await createPartner(t, ++n);
    const otherJar = await partnerLogin(t, other);
    const otherPage = await get(t, H, '/partner', otherJar);
    for (const value of ['off', 'on']) {
      const foreign = await post(t, H, `${url}/managed-install`, otherJar, { _csrf: csrfFrom(otherPage.body), managed_install: value });
      expect(foreign.statusCode).toBe(404);
    }
    expect((await get(t, H, url, otherJar)).statusCode).toBe(404);
    expect(await stored(app.client_id)).toEqual({ ...before, managed_install: 1 });

    const off = await post(t, H, `${url}/managed-install`, jar, { _csrf: csrfFrom(page.body), managed_install: 'off' });
    expect(off.headers.location).toBe(`${url}?done=managed_off`);
    expect(await stored(app.client_id)).toEqual(before);
    expect((await get(t, H, String(off.headers.location), jar)).body).toContain('Managed install is off');
  });

  it('an app that declares no scopes offers no button, and turning it on is refused with 422, nothing changed', async () => {
    const p = await createPartner(t, ++n);
    const { app } = await partnerApp(p.id, '');
    const jar = await partnerLogin(t, p);
    const url = `/partner/apps/${app.client_id}`;
    const page = await get(t, H, url, jar);
    expectGoodPage(page);
    expect(page.body).toContain('This app declares no scopes, so there is nothing to ask merchants for');
    expect(page.body).not.toContain('Turn managed install on');
    const res = await post(t, H, `${url}/managed-install`, jar, { _csrf: csrfFrom(page.body), managed_install: 'on' });
    expect(res.statusCode).toBe(422);
    expect(res.body).toContain('must declare the scopes it needs');
    expect(await stored(app.client_id)).toEqual({ managed_install: 0, scopes: '' });
    // Turning it off is always allowed (it already is).
    const off = await post(t, H, `${url}/managed-install`, jar, { _csrf: csrfFrom(page.body), managed_install: 'off' });
    expect(off.statusCode).toBe(303);
  });

  it('the create form has a managed install checkbox; without scopes, or with another value, nothing is created', async () => {
    const p = await createPartner(t, ++n);
    const jar = await partnerLogin(t, p);
    const form = await get(t, H, '/partner/apps/new', jar);
    expectGoodPage(form);
    expect(form.body).toContain('<input type="checkbox" id="managed_install" name="managed_install" value="on">');
    const fields = {
      _csrf: csrfFrom(form.body),
      name: 'Managed from the form',
      app_url: 'http://localhost:4000/',
      redirect_uri: 'http://localhost:4000/auth/callback',
    };

    const noScopes = await post(t, H, '/partner/apps', jar, { ...fields, managed_install: 'on' });
    expect(noScopes.statusCode).toBe(303);
    expect(String(noScopes.headers.location)).toMatch(/^\/partner\/apps\/new\?check=1/);
    const back = await get(t, H, String(noScopes.headers.location), jar);
    expectGoodPage(back);
    expect(back.body).toContain('choose at least one scope: managed install asks merchants for them');
    expect(back.body).toContain('name="managed_install" value="on" checked>');
    expect(decode(back.body)).toContain('value="Managed from the form"');
    const bad = await post(t, H, '/partner/apps', jar, { ...fields, scopes: ['read_products'], managed_install: 'yes' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('managed_install');
    expect(await appsOf(p.id)).toEqual([]);

    const created = await post(t, H, '/partner/apps', jar, { ...fields, scopes: ['read_products'], managed_install: 'on' });
    expect(created.statusCode).toBe(303);
    const plain = await post(t, H, '/partner/apps', jar, { ...fields, name: 'Plain app', scopes: ['read_products'] });
    expect(plain.statusCode).toBe(303);
    // New apps get iss on the code redirect either way.
    expect(await appsOf(p.id)).toEqual([
      { name: 'Managed from the form', scopes: 'read_products', managed_install: 1, authorization_iss: 1 },
      { name: 'Plain app', scopes: 'read_products', managed_install: 0, authorization_iss: 1 },
    ]);
  });

  it('an app the platform installs keeps declared scopes: updateProfile refuses none until managed install is off', async () => {
    const p = await createPartner(t, ++n);
    const { app } = await partnerApp(p.id, 'read_products');
    await t.services.apps.setManagedInstall(app.id, true);
    const err = await t.services.apps.updateProfile(app.id, { name: 'Managed app', scopes: '' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationFailedError);
    expect((err as ValidationFailedError).errors).toEqual({ scopes: ['an app the platform installs must declare the scopes it needs'] });
    expect(await stored(app.client_id)).toEqual({ managed_install: 1, scopes: 'read_products' });
    await t.services.apps.updateProfile(app.id, { name: 'Managed app', scopes: 'read_orders' });
    expect(await stored(app.client_id)).toEqual({ managed_install: 1, scopes: 'read_orders' });
    await t.services.apps.setManagedInstall(app.id, false);
    await t.services.apps.updateProfile(app.id, { name: 'Managed app', scopes: '' });
    expect(await stored(app.client_id)).toEqual({ managed_install: 0, scopes: '' });
  });
});
