// The example app with STOREGATE_MANAGED_INSTALL=1, in-process against a fake token endpoint: the
// signed launch (hmac + id_token) is verified and its token exchanged at the App URL, which answers
// with the products (no redirect); later launches exchange the merchant's online token; every bad
// launch is refused before anything reaches the platform; the default OAuth path is unchanged.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { signQuery, signWebhook } from '@storegate/app';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadExampleConfig, type ExampleConfig } from '../src/example-config.ts';
import { createExampleServer, type ExampleServer } from '../src/example-server.ts';

const SECRET = 'sg_cs_managed-example-secret';
const CLIENT_ID = 'sg_ci_managed';
const SHOP = 'demo.localhost';
const OFFLINE_TYPE = 'urn:storegate:params:oauth:token-type:offline-access-token';
const ONLINE_TYPE = 'urn:storegate:params:oauth:token-type:online-access-token';

let jtiCounter = 0;
/** A launch token as the platform signs it (node:crypto, independent of the SDK). */
function launchToken(options: { sub?: string; secret?: string; shop?: string } = {}): string {
  const now = Math.floor(Date.now() / 1000);
  const base = `http://${options.shop ?? SHOP}:8080`;
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const jti = `jti${String(++jtiCounter).padStart(19, '0')}`;
  const input = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ iss: base, dest: base, aud: CLIENT_ID, sub: options.sub ?? '1', iat: now, nbf: now, exp: now + 60, jti })}`;
  return `${input}.${createHmac('sha256', options.secret ?? SECRET)
    .update(input)
    .digest('base64url')}`;
}

/** The signed launch query the platform sends to the App URL. */
async function launchQuery(idToken: string | undefined, shop = SHOP): Promise<string> {
  const params: Record<string, string> = { shop, timestamp: String(Math.floor(Date.now() / 1000)) };
  if (idToken !== undefined) params['id_token'] = idToken;
  return `${new URLSearchParams(params).toString()}&hmac=${await signQuery(params, SECRET)}`;
}

interface Exchange {
  subject_token: string;
  requested_token_type: string;
  grant_type: string;
}

function startExample(managed: boolean) {
  const config: ExampleConfig = loadExampleConfig({
    STOREGATE_CLIENT_ID: CLIENT_ID,
    STOREGATE_CLIENT_SECRET: SECRET,
    APP_SESSION_STORAGE: 'memory',
    STOREGATE_MANAGED_INSTALL: managed ? '1' : '0',
  });
  const calls: Array<{ url: URL; body: string | undefined; headers: Headers }> = [];
  const exchanges: Exchange[] = [];
  const used = new Set<string>();
  let issued = 0;
  const state = { refuse: false, refuseOnline: false };
  const stubFetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : input.toString());
    const body = typeof init?.body === 'string' ? init.body : undefined;
    calls.push({ url, body, headers: new Headers(init?.headers) });
    if (url.pathname === '/admin/oauth/token') {
      const form = JSON.parse(body ?? '{}') as Exchange & { client_secret: string };
      if (form.grant_type === 'refresh_token') return Response.json({ error: 'invalid_grant' }, { status: 400 });
      exchanges.push(form);
      if (state.refuseOnline && form.requested_token_type === ONLINE_TYPE)
        return Response.json({ error: 'invalid_request', error_description: 'no online tokens here' }, { status: 400 });
      if (state.refuse || form.client_secret !== SECRET || used.has(form.subject_token))
        return Response.json({ error: 'invalid_grant', error_description: 'launch token refused' }, { status: 400 });
      used.add(form.subject_token);
      const sub = JSON.parse(Buffer.from(form.subject_token.split('.')[1]!, 'base64url').toString()) as { sub: string };
      issued++;
      const common = { token_type: 'Bearer', scope: config.scopes, store_id: '1', store_name: 'demo' };
      const expiresAt = Math.floor(Date.now() / 1000) + 3600;
      if (form.requested_token_type === ONLINE_TYPE)
        return Response.json({
          ...common,
          access_token: `sg_at_online${issued}`,
          expires_at: expiresAt,
          expires_in: 3600,
          associated_user_scope: config.scopes,
          associated_user: { id: sub.sub, email: `merchant${sub.sub}@demo.test` },
        });
      return Response.json({ ...common, access_token: `sg_at_offline${issued}`, refresh_token: `sg_rt_${issued}`, expires_at: expiresAt });
    }
    if (url.pathname === '/openapi/2026-01/webhooks') return Response.json({ data: { id: '1' } }, { status: 201 });
    if (url.pathname === '/openapi/2026-01/products' && new Headers(init?.headers).get('access-token') === 'sg_at_revoked')
      return Response.json({ code: 'Unauthorized', message: 'revoked' }, { status: 401 });
    if (url.pathname === '/openapi/2026-01/products')
      return Response.json({ data: [{ id: '7', title: 'Managed hat', status: 'active' }], cursor: null, has_more: false });
    return Response.json({ code: 'NotFound', message: 'no' }, { status: 404 });
  }) as typeof fetch;
  const example = createExampleServer(config, { fetch: stubFetch, logger: {} });
  return { example, calls, exchanges, state };
}

describe('managed install (STOREGATE_MANAGED_INSTALL=1)', () => {
  let ctx: ReturnType<typeof startExample>;
  let example: ExampleServer;
  let listener: http.Server;
  let base: string;
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${base}${path}`, { redirect: 'manual', headers });

  beforeAll(async () => {
    ctx = startExample(true);
    example = ctx.example;
    listener = http.createServer(example.server);
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => listener.close(r));
    example.close();
  });
  beforeEach(async () => {
    ctx.calls.length = 0;
    ctx.exchanges.length = 0;
    ctx.state.refuse = false;
    ctx.state.refuseOnline = false;
    await example.app.sessions.delete(SHOP);
    await example.app.sessions.delete('online_demo.localhost_7');
  });

  it('the first launch exchanges the launch token for the offline token and shows the products, with no redirect', async () => {
    const idToken = launchToken();
    const res = await get(`/?${await launchQuery(idToken)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('location')).toBeNull();
    const html = await res.text();
    expect(html).toContain('Managed hat');
    expect(html).toContain('The app is installed in demo.localhost');
    expect(ctx.exchanges).toEqual([
      expect.objectContaining({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: idToken,
        requested_token_type: OFFLINE_TYPE,
      }),
    ]);
    expect(ctx.calls.some((c) => c.url.pathname === '/admin/oauth/authorize')).toBe(false);
    expect(ctx.calls.filter((c) => c.url.pathname === '/openapi/2026-01/webhooks')).toHaveLength(3);
    expect(await example.app.sessions.get(SHOP)).toMatchObject({ accessToken: expect.stringMatching(/^sg_at_offline/) });
    // The access cookie lets the browser go on to the other pages.
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    expect((await get(`/products?shop=${SHOP}`, { cookie })).status).toBe(200);
  });

  it('a later launch exchanges the merchant online token once and says who opened the app; the offline session stays', async () => {
    await get(`/?${await launchQuery(launchToken())}`);
    const offline = await example.app.sessions.get(SHOP);
    const second = await get(`/?${await launchQuery(launchToken({ sub: '7' }))}`);
    expect(second.status).toBe(200);
    const html = await second.text();
    expect(html).toContain('Opened by <strong>merchant7@demo.test</strong>');
    expect(ctx.exchanges.map((e) => e.requested_token_type)).toEqual([OFFLINE_TYPE, ONLINE_TYPE]);
    expect(await example.app.getSession(SHOP, { userId: '7' })).toMatchObject({ online: true, associatedUser: { id: '7' } });
    expect(await example.app.sessions.get(SHOP)).toMatchObject({ accessToken: offline?.accessToken });
    // The products are read with the shop's offline token.
    const productCalls = ctx.calls.filter((c) => c.url.pathname === '/openapi/2026-01/products');
    expect(productCalls.at(-1)!.headers.get('access-token')).toBe(offline?.accessToken);
    // The same merchant again: the online session is reused, nothing exchanged.
    const third = await get(`/?${await launchQuery(launchToken({ sub: '7' }))}`);
    expect(await third.text()).toContain('merchant7@demo.test');
    expect(ctx.exchanges).toHaveLength(2);
  });

  it.each([
    [
      'a launch token signed with another secret',
      async () => launchQuery(launchToken({ secret: 'sg_cs_forged' })),
      'LAUNCH_TOKEN_SIGNATURE_INVALID',
    ],
    ['a launch token of another shop', async () => launchQuery(launchToken({ shop: 'other.localhost' })), 'LAUNCH_TOKEN_ISSUER_INVALID'],
    ['a launch token that is not a JWS', async () => launchQuery('not-a-token'), 'LAUNCH_TOKEN_MALFORMED'],
    ['a launch without id_token', async () => launchQuery(undefined), 'without a launch token'],
    ['an id_token the hmac does not cover', async () => `${await launchQuery(undefined)}&id_token=${launchToken()}`, 'HMAC_INVALID'],
    ['another parameter', async () => `${await launchQuery(launchToken())}&extra=1`, 'PARAMETER_UNEXPECTED'],
  ])('refuses %s with 400 before anything reaches the platform', async (_name, query, reason) => {
    const res = await get(`/?${await query()}`);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain(reason);
    expect(ctx.calls).toHaveLength(0);
    expect(await example.app.sessions.get(SHOP)).toBeUndefined();
  });

  it('a refused exchange is a 502 that points to the store admin, and stores nothing', async () => {
    ctx.state.refuse = true;
    const res = await get(`/?${await launchQuery(launchToken())}`);
    expect(res.status).toBe(502);
    const html = await res.text();
    expect(html).toContain('invalid_grant');
    expect(html).toContain('http://demo.localhost:8080/admin');
    expect(await example.app.sessions.get(SHOP)).toBeUndefined();
  });

  it('a revoked offline token (an uninstall the app missed) is replaced with this launch token, and the page still shows', async () => {
    await example.app.sessions.set({
      shop: SHOP,
      accessToken: 'sg_at_revoked',
      refreshToken: 'sg_rt_revoked',
      expiresAt: Math.floor(Date.now() / 1000) + 3600,
      scope: 'read_products',
    });
    const res = await get(`/?${await launchQuery(launchToken({ sub: '7' }))}`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('Managed hat');
    expect(html).toContain('The app is installed in demo.localhost');
    expect(ctx.exchanges.map((e) => e.requested_token_type)).toEqual([OFFLINE_TYPE]);
    expect(await example.app.sessions.get(SHOP)).toMatchObject({ accessToken: expect.stringMatching(/^sg_at_offline/) });
  });

  it('when the platform gives no online token the products still show, without naming the merchant', async () => {
    await get(`/?${await launchQuery(launchToken())}`);
    ctx.state.refuseOnline = true;
    const res = await get(`/?${await launchQuery(launchToken({ sub: '7' }))}`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('Managed hat');
    expect(html).not.toContain('Opened by');
  });

  it('offers no OAuth install of its own: the home page points to the store admin, /auth refuses', async () => {
    const home = await (await get('/')).text();
    expect(home).toContain('Managed install');
    expect(home).not.toContain('action="/auth"');
    const auth = await get('/auth?shop=demo');
    expect(auth.status).toBe(400);
    expect(auth.headers.get('location')).toBeNull();
    expect(await auth.text()).toContain('http://demo.localhost:8080/admin');
  });

  it('app/uninstalled forgets the offline and the online sessions', async () => {
    await get(`/?${await launchQuery(launchToken())}`);
    await get(`/?${await launchQuery(launchToken({ sub: '7' }))}`);
    const payload = '{"id":1}';
    const res = await fetch(`${base}/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-hmac-sha256': await signWebhook(payload, SECRET),
        'x-service-topic': 'app/uninstalled',
        'x-service-shop-domain': SHOP,
        'x-service-webhook-id': 'wh-uninstall-1',
      },
      body: payload,
    });
    expect(res.status).toBe(200);
    expect(await example.app.sessions.get(SHOP)).toBeUndefined();
    expect(await example.app.sessions.get('online_demo.localhost_7')).toBeUndefined();
  });
});

