// Managed install: a launch token exchanged for the shop's offline token or a merchant's online
// token, stored apart; online sessions never refreshed; the per-user code grant; fixed clock and
// secrets throughout.
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import type { AppConfig } from '../src/config/app-config.ts';
import type { Logger } from '../src/logging/redacting-logger.ts';
import { memorySessionStorage } from '../src/session/memory-session-storage.ts';
import { fakeFetch, fixedRandom, frozenClock, json, recordingSleep, type FakeHandler } from './support/fake-fetch.ts';
import { fakePlatform } from './support/fake-platform.ts';
import { launchToken } from './support/launch-tokens.ts';

const SECRET = 'sg_cs_current-secret-0001';
const PREVIOUS = 'sg_cs_previous-secret-0001';
const CLIENT_ID = 'sg_ci_app1';
const SHOP = 'demo.localhost';
const NOW = 1_700_000_000;
const REDIRECT = 'https://app.example/auth/callback';

function setup(extra: Partial<AppConfig> = {}) {
  const clock = frozenClock(NOW * 1000);
  const platform = fakePlatform({ clientId: CLIENT_ID, clientSecret: SECRET, redirectUri: REDIRECT, now: clock.now });
  const sessionStorage = memorySessionStorage();
  const lines: string[] = [];
  const record = (level: string) => (message: string, details?: Record<string, unknown>) =>
    void lines.push(`${level} ${message} ${JSON.stringify(details ?? {})}`);
  const logger: Logger = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
  const { sleep, delays } = recordingSleep();
  const app = createApp({
    clientId: CLIENT_ID,
    clientSecret: SECRET,
    scopes: 'read_products',
    redirectUri: REDIRECT,
    fetch: platform.fetch,
    clock,
    sleep,
    randomBytes: fixedRandom(),
    sessionStorage,
    logger,
    ...extra,
  });
  const token = (options: { sub?: string; jti?: string; secret?: string; shop?: string } = {}) =>
    launchToken(options.secret ?? SECRET, {
      clientId: CLIENT_ID,
      shop: options.shop ?? SHOP,
      iat: Math.floor(clock.now() / 1000),
      sub: options.sub,
      jti: options.jti,
    });
  return { app, clock, platform, sessionStorage, token, lines, delays };
}

