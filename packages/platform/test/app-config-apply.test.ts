// What `storegate apps deploy` asks of the platform: AppService.updateProfile (name and scopes,
// checked, grants untouched) and WebhookSubscriptions.applyForApp (the file's subscriptions in every
// store the app is installed in now, idempotent, a topic the grant does not cover skipped).
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

  it('applyForApp subscribes in each store the app is installed in, once; skips topics the grant does not cover', async () => {
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
    const first = await s.subscriptions.applyForApp(app.id, wanted, '2026-01');
    expect(first).toEqual([
      { store: f.storeName, topic: 'products/create', address: 'http://localhost:3000/webhooks', result: 'created' },
      {
        store: f.storeName,
        topic: 'orders/create',
        address: 'http://localhost:3000/webhooks',
        result: 'skipped',
        reason: 'The topic orders/create needs the read_orders scope',
      },
    ]);
    const again = await s.subscriptions.applyForApp(app.id, wanted, '2026-01');
    expect(again.map((r) => r.result)).toEqual(['exists', 'skipped']);
    const rows = await t.db.kysely.selectFrom('webhook_subscriptions').selectAll().where('app_id', '=', app.id).execute();
    expect(rows.map((r) => [r.store_id, r.topic, r.address])).toEqual([[store.id, 'products/create', 'http://localhost:3000/webhooks']]);
    expect(rows.some((r) => r.store_id === notInstalled.id)).toBe(false);
    // Uninstalled: no longer a store it applies to.
    await s.apps.uninstall(store.id, app.id);
    expect(await s.subscriptions.applyForApp(app.id, wanted, '2026-01')).toEqual([]);
  });
});
