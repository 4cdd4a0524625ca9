// The storage contract for partner apps and their installations, and the webhook list an app asks for on every install.
// Every target (storage-targets.ts) gets a database of its own for this file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuplicateRecordError } from '../../src/domain/errors.ts';
import type { Storage } from '../../src/storage/ports/storage.ts';
import { storageTargets } from '../storage-targets.ts';
import { subscribe } from './queue.ts';
import { NOW, MINUTE, HOUR, DAY, tag, world, secondApp, newApp, contractDatabase } from './support.ts';

describe.each(storageTargets('contract-apps'))('storage contract: $name', (target) => {
  const db = contractDatabase(target);
  let s: Storage;

  beforeAll(async () => {
    s = await db.open();
  });

  afterAll(() => db.close());

  describe('apps', () => {
    it('insertApp, findByClientId, findById, listApps, listPartnerApps; a duplicate client id is refused', async () => {
      const w = await world(s);
      const name = tag('app');
      const app = await s.apps.insertApp(newApp(name, w.partnerId));
      const { created_at: _created, ...fields } = newApp(name, w.partnerId);
      expect(app).toEqual({
        id: expect.any(Number),
        ...fields,
        previous_secret_enc: null,
        previous_secret_expires_at: null,
        privacy_webhook_url: null,
        authorization_iss: 0,
        managed_install: 0,
        webhook_signature_ed25519: 0,
      });
      expect(await s.apps.findByClientId(app.client_id)).toEqual(app);
      expect((await s.apps.insertApp({ ...newApp(tag('app'), null), authorization_iss: 1 })).authorization_iss).toBe(1);
      expect(await s.apps.findByClientId('client-unknown')).toBeUndefined();
      expect(await s.apps.findById(app.id)).toEqual(app);
      expect(await s.apps.findById(app.id + 100_000)).toBeUndefined();

      const unowned = await s.apps.insertApp(newApp(tag('app'), null));
      const all = await s.apps.listApps();
      expect(all.map((a) => a.id)).toEqual([...all.map((a) => a.id)].sort((a, b) => a - b));
      expect(all.filter((a) => [w.app.id, app.id, unowned.id].includes(a.id))).toEqual([w.app, app, unowned]);
      expect(await s.apps.listPartnerApps(w.partnerId)).toEqual([w.app, app]);
      expect(await s.apps.listPartnerApps(w.partnerId + 100_000)).toEqual([]);

      await expect(s.apps.insertApp(newApp(name, null))).rejects.toThrow();
    });

    it('updateAuthorizationIss turns it on and off for that app only', async () => {
      const w = await world(s);
      const other = await s.apps.insertApp(newApp(tag('app'), null));
      await s.apps.updateAuthorizationIss(w.app.id, true);
      expect(await s.apps.findByClientId(w.app.client_id)).toEqual({ ...w.app, authorization_iss: 1 });
      expect(await s.apps.findById(other.id)).toEqual(other);
      await s.apps.updateAuthorizationIss(w.app.id, false);
      expect(await s.apps.findById(w.app.id)).toEqual({ ...w.app, authorization_iss: 0 });
    });

    it('updateProfile changes name and scopes of that app only', async () => {
      const w = await world(s);
      const other = await s.apps.insertApp(newApp(tag('app'), null));
      await s.apps.updateProfile(w.app.id, { name: 'Renamed', scopes: 'read_orders,read_products' });
      expect(await s.apps.findByClientId(w.app.client_id)).toEqual({ ...w.app, name: 'Renamed', scopes: 'read_orders,read_products' });
      expect(await s.apps.findById(other.id)).toEqual(other);
    });

    it('updateUrls and updateSecrets', async () => {
      const w = await world(s);
      await s.apps.updateUrls(w.app.id, 'https://new.example.test/', 'https://new.example.test/cb');
      await s.apps.updateSecrets(w.app.id, { current: 'secret-2', previous: w.app.client_secret_enc, previousExpiresAt: NOW + DAY });
      const expected = {
        ...w.app,
        app_url: 'https://new.example.test/',
        redirect_uri: 'https://new.example.test/cb',
        client_secret_enc: 'secret-2',
        previous_secret_enc: w.app.client_secret_enc,
        previous_secret_expires_at: NOW + DAY,
      };
      expect(await s.apps.findById(w.app.id)).toEqual(expected);
      expect(await s.apps.findByClientId(w.app.client_id)).toEqual(expected);
      await s.apps.updateSecrets(w.app.id, { current: 'secret-3', previous: null, previousExpiresAt: null });
      expect(await s.apps.findByClientId(w.app.client_id)).toEqual({
        ...expected,
        client_secret_enc: 'secret-3',
        previous_secret_enc: null,
        previous_secret_expires_at: null,
      });
    });

    it('installations: insert, find, update, listInstalled (uninstalled apps are not listed); one per store and app', async () => {
      const w = await world(s);
      expect(w.installation).toEqual({
        id: expect.any(Number),
        store_id: w.store.id,
        app_id: w.app.id,
        scopes: 'read_products',
        uninstalled_at: null,
      });
      expect(await s.apps.findInstallation(w.store.id, w.app.id)).toEqual(w.installation);
      const two = await secondApp(s, w);
      expect(await s.apps.findInstallation(w.store.id, two.app.id + 100_000)).toBeUndefined();
      await expect(s.apps.insertInstallation({ storeId: w.store.id, appId: w.app.id, scopes: 'read_orders', now: NOW })).rejects.toThrow();

      await s.apps.updateInstallation(w.store.id, w.installation.id, { scopes: 'read_products,write_products' });
      expect((await s.apps.listInstalled(w.store.id)).sort((a, b) => a.app_id - b.app_id)).toEqual([
        { app_id: w.app.id, client_id: w.app.client_id, name: w.app.name, scopes: 'read_products,write_products', installed_at: NOW },
        { app_id: two.app.id, client_id: two.app.client_id, name: two.app.name, scopes: 'read_products', installed_at: NOW },
      ]);

      await s.apps.updateInstallation(w.store.id, two.installation.id, { uninstalledAt: NOW + MINUTE });
      expect((await s.apps.findInstallation(w.store.id, two.app.id))?.uninstalled_at).toBe(NOW + MINUTE);
      expect((await s.apps.listInstalled(w.store.id)).map((a) => a.app_id)).toEqual([w.app.id]);

      // Installing again: the same row, back in the list with the new install time.
      await s.apps.updateInstallation(w.store.id, two.installation.id, {
        uninstalledAt: null,
        installedAt: NOW + HOUR,
        scopes: 'read_orders',
      });
      expect((await s.apps.listInstalled(w.store.id)).find((a) => a.app_id === two.app.id)).toEqual({
        app_id: two.app.id,
        client_id: two.app.client_id,
        name: two.app.name,
        scopes: 'read_orders',
        installed_at: NOW + HOUR,
      });
      expect(await s.apps.listInstalled(w.store.id + 100_000)).toEqual([]);
    });

    it('private apps: insert, list newest first, find, revoke once and only in their own store', async () => {
      const w = await world(s);
      const elsewhere = await world(s);
      const first = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'Sync',
        scopes: 'read_orders',
        tokenHash: tag('private-hash'),
        webhookSecretEnc: 'sealed-a',
        now: NOW,
      });
      const second = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'Report',
        scopes: 'read_products',
        tokenHash: tag('private-hash'),
        webhookSecretEnc: 'sealed-b',
        now: NOW + 1,
      });
      expect(await s.apps.listPrivateApps(w.store.id)).toEqual([
        {
          id: second,
          name: 'Report',
          scopes: 'read_products',
          created_at: NOW + 1,
          revoked_at: null,
          previous_webhook_secret_expires_at: null,
        },
        { id: first, name: 'Sync', scopes: 'read_orders', created_at: NOW, revoked_at: null, previous_webhook_secret_expires_at: null },
      ]);
      expect(await s.apps.listPrivateApps(elsewhere.store.id)).toEqual([]);
      expect(await s.apps.findPrivateApp(w.store.id, first)).toEqual({
        id: first,
        store_id: w.store.id,
        webhook_secret_enc: 'sealed-a',
        revoked_at: null,
      });
      expect(await s.apps.findPrivateApp(w.store.id, second + 100_000)).toBeUndefined();

      expect(await s.apps.revokePrivateApp(elsewhere.store.id, first, NOW + 2)).toBe(false);
      expect(await s.apps.revokePrivateApp(w.store.id, first, NOW + 3)).toBe(true);
      expect(await s.apps.revokePrivateApp(w.store.id, first, NOW + 4)).toBe(false);
      expect(await s.apps.findPrivateApp(w.store.id, first)).toEqual({
        id: first,
        store_id: w.store.id,
        webhook_secret_enc: 'sealed-a',
        revoked_at: NOW + 3,
      });
      expect((await s.apps.listPrivateApps(w.store.id)).map((p) => p.revoked_at)).toEqual([null, NOW + 3]);
    });

    it('countActivePrivateApps counts a store’s private apps that are not revoked', async () => {
      const w = await world(s);
      const elsewhere = await world(s);
      const add = (storeId: number) =>
        s.apps.insertPrivateApp({
          storeId,
          name: 'P',
          scopes: 'read_products',
          tokenHash: tag('private-hash'),
          webhookSecretEnc: 'x',
          now: NOW,
        });
      expect(await s.apps.countActivePrivateApps(w.store.id)).toBe(0);
      const first = await add(w.store.id);
      await add(w.store.id);
      await add(elsewhere.store.id);
      expect(await s.apps.countActivePrivateApps(w.store.id)).toBe(2);
      await s.apps.revokePrivateApp(w.store.id, first, NOW + 1);
      expect(await s.apps.countActivePrivateApps(w.store.id)).toBe(1);
      expect(await s.apps.countActivePrivateApps(elsewhere.store.id)).toBe(1);
    });
  });

  describe('appWebhooks', () => {
    it('an app-level list: insert (a duplicate refused), find, list, reshape, recount for installs, delete', async () => {
      const w = await world(s);
      const row = {
        app_id: w.app.id,
        topic: 'products/create',
        address: 'https://hooks.example.test/a',
        api_version: '2026-01',
        filter: 'status:active',
        include_fields: '["id","title"]',
        created_at: NOW,
        updated_at: NOW,
      };
      expect(await s.appWebhooks.countForInstall(w.app.id)).toBe(0);
      const added = await s.transaction(async (tx) => {
        await tx.appWebhooks.lockApp(w.app.id);
        const r = await tx.appWebhooks.insert(row);
        await tx.appWebhooks.recount(w.app.id);
        return r;
      });
      expect(added).toEqual({ id: expect.any(Number), ...row });
      await expect(s.appWebhooks.insert(row)).rejects.toBeInstanceOf(DuplicateRecordError);
      expect(await s.appWebhooks.countForInstall(w.app.id)).toBe(1);
      expect(await s.appWebhooks.find(w.app.id, added.id)).toEqual(added);
      expect(await s.appWebhooks.find(w.app.id + 1000, added.id)).toBeUndefined();
      expect(await s.appWebhooks.list(w.app.id)).toEqual([added]);
      // The filter and fields change in place, on the app's own row only.
      const shape = { filter: null, include_fields: '["id"]' };
      expect(await s.appWebhooks.reshape(w.app.id + 1000, added.id, shape, NOW + 5)).toBeUndefined();
      const reshaped = await s.appWebhooks.reshape(w.app.id, added.id, shape, NOW + 5);
      expect(reshaped).toEqual({ ...added, ...shape, updated_at: NOW + 5 });
      expect(await s.appWebhooks.find(w.app.id, added.id)).toEqual(reshaped);
      expect(await s.appWebhooks.delete(w.app.id + 1000, added.id)).toBe(false);
      expect(await s.appWebhooks.delete(w.app.id, added.id)).toBe(true);
      await s.appWebhooks.recount(w.app.id);
      expect(await s.appWebhooks.countForInstall(w.app.id)).toBe(0);
      expect(await s.appWebhooks.list(w.app.id)).toEqual([]);
    });

    it('store copies: found per store, adopted, counted per source, deleted by id or all but the kept topics; stores walked by id', async () => {
      const w = await world(s);
      const other = await world(s);
      const source = await s.appWebhooks.insert({
        app_id: w.app.id,
        topic: 'products/create',
        address: 'https://hooks.example.test/c',
        api_version: '2026-01',
        filter: 'vendor:Acme',
        include_fields: '["id"]',
        created_at: NOW,
        updated_at: NOW,
      });
      const copy = await s.webhooks.insertSubscription({
        store_id: w.store.id,
        owner: `app:${w.app.id}`,
        app_id: w.app.id,
        private_app_id: null,
        topic: 'app/uninstalled',
        address: 'https://hooks.example.test/gone',
        api_version: '2026-01',
        created_at: NOW,
        updated_at: NOW,
        app_subscription_id: source.id,
      });
      expect(copy.app_subscription_id).toBe(source.id);
      const own = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/c');
      const adopt = {
        storeId: w.store.id,
        owner: `app:${w.app.id}`,
        topic: 'products/create',
        address: 'https://hooks.example.test/c',
        appSubscriptionId: source.id,
        shape: { filter: 'vendor:Acme', include_fields: '["id"]' },
        now: NOW + 1,
      };
      expect(await s.appWebhooks.adopt({ ...adopt, storeId: other.store.id })).toBeUndefined();
      expect(await s.appWebhooks.adopt(adopt)).toMatchObject({
        id: own.id,
        app_subscription_id: source.id,
        version: 2,
        updated_at: NOW + 1,
        filter: 'vendor:Acme',
        include_fields: '["id"]',
      });
      expect(await s.appWebhooks.adopt(adopt)).toBeUndefined();
      expect((await s.appWebhooks.copiesInStore(w.store.id, w.app.id)).sort((a, b) => a.id - b.id)).toEqual([
        { id: copy.id, app_subscription_id: source.id, topic: 'app/uninstalled', filter: null, include_fields: null },
        { id: own.id, app_subscription_id: source.id, topic: 'products/create', filter: 'vendor:Acme', include_fields: '["id"]' },
      ]);
      // Copies take a new filter and fields by id, in their store only, each with a new version.
      const shape = { filter: 'vendor:Beta', include_fields: null };
      expect(await s.appWebhooks.reshapeCopies(other.store.id, [own.id], shape, NOW + 2)).toBe(0);
      expect(await s.appWebhooks.reshapeCopies(w.store.id, [], shape, NOW + 2)).toBe(0);
      expect(await s.appWebhooks.reshapeCopies(w.store.id, [own.id], shape, NOW + 2)).toBe(1);
      expect(await s.webhooks.findSubscription(w.store.id, `app:${w.app.id}`, own.id)).toMatchObject({
        ...shape,
        version: 3,
        updated_at: NOW + 2,
      });
      expect(await s.appWebhooks.copiesInStore(other.store.id, w.app.id)).toEqual([]);
      expect(await s.appWebhooks.copyCounts(w.app.id)).toEqual(new Map([[source.id, 2]]));
      expect(await s.appWebhooks.storesWithCopies(source.id, 0, 10)).toEqual([w.store.id]);
      expect(await s.appWebhooks.storesWithCopies(source.id, w.store.id, 10)).toEqual([]);
      await s.apps.insertInstallation({ storeId: other.store.id, appId: w.app.id, scopes: 'read_products', now: NOW });
      const both = [w.store.id, other.store.id].sort((a, b) => a - b);
      expect(await s.appWebhooks.installedStores(w.app.id, 0, 10)).toEqual(both);
      expect(await s.appWebhooks.installedStores(w.app.id, 0, 1)).toEqual([both[0]]);
      expect(await s.appWebhooks.installedStores(w.app.id, both[0]!, 10)).toEqual([both[1]]);
      // Another store's ids delete nothing; all but the kept topic go.
      expect(await s.appWebhooks.deleteCopies(other.store.id, [own.id])).toBe(0);
      expect(await s.appWebhooks.deleteAppCopies(w.store.id, w.app.id, ['app/uninstalled'])).toBe(1);
      expect((await s.appWebhooks.copiesInStore(w.store.id, w.app.id)).map((c) => c.id)).toEqual([copy.id]);
      expect(await s.appWebhooks.deleteCopies(w.store.id, [copy.id])).toBe(1);
      expect(await s.appWebhooks.copyCounts(w.app.id)).toEqual(new Map());
    });
  });

  db.routingTest();
});
