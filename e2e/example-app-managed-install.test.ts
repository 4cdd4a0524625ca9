// The example app in managed-install mode (STOREGATE_MANAGED_INSTALL=1) against the real platform,
// over plain HTTP: the merchant logs in to the store admin and installs the app on the platform's
// own consent page; the platform opens the App URL with a signed launch; the app exchanges the
// launch token at the token endpoint and answers with the store's products, with no redirect of its
// own. Opening it again gives the merchant's online token; the SDK's own token exchange meets the
// platform's refusals, and its client calls the API with Access-Token or Authorization: Bearer;
// uninstalling makes the app forget the store. Both as child processes (the
// entry point `npm run example` runs, real webhooks), and in-process on SQLite and PostgreSQL.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, LaunchTokenError, memorySessionStorage, TokenExchangeError } from '@storegate/app';
import { localhostFetch } from '@storegate/app/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadExampleConfig } from '../examples/app/src/example-config.ts';
import { createExampleServer, type ExampleServer } from '../examples/app/src/example-server.ts';
import {
  api,
  createFixture,
  createTestPlatform,
  csrfFrom,
  DIALECTS,
  formBody,
  login,
  privateToken,
  type TestPlatform,
} from '../packages/platform/test/harness.ts';
import { startExampleApp, type RunningExampleApp } from './example-app-process.ts';
import { CookieJar } from './merchant-consent.ts';
import { cli, freePort, request, startServer, type RunningServer } from './server-process.ts';

const merchant = { email: 'owner@managed-e2e.test', password: 'managed-e2e-password' };
const SHOP = 'managed.localhost';

