// The storage contract for the webhook delivery queue: claiming, recording outcomes, backing off, disabling and recovering
// subscriptions, deferring backlogs and pruning the log.
// Every target (storage-targets.ts) gets a database of its own for this file.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SubscriptionRow } from '../../src/storage/ports/rows.ts';
import type { Storage } from '../../src/storage/ports/storage.ts';
import { storageTargets } from '../storage-targets.ts';
import { subscribe, enqueue, deliveriesOf, delivery, claim, attempted, drain, type Next } from './queue.ts';
import { NOW, MINUTE, HOUR, DAY, FAR, tag, world, secondApp, contractDatabase } from './support.ts';

describe.each(storageTargets('contract-deliveries'))('storage contract: $name', (target) => {
  const db = contractDatabase(target);
  let s: Storage;

  beforeAll(async () => {
    s = await db.open();
  });

  afterAll(() => db.close());

  describe('webhook recovery', () => {
    beforeEach(() => drain(s));

    /** The subscription's deliveries ended with these statuses, in order (claimed and recorded). */
    async function ended(sub: SubscriptionRow, statuses: readonly ('delivered' | 'dead')[], at: number) {
      for (const [i] of statuses.entries()) await enqueue(s, sub.store_id, 'products/create', [sub], at + i);
      const rows = await claim(s, 'recovery', at + MINUTE);
      await s.deliveryQueue.recordOutcomes(
        rows.map((r, i) => attempted(r, at + MINUTE, { status: statuses[i]! }, { status: statuses[i] === 'dead' ? 500 : 200 })),
        { worker: 'recovery', now: at + MINUTE, disableAfterDead: 100 },
      );
      return rows.map((r) => r.id);
    }

    it('find: one subscription with its store and owner state, by owner, by app or by id; nobody else’s', async () => {
      const w = await world(s);
      const other = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const expected = { ...sub, disabled_reason: null, store_name: w.store.name, scopes: 'read_products', reachable: true };
      expect(await s.webhookRecovery.findOwned(w.store.id, `app:${w.app.id}`, sub.id)).toMatchObject(expected);
      expect(await s.webhookRecovery.findOfApp(w.app.id, sub.id)).toMatchObject(expected);
      expect(await s.webhookRecovery.findById(sub.id)).toMatchObject(expected);
      expect(await s.webhookRecovery.findOwned(other.store.id, `app:${w.app.id}`, sub.id)).toBeUndefined();
      expect(await s.webhookRecovery.findOwned(w.store.id, `app:${other.app.id}`, sub.id)).toBeUndefined();
      expect(await s.webhookRecovery.findOfApp(other.app.id, sub.id)).toBeUndefined();
      expect(await s.webhookRecovery.findById(0)).toBeUndefined();
      await s.apps.updateInstallation(w.store.id, w.installation.id, { uninstalledAt: NOW + 1 });
      expect(await s.webhookRecovery.findById(sub.id)).toMatchObject({ reachable: false });
    });

    it('enable: a disabled subscription only, in its store; a clean record and a new version', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      expect(await s.webhookRecovery.enable(w.store.id, sub.id, NOW + 5)).toBeUndefined();
      await ended(sub, ['dead', 'dead'], NOW);
      const [c] = await (async () => {
        await enqueue(s, w.store.id, 'products/create', [sub], NOW + 2);
        return claim(s, 'recovery', NOW + 2 * MINUTE);
      })();
      await s.deliveryQueue.recordOutcomes([attempted(c!, NOW + 2 * MINUTE, { status: 'dead', disable: 'gone' }, { status: 410 })], {
        worker: 'recovery',
        now: NOW + 2 * MINUTE,
        disableAfterDead: 100,
      });
      expect(await s.webhookRecovery.findById(sub.id)).toMatchObject({
        disabled_at: NOW + 2 * MINUTE,
        disabled_reason: 'gone',
        version: 2,
      });
      const other = await world(s);
      expect(await s.webhookRecovery.enable(other.store.id, sub.id, NOW + 5)).toBeUndefined();
      expect(await s.webhookRecovery.enable(w.store.id, sub.id, NOW + 3 * MINUTE)).toMatchObject({
        id: sub.id,
        disabled_at: null,
        version: 3,
        updated_at: NOW + 3 * MINUTE,
      });
      expect(await s.webhookRecovery.findById(sub.id)).toMatchObject({ disabled_reason: null });
      // The claim carries when it was enabled; the next dead delivery starts a new streak.
      await enqueue(s, w.store.id, 'products/create', [sub], NOW + 4 * MINUTE);
      const [next] = await claim(s, 'recovery', NOW + 5 * MINUTE);
      expect(next).toMatchObject({ enabled_at: NOW + 3 * MINUTE, replayed_at: null });
      await s.deliveryQueue.recordOutcomes([attempted(next!, NOW + 5 * MINUTE, { status: 'dead' }, { status: 500 })], {
        worker: 'recovery',
        now: NOW + 5 * MINUTE,
        disableAfterDead: 2,
      });
      expect(await s.webhookRecovery.findById(sub.id)).toMatchObject({ disabled_at: null });
    });

    it('replay: the statuses asked for since a time, oldest first, at most the limit; the same rows marked, pending ones left alone', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const sibling = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/update');
      const ids = await ended(sub, ['delivered', 'dead', 'dead', 'delivered', 'dead'], NOW + HOUR);
      const siblingIds = await ended(sibling, ['dead'], NOW + HOUR);
      const before = await Promise.all(ids.map((id) => delivery(s, id)));
      const request = { storeId: w.store.id, subscriptionId: sub.id, since: NOW + HOUR + 1, now: NOW + 2 * HOUR };
      // Dead ones created at or after `since`, oldest first, two of three: the third is where to go on.
      const first = await s.transaction((tx) => tx.webhookRecovery.replay({ ...request, statuses: ['dead', 'cancelled'], limit: 2 }));
      expect(first).toEqual({ queued: 2, alreadyQueued: 0, nextSince: NOW + HOUR + 4 });
      const after = await Promise.all(ids.map((id) => delivery(s, id)));
      expect(after.map((d) => d.status)).toEqual(['delivered', 'pending', 'pending', 'delivered', 'dead']);
      expect(after.map((d) => d.webhook_id)).toEqual(before.map((d) => d.webhook_id));
      expect(after[1]).toMatchObject({ attempts: 0, next_attempt_at: NOW + 2 * HOUR });
      expect((await delivery(s, siblingIds[0]!)).status).toBe('dead');
      // Again with every status: the queued ones are not queued twice.
      const all = await s.transaction((tx) =>
        tx.webhookRecovery.replay({ ...request, statuses: ['dead', 'cancelled', 'delivered'], limit: 10 }),
      );
      expect(all).toEqual({ queued: 2, alreadyQueued: 2, nextSince: undefined });
      // Claimed, they say they are a replay; a replay's dead outcome leaves the streak alone.
      const claimed = await claim(s, 'recovery', NOW + 3 * HOUR);
      expect(claimed.map((c) => c.id).sort((a, b) => a - b)).toEqual(ids.slice(1).sort((a, b) => a - b));
      expect(claimed.every((c) => c.replayed_at !== null)).toBe(true);
      await s.deliveryQueue.recordOutcomes(
        claimed.map((c) => ({ ...attempted(c, NOW + 3 * HOUR, { status: 'dead' }, { status: 500 }), replay: true })),
        { worker: 'recovery', now: NOW + 3 * HOUR, disableAfterDead: 1 },
      );
      expect(await s.webhookRecovery.findById(sub.id)).toMatchObject({ disabled_at: null });
      // A redelivery by hand is an ordinary send again.
      await s.transaction((tx) => tx.webhooks.requeue(ids[0]!, NOW + 4 * HOUR));
      expect((await claim(s, 'recovery', NOW + 5 * HOUR)).map((c) => [c.id, c.replayed_at])).toEqual([[ids[0], null]]);
    });

    it('disabling a subscription queues subscription/disabled to one subscription per other address, in the same write', async () => {
      const w = await world(s);
      const dying = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/dying');
      await subscribe(s, w.store.id, { appId: w.app.id }, 'products/update', 'https://hooks.example.test/dying');
      const first = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/update', 'https://hooks.example.test/alive');
      await subscribe(s, w.store.id, { appId: w.app.id }, 'products/delete', 'https://hooks.example.test/alive');
      const other = await secondApp(s, w);
      await subscribe(s, w.store.id, { appId: other.app.id }, 'products/update', 'https://hooks.example.test/other-app');
      await enqueue(s, w.store.id, 'products/create', [dying], NOW);
      const [c] = await claim(s, 'recovery', NOW + MINUTE);
      await s.deliveryQueue.recordOutcomes(
        [attempted(c!, NOW + MINUTE, { status: 'dead', disable: 'the receiver answered 410 Gone' }, { status: 410 })],
        {
          worker: 'recovery',
          now: NOW + MINUTE,
          disableAfterDead: 5,
        },
      );
      const notices = (await s.webhooks.listDeliveries({ storeId: w.store.id, limit: 100 })).filter(
        (d) => d.topic === 'subscription/disabled',
      );
      expect(notices).toMatchObject([{ status: 'pending', address: 'https://hooks.example.test/alive' }]);
      const [notice] = await claim(s, 'recovery', NOW + 2 * MINUTE);
      expect(notice).toMatchObject({ subscription_id: first.id, topic: 'subscription/disabled', app_id: w.app.id });
      expect(JSON.parse(notice!.payload)).toEqual({
        subscription: { id: String(dying.id), topic: 'products/create', address: 'https://hooks.example.test/dying' },
        reason: 'the receiver answered 410 Gone',
        disabled_at: new Date(NOW + MINUTE).toISOString(),
      });
    });
  });

  describe('deliveryQueue', () => {
    beforeEach(() => drain(s));

    it(`singleProcess is ${target.dialect === 'sqlite'}`, () => {
      expect(s.deliveryQueue.singleProcess).toBe(target.dialect === 'sqlite');
    });

    it('claim: due pending deliveries, oldest first, with what sending needs', async () => {
      const w = await world(s);
      const privateId = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'P',
        scopes: 'read_products',
        tokenHash: tag('private-hash'),
        webhookSecretEnc: 'sealed-private',
        now: NOW,
      });
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/claim');
      const subP = await subscribe(s, w.store.id, { privateAppId: privateId }, 'orders/create', 'https://hooks.example.test/private');
      // Written first but due later: the order is by due time, not by id.
      const later = await enqueue(s, w.store.id, 'products/create', [sub], NOW + 2);
      const earlier = await enqueue(s, w.store.id, 'products/create', [sub], NOW + 1);
      const priv = await enqueue(s, w.store.id, 'orders/create', [subP], NOW + 3);
      await enqueue(s, w.store.id, 'products/create', [sub], NOW + HOUR);

      const rows = await claim(s, 'worker-1', NOW + MINUTE);
      expect(rows.map((r) => r.event_id)).toEqual([earlier, later, priv]);
      expect(rows[0]).toEqual({
        id: expect.any(Number),
        store_id: w.store.id,
        webhook_id: `wh-${earlier}-${sub.id}`,
        event_id: earlier,
        topic: 'products/create',
        subscription_id: sub.id,
        attempts: 0,
        app_id: w.app.id,
        private_app_id: null,
        replayed_at: null,
        payload: `{"event":"${earlier}"}`,
        include_fields: null,
        event_at: NOW + 1,
        store_name: w.store.name,
        sub_id: sub.id,
        address: 'https://hooks.example.test/claim',
        api_version: '2026-01',
        disabled_at: null,
        enabled_at: null,
        client_secret_enc: w.app.client_secret_enc,
        webhook_signature_ed25519: 0,
        privacy_webhook_url: null,
        previous_secret_enc: null,
        previous_secret_expires_at: null,
        installation_id: w.installation.id,
        uninstalled_at: null,
        installed_at: NOW,
        installation_scopes: 'read_products',
        private_id: null,
        webhook_secret_enc: null,
        previous_webhook_secret_enc: null,
        previous_webhook_secret_expires_at: null,
        revoked_at: null,
        private_scopes: null,
      });
      expect(rows[2]).toMatchObject({
        private_app_id: privateId,
        app_id: null,
        private_id: privateId,
        webhook_secret_enc: 'sealed-private',
        revoked_at: null,
        private_scopes: 'read_products',
        client_secret_enc: null,
        installation_id: null,
        installation_scopes: null,
        address: 'https://hooks.example.test/private',
      });
    });

    it('claim loads an uninstalled app and a revoked private app as they are (the worker decides)', async () => {
      const w = await world(s);
      const privateId = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'P',
        scopes: 'read_products',
        tokenHash: tag('private-hash'),
        webhookSecretEnc: 'sealed',
        now: NOW,
      });
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const subP = await subscribe(s, w.store.id, { privateAppId: privateId }, 'products/create');
      await enqueue(s, w.store.id, 'products/create', [sub, subP], NOW);
      await s.apps.updateInstallation(w.store.id, w.installation.id, { uninstalledAt: NOW + 1 });
      await s.apps.revokePrivateApp(w.store.id, privateId, NOW + 2);
      await s.webhooks.deleteSubscription(w.store.id, sub.id);
      const rows = await claim(s, 'worker-1', NOW + MINUTE);
      expect(rows).toHaveLength(2);
      expect(rows[0]).toMatchObject({
        subscription_id: sub.id,
        sub_id: null,
        address: null,
        uninstalled_at: NOW + 1,
        installation_id: w.installation.id,
      });
      expect(rows[1]).toMatchObject({ subscription_id: subP.id, sub_id: subP.id, revoked_at: NOW + 2 });
    });

    it('claim loads the owner’s scopes as they are when claimed, not as they were when queued', async () => {
      const w = await world(s);
      const privateId = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'P',
        scopes: 'read_products',
        tokenHash: tag('private-hash'),
        webhookSecretEnc: 'sealed',
        now: NOW,
      });
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const subP = await subscribe(s, w.store.id, { privateAppId: privateId }, 'products/create');
      await enqueue(s, w.store.id, 'products/create', [sub, subP], NOW);
      await s.apps.updateInstallation(w.store.id, w.installation.id, { scopes: 'read_orders' });
      const rows = await claim(s, 'worker-1', NOW + MINUTE);
      expect(rows.map((r) => [r.subscription_id, r.installation_scopes, r.private_scopes])).toEqual([
        [sub.id, 'read_orders', null],
        [subP.id, null, 'read_products'],
      ]);
    });

    it('claim respects limit and excludeSubscriptions', async () => {
      const w = await world(s);
      const a = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const b = await subscribe(s, w.store.id, { appId: w.app.id }, 'orders/create');
      const e1 = await enqueue(s, w.store.id, 'products/create', [a], NOW + 1);
      const e2 = await enqueue(s, w.store.id, 'orders/create', [b], NOW + 2);
      const e3 = await enqueue(s, w.store.id, 'products/create', [a], NOW + 3);
      const at = NOW + MINUTE;
      expect((await claim(s, 'worker-1', at, { limit: 1 })).map((r) => r.event_id)).toEqual([e1]);
      expect((await claim(s, 'worker-1', at, { exclude: [a.id] })).map((r) => r.event_id)).toEqual([e2]);
      expect((await claim(s, 'worker-1', at)).map((r) => r.event_id)).toEqual([e3]);
      expect(await claim(s, 'worker-1', at)).toEqual([]);
    });

    it('the lease: nobody else claims a delivery before it ends; afterwards another worker may, and only its outcome counts', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const [id] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'products/create', [sub], NOW));
      const t = NOW + MINUTE;
      const [mine] = await claim(s, 'worker-1', t, { leaseMs: MINUTE });
      expect(mine?.id).toBe(id);
      expect(await claim(s, 'worker-2', t + 1)).toEqual([]);
      expect(await claim(s, 'worker-2', t + MINUTE - 1)).toEqual([]);
      const [theirs] = await claim(s, 'worker-2', t + MINUTE + 1);
      expect(theirs?.id).toBe(id);

      // The first worker's late outcome changes neither the delivery nor the subscription.
      await s.deliveryQueue.recordOutcomes([attempted(mine!, t + 2 * MINUTE, { status: 'dead', disable: 'gone' }, { status: 410 })], {
        worker: 'worker-1',
        now: t + 2 * MINUTE,
        disableAfterDead: 1,
      });
      expect(await delivery(s, id!)).toMatchObject({ status: 'pending', attempts: 0, last_status: null });
      expect((await s.webhooks.findSubscription(w.store.id, sub.owner, sub.id))?.disabled_at).toBeNull();

      await s.deliveryQueue.recordOutcomes([attempted(theirs!, t + 2 * MINUTE, { status: 'delivered' })], {
        worker: 'worker-2',
        now: t + 2 * MINUTE,
        disableAfterDead: 1,
      });
      expect(await delivery(s, id!)).toMatchObject({ status: 'delivered', attempts: 1, last_status: 200, updated_at: t + 2 * MINUTE });
    });

    it('recordOutcomes: one batch spanning two stores records each row in its own store, bodies and errors byte for byte', async () => {
      const a = await world(s);
      const b = await world(s);
      const subA = await subscribe(s, a.store.id, { appId: a.app.id }, 'products/create');
      const subB = await subscribe(s, b.store.id, { appId: b.app.id }, 'products/create');
      await enqueue(s, a.store.id, 'products/create', [subA], NOW + 1);
      await enqueue(s, b.store.id, 'products/create', [subB], NOW + 2);
      await enqueue(s, a.store.id, 'products/create', [subA], NOW + 3);
      const t = NOW + MINUTE;
      const rows = await claim(s, 'worker-x', t, { exclude: [-1, -2] });
      const [da, db, da2] = rows.filter((r) => [subA.id, subB.id].includes(r.subscription_id));
      expect([da!.subscription_id, db!.subscription_id, da2!.subscription_id]).toEqual([subA.id, subB.id, subA.id]);
      const odd = 'quote " backslash \\ tab \t line\nünïcödé ✓ 𝄞 end';
      await s.deliveryQueue.recordOutcomes(
        [
          attempted(da!, t + 1, { status: 'delivered' }, { body: odd }),
          attempted(db!, t + 2, { status: 'pending', nextAttemptAt: t + HOUR }, { status: 503, body: '[1,2]', error: odd }),
          { id: da2!.id, storeId: a.store.id, subscriptionId: subA.id, attempts: 0, cancelled: odd },
        ],
        { worker: 'worker-x', now: t + 10, disableAfterDead: 5 },
      );
      expect(await delivery(s, da!.id)).toMatchObject({ status: 'delivered', attempts: 1, last_status: 200, last_error: null });
      expect(await delivery(s, db!.id)).toMatchObject({
        status: 'pending',
        attempts: 1,
        last_status: 503,
        last_error: odd,
        next_attempt_at: t + HOUR,
      });
      expect(await delivery(s, da2!.id)).toMatchObject({ status: 'cancelled', attempts: 0, last_status: null, last_error: odd });
      expect(await s.webhooks.attempts(da!.id)).toEqual([
        expect.objectContaining({ delivery_id: da!.id, status_code: 200, response_body: odd, error: null }),
      ]);
      expect(await s.webhooks.attempts(db!.id)).toEqual([
        expect.objectContaining({ delivery_id: db!.id, status_code: 503, response_body: '[1,2]', error: odd }),
      ]);
      expect(await s.webhooks.attempts(da2!.id)).toEqual([]);
    });

    it('recordOutcomes: delivered, retry, dead and cancelled; one attempt row per attempt', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      for (let i = 1; i <= 4; i++) await enqueue(s, w.store.id, 'products/create', [sub], NOW + i);
      const t = NOW + MINUTE;
      const [d1, d2, d3, d4] = await claim(s, 'worker-1', t);
      await s.deliveryQueue.recordOutcomes(
        [
          attempted(d1!, t + 1, { status: 'delivered' }, { body: 'ok' }),
          attempted(d2!, t + 2, { status: 'pending', nextAttemptAt: t + HOUR }, { status: null, error: 'connect ECONNREFUSED' }),
          attempted(d3!, t + 3, { status: 'dead' }, { status: 410, error: 'gone for good' }),
          { id: d4!.id, storeId: w.store.id, subscriptionId: sub.id, attempts: 0, cancelled: 'subscription deleted' },
        ],
        { worker: 'worker-1', now: t + 10, disableAfterDead: 5 },
      );
      expect(await delivery(s, d1!.id)).toMatchObject({
        status: 'delivered',
        attempts: 1,
        last_status: 200,
        last_error: null,
        updated_at: t + 10,
      });
      expect(await delivery(s, d2!.id)).toMatchObject({
        status: 'pending',
        attempts: 1,
        last_status: null,
        last_error: 'connect ECONNREFUSED',
        next_attempt_at: t + HOUR,
      });
      expect(await delivery(s, d3!.id)).toMatchObject({ status: 'dead', attempts: 1, last_status: 410, last_error: 'gone for good' });
      expect(await delivery(s, d4!.id)).toMatchObject({ status: 'cancelled', attempts: 0, last_error: 'subscription deleted' });

      expect(await s.webhooks.attempts(d1!.id)).toEqual([
        {
          id: expect.any(Number),
          delivery_id: d1!.id,
          attempted_at: t + 1,
          status_code: 200,
          latency_ms: 12,
          response_body: 'ok',
          error: null,
        },
      ]);
      expect(await s.webhooks.attempts(d4!.id)).toEqual([]);
      const last = await s.webhooks.lastAttempts([d1!.id, d2!.id, d3!.id, d4!.id]);
      expect([...last.keys()].sort((a, b) => a - b)).toEqual([d1!.id, d2!.id, d3!.id]);
      expect(last.get(d2!.id)).toMatchObject({
        delivery_id: d2!.id,
        attempted_at: t + 2,
        status_code: null,
        error: 'connect ECONNREFUSED',
      });
      expect(await s.webhooks.lastAttempts([])).toEqual(new Map());

      // The retry is released and comes due again at its time, with its attempt count.
      expect(await claim(s, 'worker-2', t + HOUR - 1)).toEqual([]);
      const [again] = await claim(s, 'worker-2', t + HOUR);
      expect(again).toMatchObject({ id: d2!.id, attempts: 1 });
      await s.deliveryQueue.recordOutcomes([attempted(again!, t + HOUR + 1, { status: 'delivered' }, { status: 204 })], {
        worker: 'worker-2',
        now: t + HOUR + 2,
        disableAfterDead: 5,
      });
      expect(await delivery(s, d2!.id)).toMatchObject({ status: 'delivered', attempts: 2, last_status: 204 });
      expect((await s.webhooks.attempts(d2!.id)).map((a) => a.attempted_at)).toEqual([t + 2, t + HOUR + 1]);
      expect((await s.webhooks.lastAttempts([d2!.id])).get(d2!.id)).toMatchObject({ attempted_at: t + HOUR + 1, status_code: 204 });
      // Finished deliveries are never claimed again.
      expect(await claim(s, 'worker-3', FAR - 1)).toEqual([]);
    });

    it('a dead outcome with a reason to disable disables the subscription', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create', 'https://hooks.example.test/refused');
      const [id] = await deliveriesOf(s, w.store.id, await enqueue(s, w.store.id, 'products/create', [sub], NOW));
      const [c] = await claim(s, 'worker-1', NOW + 1);
      await s.deliveryQueue.recordOutcomes(
        [attempted(c!, NOW + 2, { status: 'dead', disable: 'the address refused the request' }, { status: 410 })],
        {
          worker: 'worker-1',
          now: NOW + 3,
          disableAfterDead: 5,
        },
      );
      expect((await s.webhooks.findSubscription(w.store.id, sub.owner, sub.id))?.disabled_at).toBe(NOW + 3);
      expect(await s.webhooks.disabledSubscriptions([w.app.id])).toEqual([
        {
          id: sub.id,
          app_id: w.app.id,
          topic: 'products/create',
          address: 'https://hooks.example.test/refused',
          disabled_at: NOW + 3,
          disabled_reason: 'the address refused the request',
          store_name: w.store.name,
        },
      ]);
      expect(await s.webhooks.redeliveryCheck(id!)).toEqual({ status: 'dead', sub_id: sub.id, disabled_at: NOW + 3 });
      expect(await s.webhooks.recipients(w.store.id, 'products/create')).toEqual([]);
      expect((await s.webhooks.partnerDelivery(w.app.id, id!))?.disabled_at).toBe(NOW + 3);
    });

    it('disableAfterDead dead outcomes in a row disable the subscription; a delivered one resets the streak', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      for (let i = 1; i <= 6; i++) await enqueue(s, w.store.id, 'products/create', [sub], NOW + i);
      const rows = await claim(s, 'worker-1', NOW + MINUTE);
      expect(rows).toHaveLength(6);
      const disabledAt = async () => (await s.webhooks.findSubscription(w.store.id, sub.owner, sub.id))?.disabled_at;
      const plan: Next[] = [{ status: 'dead' }, { status: 'dead' }, { status: 'delivered' }, { status: 'dead' }, { status: 'dead' }];
      for (const [i, next] of plan.entries()) {
        await s.deliveryQueue.recordOutcomes(
          [attempted(rows[i]!, NOW + MINUTE + i, next, { status: next.status === 'dead' ? 500 : 200 })],
          {
            worker: 'worker-1',
            now: NOW + MINUTE + i,
            disableAfterDead: 3,
          },
        );
        expect(await disabledAt()).toBeNull();
      }
      await s.deliveryQueue.recordOutcomes([attempted(rows[5]!, NOW + 2 * MINUTE, { status: 'dead' }, { status: 500 })], {
        worker: 'worker-1',
        now: NOW + 2 * MINUTE,
        disableAfterDead: 3,
      });
      expect(await disabledAt()).toBe(NOW + 2 * MINUTE);
      const [disabled] = await s.webhooks.disabledSubscriptions([w.app.id]);
      expect(disabled).toMatchObject({ id: sub.id, disabled_at: NOW + 2 * MINUTE });
      expect(disabled?.disabled_reason).toEqual(expect.any(String));
    });

    // Outcomes reach recordOutcomes in the order the attempts finished. Within one batch a
    // delivered outcome followed by a dead one for the same subscription does not reset the
    // streak before the dead one is counted (the reset is applied at the end of the batch, and the
    // dead outcome cancels it), so the dead one extends the streak from before the success.
    // Marked as failing until it is decided whether the order within a batch counts.
    it('a delivered outcome earlier in the same batch resets the streak before a later dead one', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      for (let i = 1; i <= 3; i++) await enqueue(s, w.store.id, 'products/create', [sub], NOW + i);
      const [d1, d2, d3] = await claim(s, 'worker-1', NOW + MINUTE);
      const ctx = { worker: 'worker-1', now: NOW + MINUTE, disableAfterDead: 2 };
      await s.deliveryQueue.recordOutcomes([attempted(d1!, NOW + MINUTE, { status: 'dead' }, { status: 500 })], ctx);
      await s.deliveryQueue.recordOutcomes(
        [attempted(d2!, NOW + MINUTE, { status: 'delivered' }), attempted(d3!, NOW + MINUTE, { status: 'dead' }, { status: 500 })],
        ctx,
      );
      // Only one dead outcome since the last delivered one: not disabled.
      expect((await s.webhooks.findSubscription(w.store.id, sub.owner, sub.id))?.disabled_at).toBeNull();
    });

    it('releaseAllClaims frees every claim at once', async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      await enqueue(s, w.store.id, 'products/create', [sub], NOW);
      await enqueue(s, w.store.id, 'products/create', [sub], NOW);
      expect(await claim(s, 'worker-1', NOW + 1, { leaseMs: HOUR })).toHaveLength(2);
      expect(await claim(s, 'worker-2', NOW + 2)).toEqual([]);
      await s.deliveryQueue.releaseAllClaims();
      const again = await claim(s, 'worker-2', NOW + 2);
      expect(again).toHaveLength(2);
      // The old holder's outcomes no longer count.
      await s.deliveryQueue.recordOutcomes(
        again.map((c) => attempted(c, NOW + 3, { status: 'delivered' })),
        { worker: 'worker-1', now: NOW + 3, disableAfterDead: 5 },
      );
      expect((await s.webhooks.listDeliveries({ storeId: w.store.id, limit: 10 })).map((d) => d.status)).toEqual(['pending', 'pending']);
    });

    it("deferClaims frees the holder's claims and makes them due later, no attempt counted; other holders' rows stay", async () => {
      const w = await world(s);
      const sub = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      for (let i = 0; i < 3; i++) await enqueue(s, w.store.id, 'products/create', [sub], NOW);
      const held = await claim(s, 'worker-1', NOW + 1, { limit: 2, leaseMs: HOUR });
      const other = await claim(s, 'worker-2', NOW + 1, { leaseMs: HOUR });
      expect(other).toHaveLength(1);
      const ids = [...held, ...other].map((c) => c.id);
      expect(await s.deliveryQueue.deferClaims({ worker: 'worker-1', ids, until: NOW + HOUR, now: NOW + 2 })).toBe(2);
      // Not due before the time given, then claimable by anyone, as never attempted.
      expect(await claim(s, 'worker-3', NOW + HOUR - 1)).toEqual([]);
      const again = await claim(s, 'worker-3', NOW + HOUR);
      expect(again.map((c) => c.id).sort()).toEqual(held.map((c) => c.id).sort());
      expect(again.every((c) => c.attempts === 0)).toBe(true);
      expect(await s.deliveryQueue.deferClaims({ worker: 'worker-1', ids: [], until: NOW, now: NOW })).toBe(0);
    });

    it("deferBacklog puts off one store's unheld pending deliveries of the subscriptions given that fall due before the time, at most the limit at once, no attempt counted", async () => {
      const w = await world(s);
      const other = await world(s);
      const [sub1, sub2, sub3] = await Promise.all(
        (['products/create', 'products/update', 'orders/create'] as const).map((topic) =>
          subscribe(s, w.store.id, { appId: w.app.id }, topic),
        ),
      );
      // A privacy delivery has no subscription: its id is the app's negated, in every store.
      const privacy = async (storeId: number, at: number) => {
        const id = tag('evt');
        const subscriptionId = -w.app.id;
        await s.webhooks.insertEvent({ id, storeId, topic: 'customers/data_request', payload: '{}', now: at }, [
          { subscriptionId, appId: w.app.id, privateAppId: null, webhookId: `wh-${id}` },
        ]);
        return id;
      };
      // Held by a worker whose lease runs on, and held by one whose lease has ended.
      const held = await enqueue(s, w.store.id, 'products/create', [sub1!], NOW - 3);
      expect(await claim(s, 'worker-1', NOW - 3, { limit: 1, leaseMs: 2 * HOUR })).toHaveLength(1);
      const lapsed = await enqueue(s, w.store.id, 'products/create', [sub1!], NOW - 2);
      expect(await claim(s, 'worker-2', NOW - 2, { limit: 1, leaseMs: 1 })).toHaveLength(1);
      const due = await enqueue(s, w.store.id, 'products/create', [sub1!], NOW);
      const dueSoon = await enqueue(s, w.store.id, 'products/update', [sub2!], NOW + MINUTE);
      const dueAfter = await enqueue(s, w.store.id, 'products/create', [sub1!], NOW + 2 * HOUR);
      const notListed = await enqueue(s, w.store.id, 'orders/create', [sub3!], NOW);
      const ownPrivacy = await privacy(w.store.id, NOW);
      const otherStorePrivacy = await privacy(other.store.id, NOW);

      const input = {
        storeId: w.store.id,
        subscriptionIds: [sub1!.id, sub2!.id, -w.app.id],
        breakerMadeAt: NOW,
        until: NOW + HOUR,
        now: NOW,
      };
      expect(await s.deliveryQueue.deferBacklog({ ...input, limit: 3 })).toBe(3);
      expect(await s.deliveryQueue.deferBacklog({ ...input, limit: 3 })).toBe(1);
      expect(await s.deliveryQueue.deferBacklog({ ...input, limit: 3 })).toBe(0);
      expect(await s.deliveryQueue.deferBacklog({ ...input, subscriptionIds: [], limit: 3 })).toBe(0);

      // Before the time: only what was not put off (another subscription, another store's privacy
      // delivery of the same app) is due; the held one stays with its holder.
      const leaseMs = DAY;
      const early = await claim(s, 'worker-3', NOW + HOUR - 1, { leaseMs });
      expect(early.map((c) => c.event_id).sort()).toEqual([notListed, otherStorePrivacy].sort());
      const late = await claim(s, 'worker-3', NOW + HOUR, { leaseMs });
      expect(late.map((c) => c.event_id).sort()).toEqual([lapsed, due, dueSoon, ownPrivacy].sort());
      expect(late.every((c) => c.attempts === 0)).toBe(true);
      // The held one comes back once its lease has run out, as before; the later one when it is due.
      const last = await claim(s, 'worker-3', NOW + 2 * HOUR, { leaseMs });
      expect(last.map((c) => c.event_id).sort()).toEqual([held, dueAfter].sort());
    });

    it('deferBacklog leaves out a subscription enabled again after the breaker was made, however late it runs', async () => {
      const w = await world(s);
      const [again, steady] = await Promise.all(
        (['products/create', 'products/update'] as const).map((topic) => subscribe(s, w.store.id, { appId: w.app.id }, topic)),
      );
      // Disabled by a dead delivery (gone), then enabled again at NOW + 3 min.
      await enqueue(s, w.store.id, 'products/create', [again!], NOW);
      const [c] = await claim(s, 'enabler', NOW + MINUTE);
      await s.deliveryQueue.recordOutcomes([attempted(c!, NOW + MINUTE, { status: 'dead', disable: 'gone' }, { status: 410 })], {
        worker: 'enabler',
        now: NOW + MINUTE,
        disableAfterDead: 100,
      });
      expect(await s.webhookRecovery.enable(w.store.id, again!.id, NOW + 3 * MINUTE)).toBeDefined();
      const afterEnable = await enqueue(s, w.store.id, 'products/create', [again!], NOW + 4 * MINUTE);
      const steadyOne = await enqueue(s, w.store.id, 'products/update', [steady!], NOW + 4 * MINUTE);
      const input = { storeId: w.store.id, subscriptionIds: [again!.id, steady!.id], until: NOW + HOUR, now: NOW + 5 * MINUTE, limit: 10 };

      // A breaker made before the enabling (its deferral written after it): only the other
      // subscription is put off, with the notice that the first was disabled, sent to it.
      expect(await s.deliveryQueue.deferBacklog({ ...input, breakerMadeAt: NOW + 2 * MINUTE })).toBe(2);
      const due = await claim(s, 'worker-1', NOW + 5 * MINUTE, { leaseMs: 1 });
      expect(due.map((d) => d.event_id)).toEqual([afterEnable]);
      // A breaker made at or after the enabling holds both.
      expect(await s.deliveryQueue.deferBacklog({ ...input, now: NOW + 6 * MINUTE, breakerMadeAt: NOW + 3 * MINUTE })).toBe(1);
      expect(await claim(s, 'worker-1', NOW + HOUR - 1)).toEqual([]);
      const late = await claim(s, 'worker-1', NOW + HOUR);
      const notice = late.find((d) => d.topic === 'subscription/disabled')?.event_id;
      expect(
        late
          .map((d) => d.event_id)
          .filter((e) => e !== notice)
          .sort(),
      ).toEqual([afterEnable, steadyOne].sort());
      expect(late.map((d) => d.topic).sort()).toEqual(['products/create', 'products/update', 'subscription/disabled']);
    });

    it('prune deletes old finished deliveries, their attempts and unreferenced events; pending deliveries stay', async () => {
      // Times long before every other test's rows, so the counts are this test's alone.
      const old = NOW - 30 * DAY;
      const w = await world(s);
      const a = await subscribe(s, w.store.id, { appId: w.app.id }, 'products/create');
      const b = await subscribe(s, w.store.id, { appId: w.app.id }, 'orders/create');
      const event = await enqueue(s, w.store.id, 'products/create', [a, b], old);
      const [dDone, dRetry] = await deliveriesOf(s, w.store.id, event);
      const rows = await claim(s, 'worker-1', old + 1);
      expect(rows.map((r) => r.id)).toEqual([dDone, dRetry]);
      await s.deliveryQueue.recordOutcomes(
        [
          attempted(rows[0]!, old + 2, { status: 'delivered' }),
          attempted(rows[1]!, old + 2, { status: 'pending', nextAttemptAt: old + 2 * DAY }, { status: 503 }),
        ],
        { worker: 'worker-1', now: old + 3, disableAfterDead: 5 },
      );

      expect(await s.webhooks.prune(old + DAY)).toEqual({ attempts: 2, deliveries: 1, events: 0 });
      expect(await s.webhooks.listDeliveries({ id: dDone!, limit: 1 })).toEqual([]);
      expect(await delivery(s, dRetry!)).toMatchObject({ status: 'pending', attempts: 1 });

      const [retry] = await claim(s, 'worker-1', old + 2 * DAY);
      expect(retry?.id).toBe(dRetry);
      // The event is still there for the retry to send.
      expect(retry?.payload).toBe(`{"event":"${event}"}`);
      await s.deliveryQueue.recordOutcomes([attempted(retry!, old + 2 * DAY, { status: 'dead' }, { status: 500 })], {
        worker: 'worker-1',
        now: old + 2 * DAY,
        disableAfterDead: 5,
      });
      expect(await s.webhooks.prune(old + 3 * DAY)).toEqual({ attempts: 1, deliveries: 1, events: 1 });
      expect(await s.webhooks.listDeliveries({ storeId: w.store.id, limit: 10 })).toEqual([]);
      expect(await s.webhooks.prune(old + 3 * DAY)).toEqual({ attempts: 0, deliveries: 0, events: 0 });
    });
  });

  db.routingTest();
});
