import { describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { IssuerError } from '../src/errors.ts';
import { createState } from '../src/oauth/state.ts';
import { memorySessionStorage } from '../src/session/memory-session-storage.ts';
import { signQuery } from '../src/signature/query-signature.ts';
import { fixedRandom, frozenClock } from './support/fake-fetch.ts';
import { fakePlatform } from './support/fake-platform.ts';

const SECRET = 'shh-secret';
const REDIRECT = 'https://app.example/auth/callback';
const SHOP = 'demo.localhost';

function setup(overrides: Record<string, unknown> = {}) {
  const clock = frozenClock(1_700_000_000_000);
  const platform = fakePlatform({
    clientId: 'cid',
    clientSecret: SECRET,
    redirectUri: (overrides['redirectUri'] as string | undefined) ?? REDIRECT,
    now: clock.now,
  });
  const sessionStorage = memorySessionStorage();
  const app = createApp({
    clientId: 'cid',
    clientSecret: SECRET,
    scopes: ['read_products', 'write_products'],
    redirectUri: REDIRECT,
    storeDomain: 'localhost',
    apiOrigin: 'http://{shop}:8080',
    fetch: platform.fetch,
    clock,
    sessionStorage,
    ...overrides,
  });
  return { app, clock, platform, sessionStorage };
}

describe('auth.begin', () => {
  it('builds the authorization URL with a signed state and a cookie', async () => {
    const { app } = setup({ randomBytes: fixedRandom(7) });
    const { url, state, cookie, cookieName } = await app.auth.begin({ shop: SHOP });
    const u = new URL(url);
    expect(`${u.origin}${u.pathname}`).toBe('http://demo.localhost:8080/admin/oauth/authorize');
    expect(Object.fromEntries(u.searchParams)).toEqual({
      client_id: 'cid',
      scope: 'read_products write_products',
      redirect_uri: REDIRECT,
      response_type: 'code',
      state,
    });
    expect(state).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(cookieName).toBe('storegate_state');
    expect(cookie).toMatch(/^storegate_state=[A-Za-z0-9_-]+; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/);
  });
  it('leaves Secure off for an http redirect URI and takes scope overrides', async () => {
    const { app } = setup({ redirectUri: 'http://localhost:3000/auth/callback' });
    const { cookie, url } = await app.auth.begin({ shop: SHOP, scopes: 'read_orders' });
    expect(cookie).not.toMatch(/Secure/);
    expect(new URL(url).searchParams.get('scope')).toBe('read_orders');
  });
  it('refuses an invalid shop', async () => {
    await expect(setup().app.auth.begin({ shop: 'evil.com' })).rejects.toMatchObject({ code: 'SHOP_INVALID' });
  });
});

describe('auth.callback', () => {
  async function begun(s = setup()) {
    const begin = await s.app.auth.begin({ shop: SHOP });
    const nonce = begin.cookie.split(';')[0]!.split('=')[1]!;
    return { ...s, begin, nonce, cookieHeader: `other=1; storegate_state=${nonce}` };
  }

  it('checks everything, exchanges the code with a JSON body and stores the session', async () => {
    const { app, platform, begin, cookieHeader, sessionStorage } = await begun();
    const query = await platform.redirectQuery(SHOP, begin.state);
    const session = await app.auth.callback(query, { stateCookie: cookieHeader });
    expect(session).toMatchObject({
      shop: SHOP,
      accessToken: expect.stringMatching(/^sg_at_/),
      refreshToken: expect.stringMatching(/^sg_rt_/),
      expiresAt: 1_700_003_600,
      scope: 'read_products',
      storeId: '42',
      storeName: 'demo',
    });
    expect(await sessionStorage.get(SHOP)).toEqual(session);
    const [call] = platform.tokenCalls();
    expect(call!.url).toBe('http://demo.localhost:8080/admin/oauth/token');
    expect(call!.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(call!.body!)).toEqual({
      client_id: 'cid',
      client_secret: SECRET,
      code: expect.stringMatching(/^sg_ac_/),
      grant_type: 'authorization_code',
      redirect_uri: REDIRECT,
    });
  });

  async function refused(
    ctx: Pick<Awaited<ReturnType<typeof begun>>, 'platform' | 'sessionStorage'>,
    attempt: Promise<unknown>,
    code: string,
  ) {
    await expect(attempt).rejects.toMatchObject({ name: 'StateError', code });
    expect(ctx.platform.tokenCalls()).toHaveLength(0);
    expect(await ctx.sessionStorage.get(SHOP)).toBeUndefined();
  }

  // Login CSRF: an attacker starts an install in their own browser and sends the callback URL (a
  // valid state and code) to a victim. Only the browser holding the state cookie may finish it.
  describe('the state cookie binds the callback to the browser that began it', () => {
    it('no cookie at all: STATE_MISSING, and the code is not exchanged', async () => {
      const ctx = await begun();
      const query = await ctx.platform.redirectQuery(SHOP, ctx.begin.state);
      await refused(ctx, ctx.app.auth.callback(query), 'STATE_MISSING');
      await refused(ctx, ctx.app.auth.callback(new Request(`${REDIRECT}?${query}`)), 'STATE_MISSING');
      await refused(ctx, ctx.app.auth.callback({ url: `/auth/callback?${query}`, headers: {} }), 'STATE_MISSING');
    });

    it('a Cookie header without the state cookie, or with it empty: STATE_MISSING', async () => {
      const ctx = await begun();
      const query = await ctx.platform.redirectQuery(SHOP, ctx.begin.state);
      await refused(ctx, ctx.app.auth.callback(query, { stateCookie: 'other=1; session=abc' }), 'STATE_MISSING');
      await refused(ctx, ctx.app.auth.callback(query, { stateCookie: 'storegate_state=' }), 'STATE_MISSING');
      await refused(ctx, ctx.app.auth.callback(query, { stateCookie: '' }), 'STATE_MISSING');
      await refused(ctx, ctx.app.auth.callback({ url: `/auth/callback?${query}`, headers: { cookie: 'other=1' } }), 'STATE_MISSING');
    });

    it("the victim's own state cookie from another attempt: STATE_MISMATCH", async () => {
      const attacker = await begun();
      const victim = await attacker.app.auth.begin({ shop: SHOP });
      const victimCookie = victim.cookie.split(';')[0]!;
      const query = await attacker.platform.redirectQuery(SHOP, attacker.begin.state);
      await refused(attacker, attacker.app.auth.callback(query, { stateCookie: victimCookie }), 'STATE_MISMATCH');
      await refused(
        attacker,
        attacker.app.auth.callback({ url: `/auth/callback?${query}`, headers: { cookie: victimCookie } }),
        'STATE_MISMATCH',
      );
    });

    it('the right cookie, as a whole header or as its value: the code is exchanged', async () => {
      const first = await begun();
      const q1 = await first.platform.redirectQuery(SHOP, first.begin.state);
      await expect(first.app.auth.callback(q1, { stateCookie: first.cookieHeader })).resolves.toMatchObject({ shop: SHOP });
      expect(first.platform.tokenCalls()).toHaveLength(1);
      const second = await begun();
      const q2 = await second.platform.redirectQuery(SHOP, second.begin.state);
      await expect(second.app.auth.callback(q2, { stateCookie: second.nonce })).resolves.toMatchObject({ shop: SHOP });
    });

    it('an authorization error redirect without the cookie is refused as STATE_MISSING, not reported as the denial', async () => {
      const ctx = await begun();
      await refused(ctx, ctx.app.auth.callback(`error=access_denied&state=${ctx.begin.state}`), 'STATE_MISSING');
    });
  });

  describe('signed-state mode: begin with a binding to the app session, no cookie', () => {
    const BINDING = 'app-session-7f3a9c';

    it('begin sets no cookie, and the state carries a keyed digest of the binding, never the binding itself', async () => {
      const { app } = setup();
      const begin = await app.auth.begin({ shop: SHOP, binding: BINDING });
      expect(begin).not.toHaveProperty('cookie');
      expect(begin).not.toHaveProperty('cookieName');
      const payload = JSON.parse(Buffer.from(begin.state.split('.')[1]!, 'base64url').toString('utf8'));
      expect(Object.keys(payload).sort()).toEqual(['b', 'e', 'n', 's']);
      expect(payload.e).toBe(1_700_000_600);
      expect(begin.state).not.toContain(Buffer.from(BINDING).toString('base64url'));
      expect(JSON.stringify(payload)).not.toContain(BINDING);
    });

    it('the same binding at the callback: the code is exchanged, with or without a cookie', async () => {
      const { app, platform } = setup();
      const begin = await app.auth.begin({ shop: SHOP, binding: BINDING });
      const query = await platform.redirectQuery(SHOP, begin.state);
      await expect(app.auth.callback(query, { binding: BINDING })).resolves.toMatchObject({ shop: SHOP });
    });

    it('another binding, or none: refused before any exchange (a cookie does not stand in for it)', async () => {
      const s = setup();
      const begin = await s.app.auth.begin({ shop: SHOP, binding: BINDING });
      const query = await s.platform.redirectQuery(SHOP, begin.state);
      const ctx = s;
      await refused(ctx, s.app.auth.callback(query, { binding: 'attacker-session' }), 'STATE_MISMATCH');
      await refused(ctx, s.app.auth.callback(query), 'STATE_MISSING');
      await refused(ctx, s.app.auth.callback(query, { binding: '' }), 'STATE_MISSING');
      const nonce = JSON.parse(Buffer.from(begin.state.split('.')[1]!, 'base64url').toString('utf8')).n as string;
      await refused(ctx, s.app.auth.callback(query, { stateCookie: `storegate_state=${nonce}` }), 'STATE_MISSING');
    });

    it('a cookie-mode state still needs its cookie when the callback passes a binding', async () => {
      const ctx = await begun();
      const query = await ctx.platform.redirectQuery(SHOP, ctx.begin.state);
      await refused(ctx, ctx.app.auth.callback(query, { binding: BINDING }), 'STATE_MISSING');
    });

    it('a binding digest made under the previous secret still verifies during a rotation', async () => {
      const old = setup();
      const begin = await old.app.auth.begin({ shop: SHOP, binding: BINDING });
      const rotated = setup({ clientSecret: ['new-secret', SECRET], fetch: old.platform.fetch });
      const query = await old.platform.redirectQuery(SHOP, begin.state);
      // Past the state and its binding: the platform refuses the new secret at the exchange.
      await expect(rotated.app.auth.callback(query, { binding: BINDING })).rejects.toMatchObject({ code: 'TOKEN_EXCHANGE_FAILED' });
      await expect(rotated.app.auth.callback(query, { binding: 'other' })).rejects.toMatchObject({ code: 'STATE_MISMATCH' });
    });

    it('refuses an empty binding at begin', async () => {
      await expect(setup().app.auth.begin({ shop: SHOP, binding: '' })).rejects.toMatchObject({ code: 'PARAMETER_INVALID' });
    });
  });

  it('reads the query and cookie from a web Request and from a Node-style request', async () => {
    const s1 = await begun();
    const q1 = await s1.platform.redirectQuery(SHOP, s1.begin.state);
    await expect(s1.app.auth.callback(new Request(`${REDIRECT}?${q1}`, { headers: { cookie: s1.cookieHeader } }))).resolves.toMatchObject({
      shop: SHOP,
    });
    const s2 = await begun();
    const q2 = await s2.platform.redirectQuery(SHOP, s2.begin.state);
    await expect(
      s2.app.auth.callback({ url: `/auth/callback?${q2}`, headers: { cookie: 'storegate_state=someone-else' } }),
    ).rejects.toMatchObject({ code: 'STATE_MISMATCH' });
  });

  const refusals: Array<[string, (ctx: Awaited<ReturnType<typeof begun>>) => Promise<{ query: string; cookie?: string }>]> = [
    ['STATE_MISSING', async ({ platform }) => ({ query: (await platform.redirectQuery(SHOP, '')).replace('state=&', '') })],
    ['STATE_INVALID', async ({ platform, begin }) => ({ query: await platform.redirectQuery(SHOP, `${begin.state.slice(0, -2)}AA`) })],
    [
      'STATE_INVALID',
      async ({ platform }) => ({
        query: await platform.redirectQuery(SHOP, await createState({ nonce: 'n', shop: SHOP, expiresAt: 2e9 }, 'another-secret')),
      }),
    ],
    [
      'STATE_EXPIRED',
      async ({ platform, begin, clock }) => {
        clock.advance(601);
        return { query: await platform.redirectQuery(SHOP, begin.state) };
      },
    ],
    [
      'STATE_MISMATCH',
      async ({ platform, begin }) => ({ query: await platform.redirectQuery(SHOP, begin.state), cookie: 'storegate_state=not-mine' }),
    ],
    ['STATE_MISMATCH', async ({ platform, begin }) => ({ query: await platform.redirectQuery('other.localhost', begin.state) })],
    [
      'HMAC_MISSING',
      async ({ platform, begin }) => ({ query: (await platform.redirectQuery(SHOP, begin.state)).replace(/&hmac=[0-9a-f]+/, '') }),
    ],
    [
      'HMAC_INVALID',
      async ({ platform, begin }) => ({ query: (await platform.redirectQuery(SHOP, begin.state)).replace('code=sg_ac_', 'code=sg_ac_x') }),
    ],
    [
      'SHOP_INVALID',
      async ({ app, begin }) => {
        void app;
        const params = { code: 'c', shop: 'evil.com', state: begin.state, timestamp: '1700000000' };
        return { query: new URLSearchParams({ ...params, hmac: await signQuery(params, SECRET) }).toString() };
      },
    ],
    [
      'TIMESTAMP_OUT_OF_RANGE',
      async ({ platform, begin }) => ({ query: await platform.redirectQuery(SHOP, begin.state, { timestamp: '1699999000' }) }),
    ],
    [
      'PARAMETER_MISSING',
      async ({ begin }) => {
        const params = { shop: SHOP, state: begin.state };
        return { query: new URLSearchParams({ ...params, hmac: await signQuery(params, SECRET) }).toString() };
      },
    ],
    [
      'AUTHORIZATION_DENIED',
      async ({ begin }) => ({ query: `error=access_denied&error_description=Merchant+cancelled&state=${begin.state}` }),
    ],
    [
      'AUTHORIZATION_DENIED',
      async ({ begin }) => ({
        query: `error=access_denied&state=${begin.state}&iss=${encodeURIComponent('http://demo.localhost:8080')}`,
      }),
    ],
    [
      'ISSUER_MISMATCH',
      async ({ platform, begin }) => ({ query: await platform.redirectQuery(SHOP, begin.state, { iss: 'http://other.localhost:8080' }) }),
    ],
    // Simple string comparison (RFC 9207): a trailing slash or another port is another issuer.
    [
      'ISSUER_MISMATCH',
      async ({ platform, begin }) => ({ query: await platform.redirectQuery(SHOP, begin.state, { iss: 'http://demo.localhost:8080/' }) }),
    ],
    [
      'ISSUER_MISMATCH',
      async ({ platform, begin }) => ({ query: await platform.redirectQuery(SHOP, begin.state, { iss: 'http://demo.localhost' }) }),
    ],
    // An error response from another issuer is not reported as that issuer's denial.
    [
      'ISSUER_MISMATCH',
      async ({ begin }) => ({ query: `error=access_denied&state=${begin.state}&iss=${encodeURIComponent('https://evil.example')}` }),
    ],
    [
      'TOKEN_EXCHANGE_FAILED',
      async ({ begin }) => {
        const params = { code: 'sg_ac_unknown', shop: SHOP, state: begin.state, timestamp: '1700000000' };
        return { query: new URLSearchParams({ ...params, hmac: await signQuery(params, SECRET) }).toString() };
      },
    ],
  ];
  for (const [code, make] of refusals) {
    it(`refuses with ${code} and stores nothing`, async () => {
      const ctx = await begun();
      const { query, cookie } = await make(ctx);
      await expect(ctx.app.auth.callback(query, { stateCookie: cookie ?? ctx.cookieHeader })).rejects.toMatchObject({ code });
      expect(await ctx.sessionStorage.get(SHOP)).toBeUndefined();
      if (code !== 'TOKEN_EXCHANGE_FAILED') expect(ctx.platform.tokenCalls()).toHaveLength(0);
    });
  }

  it('accepts a signed iss that is the base URL of the shop the authorization began with', async () => {
    const { app, platform, begin, cookieHeader } = await begun();
    const query = await platform.redirectQuery(SHOP, begin.state, { iss: 'http://demo.localhost:8080' });
    expect(new URLSearchParams(query).get('iss')).toBe('http://demo.localhost:8080');
    await expect(app.auth.callback(query, { stateCookie: cookieHeader })).resolves.toMatchObject({ shop: SHOP });
  });

  it('refuses a mismatched iss with a typed error naming both issuers', async () => {
    const { app, platform, begin, cookieHeader } = await begun();
    const query = await platform.redirectQuery(SHOP, begin.state, { iss: 'https://evil.example' });
    const error = await app.auth.callback(query, { stateCookie: cookieHeader }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IssuerError);
    expect(error).toMatchObject({ code: 'ISSUER_MISMATCH', expected: 'http://demo.localhost:8080', received: 'https://evil.example' });
  });

  it('ignores the static query parameters of the registered redirect URI in the hmac check', async () => {
    const ctx = await begun(setup({ redirectUri: `${REDIRECT}?app=1` }));
    const signed = await ctx.platform.redirectQuery(SHOP, ctx.begin.state);
    // The platform's redirect: the registered URI's own ?app=1, then its signed parameters.
    await expect(ctx.app.auth.callback(`app=2&${signed}`, { stateCookie: ctx.cookieHeader })).rejects.toMatchObject({
      code: 'HMAC_INVALID',
    });
    await expect(ctx.app.auth.callback(`app=1&${signed}`, { stateCookie: ctx.cookieHeader })).resolves.toMatchObject({ shop: SHOP });
  });

  it('never retries a code exchange (a replayed code would revoke the tokens)', async () => {
    const { app, begin, platform, cookieHeader } = await begun();
    const failing = setup({ fetch: (async () => new Response('bad gateway', { status: 502 })) as typeof fetch });
    const query = await platform.redirectQuery(SHOP, begin.state);
    void app;
    await expect(failing.app.auth.callback(query, { stateCookie: cookieHeader })).rejects.toMatchObject({
      code: 'TOKEN_EXCHANGE_FAILED',
      status: 502,
    });
  });

  it('accepts a state and hmac signed with the previous secret during a rotation (reaches the code exchange)', async () => {
    const old = await begun();
    const rotated = setup({ clientSecret: ['new-secret', SECRET], fetch: old.platform.fetch });
    const query = await old.platform.redirectQuery(SHOP, old.begin.state);
    // The platform still signs with the old secret; the app has both.
    await expect(rotated.app.auth.callback(query, { stateCookie: old.cookieHeader })).rejects.toMatchObject({
      code: 'TOKEN_EXCHANGE_FAILED',
      oauthError: 'invalid_client',
    });
  });
});

describe('verifyInstallRequest (the signed App-URL request)', () => {
  it('verifies shop, timestamp and hmac', async () => {
    const { app, platform } = setup();
    await expect(app.verifyInstallRequest(await platform.installQuery(SHOP))).resolves.toMatchObject({
      shop: SHOP,
      timestamp: 1_700_000_000,
    });
    await expect(app.verifyInstallRequest(new Request(`https://app.example/?${await platform.installQuery(SHOP)}`))).resolves.toMatchObject(
      { shop: SHOP },
    );
  });
  it('refuses a bad hmac, a stale timestamp and an invalid shop', async () => {
    const { app, platform, clock } = setup();
    const q = await platform.installQuery(SHOP);
    await expect(app.verifyInstallRequest(q.replace('demo', 'evil'))).rejects.toMatchObject({ code: 'HMAC_INVALID' });
    clock.advance(301);
    await expect(app.verifyInstallRequest(q)).rejects.toMatchObject({ code: 'TIMESTAMP_OUT_OF_RANGE' });
    const params = { shop: 'evil.com', timestamp: '1700000301' };
    await expect(app.verifyInstallRequest({ ...params, hmac: await signQuery(params, SECRET) })).rejects.toMatchObject({
      code: 'SHOP_INVALID',
    });
  });
  it('refuses any parameter the platform does not send on a launch, even signed, and a repeated one', async () => {
    const { app, platform } = setup();
    const timestamp = '1700000000';
    // A signed redirect with a code is not a launch, whatever its state holds.
    const redirect = await platform.redirectQuery(SHOP, 'x&shop=other.localhost');
    await expect(app.verifyInstallRequest(redirect)).rejects.toMatchObject({ code: 'PARAMETER_UNEXPECTED', parameter: 'code' });
    const extras: Record<string, string>[] = [{ host: 'ZGVtbw' }, { state: 's' }, { locale: 'en' }, { hmac_v: '1' }];
    for (const extra of extras) {
      const params = { shop: SHOP, timestamp, ...extra };
      const query = `${new URLSearchParams(params)}&hmac=${await signQuery(params, SECRET)}`;
      await expect(app.verifyInstallRequest(query), JSON.stringify(extra)).rejects.toMatchObject({
        code: 'PARAMETER_UNEXPECTED',
        parameter: Object.keys(extra)[0],
      });
    }
    const twice = `shop=${SHOP}&shop=${SHOP}&timestamp=${timestamp}`;
    await expect(app.verifyInstallRequest(`${twice}&hmac=${await signQuery(twice, SECRET)}`)).rejects.toMatchObject({
      code: 'PARAMETER_INVALID',
      parameter: 'shop',
    });
  });
  it('refuses a launch re-split from a redirect signed with the raw parameters joined unescaped', async () => {
    const { app } = setup();
    const { createHmac } = await import('node:crypto');
    const message = `code=sg_ac_1&shop=other.localhost&state=x&shop=${SHOP}&timestamp=1700000000`;
    const hmac = createHmac('sha256', SECRET).update(message).digest('hex');
    const forged = new URLSearchParams({ code: 'sg_ac_1&shop=other.localhost&state=x', shop: SHOP, timestamp: '1700000000', hmac });
    await expect(app.verifyInstallRequest(forged.toString())).rejects.toMatchObject({ code: 'PARAMETER_UNEXPECTED' });
    await expect(app.verifyInstallRequest(forged)).rejects.toMatchObject({ code: 'PARAMETER_UNEXPECTED' });
  });
});
