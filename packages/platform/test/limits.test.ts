// Caps on what one owner or one store may pile up, on SQLite and PostgreSQL: webhook subscriptions
// per owner per store, per owner per topic and per store per topic (what one write fans out to),
// active private apps per store. Past the cap the answer is a 422 naming the
// limit and nothing is created. Rows up to the cap are written through the storage port directly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationFailedError } from '../src/domain/errors.ts';
import {
  MAX_ACTIVE_PRIVATE_APPS,
  MAX_STORE_SUBSCRIPTIONS_PER_TOPIC,
  MAX_SUBSCRIPTIONS_PER_OWNER,
  MAX_SUBSCRIPTIONS_PER_TOPIC,
} from '../src/domain/limits.ts';
import { api, appToken, createFixture, createTestPlatform, csrfFrom, DIALECTS, login, privateToken, type TestPlatform } from './harness.ts';
import { WebhookOutbox } from '../src/services/webhook-outbox.ts';
import { get, post } from './web-pages.ts';

const V = '/openapi/2026-01';
const SUBSCRIPTIONS_FULL = `an app may have at most ${MAX_SUBSCRIPTIONS_PER_OWNER} webhook subscriptions in a store; delete one first`;
const PRIVATE_APPS_FULL = `a store may have at most ${MAX_ACTIVE_PRIVATE_APPS} active private apps; revoke one first`;

