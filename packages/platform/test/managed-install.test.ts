// Managed install: an app that declares its scopes lets the platform run consent. Install in the
// store admin shows the consent page, approving grants the declared scopes and opens the app with a
// launch token; when the app declares other scopes, the merchant is asked again the next time they
// open it, and until then the grant stays as it was. On both databases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationFailedError } from '../src/domain/errors.ts';
import {
  createFixture,
  createTestPlatform,
  csrfFrom,
  DIALECTS,
  type Fixture,
  formBody,
  type Jar,
  login,
  type TestPlatform,
} from './harness.ts';
import { expectGoodPage } from './web-pages.ts';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';

describe.each(DIALECTS)('managed install on %s', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect);
  });
  afterAll(async () => t.close());

  /** A store and an app the platform installs, declaring `scopes`. */
  async function managed(scopes = 'read_products'): Promise<Fixture & { appId: number; storeId: number }> {
    const f = await createFixture(t, { scopes });
    const app = (await t.services.apps.findByClientId(f.clientId))!;
    await t.services.apps.setManagedInstall(app.id, true);
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    return { ...f, appId: app.id, storeId: store.id };
  }

  const open = (f: Fixture, jar: Jar) =>
    t.app.inject({ method: 'GET', url: `/admin/apps/${f.clientId}/install`, headers: { host: f.host, cookie: jar.header() } });
  const answer = (f: Fixture, jar: Jar, fields: Record<string, string>) =>
    t.app.inject({
      method: 'POST',
      url: `/admin/apps/${f.clientId}/install`,
      headers: { host: f.host, cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: formBody(fields),
    });
  const granted = async (f: { storeId: number; appId: number }) => {
    const i = await t.services.apps.findInstallation(f.storeId, f.appId);
    return i && i.uninstalled_at === null ? i.scopes : undefined;
  };
  const exchange = (f: Fixture, idToken: string) =>
    t.app.inject({
      method: 'POST',
      url: '/admin/oauth/token',
      headers: { host: f.host, 'content-type': 'application/x-www-form-urlencoded' },
      payload: formBody({
        grant_type: TOKEN_EXCHANGE,
        client_id: f.clientId,
        client_secret: f.clientSecret,
        subject_token: idToken,
        subject_token_type: ID_TOKEN,
      }),
    });

  it('Install shows consent for the declared scopes; approving grants them and opens the app with a launch token to exchange', async () => {
    const f = await managed('read_products write_orders');
    const jar = await login(t, f);
    const page = await open(f, jar);
    expectGoodPage(page);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toContain(`Install ${f.appName}?`);
    expect(page.body).toContain('(read_products)');
    expect(page.body).toContain('(write_orders)');
    expect(await granted(f)).toBeUndefined();

    const res = await answer(f, jar, { _csrf: csrfFrom(page.body), scopes: 'read_products,write_orders', decision: 'install' });
    expect(res.statusCode).toBe(303);
    const launch = new URL(res.headers.location as string);
    expect(launch.origin + launch.pathname).toBe(f.appUrl);
    expect([...launch.searchParams.keys()].sort()).toEqual(['hmac', 'id_token', 'shop', 'timestamp']);
    expect(await granted(f)).toBe('read_products,write_orders');
    const token = await exchange(f, launch.searchParams.get('id_token')!);
    expect(token.statusCode).toBe(200);
    expect(token.json().scope).toBe('read_products write_orders');

    // Opened again with the grant as declared: straight to the app, with a fresh launch token.
    const again = await open(f, jar);
    expect(again.statusCode).toBe(303);
    expect(new URL(again.headers.location as string).searchParams.get('id_token')).toBeTruthy();
  });

  it('when the declared scopes change, the next open asks again; until then the grant stays; a stale answer asks again', async () => {
    const f = await managed('read_products');
    const jar = await login(t, f);
    const first = await open(f, jar);
    await answer(f, jar, { _csrf: csrfFrom(first.body), scopes: 'read_products', decision: 'install' });
    expect(await granted(f)).toBe('read_products');

    await t.services.apps.updateProfile(f.appId, { name: f.appName, scopes: 'read_products write_products' });
    const page = await open(f, jar);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`Install ${f.appName}?`);
    expect(page.body).toContain('This app is already installed');
    expect(page.body).toContain('(write_products, new)');
    expect(await granted(f)).toBe('read_products');

    // An answer to what was shown before the app changed its scopes again grants nothing.
    const stale = await answer(f, jar, { _csrf: csrfFrom(page.body), scopes: 'read_products', decision: 'install' });
    expect(stale.statusCode).toBe(303);
    expect(stale.headers.location).toBe(`/admin/apps/${f.clientId}/install`);
    expect(await granted(f)).toBe('read_products');

    const ok = await answer(f, jar, { _csrf: csrfFrom(page.body), scopes: 'read_products,write_products', decision: 'install' });
    expect(ok.statusCode).toBe(303);
    expect(await granted(f)).toBe('read_products,write_products');
  });

  it('cancel, a bad answer, a missing CSRF token or an app not installed by the platform change nothing', async () => {
    const f = await managed();
    const jar = await login(t, f);
    const page = await open(f, jar);
    const csrf = csrfFrom(page.body);
    const cancel = await answer(f, jar, { _csrf: csrf, scopes: 'read_products', decision: 'cancel' });
    expect(cancel.statusCode).toBe(303);
    expect(cancel.headers.location).toBe('/admin');
    const bad = await answer(f, jar, { _csrf: csrf, scopes: 'read_products', decision: 'maybe' });
    expect(bad.statusCode).toBe(422);
    const noCsrf = await answer(f, jar, { scopes: 'read_products', decision: 'install' });
    expect(noCsrf.statusCode).toBe(403);
    expect(await granted(f)).toBeUndefined();

    const plain = await createFixture(t);
    const plainJar = await login(t, plain);
    const plainPage = await t.app.inject({ method: 'GET', url: '/admin', headers: { host: plain.host, cookie: plainJar.header() } });
    const refused = await answer(plain, plainJar, { _csrf: csrfFrom(plainPage.body), scopes: 'read_products', decision: 'install' });
    expect(refused.statusCode).toBe(404);
    expect(refused.json().message).toContain('installed through its own authorization request');
  });

  it('an app the platform installs must declare scopes: on creation, when turned on, and when its scopes change', async () => {
    const input = { name: 'No scopes', appUrl: 'https://app.example.test/', redirectUri: 'https://app.example.test/cb' };
    await expect(t.services.apps.createApp({ ...input, managedInstall: true })).rejects.toBeInstanceOf(ValidationFailedError);
    const { app } = await t.services.apps.createApp(input);
    await expect(t.services.apps.setManagedInstall(app.id, true)).rejects.toBeInstanceOf(ValidationFailedError);
    expect((await t.services.apps.findByClientId(app.client_id))!.managed_install).toBe(0);
    const f = await managed('read_orders');
    await expect(t.services.apps.updateProfile(f.appId, { name: f.appName, scopes: '' })).rejects.toBeInstanceOf(ValidationFailedError);
    expect((await t.services.apps.findByClientId(f.clientId))!.scopes).toBe('read_orders');
  });
});
