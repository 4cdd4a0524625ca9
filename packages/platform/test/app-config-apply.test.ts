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
});
