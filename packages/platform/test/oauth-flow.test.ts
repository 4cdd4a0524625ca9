// The install flow and the token endpoint over inject(), on SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyQueryString } from '../src/domain/query-signature.ts';
import { pkceChallenge } from '../src/domain/grants.ts';
import {
  accessTokenActive,
  api,
  authorizeUrl,
  codeFor,
  consent,
  createFixture,
  createTestPlatform,
  DIALECTS,
  exchange,
  formBody,
  login,
  refreshRequest,
  tokenRequest,
  type TestPlatform,
} from './harness.ts';

describe.each(DIALECTS)('install flow and tokens on %s', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect);
  });
  afterAll(async () => t.close());

  it('install from the admin: 303 to the App URL with shop, timestamp and a valid hmac', async () => {
    const f = await createFixture(t);
    const jar = await login(t, f);
    const res = await t.app.inject({
      method: 'GET',
      url: `/admin/apps/${f.clientId}/install`,
      headers: { host: f.host, cookie: jar.header() },
    });
    expect(res.statusCode).toBe(303);
    const url = new URL(res.headers.location as string);
    expect(url.origin + url.pathname).toBe(f.appUrl);
    expect(url.searchParams.get('shop')).toBe(`${f.storeName}.localhost`);
    expect(url.searchParams.get('timestamp')).toBe(String(Math.floor(t.clock.now / 1000)));
    expect(verifyQueryString(url.search.slice(1), f.clientSecret)).toBe(true);
  });

  it('install link without a session goes to the login page and back', async () => {
    const f = await createFixture(t);
    const res = await t.app.inject({ method: 'GET', url: `/admin/apps/${f.clientId}/install`, headers: { host: f.host } });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/admin/login?return_to=${encodeURIComponent(`/admin/apps/${f.clientId}/install`)}`);
  });

  it('authorize without a session redirects to login, keeping the request', async () => {
    const f = await createFixture(t);
    const res = await t.app.inject({ method: 'GET', url: authorizeUrl(f), headers: { host: f.host } });
    expect(res.statusCode).toBe(303);
    expect(decodeURIComponent(res.headers.location as string)).toContain('/admin/login?return_to=/admin/oauth/authorize?client_id=');
  });

  it('consent page names the app, the store and every scope, with "Install app" and "Cancel"', async () => {
    const f = await createFixture(t);
    const jar = await login(t, f);
    const page = await t.app.inject({ method: 'GET', url: authorizeUrl(f), headers: { host: f.host, cookie: jar.header() } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Install App');
    expect(page.body).toContain(f.storeName);
    expect(page.body).toContain('See your products');
    expect(page.body).toContain('See, create and change your orders');
    expect(page.body).toContain('>Install app</button>');
    expect(page.body).toContain('>Cancel</button>');
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['referrer-policy']).toBe('no-referrer');
  });

  it('redirects with code, shop, state, timestamp and hmac; the code exchanges for the token record', async () => {
    const f = await createFixture(t);
    const url = await consent(t, f);
    expect(url.origin + url.pathname).toBe(f.redirectUri);
    // A new app gets iss, signed with the rest (turning it off is tested in discovery-and-headers).
    expect([...url.searchParams.keys()].sort()).toEqual(['code', 'hmac', 'iss', 'shop', 'state', 'timestamp']);
    expect(url.searchParams.get('iss')).toBe(`http://${f.storeName}.localhost:8080`);
    expect(url.searchParams.get('state')).toBe('st-123');
    expect(url.searchParams.get('shop')).toBe(`${f.storeName}.localhost`);
    expect(verifyQueryString(url.search.slice(1), f.clientSecret)).toBe(true);
    expect(url.searchParams.get('code')).toMatch(/^sg_ac_[A-Za-z0-9_-]+$/);

    const res = await tokenRequest(t, f, {
      client_id: f.clientId,
      client_secret: f.clientSecret,
      code: url.searchParams.get('code')!,
      grant_type: 'authorization_code',
      redirect_uri: f.redirectUri,
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.pragma).toBe('no-cache');
    const body = res.json();
    expect(body).toMatchObject({ token_type: 'Bearer', scope: 'read_products write_orders', store_name: f.storeName, expires_in: 3600 });
    expect(body.access_token).toMatch(/^sg_at_/);
    expect(body.refresh_token).toMatch(/^sg_rt_/);
    expect(body.expires_at).toBe(Math.floor(t.clock.now / 1000) + 3600);
    expect(typeof body.store_id).toBe('string');
  });

  it('signs a state of every URL-safe character, up to 1024 of them, as sent', async () => {
    const f = await createFixture(t);
    const jar = await login(t, f);
    for (const state of ['ABCXYZabcxyz0189-._~', 'v1.eyJuIjoiYWJjIn0.c2ln', 'a'.repeat(1024)]) {
      const url = await consent(t, f, { state }, jar);
      expect(url.searchParams.get('state')).toBe(state);
      expect(url.searchParams.get('code')).toMatch(/^sg_ac_/);
      expect(verifyQueryString(url.search.slice(1), f.clientSecret)).toBe(true);
    }
  });

  it('accepts a JSON body and HTTP Basic client credentials', async () => {
    const f = await createFixture(t);
    const json = await tokenRequest(
      t,
      f,
      {
        client_id: f.clientId,
        client_secret: f.clientSecret,
        code: await codeFor(t, f),
        grant_type: 'authorization_code',
        redirect_uri: f.redirectUri,
      },
      'json',
    );
    expect(json.statusCode).toBe(200);
    const basic = await t.app.inject({
      method: 'POST',
      url: '/admin/oauth/token',
      headers: {
        host: f.host,
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${f.clientId}:${f.clientSecret}`).toString('base64')}`,
      },
      payload: formBody({ code: await codeFor(t, f), grant_type: 'authorization_code', redirect_uri: f.redirectUri }),
    });
    expect(basic.statusCode).toBe(200);
    expect(basic.json().access_token).toMatch(/^sg_at_/);
  });

  it('Cancel sends access_denied with the state back to the app', async () => {
    const f = await createFixture(t);
    const jar = await login(t, f);
    const page = await t.app.inject({ method: 'GET', url: authorizeUrl(f), headers: { host: f.host, cookie: jar.header() } });
    jar.take(page);
    const fields: Record<string, string> = {};
    for (const m of page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]!] = m[2]!;
    const res = await t.app.inject({
      method: 'POST',
      url: '/admin/oauth/authorize',
      headers: { host: f.host, cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: formBody({ ...fields, decision: 'cancel' }),
    });
    expect(res.statusCode).toBe(303);
    const url = new URL(res.headers.location as string);
    expect(url.searchParams.get('error')).toBe('access_denied');
    expect(url.searchParams.get('state')).toBe('st-123');
    expect(url.searchParams.get('iss')).toBe(`http://${f.storeName}.localhost:8080`);
    expect(url.searchParams.get('code')).toBeNull();
    expect(
      await t.services.apps.findInstallation(
        (await t.services.accounts.findStoreByName(f.storeName))!.id,
        (await t.services.apps.findByClientId(f.clientId))!.id,
      ),
    ).toBeUndefined();
  });

  it('skips the consent page when the request is the grant as it stands, and shows the change otherwise', async () => {
    const f = await createFixture(t);
    const jar = await login(t, f);
    await consent(t, f, {}, jar);
    // The same grant in another order, with a read scope its write scope already implies.
    const again = await t.app.inject({
      method: 'GET',
      url: authorizeUrl(f, { scope: 'write_orders read_orders read_products', state: 's2' }),
      headers: { host: f.host, cookie: jar.header() },
    });
    expect(again.statusCode).toBe(303);
    const url = new URL(again.headers.location as string);
    expect(url.searchParams.get('code')).toMatch(/^sg_ac_/);
    expect(url.searchParams.get('state')).toBe('s2');
    const more = await t.app.inject({
      method: 'GET',
      url: authorizeUrl(f, { scope: 'read_products write_orders read_customers' }),
      headers: { host: f.host, cookie: jar.header() },
    });
    expect(more.statusCode).toBe(200);
    expect(more.body).toContain('already installed');
    expect(more.body).toContain('read_customers, new');
    // Fewer scopes: the page names what the app gives back.
    const fewer = await t.app.inject({
      method: 'GET',
      url: authorizeUrl(f, { scope: 'read_products' }),
      headers: { host: f.host, cookie: jar.header() },
    });
    expect(fewer.statusCode).toBe(200);
    expect(fewer.body).toContain('write_orders, given back');
  });

  it('shrinking the granted scopes ends every earlier token family', async () => {
    const f = await createFixture(t);
    const jar = await login(t, f);
    const first = await exchange(t, f, new URL(await consent(t, f, {}, jar)).searchParams.get('code')!);
    expect(await accessTokenActive(t, first.access_token)).toBe(true);
    // A narrower request shows the consent page naming what is given back; confirming shrinks the grant.
    const narrower = await exchange(t, f, (await consent(t, f, { scope: 'read_products' }, jar)).searchParams.get('code')!);
    expect(narrower.scope).toBe('read_products');
    expect(await accessTokenActive(t, first.access_token)).toBe(false);
    // Growing again ends no family.
    const changed = await consent(t, f, { scope: 'read_products read_customers' }, jar);
    expect(await accessTokenActive(t, narrower.access_token)).toBe(true);
    const second = await exchange(t, f, changed.searchParams.get('code')!);
    expect(second.scope).toBe('read_customers read_products');
    // Consenting to a list without read_customers (and with a new scope) shrinks it again.
    await consent(t, f, { scope: 'read_products write_orders' }, jar);
    expect(await accessTokenActive(t, narrower.access_token)).toBe(false);
    expect(await accessTokenActive(t, second.access_token)).toBe(false);
    expect((await refreshRequest(t, f, first.refresh_token)).json().error).toBe('invalid_grant');
  });

  it('each code exchange starts its own family; earlier ones stay valid', async () => {
    const f = await createFixture(t);
    const a = await exchange(t, f, await codeFor(t, f));
    const b = await exchange(t, f, await codeFor(t, f));
    expect(await accessTokenActive(t, a.access_token)).toBe(true);
    expect(await accessTokenActive(t, b.access_token)).toBe(true);
  });

  it('refresh rotates; a retry gets the same pair while it is unused; reuse after the new pair is used revokes the family', async () => {
    const f = await createFixture(t);
    const first = await exchange(t, f, await codeFor(t, f));
    const r1 = await refreshRequest(t, f, first.refresh_token);
    expect(r1.statusCode).toBe(200);
    const next = r1.json();
    expect(next.refresh_token).not.toBe(first.refresh_token);
    expect(next.access_token).not.toBe(first.access_token);
    t.clock.advance(10_000);
    const retry = await refreshRequest(t, f, first.refresh_token);
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toMatchObject({ access_token: next.access_token, refresh_token: next.refresh_token, expires_at: next.expires_at });
    expect((await api(t, f, next.access_token, 'GET', '/openapi/2026-01/products')).statusCode).toBe(200);
    const reuse = await refreshRequest(t, f, first.refresh_token);
    expect(reuse.statusCode).toBe(400);
    expect(reuse.json()).toEqual({ error: 'invalid_grant', error_description: 'refresh token was already used' });
    expect(await accessTokenActive(t, next.access_token)).toBe(false);
    expect((await refreshRequest(t, f, next.refresh_token)).json().error).toBe('invalid_grant');
  });

  it('the successor keeps rotating, and omitting redirect_uri on refresh is allowed', async () => {
    const f = await createFixture(t);
    let pair = await exchange(t, f, await codeFor(t, f));
    for (let i = 0; i < 3; i++) {
      t.clock.advance(60_000);
      const res = await tokenRequest(t, f, {
        client_id: f.clientId,
        client_secret: f.clientSecret,
        refresh_token: pair.refresh_token,
        grant_type: 'refresh_token',
      });
      expect(res.statusCode).toBe(200);
      pair = res.json();
      expect(pair.expires_at).toBe(Math.floor(t.clock.now / 1000) + 3600);
    }
    expect(await accessTokenActive(t, pair.access_token)).toBe(true);
  });

  it('access tokens expire after an hour; refresh tokens after 90 days unused', async () => {
    const f = await createFixture(t);
    const pair = await exchange(t, f, await codeFor(t, f));
    t.clock.advance(3600_000);
    expect(await accessTokenActive(t, pair.access_token)).toBe(false);
    t.clock.advance(90 * 86_400_000);
    const res = await refreshRequest(t, f, pair.refresh_token);
    expect(res.json()).toEqual({ error: 'invalid_grant', error_description: 'refresh token has expired' });
  });

  it('a code expires after 60 s', async () => {
    const f = await createFixture(t);
    const code = await codeFor(t, f);
    t.clock.advance(60_000);
    const res = await tokenRequest(t, f, {
      client_id: f.clientId,
      client_secret: f.clientSecret,
      code,
      grant_type: 'authorization_code',
      redirect_uri: f.redirectUri,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_grant', error_description: 'authorization code has expired' });
  });

  it('a replayed code is refused and revokes the tokens it issued', async () => {
    const f = await createFixture(t);
    const code = await codeFor(t, f);
    const pair = await exchange(t, f, code);
    const replay = await tokenRequest(t, f, {
      client_id: f.clientId,
      client_secret: f.clientSecret,
      code,
      grant_type: 'authorization_code',
      redirect_uri: f.redirectUri,
    });
    expect(replay.statusCode).toBe(400);
    expect(replay.json().error).toBe('invalid_grant');
    expect(await accessTokenActive(t, pair.access_token)).toBe(false);
    expect((await refreshRequest(t, f, pair.refresh_token)).json().error).toBe('invalid_grant');
  });

  it('honours PKCE S256 when the app sends a code_challenge', async () => {
    const f = await createFixture(t);
    const verifier = 'a'.repeat(20) + 'B'.repeat(23) + '-._~';
    const code = await codeFor(t, f, { code_challenge: pkceChallenge(verifier), code_challenge_method: 'S256' });
    const base = {
      client_id: f.clientId,
      client_secret: f.clientSecret,
      code,
      grant_type: 'authorization_code',
      redirect_uri: f.redirectUri,
    };
    expect((await tokenRequest(t, f, { ...base, code_verifier: 'wrong-verifier' })).json().error).toBe('invalid_grant');
    // The failed attempt did not burn the code? It did not claim it: verification happens before the claim.
    const ok = await tokenRequest(t, f, { ...base, code_verifier: verifier });
    expect(ok.statusCode).toBe(200);
  });

  it('refuses a PKCE verifier outside RFC 7636 section 4.1 with invalid_grant, even when it hashes to the challenge', async () => {
    const f = await createFixture(t);
    const base = { client_id: f.clientId, client_secret: f.clientSecret, grant_type: 'authorization_code', redirect_uri: f.redirectUri };
    for (const verifier of ['short', 'a'.repeat(129), `${'a'.repeat(42)}+`]) {
      const code = await codeFor(t, f, { code_challenge: pkceChallenge(verifier), code_challenge_method: 'S256' });
      const res = await tokenRequest(t, f, { ...base, code, code_verifier: verifier });
      expect([res.statusCode, res.json().error], verifier).toEqual([400, 'invalid_grant']);
    }
  });

  it('revocation endpoint (RFC 7009): refresh token revokes its family; unknown tokens answer 200', async () => {
    const f = await createFixture(t);
    const pair = await exchange(t, f, await codeFor(t, f));
    const revoke = (token: string) =>
      t.app.inject({
        method: 'POST',
        url: '/admin/oauth/revoke',
        headers: { host: f.host, 'content-type': 'application/x-www-form-urlencoded' },
        payload: formBody({ client_id: f.clientId, client_secret: f.clientSecret, token }),
      });
    expect((await revoke('sg_rt_unknown')).statusCode).toBe(200);
    expect(await accessTokenActive(t, pair.access_token)).toBe(true);
    const res = await revoke(pair.refresh_token);
    expect(res.statusCode).toBe(200);
    expect(await accessTokenActive(t, pair.access_token)).toBe(false);
    const other = await exchange(t, f, await codeFor(t, f));
    expect((await revoke(other.access_token)).statusCode).toBe(200);
    expect(await accessTokenActive(t, other.access_token)).toBe(false);
    expect((await refreshRequest(t, f, other.refresh_token)).statusCode).toBe(200);
  });

  it('logout ends the session on the server', async () => {
    const f = await createFixture(t);
    const jar = await login(t, f);
    const admin = await t.app.inject({ method: 'GET', url: '/admin', headers: { host: f.host, cookie: jar.header() } });
    expect(admin.statusCode).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(admin.body)![1]!;
    const stolen = jar.header();
    jar.take(admin);
    const out = await t.app.inject({
      method: 'POST',
      url: '/admin/logout',
      headers: { host: f.host, cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: formBody({ _csrf: csrf }),
    });
    expect(out.statusCode).toBe(303);
    const after = await t.app.inject({ method: 'GET', url: '/admin', headers: { host: f.host, cookie: stolen } });
    expect(after.statusCode).toBe(303);
    expect(after.headers.location).toContain('/admin/login');
  });

  it("a merchant session of one store does not open another store's admin", async () => {
    const a = await createFixture(t);
    const b = await createFixture(t);
    const jar = await login(t, a);
    const res = await t.app.inject({ method: 'GET', url: '/admin', headers: { host: b.host, cookie: jar.header() } });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toContain('/admin/login');
  });
});