describe('auth.tokenExchange (offline)', () => {
  it('posts an RFC 8693 token exchange to the shop, stores the offline session under the shop and returns it', async () => {
    const { app, platform, sessionStorage, token } = setup();
    const idToken = token();
    const session = await app.auth.tokenExchange({ idToken });
    const calls = platform.tokenCalls();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url).toBe('http://demo.localhost:8080/admin/oauth/token');
    expect(JSON.parse(calls[0]!.body!)).toEqual({
      client_id: CLIENT_ID,
      client_secret: SECRET,
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: idToken,
      subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      requested_token_type: 'urn:storegate:params:oauth:token-type:offline-access-token',
    });
    expect(session).toMatchObject({ id: SHOP, shop: SHOP, refreshToken: expect.stringMatching(/^sg_rt_/), expiresAt: NOW + 3600 });
    expect(session.online).toBeUndefined();
    expect(await sessionStorage.get(SHOP)).toMatchObject({ id: SHOP, accessToken: session.accessToken });
    expect(await app.getAccessToken(SHOP)).toBe(session.accessToken);
    const products = await app.client(SHOP).get<{ data: Array<{ title: string }> }>('products');
    expect(products.data[0]!.title).toBe('Hat');
  });

  it('accepts a launch token signed with the previous secret during a rotation, and still authenticates with the current one', async () => {
    const { app, platform, token } = setup({ clientSecret: [SECRET, PREVIOUS] });
    await app.auth.tokenExchange({ idToken: token({ secret: PREVIOUS }) });
    expect(JSON.parse(platform.tokenCalls()[0]!.body!)).toMatchObject({ client_secret: SECRET });
  });

  it('sends nothing for a token that does not verify, or that is for another shop than the one named', async () => {
    const { app, platform, token } = setup();
    await expect(app.auth.tokenExchange({ idToken: token({ secret: 'sg_cs_forged' }) })).rejects.toMatchObject({
      code: 'LAUNCH_TOKEN_SIGNATURE_INVALID',
    });
    await expect(app.auth.tokenExchange({ idToken: token(), shop: 'other.localhost' })).rejects.toMatchObject({
      code: 'LAUNCH_TOKEN_ISSUER_INVALID',
    });
    await expect(app.auth.tokenExchange({ idToken: token({ shop: 'demo.evil.example' }) })).rejects.toMatchObject({
      code: 'LAUNCH_TOKEN_ISSUER_INVALID',
    });
    expect(platform.calls).toHaveLength(0);
  });

  it('a refused exchange (jti already used) is a TokenExchangeError and stores nothing', async () => {
    const { app, sessionStorage, token } = setup();
    const idToken = token();
    const first = await app.auth.tokenExchange({ idToken });
    await sessionStorage.delete(SHOP);
    const error = await app.auth.tokenExchange({ idToken }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TOKEN_EXCHANGE_FAILED', status: 400, oauthError: 'invalid_grant' });
    expect((error as Error).message).toMatch(/already exchanged/);
    expect((error as Error).message).not.toContain(idToken);
    expect(await sessionStorage.get(SHOP)).toBeUndefined();
    expect(first.accessToken).toMatch(/^sg_at_/);
  });

  it('retries a 503 with backoff, then stores the answer', async () => {
    let calls = 0;
    const handler: FakeHandler = async () => {
      calls++;
      if (calls === 1) return json({ error: 'temporarily_unavailable' }, 503);
      return json({ access_token: 'sg_at_x', refresh_token: 'sg_rt_x', expires_in: 3600, scope: 'read_products' });
    };
    const { app, token, delays } = setup({ fetch: fakeFetch(handler).fetch });
    const session = await app.auth.tokenExchange({ idToken: token() });
    expect(calls).toBe(2);
    expect(delays).toHaveLength(1);
    expect(session).toMatchObject({ accessToken: 'sg_at_x', refreshToken: 'sg_rt_x', expiresAt: NOW + 3600 });
  });

  it('refuses an online answer to an offline request, and an offline answer to an online one', async () => {
    const online = { access_token: 'sg_at_o', expires_in: 600, scope: 'read_products', associated_user: { id: '1', email: 'a@b.c' } };
    const offline = { access_token: 'sg_at_f', refresh_token: 'sg_rt_f', expires_in: 3600, scope: 'read_products' };
    for (const [answer, online_] of [
      [online, false],
      [offline, true],
      [{ ...online, associated_user: { id: '2', email: 'x@y.z' } }, true],
    ] as const) {
      const { app, token, sessionStorage } = setup({ fetch: fakeFetch(() => json(answer)).fetch });
      await expect(app.auth.tokenExchange({ idToken: token(), online: online_ })).rejects.toMatchObject({ code: 'TOKEN_EXCHANGE_FAILED' });
      expect(await sessionStorage.get(SHOP)).toBeUndefined();
    }
  });

  it('never logs the launch token or the tokens it was exchanged for', async () => {
    const { app, token, lines } = setup();
    const idToken = token();
    const session = await app.auth.tokenExchange({ idToken });
    await app.auth.tokenExchange({ idToken }).catch(() => undefined);
    await app.auth.tokenExchange({ idToken: `${idToken}x` }).catch(() => undefined);
    const all = lines.join('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const secret of [idToken, idToken.split('.')[2]!, session.accessToken, session.refreshToken!, SECRET])
      expect(all).not.toContain(secret);
  });
});

describe('online sessions', () => {
  it('an online exchange stores the merchant session apart from the offline one, and the client uses it', async () => {
    const { app, platform, sessionStorage, token } = setup();
    const offline = await app.auth.tokenExchange({ idToken: token({ jti: 'offline-jti-0000000000' }) });
    const online = await app.auth.tokenExchange({ idToken: token({ sub: '7', jti: 'online-jti-00000000000' }), online: true });
    expect(JSON.parse(platform.tokenCalls()[1]!.body!)).toMatchObject({
      requested_token_type: 'urn:storegate:params:oauth:token-type:online-access-token',
    });
    expect(online).toMatchObject({
      id: 'online_demo.localhost_7',
      shop: SHOP,
      online: true,
      refreshToken: null,
      expiresAt: NOW + 86_400,
      associatedUser: { id: '7', email: 'merchant7@example.com' },
      associatedUserScope: 'read_products',
    });
    expect(await sessionStorage.get(SHOP)).toMatchObject({ accessToken: offline.accessToken });
    expect(await sessionStorage.get('online_demo.localhost_7')).toMatchObject({ accessToken: online.accessToken });
    expect(await app.getSession(SHOP)).toMatchObject({ accessToken: offline.accessToken });
    expect(await app.getSession(SHOP, { userId: '7' })).toMatchObject({ accessToken: online.accessToken });
    expect(await app.getSession(SHOP, { userId: '8' })).toBeUndefined();
    expect(await app.getAccessToken(SHOP, { userId: '7' })).toBe(online.accessToken);
    const seen = await app.client(SHOP, { userId: '7' }).get<{ data: Array<{ title: string }> }>('products');
    expect(seen.data[0]!.title).toBe('Hat seen by 7');
    expect(platform.calls.at(-1)!.headers.get('access-token')).toBe(online.accessToken);
  });

  it('an expired online session reads as absent and is never refreshed', async () => {
    const { app, clock, platform, token } = setup();
    await app.auth.tokenExchange({ idToken: token({ sub: '7' }), online: true });
    const before = platform.calls.length;
    clock.advance(86_400 - 61); // just outside the 60 s refresh margin: still usable
    expect(await app.getSession(SHOP, { userId: '7' })).toBeDefined();
    clock.advance(2);
    expect(await app.getSession(SHOP, { userId: '7' })).toBeUndefined();
    await expect(app.getAccessToken(SHOP, { userId: '7' })).rejects.toMatchObject({ code: 'SESSION_EXPIRED', shop: SHOP, userId: '7' });
    await expect(app.client(SHOP, { userId: '7' }).get('products')).rejects.toMatchObject({ code: 'SESSION_EXPIRED' });
    expect(platform.calls).toHaveLength(before);
  });

  it('a 401 on an online token is final: no refresh is attempted', async () => {
    const { app, platform, token } = setup();
    const online = await app.auth.tokenExchange({ idToken: token({ sub: '7' }), online: true });
    platform.expireAccessToken(online.accessToken);
    const before = platform.tokenCalls().length;
    await expect(app.client(SHOP, { userId: '7' }).get('products')).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    expect(platform.tokenCalls()).toHaveLength(before);
  });

  it('an online session found under the offline key (a storage that predates online sessions) is never refreshed', async () => {
    const { app, platform, sessionStorage } = setup();
    await sessionStorage.set({
      id: SHOP,
      shop: SHOP,
      accessToken: 'sg_at_online_old',
      refreshToken: 'sg_rt_should_never_be_used',
      expiresAt: NOW - 10,
      scope: 'read_products',
      online: true,
      associatedUser: { id: '7', email: 'm@example.com' },
    });
    await expect(app.getAccessToken(SHOP)).rejects.toMatchObject({ code: 'SESSION_EXPIRED' });
    expect(platform.calls).toHaveLength(0);
  });
});

describe('per-user code grant', () => {
  it('auth.begin({ online: true }) asks for grant_options[]=per-user; the callback stores the online session', async () => {
    const { app, platform, sessionStorage } = setup();
    const { url, state, cookie } = await app.auth.begin({ shop: SHOP, online: true });
    expect(new URL(url).searchParams.getAll('grant_options[]')).toEqual(['per-user']);
    const plain = await app.auth.begin({ shop: SHOP });
    expect(new URL(plain.url).searchParams.has('grant_options[]')).toBe(false);
    const query = await platform.redirectQuery(SHOP, state, {}, true);
    const session = await app.auth.callback({ url: `/auth/callback?${query}`, headers: { cookie: cookie.split(';')[0]! } });
    expect(session).toMatchObject({ id: 'online_demo.localhost_1', online: true, refreshToken: null, associatedUser: { id: '1' } });
    expect(await sessionStorage.get(SHOP)).toBeUndefined();
    expect(await app.getSession(SHOP, { userId: '1' })).toMatchObject({ accessToken: session.accessToken });
  });
});

describe('verifyInstallRequest with a launch token', () => {
  it('accepts id_token beside shop, timestamp and hmac (covered by the hmac) and hands it back unverified', async () => {
    const { app, platform, token } = setup();
    const idToken = token();
    const install = await app.verifyInstallRequest(await platform.installQuery(SHOP, idToken));
    expect(install).toMatchObject({ shop: SHOP, idToken, params: { id_token: idToken } });
    const plain = await app.verifyInstallRequest(await platform.installQuery(SHOP));
    expect(plain.idToken).toBeUndefined();
  });

  it('refuses an id_token added to a signed query (not covered by the hmac), and any other parameter', async () => {
    const { app, platform, token } = setup();
    const signed = await platform.installQuery(SHOP);
    await expect(app.verifyInstallRequest(`${signed}&id_token=${token()}`)).rejects.toMatchObject({ code: 'HMAC_INVALID' });
    await expect(app.verifyInstallRequest(`${signed}&session=1`)).rejects.toMatchObject({
      code: 'PARAMETER_UNEXPECTED',
      parameter: 'session',
    });
    const withToken = await platform.installQuery(SHOP, token());
    await expect(app.verifyInstallRequest(`${withToken}&id_token=x`)).rejects.toMatchObject({
      code: 'PARAMETER_INVALID',
      parameter: 'id_token',
    });
  });
});

describe('Bearer authentication', () => {
  it('apiAuthentication "bearer" sends Authorization: Bearer and no Access-Token; the default stays Access-Token', async () => {
    for (const mode of ['bearer', undefined] as const) {
      const { app, platform, token } = setup(mode ? { apiAuthentication: mode } : {});
      const session = await app.auth.tokenExchange({ idToken: token() });
      await app.client(SHOP).get('products');
      const headers = platform.calls.at(-1)!.headers;
      if (mode === 'bearer') {
        expect(headers.get('authorization')).toBe(`Bearer ${session.accessToken}`);
        expect(headers.has('access-token')).toBe(false);
      } else {
        expect(headers.get('access-token')).toBe(session.accessToken);
        expect(headers.has('authorization')).toBe(false);
      }
    }
  });

  it('refuses a custom token header together with bearer, and Authorization as the Access-Token header', () => {
    const base = { clientId: 'c', clientSecret: 's', scopes: 'read_products', redirectUri: REDIRECT };
    expect(() => createApp({ ...base, apiAuthentication: 'bearer', accessTokenHeader: 'X-Token' })).toThrow(/leave it out with "bearer"/);
    expect(() => createApp({ ...base, accessTokenHeader: 'authorization' })).toThrow(/apiAuthentication: "bearer"/);
    expect(() => createApp({ ...base, apiAuthentication: 'basic' as 'bearer' })).toThrow(/"access-token" or "bearer"/);
  });
});