describe('the default (OAuth) path with a launch token', () => {
  it('is unchanged: a signed launch carrying id_token goes to the authorize URL, nothing exchanged', async () => {
    const { example, calls } = startExample(false);
    const listener = http.createServer(example.server);
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    try {
      const res = await fetch(`http://127.0.0.1:${(listener.address() as AddressInfo).port}/?${await launchQuery(launchToken())}`, {
        redirect: 'manual',
      });
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toMatch(/^http:\/\/demo\.localhost:8080\/admin\/oauth\/authorize\?/);
      expect(calls).toHaveLength(0);
    } finally {
      await new Promise((r) => listener.close(r));
      example.close();
    }
  });
});

describe('STOREGATE_MANAGED_INSTALL', () => {
  it('is off by default, on with 1 or true, and anything else is a start-up error', () => {
    const base = { STOREGATE_CLIENT_ID: 'id', STOREGATE_CLIENT_SECRET: 'secret' };
    expect(loadExampleConfig(base).managedInstall).toBe(false);
    expect(loadExampleConfig({ ...base, STOREGATE_MANAGED_INSTALL: '1' }).managedInstall).toBe(true);
    expect(loadExampleConfig({ ...base, STOREGATE_MANAGED_INSTALL: 'true' }).managedInstall).toBe(true);
    expect(loadExampleConfig({ ...base, STOREGATE_MANAGED_INSTALL: '0' }).managedInstall).toBe(false);
    expect(() => loadExampleConfig({ ...base, STOREGATE_MANAGED_INSTALL: 'yes' })).toThrow(/STOREGATE_MANAGED_INSTALL must be 1/);
  });
});
