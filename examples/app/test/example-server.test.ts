// The example app in-process on a free port, with a stub platform where one is needed: every
// endpoint's answer to bad input, the signed install request, the page links of both pagination
// conventions, webhook verification and de-duplication, and uninstall.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signQuery, signWebhook } from '@storegate/app';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ExampleConfigError, loadExampleConfig, storeAdminUrl, type ExampleConfig } from '../src/example-config.ts';
import { createExampleServer, type ExampleServer } from '../src/example-server.ts';

const SECRET = 'sg_cs_example-test-secret';
const SHOP = 'demo.localhost';

/** A query string signed as the platform signs it (seed §5.4). */
async function signedQuery(params: Record<string, string>, secret: string): Promise<string> {
  return `${new URLSearchParams(params).toString()}&hmac=${await signQuery(params, secret)}`;
}

describe('loadExampleConfig', () => {
  it('defaults to the demo app that `npm start` seeds', () => {
    const config = loadExampleConfig({ STOREGATE_CLIENT_ID: 'id', STOREGATE_CLIENT_SECRET: 'secret' });
    expect(config).toMatchObject({
      appUrl: 'http://localhost:3000/',
      redirectUri: 'http://localhost:3000/auth/callback',
      webhookAddress: 'http://localhost:3000/webhooks',
      scopes: 'read_products write_products read_orders read_customers',
      storeDomain: 'localhost',
      apiOrigin: 'http://{shop}:8080',
      apiVersion: '2026-01',
      port: 3000,
    });
    expect(config.sessionStorage).toEqual({ sqlitePath: expect.stringMatching(/examples\/app\/data\/sessions\.db$/) });
  });

  it('without credentials says where to find them', () => {
    const error = (() => {
      try {
        loadExampleConfig({});
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ExampleConfigError);
    expect((error as Error).message).toContain('STOREGATE_CLIENT_ID and STOREGATE_CLIENT_SECRET are required');
    expect((error as Error).message).toContain('npm start');
  });

  it('reports every bad value at once', () => {
    let problems: readonly string[] = [];
    try {
      loadExampleConfig({
        STOREGATE_CLIENT_ID: 'id',
        STOREGATE_CLIENT_SECRET: 'secret',
        APP_PORT: 'eighty',
        STOREGATE_API_VERSION: '2019-04',
        STOREGATE_API_ORIGIN: 'http://no-placeholder:8080',
        APP_SESSION_STORAGE: 'mongo',
        APP_REDIRECT_URI: 'http://localhost:3000/cb#frag',
        APP_PAGE_SIZE: '500',
      });
    } catch (e) {
      problems = (e as ExampleConfigError).problems;
    }
    expect(problems).toHaveLength(6);
    expect(problems.join('\n')).toMatch(/APP_PORT.*STOREGATE_API_ORIGIN|STOREGATE_API_ORIGIN[\s\S]*APP_PORT/);
  });
});

describe('the platform it expects', () => {
  it('is http://{shop}:8080 unless STOREGATE_API_ORIGIN says otherwise, and the start-up hint follows it', () => {
    const base = { STOREGATE_CLIENT_ID: 'id', STOREGATE_CLIENT_SECRET: 'secret' };
    const byDefault = loadExampleConfig(base);
    expect(byDefault.apiOrigin).toBe('http://{shop}:8080');
    expect(storeAdminUrl(byDefault)).toBe('http://demo.localhost:8080/admin');
    const moved = loadExampleConfig({ ...base, STOREGATE_API_ORIGIN: 'http://{shop}:8081' });
    expect(storeAdminUrl(moved)).toBe('http://demo.localhost:8081/admin');
    const hosted = loadExampleConfig({ ...base, STOREGATE_API_ORIGIN: 'https://{shop}/', STOREGATE_STORE_DOMAIN: 'shops.example' });
    expect(storeAdminUrl(hosted, 'acme')).toBe('https://acme.shops.example/admin');
  });
});

describe('session storage', () => {
  it('keeps sessions in the SQLite file across restarts (the default), creating its folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'example-app-'));
    const sqlitePath = join(dir, 'nested', 'sessions.db');
    const config = { ...loadExampleConfig({ STOREGATE_CLIENT_ID: 'id', STOREGATE_CLIENT_SECRET: 'secret', APP_SESSION_DB: sqlitePath }) };
    expect(config.sessionStorage).toEqual({ sqlitePath });
    try {
      const first = createExampleServer(config);
      await first.app.sessions.set({
        shop: SHOP,
        accessToken: 'sg_at_1',
        refreshToken: 'sg_rt_1',
        expiresAt: 2_000_000_000,
        scope: 'read_products',
      });
      first.close();
      const second = createExampleServer(config);
      expect(await second.app.sessions.get(SHOP)).toMatchObject({ accessToken: 'sg_at_1' });
      second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the example app', () => {
  let example: ExampleServer;
  let listener: http.Server;
  let base: string;
  let platform: (url: URL, init: RequestInit | undefined) => Response | Promise<Response>;
  const platformCalls: URL[] = [];

  const config: ExampleConfig = {
    ...loadExampleConfig({
      STOREGATE_CLIENT_ID: 'client-1',
      STOREGATE_CLIENT_SECRET: SECRET,
      APP_SESSION_STORAGE: 'memory',
      APP_WEBHOOK_LOG_SIZE: '3',
      APP_PAGE_SIZE: '2',
    }),
  };

  beforeAll(async () => {
    const stubFetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : input.toString());
      platformCalls.push(url);
      return platform(url, init);
    }) as typeof fetch;
    example = createExampleServer(config, { fetch: stubFetch, logger: {} });
    listener = http.createServer(example.server);
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((r) => listener.close(r));
    example.close();
  });

  beforeEach(async () => {
    platformCalls.length = 0;
    platform = () => Response.json({ code: 'ServerError', message: 'no stub' }, { status: 500 });
    await example.app.sessions.delete(SHOP);
  });

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${base}${path}`, { redirect: 'manual', headers });

  async function installSession(): Promise<void> {
    await example.app.sessions.set({
      shop: SHOP,
      accessToken: 'sg_at_test',
      refreshToken: 'sg_rt_test',
      expiresAt: Math.floor(Date.now() / 1000) + 3600,
      scope: config.scopes,
    });
  }

  /** Opens the app the way the store admin does (a signed App-URL request); returns the app's cookie. */
  async function openFromAdmin(): Promise<string> {
    const query = await signedQuery({ shop: SHOP, timestamp: String(Math.floor(Date.now() / 1000)) }, SECRET);
    const res = await get(`/?${query}`);
    expect(res.status).toBe(303);
    return res.headers.get('set-cookie')!.split(';')[0]!;
  }

  async function webhook(topic: string | undefined, payload: string, options: { id?: string; secret?: string; shop?: string } = {}) {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-service-hmac-sha256': await signWebhook(payload, options.secret ?? SECRET),
    };
    if (topic) headers['x-service-topic'] = topic;
    if (options.shop !== '') headers['x-service-shop-domain'] = options.shop ?? SHOP;
    if (options.id) headers['x-service-webhook-id'] = options.id;
    return fetch(`${base}/webhooks`, { method: 'POST', headers, body: payload });
  }

  describe('GET / (App URL)', () => {
    it('without a query is the home page with an install form', async () => {
      const res = await get('/');
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('<form method="get" action="/auth">');
    });

    it('a signed install request goes to the authorize URL with a state cookie', async () => {
      const query = await signedQuery({ shop: SHOP, timestamp: String(Math.floor(Date.now() / 1000)) }, SECRET);
      const res = await get(`/?${query}`);
      expect(res.status).toBe(302);
      const location = new URL(res.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).toBe('http://demo.localhost:8080/admin/oauth/authorize');
      expect(location.searchParams.get('redirect_uri')).toBe('http://localhost:3000/auth/callback');
      expect(location.searchParams.get('state')).toBeTruthy();
      expect(res.headers.get('set-cookie')).toMatch(/^storegate_state=/);
    });

    it('when installed with every scope, "Open" goes straight to the products with an access cookie', async () => {
      await installSession();
      const query = await signedQuery({ shop: SHOP, timestamp: String(Math.floor(Date.now() / 1000)) }, SECRET);
      const res = await get(`/?${query}`);
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe(`/products?shop=${SHOP}`);
      expect(res.headers.get('set-cookie')).toMatch(/^example_shop=/);
    });

    it.each([
      ['a wrong hmac', async () => `shop=${SHOP}&timestamp=${Math.floor(Date.now() / 1000)}&hmac=${'0'.repeat(64)}`, 'HMAC'],
      ['a stale timestamp', async () => signedQuery({ shop: SHOP, timestamp: '1000000000' }, SECRET), 'TIMESTAMP'],
      [
        'a shop of another domain',
        async () => signedQuery({ shop: 'demo.example.com', timestamp: String(Math.floor(Date.now() / 1000)) }, SECRET),
        'SHOP',
      ],
      ['no hmac at all', async () => `shop=${SHOP}&timestamp=1`, 'no hmac'],
    ])('refuses %s with 400 and says why', async (_name, query, reason) => {
      const res = await get(`/?${await query()}`);
      expect(res.status).toBe(400);
      expect(await res.text()).toContain(reason);
      expect(res.headers.get('location')).toBeNull();
    });

    it('answers other methods with 405', async () => {
      const res = await fetch(`${base}/`, { method: 'POST' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET');
    });
  });

  describe('GET /auth and /auth/callback', () => {
    it('/auth?shop=demo starts the install for demo.localhost', async () => {
      const res = await get('/auth?shop=demo');
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toMatch(/^http:\/\/demo\.localhost:8080\/admin\/oauth\/authorize\?/);
    });

    it.each([
      ['', 'Name the store'],
      ['?shop=', 'Name the store'],
      ['?shop=bad_name!', 'is not a store of localhost'],
      ['?shop=demo.example.com', 'is not a store of localhost'],
      ['?shop=a&shop=b', 'given 2 times'],
    ])('/auth%s is a 400', async (query, message) => {
      const res = await get(`/auth${query}`);
      expect(res.status).toBe(400);
      expect(await res.text()).toContain(message);
    });

    it('a callback without or with a forged state is refused before any code exchange', async () => {
      const none = await get('/auth/callback?code=x&shop=demo.localhost');
      expect(none.status).toBe(400);
      expect(await none.text()).toContain('STATE_MISSING');
      const forged = await get('/auth/callback?code=x&shop=demo.localhost&state=v1.e30.AAAA&timestamp=1&hmac=00');
      expect(forged.status).toBe(400);
      expect(platformCalls).toHaveLength(0);
    });

    it('a cancelled install says so', async () => {
      const begin = await get('/auth?shop=demo');
      const state = new URL(begin.headers.get('location')!).searchParams.get('state')!;
      const cookie = begin.headers.get('set-cookie')!.split(';')[0]!;
      const res = await get(`/auth/callback?error=access_denied&error_description=cancelled&state=${encodeURIComponent(state)}`, {
        cookie,
      });
      expect(res.status).toBe(403);
      expect(await res.text()).toContain('Installation cancelled');
    });

    it('a code the platform refuses is a 502 that offers to start again', async () => {
      const begin = await get('/auth?shop=demo');
      const state = new URL(begin.headers.get('location')!).searchParams.get('state')!;
      const cookie = begin.headers.get('set-cookie')!.split(';')[0]!;
      platform = () => Response.json({ error: 'invalid_grant', error_description: 'code expired' }, { status: 400 });
      const query = await signedQuery({ code: 'sg_ac_old', shop: SHOP, state, timestamp: String(Math.floor(Date.now() / 1000)) }, SECRET);
      const res = await get(`/auth/callback?${query}`, { cookie });
      expect(res.status).toBe(502);
      const html = await res.text();
      expect(html).toContain('invalid_grant');
      expect(html).toContain('/auth?shop=demo.localhost');
    });

    it('a good callback stores the session, subscribes the three topics, and shows the products', async () => {
      const begin = await get('/auth?shop=demo');
      const state = new URL(begin.headers.get('location')!).searchParams.get('state')!;
      const cookie = begin.headers.get('set-cookie')!.split(';')[0]!;
      const subscribed: unknown[] = [];
      platform = async (url, init) => {
        if (url.pathname === '/admin/oauth/token') {
          return Response.json({
            token_type: 'Bearer',
            access_token: 'sg_at_new',
            refresh_token: 'sg_rt_new',
            expires_at: Math.floor(Date.now() / 1000) + 3600,
            expires_in: 3600,
            store_id: '1',
            store_name: 'demo',
            scope: config.scopes,
          });
        }
        if (url.pathname === '/openapi/2026-01/webhooks') {
          const body = JSON.parse(String(init?.body)) as { topic: string };
          subscribed.push(body);
          return body.topic === 'app/uninstalled'
            ? Response.json(
                { code: 'ValidationFailed', message: 'invalid', errors: { address: ['is already subscribed to app/uninstalled'] } },
                { status: 422 },
              )
            : Response.json({ data: { id: '1', ...body } }, { status: 201 });
        }
        return Response.json({ code: 'NotFound', message: 'no' }, { status: 404 });
      };
      const query = await signedQuery({ code: 'sg_ac_good', shop: SHOP, state, timestamp: String(Math.floor(Date.now() / 1000)) }, SECRET);
      const res = await get(`/auth/callback?${query}`, { cookie });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe(`/products?shop=${SHOP}&installed=1`);
      expect(await example.app.sessions.get(SHOP)).toMatchObject({ accessToken: 'sg_at_new' });
      expect(subscribed).toEqual([
        { address: 'http://localhost:3000/webhooks', topic: 'products/create' },
        { address: 'http://localhost:3000/webhooks', topic: 'products/update' },
        { address: 'http://localhost:3000/webhooks', topic: 'app/uninstalled' },
      ]);
      const cookies = res.headers.getSetCookie();
      expect(cookies.some((c) => c.startsWith('storegate_state=;'))).toBe(true);
      const access = cookies.find((c) => c.startsWith('example_shop='))!.split(';')[0]!;
      const events = await (await get(`/events?shop=${SHOP}`, { cookie: access })).text();
      expect(events).toContain('app/uninstalled (already subscribed)');
      expect(events).toContain('products/create (subscribed)');
    });
  });

  describe('GET /products', () => {
    it('needs a shop and a browser that opened the app for it', async () => {
      expect((await get('/products')).status).toBe(400);
      const res = await get(`/products?shop=${SHOP}`);
      expect(res.status).toBe(403);
      expect(await res.text()).toContain('Open it from the store admin');
      // A cookie for another shop, or a tampered one, does not help.
      await installSession();
      const cookie = await openFromAdmin();
      expect((await get('/products?shop=other.localhost', { cookie })).status).toBe(403);
      expect((await get(`/products?shop=${SHOP}`, { cookie: `${cookie.slice(0, -2)}xx` })).status).toBe(403);
    });

    it.each([
      ['&version=2019-01', 'Unknown API version'],
      ['&direction=sideways', 'direction must be'],
      ['&direction=backward&cursor=abc', 'needs API version 2022-01'],
      ['&version=2022-01&direction=backward', 'pre_cursor'],
      ['&cursor=has%20space', 'The cursor must be'],
      ['&cursor=a&cursor=b', 'given 2 times'],
      ['&installed=yes', 'installed must be 1'],
    ])('refuses %s with 400 before calling the platform', async (query, message) => {
      await installSession();
      const cookie = await openFromAdmin();
      const res = await get(`/products?shop=${SHOP}${query}`, { cookie });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain(message);
      expect(platformCalls).toHaveLength(0);
    });

    it('2022-01: links to the next page (cursor) and the previous one (pre_cursor, backwards); titles are escaped', async () => {
      await installSession();
      const cookie = await openFromAdmin();
      platform = (url) =>
        Response.json({
          data: [
            {
              id: '3',
              title: '<script>alert(1)</script>',
              vendor: 'V',
              status: 'active',
              price: '1.00',
              updated_at: '2026-01-01T00:00:00Z',
            },
          ],
          cursor: 'next-c',
          pre_cursor: 'prev-c',
          echo: url.search,
        });
      const res = await get(`/products?shop=${SHOP}&version=2022-01&cursor=start-c`, { cookie });
      expect(res.status).toBe(200);
      expect(platformCalls[0]!.pathname).toBe('/openapi/2022-01/products');
      expect(Object.fromEntries(platformCalls[0]!.searchParams)).toEqual({ limit: '2', cursor: 'start-c' });
      const html = await res.text();
      expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(html).not.toContain('<script>');
      expect(html).toContain(`href="/products?shop=${SHOP}&amp;version=2022-01&amp;cursor=next-c"`);
      expect(html).toContain(`href="/products?shop=${SHOP}&amp;version=2022-01&amp;direction=backward&amp;cursor=prev-c"`);

      // Going back sends pre_cursor.
      await get(`/products?shop=${SHOP}&version=2022-01&direction=backward&cursor=prev-c`, { cookie });
      expect(Object.fromEntries(platformCalls.at(-1)!.searchParams)).toEqual({ limit: '2', pre_cursor: 'prev-c' });
    });

    it('2026-01: a next link while has_more, none on the last page, never a previous link', async () => {
      await installSession();
      const cookie = await openFromAdmin();
      platform = (url) =>
        Response.json(
          url.searchParams.has('cursor')
            ? { data: [{ id: '9', title: 'Last' }], cursor: '', has_more: false }
            : { data: [{ id: '1', title: 'First' }], cursor: 'c1', has_more: true },
        );
      const first = await (await get(`/products?shop=${SHOP}`, { cookie })).text();
      expect(first).toContain('cursor=c1');
      expect(first).not.toContain('Previous page');
      const last = await (await get(`/products?shop=${SHOP}&cursor=c1`, { cookie })).text();
      expect(last).toContain('Last page');
      expect(last).not.toContain('Next page');
    });

    it('platform errors become pages that say what to do', async () => {
      await installSession();
      const cookie = await openFromAdmin();
      platform = () => Response.json({ code: 'InvalidCursor', message: 'bad cursor' }, { status: 400 });
      expect((await get(`/products?shop=${SHOP}&cursor=zzz`, { cookie })).status).toBe(400);
      platform = () => Response.json({ code: 'Forbidden', message: 'needs read_products' }, { status: 403 });
      expect((await get(`/products?shop=${SHOP}`, { cookie })).status).toBe(403);
      platform = () => {
        throw new TypeError('fetch failed: ECONNREFUSED');
      };
      const down = await get(`/products?shop=${SHOP}`, { cookie });
      expect(down.status).toBe(502);
      expect(await down.text()).toContain('Could not reach the platform at http://demo.localhost:8080');
    });
  });

  describe('POST /webhooks and GET /events', () => {
    it('refuses unsigned, forged, empty and oversized bodies', async () => {
      const unsigned = await fetch(`${base}/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(unsigned.status).toBe(401);
      expect(await unsigned.text()).toMatch(/^WEBHOOK_/);
      expect((await webhook('products/update', '{"id":"1"}', { secret: 'wrong' })).status).toBe(401);
      expect((await fetch(`${base}/webhooks`, { method: 'POST' })).status).toBe(401);
      const huge = await fetch(`${base}/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `"${'x'.repeat(1_100_000)}"`,
      });
      expect(huge.status).toBe(413);
      expect((await webhook('products/update', '{"id":"1"}', { shop: '' })).status).toBe(400);
      expect((await webhook(undefined, '{"id":"1"}')).status).toBe(400);
      expect((await fetch(`${base}/webhooks`)).status).toBe(405);
    });

    it('shows verified webhooks newest first, once per webhook id, at most N', async () => {
      await installSession();
      const cookie = await openFromAdmin();
      expect((await get(`/events?shop=${SHOP}`)).status).toBe(403);
      for (let i = 1; i <= 4; i++)
        expect((await webhook('products/create', JSON.stringify({ id: String(i), title: `Product ${i}` }), { id: `wh_${i}` })).status).toBe(
          200,
        );
      const again = await webhook('products/create', JSON.stringify({ id: '4', title: 'Product 4' }), { id: 'wh_4' });
      expect(await again.text()).toContain('already received');
      const html = await (await get(`/events?shop=${SHOP}`, { cookie })).text();
      expect(html.indexOf('Product 4')).toBeLessThan(html.indexOf('Product 3'));
      expect(html).not.toContain('Product 1');
      expect(html).toContain('<meta http-equiv="refresh" content="5">');
    });

    it('app/uninstalled deletes the session', async () => {
      await installSession();
      const cookie = await openFromAdmin();
      expect((await webhook('app/uninstalled', JSON.stringify({ id: '1', name: 'demo' }), { id: 'wh_gone' })).status).toBe(200);
      expect(await example.app.sessions.get(SHOP)).toBeUndefined();
      const res = await get(`/products?shop=${SHOP}`, { cookie });
      expect(res.status).toBe(404);
      expect(await res.text()).toContain('Not installed');
    });
  });

  it('unknown paths are a 404 page', async () => {
    const res = await get('/nothing-here');
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('Nothing at GET /nothing-here');
  });
});
