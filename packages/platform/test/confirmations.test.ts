// Every destructive action of the store admin and the partner dashboard asks first, without
// JavaScript: the list offers a link to a confirmation page (what will happen, a CSRF POST button,
// Cancel back); the action's POST acts only with confirm=yes. A POST without it is sent to the
// confirmation page and changes nothing, a wrong value is a 400 naming the field, and the CSRF
// token is still required. Checked on SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DIALECTS,
  accessTokenActive,
  api,
  appToken,
  createFixture,
  createTestPlatform,
  csrfFrom,
  type Jar,
  login,
  type TestPlatform,
} from './harness.ts';
import { createPartner, decode, expectCsrfRefused, expectGoodPage, get, PLATFORM_HOST, partnerLogin, post } from './web-pages.ts';

interface Case {
  host: string;
  jar: Jar;
  /** The page that offers the action. */
  list: string;
  /** The confirmation page, which is also where its form posts. */
  path: string;
  cancel: string;
  button: string;
  /** Words of the confirmation page saying what will happen. */
  explains: string;
  /** Where the confirmed POST goes. */
  done: RegExp;
  state: () => Promise<unknown>;
}

let n = 0;

describe.each(DIALECTS)('confirmation of destructive actions (%s)', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect);
  });
  afterAll(async () => t?.close());

  const privateRow = (id: number) => t.db.kysely.selectFrom('private_apps').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const appRow = (clientId: string) =>
    t.db.kysely.selectFrom('apps').selectAll().where('client_id', '=', clientId).executeTakeFirstOrThrow();

  async function merchant() {
    const f = await createFixture(t, { scopes: 'read_products write_customers' });
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    return { f, store, jar: await login(t, f) };
  }

  async function privateApp(rotating = false) {
    const m = await merchant();
    const created = await t.services.apps.createPrivateApp({ storeId: m.store.id, name: `Sync ${++n}`, scopes: 'read_products' });
    if (rotating) await t.services.rotations.rotatePrivateWebhookSecret(m.store.id, created.id);
    return { ...m, id: created.id, name: `Sync ${n}` };
  }

  async function customer() {
    const m = await merchant();
    const token = await appToken(t, m.f, 'read_products write_customers');
    // With a privacy webhook address the app is sent the request, so the state shows the action.
    const app = (await t.services.apps.findByClientId(m.f.clientId))!;
    await t.services.apps.setPrivacyWebhookUrl(app.id, 'http://127.0.0.1:9/privacy');
    const res = await api(t, m.f, token, 'POST', '/openapi/2026-01/customers', { email: `c${++n}@example.test`, first_name: 'Ada' });
    expect(res.statusCode, res.body).toBe(201);
    const id = String(res.json().data.id);
    const state = async () => ({
      customer: (await api(t, m.f, token, 'GET', `/openapi/2026-01/customers/${id}`)).json().data,
      deliveries: await t.db.kysely.selectFrom('webhook_deliveries').select(['id', 'topic']).execute(),
    });
    return { ...m, id, state };
  }

  async function partner(rotating = false) {
    const p = await createPartner(t, ++n);
    const { app } = await t.services.apps.createApp({
      name: `Partner app ${n}`,
      appUrl: 'https://app.example.test/',
      redirectUri: 'https://app.example.test/callback',
      partnerId: p.id,
    });
    if (rotating) await t.services.rotations.rotateClientSecret(app.id);
    return { app, jar: await partnerLogin(t, p) };
  }

  const CASES: [string, () => Promise<Case>][] = [
    [
      'Uninstall an app',
      async () => {
        const m = await merchant();
        const token = await appToken(t, m.f, 'read_products');
        const path = `/admin/apps/${m.f.clientId}/uninstall`;
        return {
          host: m.f.host,
          jar: m.jar,
          list: '/admin',
          path,
          cancel: '/admin',
          button: `Uninstall ${m.f.appName}`,
          explains: 'stops working at once, its queued webhooks are cancelled, and it is sent app/uninstalled',
          done: /^\/admin\?done=uninstalled$/,
          state: async () => ({
            installations: await t.db.kysely.selectFrom('installations').selectAll().where('store_id', '=', m.store.id).execute(),
            active: await accessTokenActive(t, token),
          }),
        };
      },
    ],
    [
      'Revoke a private app',
      async () => {
        const p = await privateApp();
        return {
          host: p.f.host,
          jar: p.jar,
          list: '/admin/private-apps',
          path: `/admin/private-apps/${p.id}/revoke`,
          cancel: '/admin/private-apps',
          button: `Revoke ${p.name}`,
          explains: 'Its Access-Token stops working at once',
          done: /^\/admin\/private-apps\?done=revoked$/,
          state: () => privateRow(p.id),
        };
      },
    ],
    [
      "Rotate a private app's webhook secret",
      async () => {
        const p = await privateApp();
        return {
          host: p.f.host,
          jar: p.jar,
          list: '/admin/private-apps',
          path: `/admin/private-apps/${p.id}/rotate-webhook-secret`,
          cancel: '/admin/private-apps',
          button: 'Rotate webhook secret',
          explains: 'A new webhook secret is created and shown once',
          done: /^\/admin\/private-apps\/rotated\?reveal=/,
          state: () => privateRow(p.id),
        };
      },
    ],
    [
      "Finish a private app's rotation",
      async () => {
        const p = await privateApp(true);
        return {
          host: p.f.host,
          jar: p.jar,
          list: '/admin/private-apps',
          path: `/admin/private-apps/${p.id}/finish-rotation`,
          cancel: '/admin/private-apps',
          button: 'Finish rotation',
          explains: 'signed with the new secret only',
          done: /^\/admin\/private-apps\?done=finished$/,
          state: () => privateRow(p.id),
        };
      },
    ],
    [
      'Request data for apps about a customer',
      async () => {
        const c = await customer();
        return {
          host: c.f.host,
          jar: c.jar,
          list: '/admin/customers',
          path: `/admin/customers/${c.id}/data-request`,
          cancel: '/admin/customers',
          button: 'Send the data request',
          explains: 'receives customers/data_request',
          done: /^\/admin\/customers\?done=data_request&/,
          state: c.state,
        };
      },
    ],
    [
      'Redact a customer',
      async () => {
        const c = await customer();
        return {
          host: c.f.host,
          jar: c.jar,
          list: '/admin/customers',
          path: `/admin/customers/${c.id}/redact`,
          cancel: '/admin/customers',
          button: 'Redact this customer',
          explains: 'This cannot be undone',
          done: /^\/admin\/customers\?done=redacted&/,
          state: c.state,
        };
      },
    ],
    [
      'Rotate a client secret',
      async () => {
        const p = await partner();
        return {
          host: PLATFORM_HOST,
          jar: p.jar,
          list: `/partner/apps/${p.app.client_id}`,
          path: `/partner/apps/${p.app.client_id}/rotate-secret`,
          cancel: `/partner/apps/${p.app.client_id}`,
          button: 'Rotate client secret',
          explains: 'A new client secret is created and shown once',
          done: new RegExp(`^/partner/apps/${p.app.client_id}/secret\\?reveal=`),
          state: () => appRow(p.app.client_id),
        };
      },
    ],
    [
      "Finish a client secret's rotation",
      async () => {
        const p = await partner(true);
        return {
          host: PLATFORM_HOST,
          jar: p.jar,
          list: `/partner/apps/${p.app.client_id}`,
          path: `/partner/apps/${p.app.client_id}/finish-rotation`,
          cancel: `/partner/apps/${p.app.client_id}`,
          button: 'Finish rotation',
          explains: 'the previous secret stops working at the token endpoint',
          done: new RegExp(`^/partner/apps/${p.app.client_id}\\?done=finished$`),
          state: () => appRow(p.app.client_id),
        };
      },
    ],
  ];

  it.each(CASES)('%s: a link, a confirmation page, and only its POST acts', async (_name, setup) => {
    const c = await setup();
    // The page offering the action links to the confirmation page; no form there posts the action.
    const list = await get(t, c.host, c.list, c.jar);
    expectGoodPage(list);
    expect(list.body).toContain(`href="${c.path}"`);
    expect(list.body).not.toContain(`action="${c.path}"`);

    const page = await get(t, c.host, c.path, c.jar);
    expectGoodPage(page);
    expect(decode(page.body)).toContain(c.explains);
    expect(page.body).toContain(`<form method="post" action="${c.path}">`);
    expect(page.body).toMatch(new RegExp(`type="submit" name="confirm" value="yes">${c.button}</button>`));
    expect(page.body).toContain(`<a class="cancel" href="${c.cancel}">Cancel</a>`);
    const csrf = csrfFrom(page.body);
    const before = await c.state();

    // The first POST, without the confirmation: back to the page, nothing done.
    const unconfirmed = await post(t, c.host, c.path, c.jar, { _csrf: csrf });
    expect(unconfirmed.statusCode).toBe(303);
    expect(unconfirmed.headers.location).toBe(c.path);
    expect(await c.state()).toEqual(before);
    // An empty or wrong value: an empty one is the same as none, any other a 400 naming the field.
    expect((await post(t, c.host, c.path, c.jar, { _csrf: csrf, confirm: '' })).headers.location).toBe(c.path);
    for (const value of ['no', 'YES', 'yes!']) {
      const wrong = await post(t, c.host, c.path, c.jar, { _csrf: csrf, confirm: value });
      expect(wrong.statusCode, value).toBe(400);
      expect(wrong.json().message).toBe('confirm must be "yes" (press the button on the confirmation page)');
    }
    expect(await c.state()).toEqual(before);
    // CSRF is still required with the confirmation.
    await expectCsrfRefused(t, c.host, c.path, c.jar, { _csrf: csrf, confirm: 'yes' }, c.state);

    const confirmed = await post(t, c.host, c.path, c.jar, { _csrf: csrf, confirm: 'yes' });
    expect(confirmed.statusCode, confirmed.body).toBe(303);
    expect(String(confirmed.headers.location)).toMatch(c.done);
    expect(await c.state()).not.toEqual(before);
  });

  it('a confirmation page with nothing to do says why and offers no button; unknown records are 404', async () => {
    const p = await privateApp(true);
    const rotate = await get(t, p.f.host, `/admin/private-apps/${p.id}/rotate-webhook-secret`, p.jar);
    expectGoodPage(rotate);
    expect(rotate.body).toContain('A rotation is already in progress');
    expect(rotate.body).not.toContain('name="confirm"');
    await t.services.rotations.finishPrivateWebhookSecretRotation(p.store.id, p.id);
    const finish = await get(t, p.f.host, `/admin/private-apps/${p.id}/finish-rotation`, p.jar);
    expectGoodPage(finish);
    expect(finish.body).toContain('there is nothing to finish');
    expect(finish.body).not.toContain('name="confirm"');

    const q = await partner(true);
    const again = await get(t, PLATFORM_HOST, `/partner/apps/${q.app.client_id}/rotate-secret`, q.jar);
    expectGoodPage(again);
    expect(again.body).toContain('A rotation is already in progress');
    expect(again.body).not.toContain('name="confirm"');
    const r = await partner();
    const nothing = await get(t, PLATFORM_HOST, `/partner/apps/${r.app.client_id}/finish-rotation`, r.jar);
    expectGoodPage(nothing);
    expect(nothing.body).toContain('there is nothing to finish');
    expect(nothing.body).not.toContain('name="confirm"');

    for (const path of [
      '/admin/apps/nope/uninstall',
      `/admin/apps/${p.f.clientId}/uninstall`,
      '/admin/private-apps/999999/revoke',
      '/admin/private-apps/x/revoke',
    ])
      expect((await get(t, p.f.host, path, p.jar)).statusCode, path).toBe(404);
  });
});
