// Queues webhook deliveries the short way for tests of the worker: a store, a private app
// subscribed to `address` for products/create, and `events` events in one transaction.
import { randomBytes } from 'node:crypto';
import type { Platform } from '../src/platform.ts';
import { WebhookOutbox } from '../src/services/webhook-outbox.ts';

export async function seedDeliveries(p: Pick<Platform, 'services' | 'db' | 'storage'>, address: string, events: number): Promise<void> {
  const s = p.services;
  const store = await s.accounts.createStore({
    name: `seed${randomBytes(3).toString('hex')}`,
    ownerEmail: `o${randomBytes(3).toString('hex')}@x.test`,
    ownerPassword: 'seed-test-password',
  });
  const priv = await s.apps.createPrivateApp({ storeId: store.id, name: 'receiver', scopes: 'read_products' });
  await p.db.kysely
    .insertInto('webhook_subscriptions')
    .values({
      store_id: store.id,
      owner: `private:${priv.id}`,
      app_id: null,
      private_app_id: priv.id,
      topic: 'products/create',
      address,
      api_version: '2026-01',
      created_at: 0,
      updated_at: 0,
      disabled_at: null,
      disabled_reason: null,
    })
    .execute();
  const outbox = new WebhookOutbox(s.clock);
  await p.storage.transaction(async (tx) => {
    for (let i = 0; i < events; i++)
      await outbox.enqueue(tx, { storeId: store.id, topic: 'products/create', payload: { id: String(i + 1), title: `p${i + 1}` } });
  });
}
