// The example app installed into a store in headless Chromium: the real platform (HTTP server and
// webhook delivery) and the real example app (`npm run example`'s entry point) as child processes.
// The merchant logs in to the store admin, presses Install, consents, and lands on the example app's
// products page; pages through both pagination conventions; a product created through the Admin API
// arrives as a real products/create webhook; opening the app again goes straight in; uninstalling
// (storegate apps uninstall) sends app/uninstalled and the app forgets the store.
import { createAdminClient, signWebhook } from '@storegate/app';
import { localhostFetch } from '@storegate/app/node';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExampleApp, type RunningExampleApp } from './example-app-process.ts';
import { CHROMIUM_ARGS, cli, freePort, request, startServer, type RunningServer } from './server-process.ts';

// Into the git-ignored artifacts folder, so a test run leaves the tree clean; `npm run screenshots`
// copies it into docs/screenshots/ when the README's picture should change.
const SCREENSHOT = new URL('artifacts/screenshots/example-app.png', import.meta.url).pathname;
const merchant = { email: 'owner@example-e2e.test', password: 'example-e2e-password' };

describe.skipIf(!process.env.TEST_CHROMIUM)('example app install in a browser', () => {
  let platform: RunningServer;
  let example: RunningExampleApp;
  let browser: Browser;
  let credentials: { client_id: string; client_secret: string };
  let privateToken: string;

  beforeAll(async () => {
    const appPort = await freePort();
    platform = await startServer({
      prepare: (database) => {
        cli(database, ['stores', 'create', 'shop', '--owner-email', merchant.email, '--owner-password', merchant.password]);
        cli(database, ['seed', '--store', 'shop', '--products', '25']);
        credentials = cli(database, [
          'apps',
          'create',
          '--name',
          'Example app',
          '--app-url',
          `http://localhost:${appPort}/`,
          '--redirect-uri',
          `http://localhost:${appPort}/auth/callback`,
          '--scopes',
          'read_products write_products read_orders read_customers',
        ]);
        privateToken = cli(database, [
          'private-apps',
          'create',
          '--store',
          'shop',
          '--name',
          'Catalogue sync',
          '--scopes',
          'write_products',
        ]).access_token;
      },
    });
    [example, browser] = await Promise.all([
      startExampleApp({
        port: appPort,
        platformPort: platform.port,
        clientId: credentials.client_id,
        clientSecret: credentials.client_secret,
      }),
      chromium.launch({ executablePath: process.env.TEST_CHROMIUM, args: CHROMIUM_ARGS }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await example?.stop();
    await platform?.stop();
  });

  async function openFromAdmin(page: Page, options: { login: boolean }): Promise<void> {
    await page.goto(`http://shop.localhost:${platform.port}/admin`);
    if (options.login) {
      await page.getByLabel('Email').fill(merchant.email);
      await page.getByLabel('Password').fill(merchant.password);
      await page.getByRole('button', { name: 'Log in' }).click();
    }
    await page.getByRole('heading', { name: 'shop · Apps' }).waitFor();
    await page
      .getByRole('link', { name: /^(Install|Open) Example app$/ })
      .first()
      .click();
  }

  async function postWebhook(
    topic: string,
    payload: unknown,
    id: string,
    secret = credentials.client_secret,
  ): Promise<{ status: number; body: string }> {
    const body = JSON.stringify(payload);
    return request(example.port, `localhost:${example.port}`, 'POST', '/webhooks', body, {
      'content-type': 'application/json',
      'x-service-hmac-sha256': await signWebhook(body, secret),
      'x-service-topic': topic,
      'x-service-shop-domain': 'shop.localhost',
      'x-service-webhook-id': id,
      'x-service-api-version': '2026-01',
    });
  }

  it('installs from the store admin, lists products page by page, shows delivered webhooks, and forgets the store on uninstall', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();

    // Store admin → Install → the example app verifies the signed App-URL request → consent.
    await openFromAdmin(page, { login: true });
    await page.getByRole('heading', { name: 'Install Example app?' }).waitFor();
    await page.getByRole('button', { name: 'Install app' }).click();

    // The callback exchanged the code, subscribed the webhooks, and shows the first page.
    await page.getByRole('heading', { name: 'Products' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/products');
    const main = page.locator('main');
    await expect.poll(() => main.textContent()).toContain('products/create (subscribed)');
    expect(await main.textContent()).toContain('app/uninstalled (subscribed)');
    expect(await page.locator('tbody tr').count()).toBe(10);
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    const firstPageIds = await page.locator('tbody tr td:first-child').allTextContents();

    // 2026-01: forward only.
    await page.getByRole('link', { name: 'Next page →' }).click();
    await page.getByRole('heading', { name: 'Products' }).waitFor();
    const secondPageIds = await page.locator('tbody tr td:first-child').allTextContents();
    expect(secondPageIds).toHaveLength(10);
    expect(secondPageIds.some((id) => firstPageIds.includes(id))).toBe(false);
    expect(await page.getByRole('link', { name: '← Previous page' }).count()).toBe(0);

    // 2022-01: forward twice, then back.
    await page.getByRole('link', { name: '2022-01' }).click();
    await page.getByRole('link', { name: 'Next page →' }).click();
    await page.getByRole('link', { name: 'Next page →' }).click();
    await page.getByRole('heading', { name: 'Products' }).waitFor();
    expect(await page.locator('tbody tr').count()).toBe(5);
    expect(await page.getByText('Last page').count()).toBe(1);
    await page.getByRole('link', { name: '← Previous page' }).click();
    await page.getByRole('link', { name: '← Previous page' }).click();
    await page.getByRole('heading', { name: 'Products' }).waitFor();
    expect(await page.locator('tbody tr td:first-child').allTextContents()).toEqual(firstPageIds);
    expect(await page.getByRole('link', { name: '← Previous page' }).count()).toBe(0);

    // A product created elsewhere (a private app) reaches the example app as a real, signed products/create webhook.
    const catalogue = createAdminClient({
      shop: 'shop.localhost',
      accessToken: privateToken,
      apiOrigin: `http://{shop}:${platform.port}`,
      fetch: localhostFetch(),
    });
    await catalogue.post('products', { title: 'Delivered by the platform', price: '12.00' });
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await expect
      .poll(
        async () => {
          await page.reload();
          return page.locator('main').textContent();
        },
        { timeout: 15_000, interval: 300 },
      )
      .toContain('Delivered by the platform');
    expect(await main.textContent()).toContain('products/create');
    expect(example.output()).not.toContain('WEBHOOK_');

    // A webhook signed with another secret is refused.
    const forged = await postWebhook('products/update', { id: '1', title: 'Forged' }, 'wh_forged', 'not-the-secret');
    expect(forged.status).toBe(401);
    await page.reload();
    expect(await main.textContent()).not.toContain('Forged');

    // Open again from the admin: installed with every scope, so straight to the products.
    await openFromAdmin(page, { login: false });
    await page.getByRole('heading', { name: 'Products' }).waitFor();

    // Uninstall: the platform revokes the tokens and sends app/uninstalled; the app forgets the store.
    cli(platform.database, ['apps', 'uninstall', '--store', 'shop', '--client-id', credentials.client_id]);
    await expect
      .poll(
        async () => {
          await page.reload();
          return page.locator('h1').textContent();
        },
        { timeout: 15_000, interval: 300 },
      )
      .toBe('Not installed');
    expect(await page.getByRole('link', { name: 'Install (authorize) again' }).count()).toBe(1);

    // And back: the app's own install link (shop named by the app, not by the platform) → consent → products.
    await page.getByRole('link', { name: 'Install (authorize) again' }).click();
    await page.getByRole('heading', { name: 'Install Example app?' }).waitFor();
    await page.getByRole('button', { name: 'Install app' }).click();
    await page.getByRole('heading', { name: 'Products' }).waitFor();
    expect(await page.locator('tbody tr').count()).toBe(10);
    await context.close();
  });
});
