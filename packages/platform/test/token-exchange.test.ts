// Access without a redirect of the app's own: the launch token the store admin opens an installed
// app with, its exchange at the token endpoint (RFC 8693) for the store's access or for online
// access bound to the merchant, online access through the code grant, and the end of online access
// at the merchant's logout. On both databases.
import { createHmac } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  appToken,
  consent,
  createFixture,
  createTestPlatform,
  DIALECTS,
  type Fixture,
  formBody,
  type Jar,
  login,
  tokenRequest,
  type TestPlatform,
  csrfFrom,
} from './harness.ts';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
const OFFLINE = 'urn:storegate:params:oauth:token-type:offline-access-token';
const ONLINE = 'urn:storegate:params:oauth:token-type:online-access-token';

/** "Open" in the store admin: the signed redirect to the App URL. */
async function openApp(t: TestPlatform, f: Fixture, jar: Jar): Promise<URL> {
  const res = await t.app.inject({
    method: 'GET',
    url: `/admin/apps/${f.clientId}/install`,
    headers: { host: f.host, cookie: jar.header() },
  });
  if (res.statusCode !== 303) throw new Error(`open: ${res.statusCode} ${res.body}`);
  expect(res.headers['cache-control']).toBe('no-store');
  return new URL(res.headers.location as string);
}

function exchangeRequest(t: TestPlatform, f: Fixture, idToken: string, extra: Record<string, string> = {}, host = f.host) {
  return t.app.inject({
    method: 'POST',
    url: '/admin/oauth/token',
    headers: { host, 'content-type': 'application/x-www-form-urlencoded' },
    payload: formBody({
      grant_type: TOKEN_EXCHANGE,
      client_id: f.clientId,
      client_secret: f.clientSecret,
      subject_token: idToken,
      subject_token_type: ID_TOKEN,
      ...extra,
    }),
  });
}

/** What clients of this platform family compute over a signed query: HMAC-SHA256 of the sorted raw pairs but hmac. */
function queryHmac(url: URL, secret: string): string {
  const message = [...url.searchParams]
    .filter(([k]) => k !== 'hmac')
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  return createHmac('sha256', secret).update(message).digest('hex');
}

async function launchToken(t: TestPlatform, f: Fixture, jar?: Jar): Promise<string> {
  const url = await openApp(t, f, jar ?? (await login(t, f)));
  const token = url.searchParams.get('id_token');
  if (!token) throw new Error(`no id_token in ${url}`);
  return token;
}

