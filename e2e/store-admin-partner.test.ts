// End to end in headless Chromium against `storegate serve` on a port (issue 5):
// - the partner creates an app in the dashboard and rotates its secret;
// - the merchant installs it from the store admin (signed App-URL launch → consent), opens it, and
//   uninstalls it (tokens revoked, app/uninstalled delivered);
// - a webhook delivery fails every attempt (the local receiver answers 500), the partner sees it dead
//   with its attempts and sends it again once the receiver answers 200;
// - the merchant creates a private app (token shown once, copy button) and revokes it.
// Screenshots of the store admin and the partner dashboard go to e2e/artifacts/screenshots/ (ignored by
// git, so a test run leaves the tree clean); `npm run screenshots` copies them into docs/screenshots/.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, cli, request, startServer, type RunningServer } from './server-process.ts';

const shot = (name: string) => new URL(`artifacts/screenshots/${name}`, import.meta.url).pathname;
const MERCHANT = { email: 'owner@admin-e2e.test', password: 'merchant-password' };
const PARTNER = { email: 'dev@partner-e2e.test', password: 'partner-password' };

describe.skipIf(!process.env.TEST_CHROMIUM)('store admin and partner dashboard in a browser', () => {
  let server: RunningServer;
  let browser: Browser;
  let receiver: http.Server;
  let rport = 0;
  let hooksFail = true;
  let clientId = '';
  const hooks: { topic: string; status: number }[] = [];
  const appHits: URL[] = [];
  const callbacks: URL[] = [];

  const store = () => `http://shop.localhost:${server.port}`;
  const platform = () => `http://localhost:${server.port}`;
  const api = (method: string, path: string, token: string, body?: unknown) =>
    request(server.port, `shop.localhost:${server.port}`, method, path, body === undefined ? undefined : JSON.stringify(body), {
      'access-token': token,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    });

  beforeAll(async () => {
    // The app's server: App URL (sends the merchant to the authorize page, as an app does),
    // redirect URL (records the code), and the webhook address (500 until told otherwise).
    receiver = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', `http://127.0.0.1:${rport}`);
      if (url.pathname === '/app') {
        appHits.push(url);
        const authorize = new URL(`${store()}/admin/oauth/authorize`);
        authorize.search = new URLSearchParams({
          client_id: clientId,
          scope: 'read_products write_products',
          redirect_uri: `http://127.0.0.1:${rport}/callback`,
          response_type: 'code',
          state: `st-${appHits.length}`,
        }).toString();
        res.writeHead(303, { location: authorize.toString() }).end();
      } else if (url.pathname === '/callback') {
        callbacks.push(url);
        res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Partner app is installed</h1>');
      } else if (url.pathname === '/hook') {
        req.resume();
        req.on('end', () => {
          const topic = String(req.headers['x-service-topic']);
          const status = hooksFail && topic !== 'app/uninstalled' ? 500 : 200;
          hooks.push({ topic, status });
          res.writeHead(status).end(status === 200 ? 'ok' : 'receiver is down');
        });
      } else res.writeHead(404).end();
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    rport = (receiver.address() as AddressInfo).port;
    [server, browser] = await Promise.all([
      startServer({
        prepare: (database) => {
          cli(database, ['stores', 'create', 'shop', '--owner-email', MERCHANT.email, '--owner-password', MERCHANT.password]);
          cli(database, ['partners', 'create', '--email', PARTNER.email, '--password', PARTNER.password]);
        },
        // One quick retry, so a receiver answering 500 makes the delivery dead within moments.
        args: ['--webhook-retry-schedule', '5ms'],
      }),
      chromium.launch({ executablePath: process.env.TEST_CHROMIUM, args: CHROMIUM_ARGS }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await new Promise((r) => receiver?.close(r));
  });

  async function logIn(page: Page, who: { email: string; password: string }) {
    await page.getByLabel('Email').fill(who.email);
    await page.getByLabel('Password').fill(who.password);
    await page.getByRole('button', { name: 'Log in' }).click();
  }

  it('partner creates and rotates; merchant installs, opens, uninstalls; a dead webhook is sent again; private app created and revoked', async () => {
    const partnerPage = await browser.newPage();
    await partnerPage.goto(`${platform()}/partner`);
    await logIn(partnerPage, PARTNER);
    await partnerPage.getByRole('heading', { name: 'Your apps' }).waitFor();

    // The partner creates the app; a bad redirect URL first comes back with the error.
    await partnerPage.getByRole('link', { name: 'Create an app' }).click();
    await partnerPage.getByLabel('App name').fill('Partner E2E App');
    await partnerPage.getByLabel('App URL').fill(`http://127.0.0.1:${rport}/app`);
    await partnerPage.getByLabel('Redirect URL').fill(`http://127.0.0.1:${rport}/callback#x`);
    await partnerPage.getByLabel(/See your products/).check();
    await partnerPage.getByRole('button', { name: 'Create app' }).click();
    await partnerPage.getByText('must not contain "#"').waitFor();
    await partnerPage.getByLabel('Redirect URL').fill(`http://127.0.0.1:${rport}/callback`);
    await partnerPage.getByRole('button', { name: 'Create app' }).click();
    await partnerPage.getByRole('heading', { name: 'App created' }).waitFor();
    const firstSecret = await partnerPage.getByLabel('Client secret').inputValue();
    expect(firstSecret).toMatch(/^sg_cs_/);
    clientId = (await partnerPage.locator('dd code').first().textContent())!.trim();
    expect(clientId).toMatch(/^[0-9a-f]{32}$/);

    // Rotate: a new secret, shown once; the old one keeps working for 24 hours.
    await partnerPage.getByRole('link', { name: 'Back to the app settings' }).click();
    // Rotating asks first: the settings page links to a confirmation page whose button acts.
    await partnerPage.getByRole('link', { name: 'Rotate client secret' }).click();
    await partnerPage.getByRole('heading', { name: 'Rotate the client secret of Partner E2E App?' }).waitFor();
    await partnerPage.getByRole('button', { name: 'Rotate client secret' }).click();
    await partnerPage.getByRole('heading', { name: 'New client secret' }).waitFor();
    const secret = await partnerPage.getByLabel('Client secret').inputValue();
    expect(secret).toMatch(/^sg_cs_/);
    expect(secret).not.toBe(firstSecret);
    await partnerPage.reload();
    await partnerPage.getByRole('heading', { name: 'Already shown' }).waitFor();

    // The merchant installs it from the app list: signed launch → the app → consent → callback.
    const merchantPage = await browser.newPage();
    await merchantPage.goto(`${store()}/admin`);
    await logIn(merchantPage, MERCHANT);
    await merchantPage.getByRole('heading', { name: 'shop · Apps' }).waitFor();
    await merchantPage
      .getByRole('row', { name: /Partner E2E App/ })
      .getByRole('link', { name: 'Install' })
      .click();
    await merchantPage.getByRole('heading', { name: 'Install Partner E2E App?' }).waitFor();
    await merchantPage.getByRole('button', { name: 'Install app' }).click();
    await merchantPage.getByRole('heading', { name: 'Partner app is installed' }).waitFor();
    expect(appHits[0]!.searchParams.get('shop')).toBe('shop.localhost');
    expect(appHits[0]!.searchParams.get('hmac')).toMatch(/^[0-9a-f]{64}$/);
    const code = callbacks[0]!.searchParams.get('code')!;
    const host = `shop.localhost:${server.port}`;
    const exchanged = await request(
      server.port,
      host,
      'POST',
      '/admin/oauth/token',
      new URLSearchParams({
        client_id: clientId,
        client_secret: secret,
        code,
        grant_type: 'authorization_code',
        redirect_uri: `http://127.0.0.1:${rport}/callback`,
      }).toString(),
    );
    expect(exchanged.status).toBe(200);
    const tokens = JSON.parse(exchanged.body);
    // The secret from before the rotation still authenticates (24 h grace).
    const refreshed = await request(
      server.port,
      host,
      'POST',
      '/admin/oauth/token',
      new URLSearchParams({
        client_id: clientId,
        client_secret: firstSecret,
        refresh_token: tokens.refresh_token,
        grant_type: 'refresh_token',
      }).toString(),
    );
    expect(refreshed.status).toBe(200);
    const token = JSON.parse(refreshed.body).access_token as string;

    // Installed: listed with its scopes; "Open" is the signed launch again.
    await merchantPage.goto(`${store()}/admin`);
    const row = merchantPage.getByRole('row', { name: /Partner E2E App.*read_products.*write_products/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('write_products');
    await merchantPage.screenshot({ path: shot('store-admin.png'), fullPage: true });
    await row.getByRole('link', { name: 'Open' }).click();
    await merchantPage.getByRole('heading', { name: 'Partner app is installed' }).waitFor();
    expect(appHits).toHaveLength(2);

    // Webhooks: subscriptions through the Admin API, then a product; the receiver answers 500.
    for (const topic of ['products/create', 'app/uninstalled']) {
      const sub = await api('POST', '/openapi/2026-01/webhooks', token, { address: `http://127.0.0.1:${rport}/hook`, topic });
      expect(sub.status, sub.body).toBe(201);
    }
    expect((await api('POST', '/openapi/2026-01/products', token, { title: 'Hooked product' })).status).toBe(201);
    await expect.poll(() => hooks.filter((h) => h.topic === 'products/create').length, { timeout: 15_000 }).toBe(2);

    // The partner sees the dead delivery with both attempts, then sends it again.
    await partnerPage.goto(`${platform()}/partner/apps/${clientId}/deliveries`);
    await expect
      .poll(
        async () => {
          await partnerPage.reload();
          return partnerPage.locator('.status-dead').count();
        },
        { timeout: 10_000 },
      )
      .toBe(1);
    await partnerPage.getByLabel('Status').selectOption('dead');
    await partnerPage.getByRole('button', { name: 'Filter' }).click();
    await partnerPage
      .getByRole('row', { name: /products\/create/ })
      .getByRole('link')
      .click();
    await partnerPage.getByRole('heading', { name: /Delivery #\d+/ }).waitFor();
    expect(await partnerPage.locator('tbody tr').count()).toBe(2);
    expect(await partnerPage.locator('main').textContent()).toContain('receiver is down');
    await partnerPage.screenshot({ path: shot('partner-dashboard.png'), fullPage: true });
    hooksFail = false;
    await partnerPage.getByRole('button', { name: 'Send again' }).click();
    await partnerPage.getByText('queued again').waitFor();
    await expect
      .poll(
        async () => {
          await partnerPage.reload();
          return partnerPage.locator('.status-delivered').count();
        },
        { timeout: 10_000 },
      )
      .toBe(1);
    expect(hooks.filter((h) => h.topic === 'products/create').map((h) => h.status)).toEqual([500, 500, 200]);
    expect(await partnerPage.locator('tbody tr').count()).toBe(3);

    // Uninstall: tokens stop working at once and app/uninstalled reaches the app.
    await merchantPage.goto(`${store()}/admin`);
    await merchantPage.getByRole('link', { name: 'Uninstall Partner E2E App' }).click();
    await merchantPage.getByRole('heading', { name: 'Uninstall Partner E2E App?' }).waitFor();
    expect((await api('GET', '/openapi/2026-01/products', token)).status).toBe(200);
    await merchantPage.getByRole('button', { name: 'Uninstall Partner E2E App' }).click();
    await merchantPage.getByText('The app was uninstalled').waitFor();
    expect((await api('GET', '/openapi/2026-01/products', token)).status).toBe(401);
    await expect.poll(() => hooks.filter((h) => h.topic === 'app/uninstalled').length, { timeout: 10_000 }).toBe(1);

    // A private app: created with two scopes, the token shown once with a copy button, then revoked.
    await merchantPage.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: store() });
    await merchantPage.getByRole('link', { name: 'Private apps' }).click();
    await merchantPage.getByRole('link', { name: 'Create a private app' }).click();
    await merchantPage.getByLabel('App name').fill('Stock sync');
    await merchantPage.getByLabel(/See your products/).check();
    await merchantPage.getByLabel(/See your orders/).check();
    await merchantPage.getByRole('button', { name: 'Create private app' }).click();
    await merchantPage.getByRole('heading', { name: 'Private app "Stock sync" created' }).waitFor();
    const privateToken = await merchantPage.getByLabel('Access-Token').inputValue();
    expect(privateToken).toMatch(/^sg_pt_/);
    const copy = merchantPage.getByRole('button', { name: 'Copy access-token' });
    await copy.click();
    await merchantPage.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await merchantPage.evaluate(() => navigator.clipboard.readText())).toBe(privateToken);
    expect((await api('GET', '/openapi/2026-01/orders', privateToken)).status).toBe(200);
    await merchantPage.getByRole('link', { name: 'Back to private apps' }).click();
    await merchantPage.getByRole('link', { name: 'Revoke Stock sync' }).click();
    await merchantPage.getByRole('heading', { name: 'Revoke Stock sync?' }).waitFor();
    await merchantPage.getByRole('button', { name: 'Revoke Stock sync' }).click();
    await merchantPage.getByText('The private app was revoked').waitFor();
    expect((await api('GET', '/openapi/2026-01/orders', privateToken)).status).toBe(401);

    // Products page by page.
    await merchantPage.getByRole('link', { name: 'Products' }).click();
    await merchantPage.getByRole('heading', { name: 'Products' }).waitFor();
    expect(await merchantPage.locator('main').textContent()).toContain('Hooked product');
    expect(server.output()).not.toContain(secret);
    expect(server.output()).not.toContain(PARTNER.password);
    await Promise.all([merchantPage.close(), partnerPage.close()]);
  }, 60_000);
});
