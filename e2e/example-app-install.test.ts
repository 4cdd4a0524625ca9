// The example app installed into a store in headless Chromium: the real platform and the real
// example app (`npm run example`'s entry point) as child processes; the merchant logs in to the
// store admin, presses Install, consents, and lands on the example app's products page; pages
// through both pagination conventions, sees webhooks arrive, opens the app again, and the
// app/uninstalled webhook ends the session.
import { signWebhook } from '@storegate/app';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExampleApp, type RunningExampleApp } from './example-app-process.ts';
import { CHROMIUM_ARGS, cli, freePort, request, startServer, type RunningServer } from './server-process.ts';

const SCREENSHOT = new URL('../docs/screenshots/example-app.png', import.meta.url).pathname;
const merchant = { email: 'owner@example-e2e.test', password: 'example-e2e-password' };

describe.skipIf(!process.env.TEST_CHROMIUM)('example app install in a browser', () => {
  let platform: RunningServer;
  let example: RunningExampleApp;
  let browser: Browser;
  let credentials: { client_id: string; client_secret: string };

  beforeAll(async () => {
    const appPort = await freePort();
    platform = await startServer({
      prepare: (database) => {
        cli(database, ['stores', 'create', 'shop', '--owner-email', merchant.email, '--owner-password', merchant.password]);
        cli(database, ['seed', '--store', 'shop', '--products', '25']);
        credentials = cli(database, [
          'apps', 'create', '--name', 'Example app',
          '--app-url', `http://localhost:${appPort}/`,
          '--redirect-uri', `http://localhost:${appPort}/auth/callback`,
          '--scopes', 'read_products write_products read_orders read_customers',
        ]);
      },
    });
    [example, browser] = await Promise.all([
      startExampleApp({ port: appPort, platformPort: platform.port, clientId: credentials.client_id, clientSecret: credentials.client_secret }),
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
    await page.getByRole('link', { name: /^(Install|Open)$/ }).first().click();
  }

  async function postWebhook(topic: string, payload: unknown, id: string): Promise<{ status: number; body: string }> {
    const body = JSON.stringify(payload);
    return request(example.port, `localhost:${example.port}`, 'POST', '/webhooks', body, {
      'content-type': 'application/json',
      'x-service-hmac-sha256': await signWebhook(body, credentials.client_secret),
      'x-service-topic': topic,
      'x-service-shop-domain': 'shop.localhost',
      'x-service-webhook-id': id,
      'x-service-api-version': '2026-01',
    });
  }

  it('installs from the store admin, lists products page by page, shows webhooks, and forgets the shop on app/uninstalled', async () => {
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

    // Webhooks: verified against the raw body and shown; a forged one is refused; a redelivery is shown once.
    expect((await postWebhook('products/update', { id: firstPageIds[0], title: 'Renamed in the store' }, 'wh_e2e_1')).status).toBe(200);
    expect((await postWebhook('products/update', { id: firstPageIds[0], title: 'Renamed in the store' }, 'wh_e2e_1')).body).toContain('already received');
    const forged = await request(example.port, `localhost:${example.port}`, 'POST', '/webhooks', '{"id":"1"}', {
      'content-type': 'application/json',
      'x-service-hmac-sha256': await signWebhook('{"id":"1"}', 'not-the-secret'),
      'x-service-topic': 'products/update',
      'x-service-shop-domain': 'shop.localhost',
    });
    expect(forged.status).toBe(401);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect(await main.textContent()).toContain('Renamed in the store');

    // Open again from the admin: installed with every scope, so straight to the products.
    await openFromAdmin(page, { login: false });
    await page.getByRole('heading', { name: 'Products' }).waitFor();

    // Uninstall: the app forgets the shop's tokens.
    expect((await postWebhook('app/uninstalled', { id: 'shop', name: 'shop' }, 'wh_e2e_2')).status).toBe(200);
    await page.reload();
    await page.getByRole('heading', { name: 'Not installed' }).waitFor();
    expect(await page.getByRole('link', { name: 'Install (authorize) again' }).count()).toBe(1);
    await context.close();
  });
});
