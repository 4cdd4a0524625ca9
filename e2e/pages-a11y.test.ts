// Every page of the store admin, the partner dashboard, the login pages, the consent page, an error
// page and the API docs, in headless Chromium at 375 px wide (a small phone): axe-core finds no
// violation of any impact (colour contrast included), the page does not scroll sideways, and the
// links and buttons of a table's rows all have different accessible names ("Open Demo app").
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AxeResults } from 'axe-core';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consentAsMerchant } from './merchant-consent.ts';
import { CHROMIUM_ARGS, cli, request, startServer, type RunningServer } from './server-process.ts';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const MERCHANT = { email: 'owner@a11y.test', password: 'merchant-password' };
const PARTNER = { email: 'dev@a11y.test', password: 'partner-password' };
const WIDTH = 375;

interface PageFindings {
  url: string;
  scrollWidth: number;
  violations: { id: string; impact: string | null | undefined; targets: string[] }[];
  duplicateRowNames: string[];
}

/** axe-core in the page (evaluated over the DevTools protocol, so the page's CSP does not apply), then the checks. */
async function audit(page: Page): Promise<PageFindings> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<AxeResults> } }).axe;
    const results = await axe.run(document, { resultTypes: ['violations'] });
    return results.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) }));
  });
  // Within one table, no two row links or buttons share a name (two tables may both offer "Open Demo app").
  const { scrollWidth, tables } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    tables: [...document.querySelectorAll('tbody')].map((body) =>
      [...body.querySelectorAll('a, button')].map(
        (el) => el.getAttribute('aria-label') ?? (el.textContent ?? '').replace(/\s+/g, ' ').trim(),
      ),
    ),
  }));
  const duplicateRowNames = tables.flatMap((names) => names.filter((n, i) => names.indexOf(n) !== i));
  return { url: page.url(), scrollWidth, violations, duplicateRowNames };
}