describe.each(DIALECTS)('launch tokens and token exchange on %s', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect);
  });
  afterAll(async () => t.close());

  it('opening an installed app carries a signed launch token for the merchant; opening one not installed carries none', async () => {
    const f = await createFixture(t);
    const jar = await login(t, f);
    const before = await openApp(t, f, jar);
    expect([...before.searchParams.keys()].sort()).toEqual(['hmac', 'shop', 'timestamp']);

    await appToken(t, f);
    const url = await openApp(t, f, jar);
    expect(url.origin + url.pathname).toBe(f.appUrl);
    expect([...url.searchParams.keys()].sort()).toEqual(['hmac', 'id_token', 'shop', 'timestamp']);
    expect(url.searchParams.get('hmac')).toBe(queryHmac(url, f.clientSecret));
    const token = url.searchParams.get('id_token')!;
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'JWT' });
    const claims = decodeJwt(token);
    const store = await t.services.accounts.findStoreByName(f.storeName);
    const issuer = `http://${f.storeName}.localhost:8080`;
    expect(claims).toEqual({
      iss: issuer,
      dest: issuer,
      aud: f.clientId,
      sub: String(store!.owner_merchant_id),
      iat: Math.floor(t.clock.now / 1000),
      nbf: Math.floor(t.clock.now / 1000),
      exp: Math.floor(t.clock.now / 1000) + 60,
      jti: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
    });
    // Never kept by a log: the launch redirect is logged without its query.
    expect(t.logs.join('\n')).not.toContain(token);
  });

  it('exchanges a launch token once for the store access, which calls the API; a second exchange is invalid_grant', async () => {
    const f = await createFixture(t);
    await appToken(t, f);
    const idToken = await launchToken(t, f);
    const res = await exchangeRequest(t, f, idToken, { requested_token_type: OFFLINE });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body).toMatchObject({
      token_type: 'Bearer',
      scope: 'read_products write_orders',
      store_name: f.storeName,
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      expires_in: 3600,
    });
    expect(body.access_token).toMatch(/^sg_at_/);
    expect(body.refresh_token).toMatch(/^sg_rt_/);
    expect(body.associated_user).toBeUndefined();
    expect((await api(t, f, body.access_token, 'GET', '/openapi/2026-01/products?limit=1')).statusCode).toBe(200);

    const again = await exchangeRequest(t, f, idToken);
    expect(again.statusCode).toBe(400);
    expect(again.json()).toEqual({ error: 'invalid_grant', error_description: 'launch token was already exchanged' });
    expect(again.body).not.toContain(idToken);
  });

  it('exchanges for online access bound to the merchant: associated_user, no refresh token, a day at most, ended by their logout', async () => {
    const f = await createFixture(t);
    await appToken(t, f);
    const jar = await login(t, f);
    const res = await exchangeRequest(t, f, await launchToken(t, f, jar), { requested_token_type: ONLINE });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const store = await t.services.accounts.findStoreByName(f.storeName);
    expect(body).toEqual({
      token_type: 'Bearer',
      access_token: expect.stringMatching(/^sg_at_/),
      expires_at: Math.floor(t.clock.now / 1000) + 86_400,
      expires_in: 86_400,
      scope: 'read_products write_orders',
      store_id: String(store!.id),
      store_name: f.storeName,
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      associated_user_scope: 'read_products write_orders',
      associated_user: { id: String(store!.owner_merchant_id), email: f.email },
    });
    // The store's own access the app held before is not touched by the merchant's logout.
    const offline = await appToken(t, f);
    expect((await api(t, f, body.access_token, 'GET', '/openapi/2026-01/products?limit=1')).statusCode).toBe(200);

    const page = await t.app.inject({ method: 'GET', url: '/admin', headers: { host: f.host, cookie: jar.header() } });
    const logout = await t.app.inject({
      method: 'POST',
      url: '/admin/logout',
      headers: { host: f.host, cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: formBody({ _csrf: csrfFrom(page.body) }),
    });
    expect(logout.statusCode).toBe(303);
    expect((await api(t, f, body.access_token, 'GET', '/openapi/2026-01/products?limit=1')).statusCode).toBe(401);
    expect((await api(t, f, offline, 'GET', '/openapi/2026-01/products?limit=1')).statusCode).toBe(200);
  });

  it('online access ends after a day', async () => {
    const f = await createFixture(t);
    await appToken(t, f);
    const res = await exchangeRequest(t, f, await launchToken(t, f), { requested_token_type: ONLINE });
    const token = res.json().access_token as string;
    t.clock.advance(86_400_000 - 1000);
    expect((await api(t, f, token, 'GET', '/openapi/2026-01/products?limit=1')).statusCode).toBe(200);
    t.clock.advance(2000);
    expect((await api(t, f, token, 'GET', '/openapi/2026-01/products?limit=1')).statusCode).toBe(401);
  });

  it('refuses a launch token that expired, was changed, is of another app or store, or whose app was uninstalled; nothing is used up', async () => {
    const f = await createFixture(t);
    const other = await createFixture(t);
    await appToken(t, f);
    await appToken(t, other);
    const refused = async (res: Awaited<ReturnType<typeof exchangeRequest>>, description: string) => {
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_grant', error_description: description });
    };

    const expiring = await launchToken(t, f);
    t.clock.advance(66_000);
    await refused(await exchangeRequest(t, f, expiring), 'launch token has expired');

    const idToken = await launchToken(t, f);
    const [h, p, s] = idToken.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...decodeJwt(idToken), sub: '999' })).toString('base64url')}.${s}`;
    await refused(await exchangeRequest(t, f, forged), 'launch token signature does not match');
    await refused(await exchangeRequest(t, f, `${h}.${p}`), 'subject_token is not a launch token');
    // Another app's credentials: the token names the app it was issued for.
    await refused(
      await exchangeRequest(t, { ...f, clientId: other.clientId, clientSecret: other.clientSecret }, idToken),
      'launch token signature does not match',
    );
    // Presented at another store: issued by this one.
    await refused(await exchangeRequest(t, f, idToken, {}, other.host), 'launch token is for another store');
    // An unsigned token is no launch token, whatever it claims.
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${p}.`;
    expect((await exchangeRequest(t, f, none)).json().error).toBe('invalid_grant');

    const badType = await exchangeRequest(t, f, idToken, { subject_token_type: 'urn:ietf:params:oauth:token-type:jwt' });
    expect(badType.json()).toEqual({
      error: 'invalid_request',
      error_description: 'subject_token_type must be urn:ietf:params:oauth:token-type:id_token',
    });
    const badWanted = await exchangeRequest(t, f, idToken, { requested_token_type: 'urn:x:refresh' });
    expect(badWanted.json().error).toBe('invalid_request');
    expect((await exchangeRequest(t, f, idToken, { subject_token: '' })).json()).toEqual({
      error: 'invalid_request',
      error_description: 'subject_token is required',
    });
    const wrongSecret = await exchangeRequest(t, { ...f, clientSecret: `${f.clientSecret}x` }, idToken);
    expect(wrongSecret.statusCode).toBe(401);
    expect(wrongSecret.json().error).toBe('invalid_client');

    // None of the refusals used the token up; after the uninstall it is refused, and it still was not used.
    const store = await t.services.accounts.findStoreByName(f.storeName);
    const app = await t.services.apps.findByClientId(f.clientId);
    await t.services.apps.uninstall(store!.id, app!.id);
    await refused(await exchangeRequest(t, f, idToken), 'the app is not installed in this store');
    await appToken(t, f);
    expect((await exchangeRequest(t, f, idToken)).statusCode).toBe(200);
  });

  it('during a secret rotation a launch token signed with either secret is exchanged', async () => {
    const f = await createFixture(t);
    await appToken(t, f);
    const app = (await t.services.apps.findByClientId(f.clientId))!;
    const { secret: fresh } = await t.services.rotations.rotateClientSecret(app.id);
    // The platform signs with the secret apps that have not deployed the new one still hold.
    const issued = await launchToken(t, f);
    expect((await exchangeRequest(t, { ...f, clientSecret: fresh }, issued)).statusCode).toBe(200);
    const now = Math.floor(t.clock.now / 1000);
    const issuer = `http://${f.storeName}.localhost:8080`;
    const store = await t.services.accounts.findStoreByName(f.storeName);
    const signedWithNew = await new SignJWT({ dest: issuer })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(issuer)
      .setAudience(f.clientId)
      .setSubject(String(store!.owner_merchant_id))
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + 60)
      .setJti('rotation-test-token-id-1')
      .sign(new TextEncoder().encode(fresh));
    expect((await exchangeRequest(t, { ...f, clientSecret: fresh }, signedWithNew)).statusCode).toBe(200);
    // A token that claims a longer life than a launch token has is refused, even correctly signed.
    const longLived = await new SignJWT({ dest: issuer })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(issuer)
      .setAudience(f.clientId)
      .setSubject(String(store!.owner_merchant_id))
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + 3600)
      .setJti('rotation-test-token-id-2')
      .sign(new TextEncoder().encode(fresh));
    expect((await exchangeRequest(t, { ...f, clientSecret: fresh }, longLived)).json()).toEqual({
      error: 'invalid_grant',
      error_description: 'launch token must expire within 60 seconds of being issued',
    });
  });

  it('the code grant gives online access when the authorization asks for grant_options[]=per-user', async () => {
    const f = await createFixture(t);
    const jar = await login(t, f);
    const url = await consent(t, f, { 'grant_options[]': 'per-user' }, jar);
    const res = await tokenRequest(t, f, {
      client_id: f.clientId,
      client_secret: f.clientSecret,
      code: url.searchParams.get('code')!,
      grant_type: 'authorization_code',
      redirect_uri: f.redirectUri,
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.refresh_token).toBeUndefined();
    expect(body.associated_user).toEqual({ id: expect.stringMatching(/^[0-9]+$/), email: f.email });
    expect(body.expires_in).toBe(86_400);
    expect((await api(t, f, body.access_token, 'GET', '/openapi/2026-01/products?limit=1')).statusCode).toBe(200);
    // The code is single use like any other.
    const again = await tokenRequest(t, f, {
      client_id: f.clientId,
      client_secret: f.clientSecret,
      code: url.searchParams.get('code')!,
      grant_type: 'authorization_code',
      redirect_uri: f.redirectUri,
    });
    expect(again.json().error).toBe('invalid_grant');
    expect((await api(t, f, body.access_token, 'GET', '/openapi/2026-01/products?limit=1')).statusCode).toBe(401);

    const bad = await t.app.inject({
      method: 'GET',
      url: `/admin/oauth/authorize?${new URLSearchParams({
        client_id: f.clientId,
        scope: 'read_products',
        redirect_uri: f.redirectUri,
        response_type: 'code',
        state: 'st-1',
        'grant_options[]': 'per-shop',
      })}`,
      headers: { host: f.host, cookie: jar.header() },
    });
    expect(bad.statusCode).toBe(303);
    expect(new URL(bad.headers.location as string).searchParams.get('error')).toBe('invalid_request');
  });
});