function decodeEntities(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

describe('example app with managed install, against the real platform', () => {
  let platform: RunningServer;
  let example: RunningExampleApp;
  let credentials: { client_id: string; client_secret: string; managed_install: boolean };
  const jar = new CookieJar();
  const appCookies = new CookieJar();

  beforeAll(async () => {
    const appPort = await freePort();
    platform = await startServer({
      prepare: (database) => {
        cli(database, ['stores', 'create', 'managed', '--owner-email', merchant.email, '--owner-password', merchant.password]);
        cli(database, ['seed', '--store', 'managed', '--products', '14']);
        credentials = cli(database, [
          'apps',
          'create',
          '--name',
          'Managed example',
          '--app-url',
          `http://localhost:${appPort}/`,
          '--redirect-uri',
          `http://localhost:${appPort}/auth/callback`,
          '--scopes',
          'read_products write_products',
          '--managed-install',
        ]);
        expect(credentials.managed_install).toBe(true);
      },
    });
    example = await startExampleApp({
      port: appPort,
      platformPort: platform.port,
      clientId: credentials.client_id,
      clientSecret: credentials.client_secret,
      env: { STOREGATE_MANAGED_INSTALL: '1' },
    });
  }, 60_000);

  afterAll(async () => {
    await example?.stop();
    await platform?.stop();
  });

  const host = () => `managed.localhost:${platform.port}`;
  const admin = async (method: 'GET' | 'POST', path: string, fields?: Record<string, string>) => {
    const res = await request(platform.port, host(), method, path, fields ? new URLSearchParams(fields).toString() : undefined, {
      cookie: jar.header(),
    });
    jar.take(res.headers['set-cookie']);
    return res;
  };
  /** The browser following the platform's redirect to the App URL: one GET to the example app. */
  const followToApp = async (location: string) => {
    const url = new URL(location);
    expect(url.origin).toBe(`http://localhost:${example.port}`);
    const res = await request(example.port, `localhost:${example.port}`, 'GET', `${url.pathname}${url.search}`, undefined, {
      cookie: appCookies.header(),
    });
    appCookies.take(res.headers['set-cookie']);
    return res;
  };

  /** Store admin → Install (log in first, then the platform's consent page) → the launch redirect. */
  async function installFromAdmin(): Promise<URL> {
    const installPath = `/admin/apps/${credentials.client_id}/install`;
    let page = await admin('GET', installPath);
    if (page.status === 302 || page.status === 303) {
      const loginUrl = new URL(page.headers.location!, `http://${host()}`);
      const login = await admin('GET', `${loginUrl.pathname}${loginUrl.search}`);
      expect(login.status).toBe(200);
      const returnTo = /name="return_to" value="([^"]*)"/.exec(login.body)?.[1];
      const loggedIn = await admin('POST', '/admin/login', {
        _csrf: /name="_csrf" value="([^"]+)"/.exec(login.body)![1]!,
        email: merchant.email,
        password: merchant.password,
        return_to: decodeEntities(returnTo ?? installPath),
      });
      expect(loggedIn.status).toBe(303);
      page = await admin('GET', installPath);
    }
    expect(page.status, page.body.slice(0, 300)).toBe(200);
    expect(page.body).toContain('Install Managed example?');
    const fields: Record<string, string> = {};
    for (const m of page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]!] = decodeEntities(m[2]!);
    const decided = await admin('POST', installPath, { ...fields, decision: 'install' });
    expect(decided.status, decided.body.slice(0, 300)).toBe(303);
    return new URL(decided.headers.location!);
  }

  let firstLaunch: URL;

  it('installs in the store admin; the app exchanges the launch token and shows the products with no redirect of its own', async () => {
    firstLaunch = await installFromAdmin();
    expect([...firstLaunch.searchParams.keys()].sort()).toEqual(['hmac', 'id_token', 'shop', 'timestamp']);
    expect(firstLaunch.searchParams.get('shop')).toBe(SHOP);

    const res = await followToApp(firstLaunch.toString());
    expect(res.status, res.body.slice(0, 500)).toBe(200);
    expect(res.headers.location).toBeUndefined();
    expect(res.body).toContain('<h1>Products</h1>');
    expect(res.body).toContain('The app is installed in managed.localhost');
    expect(res.body.match(/<tr><td>/g)).toHaveLength(10);
    // Its webhooks were subscribed with the exchanged offline token.
    expect(res.body).toContain('products/create (subscribed)');

    // The access cookie the launch set opens the app's other pages; the next page comes through the API too.
    const next = /href="(\/products\?[^"]+cursor=[^"]+)"/.exec(res.body)?.[1];
    expect(next).toBeDefined();
    const second = await request(example.port, `localhost:${example.port}`, 'GET', decodeEntities(next!), undefined, {
      cookie: appCookies.header(),
    });
    expect(second.status).toBe(200);
    expect(second.body.match(/<tr><td>/g)).toHaveLength(4);
  });

  it('opening it again gives the merchant online token, and the page names the merchant', async () => {
    // Installed with every declared scope: Install/Open goes straight to the app with a new launch token.
    const launch = await admin('GET', `/admin/apps/${credentials.client_id}/install`);
    expect(launch.status).toBe(303);
    const location = new URL(launch.headers.location!);
    expect(location.searchParams.get('id_token')).not.toBe(firstLaunch.searchParams.get('id_token'));
    const res = await followToApp(location.toString());
    expect(res.status, res.body.slice(0, 500)).toBe(200);
    expect(res.body).toContain(`Opened by <strong>${merchant.email}</strong>`);
    expect(res.body.match(/<tr><td>/g)).toHaveLength(10);
  });

  it('the SDK exchanges a fresh launch token itself and calls the API with it (Access-Token or Bearer); the platform refuses it a second time, and a token for another app is refused before it is sent', async () => {
    const sessionStorage = memorySessionStorage();
    const sent: Headers[] = [];
    const recording: typeof fetch = (input, init) => {
      sent.push(new Headers(init?.headers));
      return localhostFetch()(input, init);
    };
    const settings = {
      clientId: credentials.client_id,
      clientSecret: credentials.client_secret,
      scopes: 'read_products',
      redirectUri: `http://localhost:${example.port}/auth/callback`,
      apiOrigin: `http://{shop}:${platform.port}`,
      fetch: recording,
      sessionStorage,
    };
    const app = createApp(settings);
    const launch = await admin('GET', `/admin/apps/${credentials.client_id}/install`);
    const install = await app.verifyInstallRequest(new URL(launch.headers.location!).search);
    expect(install.shop).toBe(SHOP);
    const verified = await app.verifyLaunchToken(install.idToken!);
    expect(verified).toMatchObject({ shop: SHOP, claims: { iss: `http://${SHOP}:${platform.port}`, aud: credentials.client_id } });

    const online = await app.auth.tokenExchange({ idToken: install.idToken!, shop: SHOP, online: true });
    expect(online).toMatchObject({ online: true, refreshToken: null, associatedUser: { id: verified.userId, email: merchant.email } });
    const { data } = await app.client(SHOP, { userId: verified.userId }).get<{ data: unknown[] }>('products', { query: { limit: 3 } });
    expect(data).toHaveLength(3);
    expect(sent.at(-1)!.get('access-token')).toBe(online.accessToken);
    const bearer = createApp({ ...settings, apiAuthentication: 'bearer' });
    const viaBearer = await bearer.client(SHOP, { userId: verified.userId }).get<{ data: unknown[] }>('products', { query: { limit: 2 } });
    expect(viaBearer.data).toHaveLength(2);
    expect(sent.at(-1)!.get('authorization')).toBe(`Bearer ${online.accessToken}`);
    expect(sent.at(-1)!.has('access-token')).toBe(false);

    const again = await app.auth.tokenExchange({ idToken: install.idToken!, shop: SHOP }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(TokenExchangeError);
    expect(again).toMatchObject({ status: 400, oauthError: 'invalid_grant' });

    const other = createApp({
      clientId: 'sg_ci_not_this_app',
      clientSecret: credentials.client_secret,
      scopes: 'read_products',
      redirectUri: 'http://localhost:1/cb',
      apiOrigin: `http://{shop}:${platform.port}`,
      fetch: localhostFetch(),
    });
    await expect(other.auth.tokenExchange({ idToken: install.idToken! })).rejects.toBeInstanceOf(LaunchTokenError);
  });

  it('uninstalling sends app/uninstalled and the app forgets the store', async () => {
    cli(platform.database, ['apps', 'uninstall', '--store', 'managed', '--client-id', credentials.client_id]);
    await expect
      .poll(
        async () => {
          const res = await request(example.port, `localhost:${example.port}`, 'GET', `/products?shop=${SHOP}`, undefined, {
            cookie: appCookies.header(),
          });
          return /<h1>([^<]*)<\/h1>/.exec(res.body)?.[1];
        },
        { timeout: 15_000, interval: 300 },
      )
      .toBe('Not installed');
    expect(example.output()).not.toMatch(/unexpected error/);
  });
});

