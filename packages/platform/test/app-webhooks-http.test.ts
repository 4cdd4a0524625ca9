// App-level webhook subscriptions over HTTP, on SQLite and PostgreSQL: the partner dashboard's
// Webhooks tab (list, add with the Admin API's checks, remove after a confirmation, CSRF, another
// partner's app 404) and the partner API authenticated with the app's own client credentials (401
// without them, 403 with another app's, 422 for bad input that changes nothing), in /openapi.json.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createFixture, createTestPlatform, csrfFrom, type TestPlatform } from './harness.ts';
import { PLATFORM_HOST as H, createPartner, decode, expectCsrfRefused, expectGoodPage, get, partnerLogin, post } from './web-pages.ts';

let n = 100;
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

describe.each(DIALECTS)('app-level webhooks over HTTP (%s)', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect);
  });
  afterAll(async () => t?.close());

  const partnerApp = async (partnerId: number | null, name = 'Hooked app') =>
    t.services.apps.createApp({
      name,
      appUrl: 'https://app.example.test/',
      redirectUri: 'https://app.example.test/callback',
      scopes: 'read_products',
      partnerId,
    });
  const declared = async (appId: number) => (await t.services.appWebhooks.list(appId)).map((s) => [s.topic, s.address]);

  it('the Webhooks tab lists, adds (checked, CSRF) and removes after confirming; another partner gets 404', async () => {
    const p = await createPartner(t, ++n);
    const { app } = await partnerApp(p.id);
    const f = await createFixture(t);
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    await t.services.apps.grant(store.id, app.id, ['read_products']);
    const jar = await partnerLogin(t, p);
    const path = `/partner/apps/${app.client_id}/webhooks`;
    const page = await get(t, H, path, jar);
    expectGoodPage(page);
    expect(page.body).toContain('No app-level subscriptions yet');
    const fields = { _csrf: csrfFrom(page.body), topic: 'products/create', address: 'https://hooks.example.test/products' };
    await expectCsrfRefused(t, H, path, jar, fields, () => declared(app.id));

    for (const [bad, message] of [
      [{ ...fields, address: 'ftp://hooks.example.test/' }, 'must be an https URL'],
      [{ ...fields, topic: 'customers/redact' }, 'privacy topic'],
      [{ ...fields, topic: 'nope/nope' }, 'must be one of'],
    ] as const) {
      const res = await post(t, H, path, jar, bad);
      expect(res.statusCode, res.body).toBe(422);
      expect(decode(res.body)).toContain(message);
    }
    expect(await declared(app.id)).toEqual([]);

    const added = await post(t, H, path, jar, fields);
    expect(added.statusCode).toBe(303);
    expect(added.headers.location).toBe(`${path}?done=added`);
    expect(await declared(app.id)).toEqual([['products/create', 'https://hooks.example.test/products']]);
    const listed = await get(t, H, `${path}?done=added`, jar);
    expectGoodPage(listed);
    expect(listed.body).toContain('https://hooks.example.test/products');
    // The copy in the store the app is installed in.
    const copies = await t.db.kysely.selectFrom('webhook_subscriptions').select('store_id').where('app_id', '=', app.id).execute();
    expect(copies.map((c) => Number(c.store_id))).toEqual([store.id]);

    const id = String((await t.services.appWebhooks.list(app.id))[0]!.id);
    const confirm = await get(t, H, `${path}/${id}/remove`, jar);
    expectGoodPage(confirm);
    expect(confirm.body).toContain('Remove this subscription?');
    // Without the confirmation field: sent to the page, nothing removed.
    const unconfirmed = await post(t, H, `${path}/${id}/remove`, jar, { _csrf: csrfFrom(confirm.body) });
    expect(unconfirmed.statusCode).toBe(303);
    expect(unconfirmed.headers.location).toBe(`${path}/${id}/remove`);
    expect(await declared(app.id)).toHaveLength(1);
    await expectCsrfRefused(t, H, `${path}/${id}/remove`, jar, { _csrf: csrfFrom(confirm.body), confirm: 'yes' }, () => declared(app.id));
    const removed = await post(t, H, `${path}/${id}/remove`, jar, { _csrf: csrfFrom(confirm.body), confirm: 'yes' });
    expect(removed.statusCode).toBe(303);
    expect(await declared(app.id)).toEqual([]);
    expect(await t.db.kysely.selectFrom('webhook_subscriptions').select('id').where('app_id', '=', app.id).execute()).toEqual([]);

    const other = await createPartner(t, ++n);
    const otherJar = await partnerLogin(t, other);
    expect((await get(t, H, path, otherJar)).statusCode).toBe(404);
    const foreign = await post(t, H, path, otherJar, { ...fields, _csrf: csrfFrom((await get(t, H, '/partner', otherJar)).body) });
    expect(foreign.statusCode).toBe(404);
    expect(await declared(app.id)).toEqual([]);
  });

  it('the Webhooks tab takes a filter and include_fields, lists them, edits them (checked, CSRF, every copy); bad values re-render the form', async () => {
    const p = await createPartner(t, ++n);
    const { app } = await partnerApp(p.id, 'Filtered app');
    const f = await createFixture(t);
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    await t.services.apps.grant(store.id, app.id, ['read_products']);
    const jar = await partnerLogin(t, p);
    const path = `/partner/apps/${app.client_id}/webhooks`;
    const page = await get(t, H, path, jar);
    expect(page.body).toContain('id="filter"');
    expect(page.body).toContain('id="include_fields"');
    const fields = {
      _csrf: csrfFrom(page.body),
      topic: 'products/update',
      address: 'https://hooks.example.test/filtered',
      filter: 'status:active AND price:>=10',
      include_fields: 'id, title,price',
    };
    const shapes = async () => (await t.services.appWebhooks.list(app.id)).map((s) => [s.filter, s.include_fields]);
    const copyShape = async () =>
      t.db.kysely.selectFrom('webhook_subscriptions').select(['filter', 'include_fields']).where('app_id', '=', app.id).execute();
    for (const [bad, message] of [
      [{ ...fields, filter: 'colour:red' }, 'unknown field &quot;colour&quot;'],
      [{ ...fields, include_fields: 'id, colour' }, 'unknown field &quot;colour&quot;'],
      [{ ...fields, topic: 'app/uninstalled' }, 'is not about a product, order or customer'],
    ] as const) {
      const res = await post(t, H, path, jar, bad);
      expect(res.statusCode, res.body).toBe(422);
      expect(res.body).toContain(message);
      // The form keeps what was typed, the field marked.
      expect(res.body).toContain(`value="${bad.filter.replace(/>/g, '&gt;')}"`);
      expect(res.body).toContain('aria-invalid="true"');
    }
    expect(await shapes()).toEqual([]);
    expect((await post(t, H, path, jar, fields)).statusCode).toBe(303);
    expect(await shapes()).toEqual([['status:active AND price:>=10', '["id","title","price"]']]);
    expect(await copyShape()).toEqual([{ filter: 'status:active AND price:>=10', include_fields: '["id","title","price"]' }]);
    const listed = await get(t, H, path, jar);
    expectGoodPage(listed);
    expect(listed.body).toContain('<code>status:active AND price:&gt;=10</code>');
    expect(listed.body).toContain('id, title, price');

    const id = String((await t.services.appWebhooks.list(app.id))[0]!.id);
    const edit = await get(t, H, `${path}/${id}/edit`, jar);
    expectGoodPage(edit);
    expect(edit.body).toContain('value="status:active AND price:&gt;=10"');
    expect(edit.body).toContain('value="id, title, price"');
    const change = { _csrf: csrfFrom(edit.body), filter: 'vendor:Acme', include_fields: 'id' };
    await expectCsrfRefused(t, H, `${path}/${id}/edit`, jar, change, shapes);
    const refused = await post(t, H, `${path}/${id}/edit`, jar, { ...change, filter: 'vendor:Acme AND' });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('value="vendor:Acme AND"');
    expect(refused.body).toContain('role="alert"');
    expect(await shapes()).toEqual([['status:active AND price:>=10', '["id","title","price"]']]);
    const saved = await post(t, H, `${path}/${id}/edit`, jar, change);
    expect(saved.statusCode).toBe(303);
    expect(saved.headers.location).toBe(`${path}?done=changed`);
    expect(await copyShape()).toEqual([{ filter: 'vendor:Acme', include_fields: '["id"]' }]);
    expect((await post(t, H, `${path}/${id}/edit`, jar, change)).headers.location).toBe(`${path}?done=unchanged`);
    // Blank fields remove both.
    expect((await post(t, H, `${path}/${id}/edit`, jar, { ...change, filter: '', include_fields: ' ' })).statusCode).toBe(303);
    expect(await copyShape()).toEqual([{ filter: null, include_fields: null }]);
    // Another partner cannot see or change it.
    const otherJar = await partnerLogin(t, await createPartner(t, ++n));
    expect((await get(t, H, `${path}/${id}/edit`, otherJar)).statusCode).toBe(404);
    const otherCsrf = csrfFrom((await get(t, H, '/partner', otherJar)).body);
    expect((await post(t, H, `${path}/${id}/edit`, otherJar, { ...change, _csrf: otherCsrf })).statusCode).toBe(404);
    expect(await copyShape()).toEqual([{ filter: null, include_fields: null }]);
  });

  it('the partner API: the app itself adds, lists and removes; no or wrong credentials 401, another app 403, bad input 422', async () => {
    const { app, clientSecret } = await partnerApp(null, 'API app');
    const { app: otherApp, clientSecret: otherSecret } = await partnerApp(null, 'Other app');
    const url = `/partner/api/apps/${app.client_id}/webhook_subscriptions`;
    const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, auth: string | undefined, body?: unknown) =>
      t.app.inject({
        method,
        url: path,
        headers: {
          host: H,
          ...(auth ? { authorization: auth } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
    const good = basic(app.client_id, clientSecret);
    const hook = { topic: 'products/create', address: 'https://hooks.example.test/api' };

    for (const auth of [undefined, basic(app.client_id, 'wrong'), 'Bearer x', basic('nobody', clientSecret)]) {
      const res = await call('POST', url, auth, hook);
      expect(res.statusCode, String(auth)).toBe(401);
      expect(res.headers['www-authenticate']).toContain('Basic');
      expect(res.body).not.toContain(clientSecret);
    }
    const foreign = await call('POST', url, basic(otherApp.client_id, otherSecret), hook);
    expect(foreign.statusCode).toBe(403);
    for (const bad of [
      { ...hook, address: 'http://10.0.0.1/' },
      { ...hook, topic: 'shop/redact' },
      { ...hook, extra: 1 },
      { topic: 'products/create' },
      { ...hook, address: 42 },
    ]) {
      const res = await call('POST', url, good, bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(422);
      expect(res.json().code).toBe('ValidationFailed');
    }
    expect(await declared(app.id)).toEqual([]);
    // The store host does not serve it.
    const f = await createFixture(t);
    expect((await t.app.inject({ method: 'GET', url, headers: { host: f.host, authorization: good } })).statusCode).toBe(404);

    const created = await call('POST', url, good, hook);
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toEqual({
      data: {
        id: expect.any(String),
        ...hook,
        api_version: expect.any(String),
        filter: null,
        include_fields: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        stores: 0,
      },
      skipped: [],
    });
    expect((await call('POST', url, good, hook)).statusCode).toBe(422);
    const listed = await call('GET', url, good);
    expect(listed.statusCode).toBe(200);
    expect(listed.headers['cache-control']).toBe('no-store');
    expect(listed.json().data).toEqual([created.json().data]);
    expect((await call('GET', url, basic(otherApp.client_id, otherSecret))).statusCode).toBe(403);
    const id = created.json().data.id as string;
    // PUT takes only the filter and fields, checked; anything else is a 422 that changes nothing.
    expect((await call('PUT', `${url}/${id}`, basic(otherApp.client_id, otherSecret), { filter: null })).statusCode).toBe(403);
    const refusals: [Record<string, unknown> | undefined, string][] = [
      [undefined, 'body'],
      [{ topic: 'orders/create' }, 'topic'],
      [{ filter: 'colour:red' }, 'filter'],
      [{ include_fields: 'id' }, 'include_fields'],
      [{ filter: 1 }, 'filter'],
    ];
    for (const [body, field] of refusals) {
      const res = await call('PUT', `${url}/${id}`, good, body);
      expect(res.statusCode, `${JSON.stringify(body)} ${res.body}`).toBe(422);
      expect(Object.keys(res.json().errors)).toEqual([field]);
    }
    expect((await call('GET', url, good)).json().data).toEqual([created.json().data]);
    const reshaped = await call('PUT', `${url}/${id}`, good, { filter: 'status:active' });
    expect(reshaped.json()).toMatchObject({
      changed: true,
      stores_changed: 0,
      data: { id, filter: 'status:active', include_fields: null },
    });
    expect((await call('DELETE', `${url}/${id}`, basic(otherApp.client_id, otherSecret))).statusCode).toBe(403);
    expect((await call('DELETE', `${url}/999999`, good)).statusCode).toBe(404);
    expect((await call('DELETE', `${url}/x`, good)).statusCode).toBe(404);
    const removed = await call('DELETE', `${url}/${id}`, good);
    expect(removed.statusCode).toBe(200);
    expect(removed.json().data.id).toBe(id);
    expect(await declared(app.id)).toEqual([]);

    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: H } })).json();
    const paths = doc.paths['/partner/api/apps/{clientId}/webhook_subscriptions'];
    expect(paths.get.tags).toEqual(['partner-api']);
    expect(paths.post.security).toEqual([{ PartnerClient: [] }]);
    expect(doc.paths['/partner/api/apps/{clientId}/webhook_subscriptions/{id}'].delete.summary).toBeTruthy();
    const put = doc.paths['/partner/api/apps/{clientId}/webhook_subscriptions/{id}'].put;
    expect(put.tags).toEqual(['partner-api']);
    expect(put.requestBody.content['application/json'].schema.properties.filter.description).toContain('status:active AND price:>=10');
    expect(paths.post.requestBody.content['application/json'].schema.properties).toHaveProperty('include_fields');
  });
});
