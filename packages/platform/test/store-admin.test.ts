// The store admin (issue 5): every page with its security headers, every form refusing a missing or
// wrong CSRF token without changing anything, uninstall, private apps, paginated lists, bad input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { products } from '../src/domain/resources.ts';
import { SESSION_TTL_MS } from '../src/services/account-service.ts';
import {
  DIALECTS,
  Jar,
  accessTokenActive,
  api,
  appToken,
  createFixture,
  createTestPlatform,
  csrfFrom,
  login,
  type TestPlatform,
} from './harness.ts';
import { decode, expectCsrfRefused, expectGoodPage, get, post, secretValue } from './web-pages.ts';

describe.each(DIALECTS)('store admin (%s)', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect);
  });
  afterAll(async () => t?.close());

  const storeOf = async (name: string) => (await t.services.accounts.findStoreByName(name))!;
  const privateApps = async (storeId: number) =>
    t.db.kysely.selectFrom('private_apps').select(['id', 'name', 'revoked_at']).where('store_id', '=', storeId).orderBy('id').execute();

  it('serves every page with the security headers, under 50 KB, labelled, and sends logged-out visitors to the login page', async () => {
    const f = await createFixture(t);
    const anon = new Jar();
    for (const path of [
      '/admin',
      '/admin/private-apps',
      '/admin/private-apps/new',
      '/admin/products',
      '/admin/orders',
      '/admin/customers',
      '/admin/private-apps/created',
    ]) {
      const res = await get(t, f.host, path, anon);
      expect(res.statusCode, path).toBe(303);
      expect(res.headers.location).toBe(`/admin/login?return_to=${encodeURIComponent(path)}`);
    }
    expectGoodPage(await get(t, f.host, '/admin/login', anon));
    const jar = await login(t, f);
    for (const path of [
      '/admin',
      '/admin/private-apps',
      '/admin/private-apps/new',
      '/admin/products',
      '/admin/orders',
      '/admin/customers',
    ]) {
      const res = await get(t, f.host, path, jar);
      expectGoodPage(res);
      expect(res.headers['cache-control']).toBe('no-store');
      // Navigation between the sections, the current one marked.
      for (const section of ['Apps', 'Private apps', 'Products', 'Orders', 'Customers']) expect(res.body).toContain(`>${section}</a>`);
      expect(res.body).toContain('aria-current="page"');
    }
    const script = await t.app.inject({ method: 'GET', url: '/assets/copy-button.js', headers: { host: f.host } });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toContain('javascript');
  });

  it('lists installed apps with their scopes and the public apps; Uninstall revokes every token (CSRF-protected)', async () => {
    const f = await createFixture(t);
    const token = await appToken(t, f, 'read_products write_orders');
    const jar = await login(t, f);
    const page = await get(t, f.host, '/admin', jar);
    expectGoodPage(page);
    expect(page.body).toContain('<h2>Installed apps</h2>');
    expect(page.body).toContain('read_products');
    expect(page.body).toContain('write_orders');
    expect(page.body).toContain(`href="/admin/apps/${f.clientId}/install">Open<span class="visually-hidden"> ${f.appName}</span></a>`);
    expect(page.body).toContain(
      `href="/admin/apps/${f.clientId}/uninstall">Uninstall<span class="visually-hidden"> ${f.appName}</span></a>`,
    );
    expect(page.body).toContain('<h2>App list</h2>');
    const store = await storeOf(f.storeName);
    const installation = () =>
      t.db.kysely.selectFrom('installations').select(['uninstalled_at', 'scopes']).where('store_id', '=', store.id).execute();
    const url = `/admin/apps/${f.clientId}/uninstall`;
    await expectCsrfRefused(t, f.host, url, jar, { _csrf: csrfFrom(page.body), confirm: 'yes' }, async () => ({
      inst: await installation(),
      active: await accessTokenActive(t, token),
    }));
    expect(await accessTokenActive(t, token)).toBe(true);

    const res = await post(t, f.host, url, jar, { _csrf: csrfFrom(page.body), confirm: 'yes' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/admin?done=uninstalled');
    expect((await installation())[0]!.uninstalled_at).not.toBeNull();
    expect(await accessTokenActive(t, token)).toBe(false);
    expect((await api(t, f, token, 'GET', '/openapi/2026-01/products')).statusCode).toBe(401);
    const after = await get(t, f.host, '/admin?done=uninstalled', jar);
    expect(after.body).toContain('The app was uninstalled');
    expect(after.body).toContain(`href="/admin/apps/${f.clientId}/install">Install<span class="visually-hidden"> ${f.appName}</span></a>`);

    // Again (not installed any more), or an unknown app: 404, nothing changes.
    expect((await post(t, f.host, url, jar, { _csrf: csrfFrom(page.body), confirm: 'yes' })).statusCode).toBe(404);
    expect((await get(t, f.host, url, jar)).statusCode).toBe(404);
    expect((await post(t, f.host, '/admin/apps/nope/uninstall', jar, { _csrf: csrfFrom(page.body), confirm: 'yes' })).statusCode).toBe(404);
    expect((await get(t, f.host, '/admin/apps/nope/install', jar)).statusCode).toBe(404);
  });

  it('an app installed in another store cannot be uninstalled from this one', async () => {
    const a = await createFixture(t);
    const b = await createFixture(t);
    const tokenA = await appToken(t, a);
    const jarB = await login(t, b);
    const page = await get(t, b.host, '/admin', jarB);
    const res = await post(t, b.host, `/admin/apps/${a.clientId}/uninstall`, jarB, { _csrf: csrfFrom(page.body), confirm: 'yes' });
    expect(res.statusCode).toBe(404);
    expect((await get(t, b.host, `/admin/apps/${a.clientId}/uninstall`, jarB)).statusCode).toBe(404);
    expect(await accessTokenActive(t, tokenA)).toBe(true);
  });

  it('creates a private app with chosen scopes; the token and webhook secret are shown once; revoke stops the token', async () => {
    const f = await createFixture(t);
    const store = await storeOf(f.storeName);
    const jar = await login(t, f);
    const form = await get(t, f.host, '/admin/private-apps/new', jar);
    expectGoodPage(form);
    expect(form.body).toContain('<label for="scope-read_products">');
    const fields = { _csrf: csrfFrom(form.body), name: 'Stock sync', scopes: ['read_products', 'write_orders'] };
    await expectCsrfRefused(t, f.host, '/admin/private-apps', jar, fields, () => privateApps(store.id));
    expect(await privateApps(store.id)).toHaveLength(0);

    const res = await post(t, f.host, '/admin/private-apps', jar, fields);
    expect(res.statusCode).toBe(303);
    const location = String(res.headers.location);
    expect(location).toMatch(/^\/admin\/private-apps\/created\?reveal=[A-Za-z0-9_-]{24}$/);
    const shown = await get(t, f.host, location, jar);
    expectGoodPage(shown);
    expect(shown.body).toContain('<script src="/assets/copy-button.js" defer></script>');
    expect(shown.body).toContain('data-copy="access-token" hidden>Copy access-token</button>');
    const token = secretValue(shown.body, 'access-token')!;
    const secret = secretValue(shown.body, 'webhook-secret')!;
    expect(token).toMatch(/^sg_pt_/);
    expect(secret).toMatch(/^sg_whs_/);
    expect((await api(t, f, token, 'GET', '/openapi/2026-01/products')).statusCode).toBe(200);
    expect((await api(t, f, token, 'GET', '/openapi/2026-01/customers')).statusCode).toBe(403);
    // Shown once: a reload shows nothing, and neither does another session of the same merchant.
    const again = await get(t, f.host, location, jar);
    expect(again.body).toContain('Already shown');
    expect(again.body).not.toContain(token);
    const rows = await privateApps(store.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.name).toBe('Stock sync');

    const list = await get(t, f.host, '/admin/private-apps', jar);
    expectGoodPage(list);
    expect(list.body).toContain('Stock sync');
    expect(list.body).not.toContain(token);
    const revokeUrl = `/admin/private-apps/${rows[0]!.id}/revoke`;
    await expectCsrfRefused(t, f.host, revokeUrl, jar, { _csrf: csrfFrom(list.body), confirm: 'yes' }, () => privateApps(store.id));
    expect((await api(t, f, token, 'GET', '/openapi/2026-01/products')).statusCode).toBe(200);
    const revoked = await post(t, f.host, revokeUrl, jar, { _csrf: csrfFrom(list.body), confirm: 'yes' });
    expect(revoked.statusCode).toBe(303);
    expect(revoked.headers.location).toBe('/admin/private-apps?done=revoked');
    expect((await privateApps(store.id))[0]!.revoked_at).not.toBeNull();
    expect((await api(t, f, token, 'GET', '/openapi/2026-01/products')).statusCode).toBe(401);
    expect((await get(t, f.host, '/admin/private-apps?done=revoked', jar)).body).toContain('Revoked');
    // Revoking twice, an unknown id or a malformed one: 404.
    const yes = { _csrf: csrfFrom(list.body), confirm: 'yes' };
    expect((await post(t, f.host, revokeUrl, jar, yes)).statusCode).toBe(404);
    expect((await post(t, f.host, '/admin/private-apps/999999/revoke', jar, yes)).statusCode).toBe(404);
    expect((await post(t, f.host, '/admin/private-apps/abc/revoke', jar, yes)).statusCode).toBe(404);
    for (const path of [revokeUrl, '/admin/private-apps/999999/revoke', '/admin/private-apps/abc/revoke'])
      expect((await get(t, f.host, path, jar)).statusCode, path).toBe(404);
  });

  it("a reveal is bound to the session that created it, and another store's private app cannot be revoked", async () => {
    const a = await createFixture(t);
    const b = await createFixture(t);
    const jarA = await login(t, a);
    const form = await get(t, a.host, '/admin/private-apps/new', jarA);
    const res = await post(t, a.host, '/admin/private-apps', jarA, { _csrf: csrfFrom(form.body), name: 'A app', scopes: 'read_orders' });
    const location = String(res.headers.location);
    const otherSession = await login(t, a);
    const stolen = await get(t, a.host, location, otherSession);
    expect(stolen.body).toContain('Already shown');
    expect(stolen.body).not.toContain('sg_pt_');
    expect((await get(t, a.host, location, jarA)).body).toContain('sg_pt_');

    const storeA = await storeOf(a.storeName);
    const [row] = await privateApps(storeA.id);
    const jarB = await login(t, b);
    const listB = await get(t, b.host, '/admin/private-apps', jarB);
    expect(listB.body).not.toContain('A app');
    const res2 = await post(t, b.host, `/admin/private-apps/${row!.id}/revoke`, jarB, { _csrf: csrfFrom(listB.body), confirm: 'yes' });
    expect(res2.statusCode).toBe(404);
    expect((await get(t, b.host, `/admin/private-apps/${row!.id}/revoke`, jarB)).statusCode).toBe(404);
    expect((await privateApps(storeA.id))[0]!.revoked_at).toBeNull();
  });

  it('bad private-app input comes back to the form with the errors and creates nothing', async () => {
    const f = await createFixture(t);
    const store = await storeOf(f.storeName);
    const jar = await login(t, f);
    const form = await get(t, f.host, '/admin/private-apps/new', jar);
    for (const [fields, message] of [
      [{ name: 'No scopes' }, 'choose at least one scope'],
      [{ name: '', scopes: 'read_products' }, 'must be 1 to 100 characters'],
      [{ name: 'Bad scope', scopes: ['read_products', 'admin_everything'] }, 'unknown scope &quot;admin_everything&quot;'],
    ] as const) {
      const res = await post(t, f.host, '/admin/private-apps', jar, { _csrf: csrfFrom(form.body), ...fields });
      expect(res.statusCode).toBe(303);
      expect(String(res.headers.location)).toMatch(/^\/admin\/private-apps\/new\?check=1/);
      const again = await get(t, f.host, String(res.headers.location), jar);
      expectGoodPage(again);
      expect(again.body).toContain(message);
      expect(again.body).toContain('aria-invalid="true"');
      expect(decode(again.body)).toContain(`value="${fields.name}"`);
    }
    expect(await privateApps(store.id)).toHaveLength(0);
  });

  it('products, orders and customers page with the API keyset cursors, forwards and back', async () => {
    const f = await createFixture(t);
    const store = await storeOf(f.storeName);
    for (let i = 1; i <= 60; i++) await t.services.resources.create(products, store.id, { title: `Product <${i}>`, price: '9.99' });
    const jar = await login(t, f);
    const first = await get(t, f.host, '/admin/products', jar);
    expectGoodPage(first);
    expect(first.body).toContain('Product &lt;1&gt;');
    expect(first.body).toContain('Product &lt;25&gt;');
    expect(first.body).not.toContain('Product &lt;26&gt;');
    expect(first.body).not.toContain('rel="prev"');
    const next = /href="(\/admin\/products\?cursor=[^"]+)" rel="next"/.exec(first.body)![1]!;
    const second = await get(t, f.host, decode(next), jar);
    expectGoodPage(second);
    expect(second.body).toContain('Product &lt;26&gt;');
    expect(second.body).toContain('Product &lt;50&gt;');
    const third = await get(t, f.host, decode(/href="([^"]+)" rel="next"/.exec(second.body)![1]!), jar);
    expect(third.body).toContain('Product &lt;60&gt;');
    expect(third.body).not.toContain('rel="next"');
    const back = await get(t, f.host, decode(/href="([^"]+)" rel="prev"/.exec(third.body)![1]!), jar);
    expect(back.body).toContain('Product &lt;26&gt;');
    expect(back.body).toContain('Product &lt;50&gt;');
    const backToFirst = await get(t, f.host, decode(/href="([^"]+)" rel="prev"/.exec(back.body)![1]!), jar);
    expect(backToFirst.body).toContain('Product &lt;1&gt;');
    expect(backToFirst.body).toContain('First page');

    // A tampered cursor, or one of another store: 400 InvalidCursor as an HTML page.
    const tampered = await get(t, f.host, `/admin/products?cursor=${decode(next).split('cursor=')[1]!.slice(0, -2)}xx`, jar);
    expect(tampered.statusCode).toBe(400);
    expect(tampered.body).toContain('cursor');
    const other = await createFixture(t);
    const otherJar = await login(t, other);
    const foreign = await get(t, other.host, decode(next), otherJar);
    expect(foreign.statusCode).toBe(400);
    expect((await get(t, f.host, `/admin/orders?cursor=${decode(next).split('cursor=')[1]}`, jar)).statusCode).toBe(400);
  });

  it('a browser posting a form gets errors as an HTML page', async () => {
    const f = await createFixture(t);
    const jar = await login(t, f);
    const page = await get(t, f.host, '/admin', jar);
    const send = (url: string, csrf: string) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { host: f.host, cookie: jar.header(), accept: 'text/html,*/*', 'content-type': 'application/x-www-form-urlencoded' },
        payload: `_csrf=${encodeURIComponent(csrf)}&confirm=yes`,
      });
    const missing = await send('/admin/apps/nope/uninstall', csrfFrom(page.body));
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toContain('text/html');
    expect(missing.body).toContain('No app with this client id');
    const forged = await send('/admin/private-apps/1/revoke', 'wrong');
    expect(forged.statusCode).toBe(403);
    expect(forged.body).toContain('The form expired or was not sent from this site');
  });

  it('log out needs the CSRF token and ends the session on the server; sessions expire', async () => {
    const f = await createFixture(t);
    const jar = await login(t, f);
    const page = await get(t, f.host, '/admin', jar);
    const session = jar.get('sg_session')!;
    const sessions = () => t.db.kysely.selectFrom('web_sessions').select('id_hash').where('kind', '=', 'merchant').execute();
    await expectCsrfRefused(t, f.host, '/admin/logout', jar, { _csrf: csrfFrom(page.body) }, sessions);
    expect((await get(t, f.host, '/admin', jar)).statusCode).toBe(200);
    const out = await post(t, f.host, '/admin/logout', jar, { _csrf: csrfFrom(page.body) });
    expect(out.statusCode).toBe(303);
    const stale = await t.app.inject({ method: 'GET', url: '/admin', headers: { host: f.host, cookie: `sg_session=${session}` } });
    expect(stale.statusCode).toBe(303);

    const jar2 = await login(t, f);
    expect((await get(t, f.host, '/admin', jar2)).statusCode).toBe(200);
    t.clock.advance(SESSION_TTL_MS + 1);
    const expired = await get(t, f.host, '/admin', jar2);
    expect(expired.statusCode).toBe(303);
    expect(expired.headers.location).toContain('/admin/login');
  });
});