/** The example app's `fetch` into the in-process platform (Fastify's inject), as a store's host. */
function injectFetch(t: TestPlatform): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : input.toString());
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const res = await t.app.inject({
      method: (init?.method ?? 'GET') as 'GET',
      url: `${url.pathname}${url.search}`,
      headers: { ...headers, host: url.host },
      ...(typeof init?.body === 'string' ? { payload: init.body } : {}),
    });
    const out = new Headers();
    for (const [name, value] of Object.entries(res.headers))
      for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) out.append(name, String(v));
    return new Response(res.statusCode === 204 ? null : new Uint8Array(res.rawPayload), { status: res.statusCode, headers: out });
  }) as typeof fetch;
}

describe.each(DIALECTS)('example app with managed install, in-process on %s', (dialect) => {
  let t: TestPlatform;
  let example: ExampleServer;
  let listener: http.Server;
  let base: string;

  beforeAll(async () => {
    t = await createTestPlatform(dialect);
    // The launch's timestamp and token are checked against the app's wall clock.
    t.clock.now = Date.now();
  });
  afterAll(async () => {
    if (listener) await new Promise((r) => listener.close(r));
    example?.close();
    await t?.close();
  });

  it('install → launch → token exchange → products, no redirect; the next launch names the merchant', async () => {
    const f = await createFixture(t, { scopes: 'read_products write_products' });
    const appRow = (await t.services.apps.findByClientId(f.clientId))!;
    await t.services.apps.setManagedInstall(appRow.id, true);
    const catalogue = await privateToken(t, f.storeName, 'write_products');
    for (const title of ['Kettle', 'Teapot', 'Mug'])
      expect((await api(t, f, catalogue, 'POST', '/openapi/2026-01/products', { title, price: '9.00' })).statusCode).toBe(201);

    const config = loadExampleConfig({
      STOREGATE_CLIENT_ID: f.clientId,
      STOREGATE_CLIENT_SECRET: f.clientSecret,
      APP_SESSION_STORAGE: 'memory',
      STOREGATE_MANAGED_INSTALL: '1',
    });
    example = createExampleServer(config, { fetch: injectFetch(t), logger: {} });
    listener = http.createServer(example.server);
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;

    const jar = await login(t, f);
    const installPath = `/admin/apps/${f.clientId}/install`;
    const consentPage = await t.app.inject({ method: 'GET', url: installPath, headers: { host: f.host, cookie: jar.header() } });
    expect(consentPage.statusCode).toBe(200);
    const scopes = /<input type="hidden" name="scopes" value="([^"]*)">/.exec(consentPage.body)![1]!;
    const approved = await t.app.inject({
      method: 'POST',
      url: installPath,
      headers: { host: f.host, cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: formBody({ _csrf: csrfFrom(consentPage.body), scopes, decision: 'install' }),
    });
    expect(approved.statusCode).toBe(303);
    const launch = new URL(approved.headers.location as string);
    expect(launch.origin + launch.pathname).toBe('http://localhost:3000/');

    const shop = `${f.storeName}.localhost`;
    const res = await fetch(`${base}/${launch.search}`, { redirect: 'manual' });
    const html = await res.text();
    expect(res.status, html.slice(0, 500)).toBe(200);
    expect(res.headers.get('location')).toBeNull();
    for (const title of ['Kettle', 'Teapot', 'Mug']) expect(html).toContain(title);
    expect(await example.app.sessions.get(shop)).toMatchObject({ id: shop, refreshToken: expect.stringMatching(/^sg_rt_/) });

    const again = await t.app.inject({ method: 'GET', url: installPath, headers: { host: f.host, cookie: jar.header() } });
    expect(again.statusCode).toBe(303);
    const second = await fetch(`${base}/${new URL(again.headers.location as string).search}`, { redirect: 'manual' });
    const secondHtml = await second.text();
    expect(second.status, secondHtml.slice(0, 500)).toBe(200);
    expect(secondHtml).toContain(`Opened by <strong>${f.email}</strong>`);
    const merchantId = /merchant (\d+), online token/.exec(secondHtml)![1]!;
    expect(await example.app.getSession(shop, { userId: merchantId })).toMatchObject({
      id: `online_${shop}_${merchantId}`,
      online: true,
      refreshToken: null,
      associatedUser: { id: merchantId, email: f.email },
    });
  });
});
