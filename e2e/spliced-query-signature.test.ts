// A signed query must not be re-split into another message. The platform, the SDK and the example
// app together, in one process: the platform through inject() on both databases, the example app on
// a loopback port reaching the platform through inject(). A merchant of store "bravo" asks for an
// OAuth `state` holding `&` and `=` and tries to turn bravo's signed redirect into an App-URL launch
// for store "alpha", which would open alpha's products: the platform refuses the state before it
// signs anything, and a launch spliced from a redirect signed the old way (the raw parameters joined
// unescaped) is refused by the SDK and by the example app. Ordinary installs and launches still work.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyQuery } from '@storegate/app';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadExampleConfig } from '../examples/app/src/example-config.ts';
import { createExampleServer, type ExampleServer } from '../examples/app/src/example-server.ts';
import {
  api,
  createTestPlatform,
  csrfFrom,
  DIALECTS,
  formBody,
  type Jar,
  login,
  privateToken,
  type Fixture,
  type TestPlatform,
} from '../packages/platform/test/harness.ts';

const APP_URL = 'http://localhost:3000/';
const REDIRECT_URI = 'http://localhost:3000/auth/callback';
const SCOPES = 'read_products write_products read_orders read_customers';
const ALPHA = 'alpha.localhost';
const BRAVO = 'bravo.localhost';
/** What bravo's merchant sends as `state`: once joined unescaped, it reads as a second `shop`. */
const SPLICING_STATE = `x&shop=${ALPHA}`;

/** The example app's `fetch`: every call to a store goes to the in-process platform. */
function platformFetch(t: TestPlatform): typeof fetch {
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
    for (const [name, value] of Object.entries(res.headers)) {
      for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) out.append(name, String(v));
    }
    return new Response(res.statusCode === 204 ? null : new Uint8Array(res.rawPayload), { status: res.statusCode, headers: out });
  }) as typeof fetch;
}

/** The hidden fields of the consent page, as a browser would post them back. */
function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[m[1]!] = m[2]!
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  return fields;
}

/** The `name=value` of a Set-Cookie header for `name`, or undefined. */
function cookieOf(res: Response, name: string): string | undefined {
  return res.headers
    .getSetCookie()
    .map((line) => line.split(';')[0]!)
    .find((pair) => pair.startsWith(`${name}=`) && pair.length > name.length + 1);
}