describe.each(DIALECTS)('limits on %s', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off' });
  });
  afterAll(async () => t.close());

  const ids = async (storeName: string, clientId: string) => ({
    storeId: (await t.services.accounts.findStoreByName(storeName))!.id,
    appId: (await t.services.apps.findByClientId(clientId))!.id,
  });

  /** Subscriptions of an app written straight through the port, up to `n`. */
  async function fill(storeId: number, appId: number, n: number): Promise<void> {
    const now = t.clock.now;
    await t.platform.storage.transaction(async (tx) => {
      for (let i = 0; i < n; i++) {
        await tx.webhooks.insertSubscription({
          store_id: storeId,
          owner: `app:${appId}`,
          app_id: appId,
          private_app_id: null,
          topic: 'products/create',
          address: `https://hooks.example.com/fill-${i}`,
          api_version: '2026-01',
          created_at: now,
          updated_at: now,
        });
      }
    });
  }

  const countSubs = async (storeId: number, owner: string) =>
    (
      await t.db.kysely
        .selectFrom('webhook_subscriptions')
        .select('id')
        .where('store_id', '=', storeId)
        .where('owner', '=', owner)
        .execute()
    ).length;

  it(`an app may hold ${MAX_SUBSCRIPTIONS_PER_OWNER} webhook subscriptions in a store; one more is 422 naming the limit, nothing created`, async () => {
    const f = await createFixture(t, { scopes: 'read_products' });
    const token = await appToken(t, f, 'read_products');
    const { storeId, appId } = await ids(f.storeName, f.clientId);
    await fill(storeId, appId, MAX_SUBSCRIPTIONS_PER_OWNER - 1);
    const last = await api(t, f, token, 'POST', `${V}/webhooks`, { address: 'https://hooks.example.com/last', topic: 'products/update' });
    expect(last.statusCode, last.body).toBe(201);
    const over = await api(t, f, token, 'POST', `${V}/webhooks`, { address: 'https://hooks.example.com/over', topic: 'products/update' });
    expect(over.statusCode).toBe(422);
    expect(over.json()).toMatchObject({ code: 'ValidationFailed', errors: { base: [SUBSCRIPTIONS_FULL] } });
    expect(await countSubs(storeId, `app:${appId}`)).toBe(MAX_SUBSCRIPTIONS_PER_OWNER);

    // The cap is per owner and per store: a private app of the same store still subscribes.
    const priv = await privateToken(t, f.storeName, 'read_products');
    expect(
      (await api(t, f, priv, 'POST', `${V}/webhooks`, { address: 'https://hooks.example.com/p', topic: 'products/update' })).statusCode,
    ).toBe(201);
    // Deleting one makes room for one.
    const first = (await api(t, f, token, 'GET', `${V}/webhooks?limit=1`)).json().data[0];
    expect((await api(t, f, token, 'DELETE', `${V}/webhooks/${first.id}`)).statusCode).toBe(200);
    expect(
      (await api(t, f, token, 'POST', `${V}/webhooks`, { address: 'https://hooks.example.com/over', topic: 'products/update' })).statusCode,
    ).toBe(201);
    expect(await countSubs(storeId, `app:${appId}`)).toBe(MAX_SUBSCRIPTIONS_PER_OWNER);
  });

  it('one below the cap, two simultaneous subscribes: exactly one 201 and one 422', async () => {
    const f = await createFixture(t, { scopes: 'read_products' });
    const token = await appToken(t, f, 'read_products');
    const { storeId, appId } = await ids(f.storeName, f.clientId);
    await fill(storeId, appId, MAX_SUBSCRIPTIONS_PER_OWNER - 1);
    const results = await Promise.all(
      ['a', 'b'].map((x) =>
        api(t, f, token, 'POST', `${V}/webhooks`, { address: `https://hooks.example.com/both-${x}`, topic: 'products/update' }),
      ),
    );
    expect(results.map((r) => r.statusCode).sort(), results.map((r) => r.body).join(' | ')).toEqual([201, 422]);
    expect(results.find((r) => r.statusCode === 422)!.json().errors).toEqual({ base: [SUBSCRIPTIONS_FULL] });
    expect(await countSubs(storeId, `app:${appId}`)).toBe(MAX_SUBSCRIPTIONS_PER_OWNER);
  });

  it(`an app may hold ${MAX_SUBSCRIPTIONS_PER_TOPIC} subscriptions to one topic in a store; one more is 422 naming the topic, nothing created`, async () => {
    const f = await createFixture(t, { scopes: 'read_products' });
    const token = await appToken(t, f, 'read_products');
    const { storeId, appId } = await ids(f.storeName, f.clientId);
    const subscribe = (tok: string, path: string, topic = 'products/update') =>
      api(t, f, tok, 'POST', `${V}/webhooks`, { address: `https://hooks.example.com/${path}`, topic });
    for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_TOPIC; i++) {
      const res = await subscribe(token, `topic-${i}`);
      expect(res.statusCode, res.body).toBe(201);
    }
    const over = await subscribe(token, 'topic-over');
    expect(over.statusCode).toBe(422);
    expect(over.json()).toMatchObject({
      code: 'ValidationFailed',
      errors: {
        base: [
          `an app may have at most ${MAX_SUBSCRIPTIONS_PER_TOPIC} webhook subscriptions to products/update in a store; delete one first`,
        ],
      },
    });
    const onTopic = async (owner: string) =>
      (
        await t.db.kysely
          .selectFrom('webhook_subscriptions')
          .select('id')
          .where('store_id', '=', storeId)
          .where('owner', '=', owner)
          .where('topic', '=', 'products/update')
          .execute()
      ).length;
    expect(await onTopic(`app:${appId}`)).toBe(MAX_SUBSCRIPTIONS_PER_TOPIC);
    // Per topic and per owner: another topic of the same app, and another owner on the same topic, still subscribe.
    expect((await subscribe(token, 'other-topic', 'products/create')).statusCode).toBe(201);
    const priv = await privateToken(t, f.storeName, 'read_products');
    expect((await subscribe(priv, 'private-same-topic')).statusCode).toBe(201);
    // Deleting one makes room for one.
    const first = (await api(t, f, token, 'GET', `${V}/webhooks?limit=1`)).json().data[0];
    expect((await api(t, f, token, 'DELETE', `${V}/webhooks/${first.id}`)).statusCode).toBe(200);
    expect((await subscribe(token, 'topic-again')).statusCode).toBe(201);
    expect(await onTopic(`app:${appId}`)).toBe(MAX_SUBSCRIPTIONS_PER_TOPIC);
  });

  it(`a store may hold ${MAX_STORE_SUBSCRIPTIONS_PER_TOPIC} subscriptions to one topic over all its apps; one more is 422, nothing created`, async () => {
    const f = await createFixture(t, { scopes: 'read_products' });
    const token = await appToken(t, f, 'read_products');
    const { storeId } = await ids(f.storeName, f.clientId);
    // Another owner's subscriptions up to one below the store's cap, written straight through the port.
    const filler = await t.services.apps.createPrivateApp({ storeId, name: 'Filler', scopes: 'read_products' });
    const now = t.clock.now;
    await t.platform.storage.transaction(async (tx) => {
      for (let i = 0; i < MAX_STORE_SUBSCRIPTIONS_PER_TOPIC - 1; i++) {
        await tx.webhooks.insertSubscription({
          store_id: storeId,
          owner: `private:${filler.id}`,
          app_id: null,
          private_app_id: filler.id,
          topic: 'products/delete',
          address: `https://hooks.example.com/store-fill-${i}`,
          api_version: '2026-01',
          created_at: now,
          updated_at: now,
        });
      }
    });
    const subscribe = (tok: string, path: string) =>
      api(t, f, tok, 'POST', `${V}/webhooks`, { address: `https://hooks.example.com/${path}`, topic: 'products/delete' });
    const last = await subscribe(token, 'store-last');
    expect(last.statusCode, last.body).toBe(201);
    const priv = await privateToken(t, f.storeName, 'read_products');
    for (const tok of [token, priv]) {
      const over = await subscribe(tok, 'store-over');
      expect(over.statusCode).toBe(422);
      expect(over.json()).toMatchObject({
        code: 'ValidationFailed',
        errors: {
          base: [
            `a store may have at most ${MAX_STORE_SUBSCRIPTIONS_PER_TOPIC} webhook subscriptions to products/delete over all its apps`,
          ],
        },
      });
    }
    const onTopic = async () =>
      (
        await t.db.kysely
          .selectFrom('webhook_subscriptions')
          .select('id')
          .where('store_id', '=', storeId)
          .where('topic', '=', 'products/delete')
          .execute()
      ).length;
    expect(await onTopic()).toBe(MAX_STORE_SUBSCRIPTIONS_PER_TOPIC);
    // The cap is the store's: the same topic in another store is untouched.
    const g = await createFixture(t, { scopes: 'read_products' });
    expect(
      (
        await api(t, g, await appToken(t, g, 'read_products'), 'POST', `${V}/webhooks`, {
          address: 'https://hooks.example.com/elsewhere',
          topic: 'products/delete',
        })
      ).statusCode,
    ).toBe(201);
    // One write of the store fans out to at most the cap.
    const outbox = new WebhookOutbox(t.services.clock);
    const fanOut = await t.platform.storage.transaction((tx) =>
      outbox.enqueue(tx, { storeId, topic: 'products/delete', payload: { id: '1' } }),
    );
    expect(fanOut).toBe(MAX_STORE_SUBSCRIPTIONS_PER_TOPIC);
  });

  it(`a store may have ${MAX_ACTIVE_PRIVATE_APPS} active private apps; one more is 422 naming the limit; revoked ones do not count`, async () => {
    const f = await createFixture(t);
    const { storeId } = await ids(f.storeName, f.clientId);
    const active = async () =>
      (await t.db.kysely.selectFrom('private_apps').select('id').where('store_id', '=', storeId).where('revoked_at', 'is', null).execute())
        .length;
    for (let i = 0; i < MAX_ACTIVE_PRIVATE_APPS - 1; i++) {
      await t.platform.storage.apps.insertPrivateApp({
        storeId,
        name: `Filler ${i}`,
        scopes: 'read_products',
        tokenHash: `filler-${storeId}-${i}`,
        webhookSecretEnc: 'sealed',
        now: t.clock.now,
      });
    }
    const last = await t.services.apps.createPrivateApp({ storeId, name: 'Last', scopes: 'read_products' });
    expect(last.accessToken).toMatch(/^sg_pt_/);
    const over = t.services.apps.createPrivateApp({ storeId, name: 'Over', scopes: 'read_products' });
    await expect(over).rejects.toBeInstanceOf(ValidationFailedError);
    await expect(over).rejects.toMatchObject({ statusCode: 422, errors: { base: [PRIVATE_APPS_FULL] } });
    expect(await active()).toBe(MAX_ACTIVE_PRIVATE_APPS);

    // Through the store admin form: a 422 page that names the limit, and still nothing created.
    const jar = await login(t, f);
    const form = await get(t, f.host, '/admin/private-apps/new', jar);
    const res = await post(t, f.host, '/admin/private-apps', jar, { _csrf: csrfFrom(form.body), name: 'Form', scopes: 'read_orders' });
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain(PRIVATE_APPS_FULL);
    expect(await active()).toBe(MAX_ACTIVE_PRIVATE_APPS);

    // Revoking one makes room for one.
    await t.services.apps.revokePrivateApp(storeId, last.id);
    await t.services.apps.createPrivateApp({ storeId, name: 'Again', scopes: 'read_products' });
    expect(await active()).toBe(MAX_ACTIVE_PRIVATE_APPS);
    await expect(t.services.apps.createPrivateApp({ storeId, name: 'Over', scopes: 'read_products' })).rejects.toMatchObject({
      statusCode: 422,
    });
  });

  it('one below the private-app cap, two simultaneous creates: exactly one succeeds', async () => {
    const f = await createFixture(t);
    const { storeId } = await ids(f.storeName, f.clientId);
    for (let i = 0; i < MAX_ACTIVE_PRIVATE_APPS - 1; i++) {
      await t.platform.storage.apps.insertPrivateApp({
        storeId,
        name: `Filler ${i}`,
        scopes: 'read_products',
        tokenHash: `race-filler-${storeId}-${i}`,
        webhookSecretEnc: 'sealed',
        now: t.clock.now,
      });
    }
    const results = await Promise.allSettled(
      ['a', 'b'].map((name) => t.services.apps.createPrivateApp({ storeId, name, scopes: 'read_products' })),
    );
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toMatchObject({ statusCode: 422, errors: { base: [PRIVATE_APPS_FULL] } });
  });
});