describe.skipIf(!process.env.TEST_CHROMIUM)('every page: axe-core, 375 px, row names', () => {
  let server: RunningServer;
  let browser: Browser;
  let clientId = '';
  let clientSecret = '';
  let rotatingClientId = '';
  let managedClientId = '';
  let privateId = 0;
  let rotatingPrivateId = 0;
  const store = () => `http://shop.localhost:${server.port}`;
  const platform = () => `http://localhost:${server.port}`;

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startServer({
        prepare: (database) => {
          cli(database, ['stores', 'create', 'shop', '--owner-email', MERCHANT.email, '--owner-password', MERCHANT.password]);
          cli(database, ['partners', 'create', '--email', PARTNER.email, '--password', PARTNER.password]);
          cli(database, ['seed', '--store', 'shop', '--products', '30', '--orders', '30', '--customers', '30']);
          const app = cli(database, [
            'apps',
            'create',
            '--name',
            'Demo app',
            '--app-url',
            'http://127.0.0.1:9/app',
            '--redirect-uri',
            'http://127.0.0.1:9/callback',
            '--scopes',
            'write_products write_orders read_customers',
            '--partner',
            PARTNER.email,
            '--privacy-webhook-url',
            'http://127.0.0.1:9/privacy',
          ]);
          clientId = app.client_id;
          clientSecret = app.client_secret;
          const other = cli(database, [
            'apps',
            'create',
            '--name',
            'Second app with a rather long name to wrap',
            '--app-url',
            'http://127.0.0.1:9/second/app/with/a/long/path/that/must/wrap/on/a/phone',
            '--redirect-uri',
            'http://127.0.0.1:9/second/callback',
            '--partner',
            PARTNER.email,
          ]);
          rotatingClientId = other.client_id;
          managedClientId = cli(database, [
            'apps',
            'create',
            '--name',
            'Managed app',
            '--app-url',
            'http://127.0.0.1:9/managed',
            '--redirect-uri',
            'http://127.0.0.1:9/managed/callback',
            '--scopes',
            'read_products read_orders',
            '--managed-install',
          ]).client_id;
          cli(database, ['apps', 'rotate-secret', rotatingClientId]);
          privateId = cli(database, ['private-apps', 'create', '--store', 'shop', '--name', 'Stock sync', '--scopes', 'read_products']).id;
          rotatingPrivateId = cli(database, [
            'private-apps',
            'create',
            '--store',
            'shop',
            '--name',
            'Order export',
            '--scopes',
            'read_orders',
          ]).id;
          cli(database, ['private-apps', 'rotate-secret', String(rotatingPrivateId), '--store', 'shop']);
        },
        // Calls to a deprecated version reach the app's API health page within moments.
        args: ['--api-usage-flush', '200'],
      }),
      chromium.launch({ executablePath: process.env.TEST_CHROMIUM, args: CHROMIUM_ARGS }),
    ]);
    // Installed, so the Apps page has both tables and the uninstall page exists; a subscription and
    // a product give the partner a delivery to look at (its address refuses: it fails, and shows so).
    const authorize = new URL(`${store()}/admin/oauth/authorize`);
    authorize.search = new URLSearchParams({
      client_id: clientId,
      scope: 'write_products write_orders',
      redirect_uri: 'http://127.0.0.1:9/callback',
      response_type: 'code',
      state: 'a11y',
    }).toString();
    const callback = await consentAsMerchant(server.port, authorize.toString(), MERCHANT);
    const host = `shop.localhost:${server.port}`;
    const exchanged = await request(
      server.port,
      host,
      'POST',
      '/admin/oauth/token',
      new URLSearchParams({
        client_id: clientId,
        client_secret: clientSecret,
        code: callback.searchParams.get('code')!,
        grant_type: 'authorization_code',
        redirect_uri: 'http://127.0.0.1:9/callback',
      }).toString(),
    );
    expect(exchanged.status, exchanged.body).toBe(200);
    const token = JSON.parse(exchanged.body).access_token as string;
    const api = (path: string, body: unknown) =>
      request(server.port, host, 'POST', path, JSON.stringify(body), { 'access-token': token, 'content-type': 'application/json' });
    expect((await api('/openapi/2026-01/webhooks', { address: 'http://127.0.0.1:9/hook', topic: 'products/create' })).status).toBe(201);
    expect((await api('/openapi/2026-01/products', { title: 'A product with a webhook' })).status).toBe(201);
    // A call to the deprecated version, for the app's API health page.
    expect(
      (await request(server.port, host, 'GET', '/openapi/2022-01/products?limit=1', undefined, { 'access-token': token })).status,
    ).toBe(200);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function logIn(page: Page, who: { email: string; password: string }) {
    await page.getByLabel('Email').fill(who.email);
    await page.getByLabel('Password').fill(who.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForLoadState();
  }

  it('store admin, partner dashboard, login, consent, error and docs pages', async () => {
    const context = await browser.newContext({ viewport: { width: WIDTH, height: 800 } });
    const findings: PageFindings[] = [];
    const check = async (page: Page, url?: string) => {
      if (url) await page.goto(url);
      await page.waitForLoadState();
      findings.push(await audit(page));
    };

    // The store admin, from its login page on.
    const merchant = await context.newPage();
    await merchant.goto(`${store()}/admin`);
    await check(merchant);
    await logIn(merchant, MERCHANT);
    for (const path of [
      '/admin',
      `/admin/apps/${clientId}/uninstall`,
      '/admin/private-apps',
      '/admin/private-apps/new',
      `/admin/private-apps/${privateId}/revoke`,
      `/admin/private-apps/${privateId}/rotate-webhook-secret`,
      `/admin/private-apps/${rotatingPrivateId}/finish-rotation`,
      `/admin/private-apps/${rotatingPrivateId}/rotate-webhook-secret`,
      '/admin/products',
      '/admin/orders',
      '/admin/customers',
      '/admin/apps/no-such-app/install',
    ])
      await check(merchant, `${store()}${path}`);
    const customerLink = await merchant
      .goto(`${store()}/admin/customers`)
      .then(() => merchant.locator('a[href$="/data-request"]').first().getAttribute('href'));
    await check(merchant, `${store()}${customerLink}`);
    await check(merchant, `${store()}${customerLink!.replace('/data-request', '/redact')}`);
    // The consent page (the second app asks for nothing more: a fresh request with a new scope).
    const consent = new URL(`${store()}/admin/oauth/authorize`);
    consent.search = new URLSearchParams({
      client_id: clientId,
      scope: 'write_products write_orders read_customers',
      redirect_uri: 'http://127.0.0.1:9/callback',
      response_type: 'code',
      state: 'more',
    }).toString();
    await check(merchant, consent.toString());
    expect(await merchant.getByRole('button', { name: 'Install app' }).count()).toBe(1);
    // The same, asking for online access (bound to the merchant, ended at logout).
    consent.searchParams.set('grant_options[]', 'per-user');
    await check(merchant, consent.toString());
    expect(await merchant.getByText('this access ends when you log out').count()).toBe(1);
    // The consent page of an app the platform installs, at Install in the store admin.
    await check(merchant, `${store()}/admin/apps/${managedClientId}/install`);
    expect(await merchant.getByRole('button', { name: 'Install app' }).count()).toBe(1);
    // A private app created in the page: its token shown once.
    await merchant.goto(`${store()}/admin/private-apps/new`);
    await merchant.getByLabel('App name').fill('Shown once');
    await merchant.getByLabel(/See your products/).check();
    await merchant.getByRole('button', { name: 'Create private app' }).click();
    await merchant.getByRole('heading', { name: 'Private app "Shown once" created' }).waitFor();
    await check(merchant);

    // The partner dashboard.
    const partner = await context.newPage();
    await partner.goto(`${platform()}/partner`);
    await check(partner);
    await logIn(partner, PARTNER);
    for (const path of [
      '/partner',
      '/partner/apps/new',
      `/partner/apps/${clientId}`,
      `/partner/apps/${clientId}/rotate-secret`,
      `/partner/apps/${clientId}/finish-rotation`,
      `/partner/apps/${rotatingClientId}`,
      `/partner/apps/${rotatingClientId}/finish-rotation`,
      `/partner/apps/${rotatingClientId}/rotate-secret`,
      `/partner/apps/${clientId}/deliveries/999999`,
    ])
      await check(partner, `${platform()}${path}`);
    // The delivery log with the product's delivery, and that delivery.
    await partner.goto(`${platform()}/partner/apps/${clientId}/deliveries`);
    await partner.getByRole('row', { name: /products\/create/ }).waitFor();
    await check(partner);
    await partner
      .getByRole('row', { name: /products\/create/ })
      .getByRole('link')
      .click();
    await partner.getByRole('heading', { name: /Delivery #\d+/ }).waitFor();
    await check(partner);
    // Its subscription, with the replay form.
    await partner.getByRole('link', { name: /Subscription #\d+/ }).click();
    await partner.getByRole('heading', { name: /Subscription #\d+/ }).waitFor();
    await check(partner);
    await partner.goto(`${platform()}/partner/apps/${clientId}`);
    await partner.getByRole('button', { name: 'Reveal client secret' }).click();
    await partner.getByRole('heading', { name: 'Client secret' }).waitFor();
    await check(partner);

    // API health: the deprecated version the app called, once the node has written its counts.
    for (let shown = false; !shown; ) {
      await partner.goto(`${platform()}/partner/apps/${clientId}/api-health`);
      shown = (await partner.getByRole('row', { name: /GET \/openapi\/\{version\}\/products/ }).count()) > 0;
    }
    await check(partner);
    await check(partner, `${platform()}/partner/apps/${rotatingClientId}/api-health`);

    // Endpoint health: the charts of the failing delivery's endpoint once its attempt is recorded,
    // and the empty state of an app without endpoints.
    for (let shown = false; !shown; ) {
      await partner.goto(`${platform()}/partner/apps/${clientId}/endpoints`);
      shown = (await partner.getByRole('img', { name: /Attempts per hour/ }).count()) > 0;
    }
    await check(partner);
    await check(partner, `${platform()}/partner/apps/${rotatingClientId}/endpoints`);
    // App-level webhooks: the empty tab, a refused address (the form with its error), the list, the removal's confirmation.
    await check(partner, `${platform()}/partner/apps/${rotatingClientId}/webhooks`);
    await partner.goto(`${platform()}/partner/apps/${clientId}/webhooks`);
    await partner.getByLabel('Topic').selectOption('products/update');
    await partner.getByLabel('Address').fill('http://10.0.0.1/hooks');
    await partner.getByRole('button', { name: 'Add subscription' }).click();
    await partner.getByRole('alert').first().waitFor();
    await check(partner);
    await partner.getByLabel('Address').fill('http://127.0.0.1:9/app-level/hooks/with/a/long/path/that/must/wrap/on/a/phone');
    await partner.getByLabel('Filter').fill('status:active AND price:>=10 AND vendor:"A rather long vendor name that must wrap"');
    await partner.getByLabel('Include fields').fill('id, title, price, vendor, status, created_at');
    await partner.getByRole('button', { name: 'Add subscription' }).click();
    await partner.getByRole('row', { name: /products\/update/ }).waitFor();
    await check(partner);
    // Editing its filter and fields: the form, then a refused filter with its error.
    await partner
      .getByRole('row', { name: /products\/update/ })
      .getByRole('link', { name: /Edit/ })
      .click();
    await partner.getByRole('heading', { name: 'Edit this subscription' }).waitFor();
    await check(partner);
    await partner.getByLabel('Filter').fill('colour:red');
    await partner.getByRole('button', { name: 'Save changes' }).click();
    await partner.getByRole('alert').first().waitFor();
    await check(partner);
    await partner.goto(`${platform()}/partner/apps/${clientId}/webhooks`);
    await partner
      .getByRole('row', { name: /products\/update/ })
      .getByRole('link', { name: /Remove/ })
      .click();
    await partner.getByRole('heading', { name: 'Remove this subscription?' }).waitFor();
    await check(partner);

    // The API docs, the longest page.
    await check(partner, `${platform()}/docs`);

    const failures = findings.filter((f) => f.violations.length > 0 || f.scrollWidth > WIDTH || f.duplicateRowNames.length > 0);
    expect(failures, JSON.stringify(failures, null, 2)).toEqual([]);
    expect(findings.length).toBeGreaterThanOrEqual(30);
    // The icon is there for every browser that asks.
    for (const host of [`shop.localhost:${server.port}`, `localhost:${server.port}`])
      expect((await request(server.port, host, 'GET', '/favicon.ico')).status).toBe(200);
    await context.close();
  }, 180_000);
});
