// What `storegate apps deploy` asks of the platform: AppService.updateProfile (name and scopes,
// checked, grants untouched) and AppWebhooks.sync (the file's subscriptions become the app's
// app-level list: copied into every store it is installed in, idempotent, a topic the grant does
// not cover left out there).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationFailedError } from '../src/domain/errors.ts';
import { createFixture, createTestPlatform, DIALECTS, type TestPlatform } from './harness.ts';

describe.each(DIALECTS)('app configuration applied (%s)', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect);
  });
  afterAll(async () => {
    await t.close();
  });

  it('updateProfile renames and changes the scopes asked for; the grant stays; bad input changes nothing', async () => {
    const f = await createFixture(t);
    const s = t.services;
    const app = (await s.apps.findByClientId(f.clientId))!;
    const store = (await s.accounts.findStoreByName(f.storeName))!;
    await s.apps.grant(store.id, app.id, ['read_products']);
    await s.apps.updateProfile(app.id, { name: '  Renamed app ', scopes: 'read_orders read_products read_orders' });
    const after = (await s.apps.findByClientId(f.clientId))!;
    expect(after).toMatchObject({ name: 'Renamed app', scopes: 'read_orders,read_products' });
    expect((await s.apps.findInstallation(store.id, app.id))?.scopes).toBe('read_products');
    for (const bad of [
      { name: '', scopes: 'read_products' },
      { name: 'x'.repeat(101), scopes: 'read_products' },
      { name: 'Fine', scopes: 'read_everything' },
    ]) {
      await expect(s.apps.updateProfile(app.id, bad)).rejects.toBeInstanceOf(ValidationFailedError);
    }
    expect(await s.apps.findByClientId(f.clientId)).toEqual(after);
  });

  it("sync makes the file's list the app's app-level list, copied into each store it is installed in; uncovered topics stay out", async () => {
    const f = await createFixture(t);
    const other = await createFixture(t);
    const s = t.services;
    const app = (await s.apps.findByClientId(f.clientId))!;
    const store = (await s.accounts.findStoreByName(f.storeName))!;
    const notInstalled = (await s.accounts.findStoreByName(other.storeName))!;
    await s.apps.grant(store.id, app.id, ['read_products']);
    const wanted = [
      { topic: 'products/create', address: 'http://localhost:3000/webhooks' },
      { topic: 'orders/create', address: 'http://localhost:3000/webhooks' },
    ] as const;
    const first = await s.appWebhooks.sync(app.id, wanted);
    expect(first.added.map((a) => [a.topic, a.stores, a.skipped])).toEqual([
      ['products/create', 1, []],
      ['orders/create', 0, []],
    ]);
    const again = await s.appWebhooks.sync(app.id, wanted);
    expect([again.added, again.removed, again.unchanged.map((u) => u.topic)]).toEqual([[], [], ['products/create', 'orders/create']]);
    const rows = await t.db.kysely.selectFrom('webhook_subscriptions').selectAll().where('app_id', '=', app.id).execute();
    expect(rows.map((r) => [r.store_id, r.topic, r.address])).toEqual([[store.id, 'products/create', 'http://localhost:3000/webhooks']]);
    expect(rows.some((r) => r.store_id === notInstalled.id)).toBe(false);
    // Left out of the file: removed, with its copy.
    const third = await s.appWebhooks.sync(app.id, [wanted[1]]);
    expect(third.removed.map((r) => [r.topic, r.stores])).toEqual([['products/create', 1]]);
    expect(await t.db.kysely.selectFrom('webhook_subscriptions').selectAll().where('app_id', '=', app.id).execute()).toEqual([]);
    // A bad entry changes nothing, and names the entry.
    const bad = s.appWebhooks.sync(app.id, [wanted[0], { topic: 'products/create', address: 'ftp://x' }]);
    await expect(bad).rejects.toMatchObject({ errors: { 'subscriptions[1].address': [expect.any(String)] } });
    expect((await s.appWebhooks.list(app.id)).map((r) => r.topic)).toEqual(['orders/create']);
  });

  it('sync changes the filter and include_fields of an entry in place (same topic and address), with its copies; a bad one changes nothing', async () => {
    const f = await createFixture(t, { scopes: 'read_products' });
    const s = t.services;
    const app = (await s.apps.findByClientId(f.clientId))!;
    const store = (await s.accounts.findStoreByName(f.storeName))!;
    await s.apps.grant(store.id, app.id, ['read_products']);
    const entry = { topic: 'products/update', address: 'http://localhost:3000/filtered' };
    const copy = () =>
      t.db.kysely.selectFrom('webhook_subscriptions').select(['filter', 'include_fields']).where('app_id', '=', app.id).executeTakeFirst();
    const first = await s.appWebhooks.sync(app.id, [{ ...entry, filter: 'status:active', includeFields: ['id', 'title', 'id'] }]);
    expect(first.added.map((a) => [a.filter, a.include_fields, a.stores])).toEqual([['status:active', '["id","title"]', 1]]);
    expect(await copy()).toEqual({ filter: 'status:active', include_fields: '["id","title"]' });
    const same = await s.appWebhooks.sync(app.id, [{ ...entry, filter: 'status:active', includeFields: ['id', 'title'] }]);
    expect([same.added, same.changed, same.removed, same.unchanged.length]).toEqual([[], [], [], 1]);

    const changed = await s.appWebhooks.sync(app.id, [{ ...entry, filter: 'status:active AND price:>=10' }]);
    expect([changed.added, changed.removed, changed.unchanged]).toEqual([[], [], []]);
    expect(changed.changed).toEqual([
      expect.objectContaining({
        id: first.added[0]!.id,
        filter: 'status:active AND price:>=10',
        include_fields: null,
        previous: { filter: 'status:active', include_fields: '["id","title"]' },
        changed: true,
        stores: 1,
      }),
    ]);
    expect(await copy()).toEqual({ filter: 'status:active AND price:>=10', include_fields: null });

    // A bad filter or field names its entry and field; nothing is written, anywhere.
    const before = await s.appWebhooks.list(app.id);
    await expect(
      s.appWebhooks.sync(app.id, [
        { ...entry, address: 'http://localhost:3000/new' },
        { ...entry, filter: 'price:cheap', includeFields: ['colour'] },
      ]),
    ).rejects.toMatchObject({
      errors: {
        'subscriptions[1].filter': [expect.stringMatching(/price is a number/)],
        'subscriptions[1].include_fields': [expect.any(String)],
      },
    });
    await expect(s.appWebhooks.add(app.id, { ...entry, address: 'http://localhost:3000/x', filter: 'colour:red' })).rejects.toMatchObject({
      errors: { filter: [expect.stringMatching(/unknown field "colour"/)] },
    });
    await expect(s.appWebhooks.update(app.id, before[0]!.id, { includeFields: [] })).rejects.toMatchObject({
      errors: { include_fields: [expect.any(String)] },
    });
    expect(await s.appWebhooks.list(app.id)).toEqual(before);
    expect(await copy()).toEqual({ filter: 'status:active AND price:>=10', include_fields: null });
  });

  it('a store subscription the app made itself with the same topic and address becomes the copy, taking the app-level filter and fields', async () => {
    const f = await createFixture(t, { scopes: 'read_products' });
    const s = t.services;
    const app = (await s.apps.findByClientId(f.clientId))!;
    const store = (await s.accounts.findStoreByName(f.storeName))!;
    await s.apps.grant(store.id, app.id, ['read_products']);
    const address = 'http://localhost:3000/adopted';
    const own = await t.db.kysely
      .insertInto('webhook_subscriptions')
      .values({
        store_id: store.id,
        owner: `app:${app.id}`,
        app_id: app.id,
        private_app_id: null,
        topic: 'products/create',
        address,
        api_version: '2026-01',
        filter: 'vendor:Own',
        created_at: 1,
        updated_at: 1,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const added = await s.appWebhooks.add(app.id, { topic: 'products/create', address, filter: 'vendor:Acme', includeFields: ['id'] });
    expect(added.stores).toBe(1);
    const rows = await t.db.kysely.selectFrom('webhook_subscriptions').selectAll().where('app_id', '=', app.id).execute();
    expect(rows).toEqual([
      expect.objectContaining({ id: own.id, app_subscription_id: added.id, filter: 'vendor:Acme', include_fields: '["id"]' }),
    ]);
  });
});