describe.each(DIALECTS)('a signed query cannot be re-split into another message (%s)', (dialect) => {
  let t: TestPlatform;
  let example: ExampleServer;
  let listener: http.Server;
  let base: string;
  let clientId: string;
  let clientSecret: string;
  let alpha: Fixture;
  let bravo: Fixture;

  /** The example app, as a browser reaches it (no redirects followed). */
  const app = (path: string, cookie?: string) => fetch(`${base}${path}`, { redirect: 'manual', headers: cookie ? { cookie } : {} });

  /** The store admin's "Install"/"Open" link: the platform's signed redirect to the App URL. */
  async function launchFromAdmin(f: Fixture, jar: Jar): Promise<URL> {
    const res = await t.app.inject({
      method: 'GET',
      url: `/admin/apps/${clientId}/install`,
      headers: { host: f.host, cookie: jar.header() },
    });
    expect(res.statusCode).toBe(303);
    return new URL(res.headers.location as string);
  }

  /** Opens the consent page at `authorize` and presses "Install app"; returns the platform's answer. */
  async function consent(f: Fixture, jar: Jar, authorize: URL) {
    const page = await t.app.inject({
      method: 'GET',
      url: `${authorize.pathname}${authorize.search}`,
      headers: { host: f.host, cookie: jar.header() },
    });
    if (page.statusCode !== 200) return page;
    jar.take(page);
    return t.app.inject({
      method: 'POST',
      url: '/admin/oauth/authorize',
      headers: { host: f.host, cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: formBody({ ...hiddenFields(page.body), _csrf: csrfFrom(page.body), decision: 'install' }),
    });
  }

  beforeAll(async () => {
    t = await createTestPlatform(dialect);
    // The example app checks timestamps against the wall clock: the platform's clock starts there.
    t.clock.now = Date.now();
    const password = 'correct horse battery';
    const fixture = (name: string): Fixture => ({
      storeName: name,
      host: `${name}.localhost:8080`,
      email: `owner@${name}.test`,
      password,
      clientId: '',
      appName: 'Example app',
      clientSecret: '',
      redirectUri: REDIRECT_URI,
      appUrl: APP_URL,
    });
    alpha = fixture('alpha');
    bravo = fixture('bravo');
    for (const f of [alpha, bravo])
      await t.services.accounts.createStore({ name: f.storeName, ownerEmail: f.email, ownerPassword: password });
    const created = await t.services.apps.createApp({ name: 'Example app', appUrl: APP_URL, redirectUri: REDIRECT_URI, scopes: SCOPES });
    clientId = created.app.client_id;
    clientSecret = created.clientSecret;
    const writer = await privateToken(t, 'alpha', 'write_products');
    const product = await api(t, alpha, writer, 'POST', '/openapi/2026-01/products', { title: 'Alpha private catalogue item' });
    expect(product.statusCode).toBe(201);

    example = createExampleServer(
      loadExampleConfig({ STOREGATE_CLIENT_ID: clientId, STOREGATE_CLIENT_SECRET: clientSecret, APP_SESSION_STORAGE: 'memory' }),
      { fetch: platformFetch(t), logger: {} },
    );
    listener = http.createServer(example.server);
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    if (listener) await new Promise((r) => listener.close(r));
    example?.close();
    await t?.close();
  });

  it('an ordinary install and launch go through: platform → example app → consent → callback → products', async () => {
    const jar = await login(t, alpha);
    const launch = await launchFromAdmin(alpha, jar);
    expect(`${launch.origin}${launch.pathname}`).toBe(APP_URL);
    expect([...launch.searchParams.keys()].sort()).toEqual(['hmac', 'shop', 'timestamp']);
    const begun = await app(`/${launch.search}`);
    expect(begun.status).toBe(302);
    const stateCookie = cookieOf(begun, 'storegate_state')!;
    const back = await consent(alpha, jar, new URL(begun.headers.get('location')!));
    expect(back.statusCode).toBe(303);
    const callback = new URL(back.headers.location as string);
    expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
    const installed = await app(`/auth/callback${callback.search}`, stateCookie);
    expect(installed.status).toBe(303);
    const access = cookieOf(installed, 'example_shop')!;
    const products = await app(`/products?shop=${ALPHA}`, access);
    expect(products.status).toBe(200);
    expect(await products.text()).toContain('Alpha private catalogue item');

    // "Open" from the admin, installed with every scope: straight to the products.
    const open = await app(`/${(await launchFromAdmin(alpha, jar)).search}`);
    expect(open.status).toBe(303);
    expect(open.headers.get('location')).toBe(`/products?shop=${ALPHA}`);
    expect(cookieOf(open, 'example_shop')).toBeDefined();
  });

  it('the platform refuses a state with characters outside letters, digits and -._~ before it signs anything', async () => {
    const jar = await login(t, bravo);
    const store = await t.services.accounts.findStoreByName('bravo');
    const authorize = new URL(`http://${bravo.host}/admin/oauth/authorize`);
    authorize.search = new URLSearchParams({
      client_id: clientId,
      scope: 'read_products',
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      state: SPLICING_STATE,
    }).toString();
    const answer = await consent(bravo, jar, authorize);
    expect(answer.statusCode).toBe(303);
    const back = new URL(answer.headers.location as string);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('error_description')).toMatch(/state.*letters, digits/);
    for (const signed of ['code', 'hmac', 'timestamp', 'shop']) expect(back.searchParams.has(signed)).toBe(false);
    expect(await t.services.apps.findInstallation(store!.id, (await t.services.apps.findByClientId(clientId))!.id)).toBeUndefined();
  });

  it('a launch for alpha spliced from a redirect signed for bravo the old way is refused by the SDK and the example app', async () => {
    // What bravo's signed redirect carried when signed values were joined unescaped.
    const timestamp = String(Math.floor(Date.now() / 1000));
    const code = 'sg_ac_bravo-code';
    const legacyMessage = `code=${code}&shop=${BRAVO}&state=${SPLICING_STATE}&timestamp=${timestamp}`;
    const hmac = createHmac('sha256', clientSecret).update(legacyMessage).digest('hex');
    // The same string re-split: `code` swallows bravo's shop and the state, `shop` names alpha.
    const forged = new URLSearchParams({ code: `${code}&shop=${BRAVO}&state=x`, shop: ALPHA, timestamp, hmac }).toString();

    // The launch check refuses the stray `code`; and the signature alone no longer matches either,
    // since `&` and `=` inside a value are escaped before joining.
    await expect(example.app.verifyInstallRequest(`?${forged}`)).rejects.toMatchObject({ code: 'PARAMETER_UNEXPECTED' });
    await expect(verifyQuery(`?${forged}`, clientSecret)).rejects.toMatchObject({ code: 'HMAC_INVALID' });
    const opened = await app(`/?${forged}`);
    expect(opened.status).toBe(400);
    expect(await opened.text()).toContain('could not be verified');
    expect(cookieOf(opened, 'example_shop')).toBeUndefined();
    const products = await app(`/products?shop=${ALPHA}`);
    expect(products.status).toBe(403);
    expect(await products.text()).not.toContain('Alpha private catalogue item');
  });
});
