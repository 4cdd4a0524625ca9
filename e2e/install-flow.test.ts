// End to end: the real server on a port, a merchant logging in and consenting in headless Chromium,
// the redirect received by a local listener (hmac and state verified independently here), then the
// code exchanged and the token refreshed over HTTP.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, cli, request, startServer, type RunningServer } from './server-process.ts';

/** Seed §5.4, written out independently of the platform's own signer. */
function hmacValid(search: URLSearchParams, secret: string): boolean {
  const given = search.get('hmac') ?? '';
  const message = [...search.entries()]
    .filter(([k]) => k !== 'hmac')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const expected = createHmac('sha256', secret).update(message).digest();
  return given.length === 64 && timingSafeEqual(expected, Buffer.from(given, 'hex'));
}

describe.skipIf(!process.env.TEST_CHROMIUM)('install flow in a browser', () => {
  let server: RunningServer;
  let browser: Browser;
  let listener: http.Server;
  let listenerPort: number;
  const received: URL[] = [];
  let app: { client_id: string; client_secret: string };

  beforeAll(async () => {
    listener = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (url.pathname !== '/favicon.ico') received.push(url);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>App received the install</h1>');
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    listenerPort = (listener.address() as AddressInfo).port;
    server = await startServer({
      prepare: (database) => {
        cli(database, ['stores', 'create', 'e2e', '--owner-email', 'owner@e2e.test', '--owner-password', 'e2e-password']);
        app = cli(database, [
          'apps',
          'create',
          '--name',
          'E2E App',
          '--app-url',
          `http://127.0.0.1:${listenerPort}/`,
          '--redirect-uri',
          `http://127.0.0.1:${listenerPort}/callback`,
          '--scopes',
          'read_products',
        ]);
      },
    });
    browser = await chromium.launch({ executablePath: process.env.TEST_CHROMIUM, args: CHROMIUM_ARGS });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await new Promise((r) => listener?.close(r));
  });

  it('merchant logs in and installs; the app verifies hmac and state, exchanges the code and refreshes', async () => {
    const state = randomBytes(16).toString('base64url');
    const redirectUri = `http://127.0.0.1:${listenerPort}/callback`;
    const base = `http://e2e.localhost:${server.port}`;
    const authorize = `${base}/admin/oauth/authorize?${new URLSearchParams({ client_id: app.client_id, scope: 'read_products write_products', redirect_uri: redirectUri, response_type: 'code', state })}`;
    const page = await browser.newPage();
    await page.goto(authorize);
    // Not logged in: the login page, then back to the consent page.
    await page.getByLabel('Email').fill('owner@e2e.test');
    await page.getByLabel('Password').fill('e2e-password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Install E2E App?' }).waitFor();
    expect(await page.textContent('main')).toContain('See, create, change and delete your products');
    // Into the git-ignored artifacts folder; `npm run screenshots` copies it into docs/screenshots/.
    await page.screenshot({ path: new URL('artifacts/screenshots/consent.png', import.meta.url).pathname, fullPage: true });
    await page.getByRole('button', { name: 'Install app' }).click();
    await page.getByRole('heading', { name: 'App received the install' }).waitFor();

    expect(received).toHaveLength(1);
    const callback = received[0]!;
    expect(callback.pathname).toBe('/callback');
    expect(callback.searchParams.get('state')).toBe(state);
    expect(callback.searchParams.get('shop')).toBe('e2e.localhost');
    expect(hmacValid(callback.searchParams, app.client_secret)).toBe(true);
    const tampered = new URLSearchParams(callback.searchParams);
    tampered.set('shop', 'evil.localhost');
    expect(hmacValid(tampered, app.client_secret)).toBe(false);

    const host = `e2e.localhost:${server.port}`;
    const exchanged = await request(
      server.port,
      host,
      'POST',
      '/admin/oauth/token',
      new URLSearchParams({
        client_id: app.client_id,
        client_secret: app.client_secret,
        code: callback.searchParams.get('code')!,
        grant_type: 'authorization_code',
        redirect_uri: redirectUri,
      }).toString(),
    );
    expect(exchanged.status).toBe(200);
    const tokens = JSON.parse(exchanged.body);
    expect(tokens).toMatchObject({ token_type: 'Bearer', store_name: 'e2e', scope: 'read_products write_products' });
    const refreshed = await request(
      server.port,
      host,
      'POST',
      '/admin/oauth/token',
      JSON.stringify({
        client_id: app.client_id,
        client_secret: app.client_secret,
        refresh_token: tokens.refresh_token,
        grant_type: 'refresh_token',
        redirect_uri: redirectUri,
      }),
      { 'content-type': 'application/json' },
    );
    expect(refreshed.status).toBe(200);
    const next = JSON.parse(refreshed.body);
    expect(next.access_token).not.toBe(tokens.access_token);
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
    // The server's own output never shows the tokens it issued.
    expect(server.output()).not.toContain(tokens.access_token);
    expect(server.output()).not.toContain(next.refresh_token);
    await page.close();
  });

  it('install from the store admin reaches the App URL with a valid signature', async () => {
    const page = await browser.newPage();
    await page.goto(`http://e2e.localhost:${server.port}/admin`);
    await page.getByLabel('Email').fill('owner@e2e.test');
    await page.getByLabel('Password').fill('e2e-password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'e2e · Apps' }).waitFor();
    const before = received.length;
    await page
      .getByRole('link', { name: /Install|Open/ })
      .first()
      .click();
    await page.getByRole('heading', { name: 'App received the install' }).waitFor();
    const hit = received[before]!;
    expect(hit.pathname).toBe('/');
    expect(hit.searchParams.get('shop')).toBe('e2e.localhost');
    expect(hmacValid(hit.searchParams, app.client_secret)).toBe(true);
    await page.close();
  });
});
