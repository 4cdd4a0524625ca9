// The storage contract for webhook subscriptions, the events written for them and the delivery log.
// Every target (storage-targets.ts) gets a database of its own for this file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuplicateRecordError } from '../../src/domain/errors.ts';
import type { SubscriptionRow } from '../../src/storage/ports/rows.ts';
import type { Storage } from '../../src/storage/ports/storage.ts';
import { storageTargets } from '../storage-targets.ts';
import { subscribe, enqueue, deliveriesOf, delivery, claim } from './queue.ts';
import { NOW, MINUTE, tag, world, secondApp, newApp, contractDatabase } from './support.ts';

describe.each(storageTargets('contract-webhooks'))('storage contract: $name', (target) => {
  const db = contractDatabase(target);
  let s: Storage;

  beforeAll(async () => {
    s = await db.open();
  });

  afterAll(() => db.close());

  describe('webhooks', () => {
    it('subscriptions: insert, exists, find (by owner), delete; a duplicate is refused', async () => {
      const w = await world(s);
      const owner = `app:${w.app.id}`;
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/p');
      expect(sub).toEqual({
        id: expect.any(Number),
        store_id: w.store.id,
        owner,
        app_id: w.app.id,
        private_app_id: null,
        topic: 'products/create',
        address: 'https://hooks.example.test/p',
        api_version: '2026-01',
        created_at: NOW,
        updated_at: NOW,
        disabled_at: null,
        version: 1,
        app_subscription_id: null,
        filter: null,
        include_fields: null,
      });
      expect(await s.webhooks.subscriptionExists(w.store.id, owner, 'products/create', 'https://hooks.example.test/p')).toBe(true);
      expect(await s.webhooks.subscriptionExists(w.store.id, owner, 'products/create', 'https://hooks.example.test/q')).toBe(false);
      expect(await s.webhooks.subscriptionExists(w.store.id, 'app:0', 'products/create', 'https://hooks.example.test/p')).toBe(false);
      expect(await s.webhooks.findSubscription(w.store.id, owner, sub.id)).toEqual(sub);
      expect(await s.webhooks.findSubscription(w.store.id, 'app:0', sub.id)).toBeUndefined();
      await expect(subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/p')).rejects.toBeInstanceOf(
        DuplicateRecordError,
      );
      await s.webhooks.deleteSubscription(w.store.id, sub.id);
      expect(await s.webhooks.findSubscription(w.store.id, owner, sub.id)).toBeUndefined();
      expect(await s.webhooks.subscriptionExists(w.store.id, owner, 'products/create', 'https://hooks.example.test/p')).toBe(false);
    });

    it('updateSubscription: topic and address in its own store only, a duplicate is refused; with enable, not disabled', async () => {
      const w = await world(s);
      const other = await world(s);
      const owner = `app:${w.app.id}`;
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/u1');
      const taken = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/update', 'https://hooks.example.test/u2');
      const values = { topic: 'products/delete', address: 'https://hooks.example.test/u3', updated_at: NOW + 1, enable: false };
      expect(await s.webhooks.updateSubscription(other.store.id, sub.id, values)).toBeUndefined();
      expect(await s.webhooks.findSubscription(w.store.id, owner, sub.id)).toMatchObject({ topic: 'products/create' });
      const changed = await s.webhooks.updateSubscription(w.store.id, sub.id, values);
      expect(changed).toMatchObject({
        id: sub.id,
        topic: 'products/delete',
        address: 'https://hooks.example.test/u3',
        updated_at: NOW + 1,
      });
      await expect(
        s.webhooks.updateSubscription(w.store.id, sub.id, {
          ...values,
          topic: 'products/update',
          address: 'https://hooks.example.test/u2',
        }),
      ).rejects.toBeInstanceOf(DuplicateRecordError);
      expect(await s.webhooks.findSubscription(w.store.id, owner, taken.id)).toEqual(taken);
      await s.transaction((tx) => tx.webhooks.updateSubscription(w.store.id, sub.id, { ...values, enable: true }).then(() => undefined));
      expect(await s.webhooks.findSubscription(w.store.id, owner, sub.id)).toMatchObject({ disabled_at: null });
    });

    it('filter and include_fields: stored, changed (left alone when not given), carried by recipients, kept on each delivery', async () => {
      const w = await world(s);
      const owner = `app:${w.app.id}`;
      const sub = await s.webhooks.insertSubscription({
        store_id: w.store.id,
        owner,
        app_id: w.app.id,
        private_app_id: null,
        topic: 'products/create',
        address: 'https://hooks.example.test/f1',
        api_version: '2026-01',
        filter: 'status:active',
        include_fields: '["id","title"]',
        created_at: NOW,
        updated_at: NOW,
      });
      expect(sub).toMatchObject({ filter: 'status:active', include_fields: '["id","title"]' });
      expect(await s.webhooks.recipients(w.store.id, 'products/create')).toEqual([
        {
          id: sub.id,
          app_id: w.app.id,
          private_app_id: null,
          scopes: 'read_products',
          filter: 'status:active',
          include_fields: '["id","title"]',
        },
      ]);
      const base = { topic: 'products/create', address: 'https://hooks.example.test/f1', updated_at: NOW + 1, enable: false };
      expect(await s.webhooks.updateSubscription(w.store.id, sub.id, base)).toMatchObject({
        filter: 'status:active',
        include_fields: '["id","title"]',
        version: 2,
      });
      expect(await s.webhooks.updateSubscription(w.store.id, sub.id, { ...base, filter: null, include_fields: '["id"]' })).toMatchObject({
        filter: null,
        include_fields: '["id"]',
        version: 3,
      });
      const id = tag('evt');
      await s.webhooks.insertEvent({ id, storeId: w.store.id, topic: 'products/create', payload: '{"id":"1","title":"t"}', now: NOW }, [
        { subscriptionId: sub.id, appId: w.app.id, privateAppId: null, webhookId: `wh-${id}-a`, includeFields: '["id"]' },
        { subscriptionId: sub.id, appId: w.app.id, privateAppId: null, webhookId: `wh-${id}-b`, includeFields: null },
      ]);
      const claimed = (await claim(s, 'worker-f', NOW + MINUTE)).filter((r) => r.event_id === id);
      expect(claimed.map((r) => [r.webhook_id, r.include_fields])).toEqual([
        [`wh-${id}-a`, '["id"]'],
        [`wh-${id}-b`, null],
      ]);
    });

    it('a guarded subscription update or delete changes it only at one of the versions; each change adds one', async () => {
      const w = await world(s);
      const owner = `app:${w.app.id}`;
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/g1');
      const values = { topic: 'products/create', address: 'https://hooks.example.test/g2', updated_at: NOW + 1, enable: false };
      expect(await s.webhooks.updateSubscription(w.store.id, sub.id, values, { versions: [2] })).toBeUndefined();
      expect(await s.webhooks.findSubscription(w.store.id, owner, sub.id)).toEqual(sub);
      expect(await s.webhooks.updateSubscription(w.store.id, sub.id, values, { versions: [1] })).toMatchObject({ version: 2 });
      expect(await s.webhooks.deleteSubscription(w.store.id, sub.id, { versions: [1] })).toBe(false);
      expect(await s.webhooks.deleteSubscription(w.store.id, sub.id, { versions: [2] })).toBe(true);
      expect(await s.webhooks.deleteSubscription(w.store.id, sub.id)).toBe(false);
    });

    it('subscriptions() count, with the owner and the topic and address filters', async () => {
      const w = await world(s);
      const other = await world(s);
      await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/c1');
      await subscribe(s, w.store.id, { appId: w.app.id }, 'products/update', 'https://hooks.example.test/c1');
      await subscribe(s, w.store.id, { appId: w.app.id }, 'products/update', 'https://hooks.example.test/c2');
      await subscribe(s, other.store.id, { appId: w.app.id }, 'products/update', 'https://hooks.example.test/c1');
      const keyset = s.webhooks.subscriptions();
      const q = { storeId: w.store.id, where: { owner: `app:${w.app.id}` } };
      expect(await keyset.count(q)).toBe(3);
      expect(await keyset.count({ ...q, filters: { match: { topic: 'products/update' } } })).toBe(2);
      expect(await keyset.count({ ...q, filters: { match: { topic: 'products/update', address: 'https://hooks.example.test/c1' } } })).toBe(
        1,
      );
      expect(await keyset.count({ ...q, filters: { match: { address: 'https://hooks.example.test/C1' } } })).toBe(0);
      expect(await keyset.count({ storeId: other.store.id, where: { owner: `app:${w.app.id}` } })).toBe(1);
      const page = await keyset.window({ ...q, filters: { match: { address: 'https://hooks.example.test/c1' } } }, 'after', undefined, 10);
      expect(page.rows.map((r) => r.topic)).toEqual(['products/create', 'products/update']);
    });

    it('subscriptions() keyset, filtered by owner and store', async () => {
      const w = await world(s);
      const two = await secondApp(s, w);
      const other = await world(s);
      const mine: SubscriptionRow[] = [];
      for (const topic of ['products/create', 'orders/create', 'customers/create'] as const) {
        mine.push(await subscribe(s, w.store.id, { appId: w.app.id }, topic));
        await subscribe(s, w.store.id, { appId: two.app.id }, topic);
      }
      await subscribe(s, other.store.id, { appId: w.app.id }, 'products/create');
      const keyset = s.webhooks.subscriptions();
      const q = { storeId: w.store.id, where: { owner: `app:${w.app.id}` } };
      // The rows carry every field of SubscriptionRow (an implementation may add columns of its own).
      expect(await keyset.after(q, undefined, 10)).toMatchObject(mine);
      expect(await keyset.after(q, mine[0]!.id, 1)).toMatchObject([mine[1]!]);
      expect(await keyset.before(q, mine[2]!.id, 10)).toMatchObject([mine[1]!, mine[0]!]);
      expect(await keyset.window(q, 'after', mine[2]!.id, 10)).toMatchObject({ rows: [], behind: true });
      expect(await keyset.after({ storeId: w.store.id }, undefined, 10)).toHaveLength(6);
    });

    it('recipients: installed apps and active private apps; with uninstalledAppId that app only', async () => {
      const w = await world(s);
      const gone = await secondApp(s, w);
      const never = await s.apps.insertApp(newApp(tag('app'), w.partnerId));
      const live = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'Live',
        scopes: 'read_products',
        tokenHash: tag('private-hash'),
        webhookSecretEnc: 'sealed',
        now: NOW,
      });
      const revoked = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'Revoked',
        scopes: 'read_products',
        tokenHash: tag('private-hash'),
        webhookSecretEnc: 'sealed',
        now: NOW,
      });
      const installed = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const uninstalled = await subscribe(s, w.store.id, { appId: gone.app.id }, 'products/create');
      await subscribe(s, w.store.id, { appId: never.id }, 'products/create');
      const livePrivate = await subscribe(s, w.store.id, { privateAppId: live }, 'products/create');
      await subscribe(s, w.store.id, { privateAppId: revoked }, 'products/create');
      await subscribe(s, w.store.id, { appId: w.app.id }, 'orders/create');
      const goneUninstalled = await subscribe(s, w.store.id, { appId: gone.app.id }, 'app/uninstalled');
      await s.apps.updateInstallation(w.store.id, gone.installation.id, { uninstalledAt: NOW + 1 });
      await s.apps.revokePrivateApp(w.store.id, revoked, NOW + 1);

      expect(await s.webhooks.recipients(w.store.id, 'products/create')).toEqual([
        { id: installed.id, app_id: w.app.id, private_app_id: null, scopes: 'read_products', filter: null, include_fields: null },
        { id: livePrivate.id, app_id: null, private_app_id: live, scopes: 'read_products', filter: null, include_fields: null },
      ]);
      expect(await s.webhooks.recipients(w.store.id, 'products/create', gone.app.id)).toEqual([
        { id: uninstalled.id, app_id: gone.app.id, private_app_id: null, scopes: 'read_products', filter: null, include_fields: null },
      ]);
      expect(await s.webhooks.recipients(w.store.id, 'app/uninstalled', gone.app.id)).toEqual([
        { id: goneUninstalled.id, app_id: gone.app.id, private_app_id: null, scopes: 'read_products', filter: null, include_fields: null },
      ]);
      expect(await s.webhooks.recipients(w.store.id, 'products/delete')).toEqual([]);
    });

    it('recipients carry the owner’s scopes as they are now (the caller decides who may read the topic)', async () => {
      const w = await world(s);
      const privateId = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'P',
        scopes: 'read_products',
        tokenHash: tag('private-hash'),
        webhookSecretEnc: 'sealed',
        now: NOW,
      });
      const app = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const priv = await subscribe(s, w.store.id, { privateAppId: privateId }, 'products/create');
      await s.apps.updateInstallation(w.store.id, w.installation.id, { scopes: 'read_orders,write_customers' });
      expect(await s.webhooks.recipients(w.store.id, 'products/create')).toEqual([
        { id: app.id, app_id: w.app.id, private_app_id: null, scopes: 'read_orders,write_customers', filter: null, include_fields: null },
        { id: priv.id, app_id: null, private_app_id: privateId, scopes: 'read_products', filter: null, include_fields: null },
      ]);
    });

    it('removeSubscriptions deletes an app’s subscriptions to the topics given in one store and cancels their pending deliveries', async () => {
      const w = await world(s);
      const two = await secondApp(s, w);
      const other = await world(s);
      const subs = {
        products: await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create'),
        productsToo: await subscribe(s, w.store.id, { appId: w.app.id }, 'products/update'),
        orders: await subscribe(s, w.store.id, { appId: w.app.id }, 'orders/create'),
        sibling: await subscribe(s, w.store.id, { appId: two.app.id }, 'products/create'),
        elsewhere: await subscribe(s, other.store.id, { appId: w.app.id }, 'products/create'),
      };
      const [gone] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'products/create', [subs.products], NOW));
      const [kept] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'orders/create', [subs.orders], NOW));
      const [sibling] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'products/create', [subs.sibling], NOW));
      const [elsewhere] = await deliveriesOf(s, other.store.id, await enqueue(s, other.store.id, 'products/create', [subs.elsewhere], NOW));

      const removed = await s.transaction((tx) =>
        tx.webhooks.removeSubscriptions({
          storeId: w.store.id,
          appId: w.app.id,
          topics: ['products/create', 'products/update', 'products/delete'],
          reason: 'no longer allowed',
          now: NOW + 1,
        }),
      );
      expect(removed).toBe(2);
      const owner = `app:${w.app.id}`;
      expect(await s.webhooks.findSubscription(w.store.id, owner, subs.products.id)).toBeUndefined();
      expect(await s.webhooks.findSubscription(w.store.id, owner, subs.productsToo.id)).toBeUndefined();
      expect(await s.webhooks.findSubscription(w.store.id, owner, subs.orders.id)).toEqual(subs.orders);
      expect(await s.webhooks.findSubscription(w.store.id, `app:${two.app.id}`, subs.sibling.id)).toEqual(subs.sibling);
      expect(await s.webhooks.findSubscription(other.store.id, owner, subs.elsewhere.id)).toEqual(subs.elsewhere);
      expect(await delivery(s, gone!)).toMatchObject({ status: 'cancelled', last_error: 'no longer allowed', updated_at: NOW + 1 });
      expect((await delivery(s, kept!)).status).toBe('pending');
      expect((await delivery(s, sibling!)).status).toBe('pending');
      expect((await delivery(s, elsewhere!)).status).toBe('pending');
      expect(await s.webhooks.removeSubscriptions({ storeId: w.store.id, appId: w.app.id, topics: [], reason: 'x', now: NOW + 2 })).toBe(0);
      expect((await delivery(s, kept!)).status).toBe('pending');
    });

    it('countSubscriptions counts one owner’s subscriptions in one store, disabled ones included', async () => {
      const w = await world(s);
      const two = await secondApp(s, w);
      const other = await world(s);
      const owner = `app:${w.app.id}`;
      expect(await s.webhooks.countSubscriptions(w.store.id, owner)).toBe(0);
      const first = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      await subscribe(s, w.store.id, { appId: w.app.id }, 'orders/create');
      await subscribe(s, w.store.id, { appId: two.app.id }, 'orders/create');
      await subscribe(s, other.store.id, { appId: w.app.id }, 'orders/create');
      expect(await s.webhooks.countSubscriptions(w.store.id, owner)).toBe(2);
      await s.webhooks.deleteSubscription(w.store.id, first.id);
      expect(await s.webhooks.countSubscriptions(w.store.id, owner)).toBe(1);
    });

    it('countTopicSubscriptions counts a topic’s subscriptions in one store: one owner’s and everyone’s', async () => {
      const w = await world(s);
      const two = await secondApp(s, w);
      const other = await world(s);
      const owner = `app:${w.app.id}`;
      expect(await s.webhooks.countTopicSubscriptions(w.store.id, 'orders/create', owner)).toEqual({ owner: 0, store: 0 });
      const first = await subscribe(s, w.store.id, { appId: w.app.id }, 'orders/create');
      await subscribe(s, w.store.id, { appId: w.app.id }, 'orders/create');
      await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      await subscribe(s, w.store.id, { appId: two.app.id }, 'orders/create');
      await subscribe(s, other.store.id, { appId: w.app.id }, 'orders/create');
      expect(await s.webhooks.countTopicSubscriptions(w.store.id, 'orders/create', owner)).toEqual({ owner: 2, store: 3 });
      expect(await s.webhooks.countTopicSubscriptions(w.store.id, 'orders/create', `app:${two.app.id}`)).toEqual({ owner: 1, store: 3 });
      await s.webhooks.deleteSubscription(w.store.id, first.id);
      expect(await s.webhooks.countTopicSubscriptions(w.store.id, 'orders/create', owner)).toEqual({ owner: 1, store: 2 });
    });

    it('appIdByClientId and storeIdByName', async () => {
      const w = await world(s);
      expect(await s.webhooks.appIdByClientId(w.app.client_id)).toBe(w.app.id);
      expect(await s.webhooks.appIdByClientId('client-unknown')).toBeUndefined();
      expect(await s.webhooks.storeIdByName(w.store.name)).toBe(w.store.id);
      expect(await s.webhooks.storeIdByName('store-unknown')).toBeUndefined();
    });

    it('insertEvent in a transaction wakes listeners once, after the commit; a throwing transaction wakes nobody and leaves nothing', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      let calls = 0;
      let other = 0;
      const off = s.onDeliveriesQueued(() => calls++);
      const offOther = s.onDeliveriesQueued(() => other++);
      try {
        await s.transaction(async (tx) => {
          await enqueue(tx, w.store.id, 'products/create', [sub], NOW);
          await enqueue(tx, w.store.id, 'products/create', [sub], NOW);
          expect(calls).toBe(0);
        });
        expect(calls).toBe(1);
        expect(other).toBe(1);
        expect(await s.webhooks.listDeliveries({ storeId: w.store.id, limit: 10 })).toHaveLength(2);

        const broken = await world(s);
        const brokenSub = await subscribe(s, broken.store.id, { appId: broken.app.id }, 'products/create');
        await expect(
          s.transaction(async (tx) => {
            await enqueue(tx, broken.store.id, 'products/create', [brokenSub], NOW);
            throw new Error('nope');
          }),
        ).rejects.toThrow('nope');
        expect(calls).toBe(1);
        expect(await s.webhooks.listDeliveries({ storeId: broken.store.id, limit: 10 })).toEqual([]);

        // Outside a transaction the write is its own commit.
        await enqueue(s, w.store.id, 'products/create', [sub], NOW);
        expect(calls).toBe(2);
        off();
        await enqueue(s, w.store.id, 'products/create', [sub], NOW);
        expect(calls).toBe(2);
        expect(other).toBe(3);
      } finally {
        off();
        offOther();
      }
    });

    it('listDeliveries: newest first, with filters and what the log shows', async () => {
      const w = await world(s);
      const two = await secondApp(s, w);
      const other = await world(s);
      const privateId = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'P',
        scopes: 'read_products',
        tokenHash: tag('private-hash'),
        webhookSecretEnc: 'sealed',
        now: NOW,
      });
      const subA = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/a');
      const subB = await subscribe(s, w.store.id, { appId: two.app.id }, 'products/create');
      const subP = await subscribe(s, w.store.id, { privateAppId: privateId }, 'products/create');
      const subElsewhere = await subscribe(s, other.store.id, { appId: w.app.id }, 'products/create');
      const e1 = await enqueue(s, w.store.id, 'products/create', [subA, subB, subP], NOW);
      await enqueue(s, other.store.id, 'products/create', [subElsewhere], NOW);
      const [dA, dB, dP] = await deliveriesOf(s, w.store.id, e1);

      const inStore = await s.webhooks.listDeliveries({ storeId: w.store.id, limit: 10 });
      expect(inStore.map((d) => d.id)).toEqual([dP, dB, dA]);
      expect(inStore[2]).toEqual({
        id: dA,
        webhook_id: `wh-${e1}-${subA.id}`,
        event_id: e1,
        topic: 'products/create',
        status: 'pending',
        attempts: 0,
        last_status: null,
        last_error: null,
        next_attempt_at: NOW,
        created_at: NOW,
        updated_at: NOW,
        private_app_id: null,
        store_name: w.store.name,
        client_id: w.app.client_id,
        address: 'https://hooks.example.test/a',
      });
      expect(inStore[0]).toMatchObject({ private_app_id: privateId, client_id: null });
      expect((await s.webhooks.listDeliveries({ appId: w.app.id, limit: 10 })).map((d) => d.store_name).sort()).toEqual(
        [other.store.name, w.store.name].sort(),
      );
      expect((await s.webhooks.listDeliveries({ appId: w.app.id, storeId: w.store.id, limit: 10 })).map((d) => d.id)).toEqual([dA]);
      expect((await s.webhooks.listDeliveries({ storeId: w.store.id, limit: 2 })).map((d) => d.id)).toEqual([dP, dB]);
      expect(await s.webhooks.listDeliveries({ storeId: w.store.id, status: 'delivered', limit: 10 })).toEqual([]);
      expect((await s.webhooks.listDeliveries({ id: dB, limit: 10 })).map((d) => d.id)).toEqual([dB]);
    });

    it('cancelPending cancels an app’s queued deliveries in a store, except app/uninstalled', async () => {
      const w = await world(s);
      const two = await secondApp(s, w);
      const other = await world(s);
      const subs = {
        mine: await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create'),
        uninstalled: await subscribe(s, w.store.id, { appId: w.app.id }, 'app/uninstalled'),
        sibling: await subscribe(s, w.store.id, { appId: two.app.id }, 'products/create'),
        elsewhere: await subscribe(s, other.store.id, { appId: w.app.id }, 'products/create'),
      };
      const [mine] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'products/create', [subs.mine], NOW));
      const [farewell] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'app/uninstalled', [subs.uninstalled], NOW));
      const [sibling] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'products/create', [subs.sibling], NOW));
      const [elsewhere] = await deliveriesOf(s, other.store.id, await enqueue(s, other.store.id, 'products/create', [subs.elsewhere], NOW));

      await s.webhooks.cancelPending(w.store.id, w.app.id, 'the app was uninstalled', NOW + 1);
      expect(await delivery(s, mine!)).toMatchObject({ status: 'cancelled', last_error: 'the app was uninstalled', updated_at: NOW + 1 });
      expect((await delivery(s, farewell!)).status).toBe('pending');
      expect((await delivery(s, sibling!)).status).toBe('pending');
      expect((await delivery(s, elsewhere!)).status).toBe('pending');
    });

    it('redeliveryCheck and requeue (which wakes listeners)', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const [id] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'products/create', [sub], NOW));
      await s.webhooks.cancelPending(w.store.id, w.app.id, 'stopped', NOW + 1);
      expect(await s.webhooks.redeliveryCheck(id!)).toEqual({ status: 'cancelled', sub_id: sub.id, disabled_at: null });
      expect(await s.webhooks.redeliveryCheck(id! + 100_000)).toBeUndefined();

      let calls = 0;
      const off = s.onDeliveriesQueued(() => calls++);
      try {
        await s.webhooks.requeue(id!, NOW + 2);
      } finally {
        off();
      }
      expect(calls).toBe(1);
      expect(await delivery(s, id!)).toMatchObject({ status: 'pending', attempts: 0, next_attempt_at: NOW + 2, updated_at: NOW + 2 });

      await s.webhooks.deleteSubscription(w.store.id, sub.id);
      expect(await s.webhooks.redeliveryCheck(id!)).toEqual({ status: 'pending', sub_id: null, disabled_at: null });
    });

    it('partnerDeliveries and partnerDelivery: one app’s deliveries only, with filters', async () => {
      const w = await world(s);
      const two = await secondApp(s, w);
      const subP = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/partner');
      const subO = await subscribe(s, w.store.id, { appId: w.app.id }, 'orders/create');
      const subTwo = await subscribe(s, w.store.id, { appId: two.app.id }, 'products/create');
      const e1 = await enqueue(s, w.store.id, 'products/create', [subP, subTwo], NOW);
      const [d1, dTwo] = await deliveriesOf(s, w.store.id, e1);
      const [d2] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'orders/create', [subO], NOW + 1));
      const [d3] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'products/create', [subP], NOW + 2));

      const all = await s.webhooks.partnerDeliveries(w.app.id, { limit: 10 });
      expect(all.map((d) => d.id)).toEqual([d3, d2, d1]);
      expect(all[2]).toEqual({
        id: d1,
        topic: 'products/create',
        status: 'pending',
        attempts: 0,
        last_status: null,
        last_error: null,
        created_at: NOW,
        updated_at: NOW,
        next_attempt_at: NOW,
        store_name: w.store.name,
        address: 'https://hooks.example.test/partner',
      });
      expect((await s.webhooks.partnerDeliveries(w.app.id, { topic: 'products/create', limit: 10 })).map((d) => d.id)).toEqual([d3, d1]);
      expect((await s.webhooks.partnerDeliveries(w.app.id, { before: d3!, limit: 10 })).map((d) => d.id)).toEqual([d2, d1]);
      expect((await s.webhooks.partnerDeliveries(w.app.id, { limit: 1 })).map((d) => d.id)).toEqual([d3]);
      expect(await s.webhooks.partnerDeliveries(w.app.id, { status: 'dead', limit: 10 })).toEqual([]);
      expect((await s.webhooks.partnerDeliveries(two.app.id, { limit: 10 })).map((d) => d.id)).toEqual([dTwo]);

      expect(await s.webhooks.partnerDelivery(w.app.id, d1!)).toEqual({
        id: d1,
        webhook_id: `wh-${e1}-${subP.id}`,
        event_id: e1,
        topic: 'products/create',
        status: 'pending',
        attempts: 0,
        last_status: null,
        last_error: null,
        created_at: NOW,
        next_attempt_at: NOW,
        store_name: w.store.name,
        sub_id: subP.id,
        address: 'https://hooks.example.test/partner',
        disabled_at: null,
      });
      expect(await s.webhooks.partnerDelivery(two.app.id, d1!)).toBeUndefined();
      expect(await s.webhooks.disabledSubscriptions([])).toEqual([]);
      expect(await s.webhooks.disabledSubscriptions([w.app.id])).toEqual([]);
    });
  });

  db.routingTest();
});
