// Webhook helpers of the storage contract: subscriptions, events with their deliveries, and the delivery
// queue driven by hand (claim, record an attempt, drain what an earlier test left pending).
import type { WebhookTopic } from '../../src/domain/webhook-topics.ts';
import type { Repositories } from '../../src/storage/ports/repositories.ts';
import type { ClaimedDelivery, DeliveryOutcome, SubscriptionRow } from '../../src/storage/ports/rows.ts';
import type { Storage } from '../../src/storage/ports/storage.ts';
import { FAR, MINUTE, NOW, tag } from './support.ts';

type Owner = { appId: number } | { privateAppId: number };

export function subscribe(
  r: Repositories,
  storeId: number,
  owner: Owner,
  topic: WebhookTopic,
  address = `https://hooks.example.test/${tag('h')}`,
): Promise<SubscriptionRow> {
  const isApp = 'appId' in owner;
  return r.webhooks.insertSubscription({
    store_id: storeId,
    owner: isApp ? `app:${owner.appId}` : `private:${owner.privateAppId}`,
    app_id: isApp ? owner.appId : null,
    private_app_id: isApp ? null : owner.privateAppId,
    topic,
    address,
    api_version: '2026-01',
    created_at: NOW,
    updated_at: NOW,
  });
}

/** Writes an event with one delivery per subscription given; returns the event id. */
export async function enqueue(
  r: Repositories,
  storeId: number,
  topic: WebhookTopic,
  subs: readonly SubscriptionRow[],
  now: number,
): Promise<string> {
  const id = tag('evt');
  await r.webhooks.insertEvent(
    { id, storeId, topic, payload: `{"event":"${id}"}`, now },
    subs.map((sub) => ({ subscriptionId: sub.id, appId: sub.app_id, privateAppId: sub.private_app_id, webhookId: `wh-${id}-${sub.id}` })),
  );
  return id;
}

/** The delivery ids of an event, ascending. */
export async function deliveriesOf(s: Storage, storeId: number, eventId: string): Promise<number[]> {
  const rows = await s.webhooks.listDeliveries({ storeId, limit: 1000 });
  return rows
    .filter((r) => r.event_id === eventId)
    .map((r) => r.id)
    .sort((a, b) => a - b);
}

export async function delivery(s: Storage, id: number) {
  const [row] = await s.webhooks.listDeliveries({ id, limit: 1 });
  if (!row) throw new Error(`no delivery ${id}`);
  return row;
}

export function claim(
  s: Storage,
  worker: string,
  now: number,
  options: { limit?: number; exclude?: number[]; leaseMs?: number } = {},
): Promise<ClaimedDelivery[]> {
  return s.deliveryQueue.claim({
    worker,
    now,
    leaseUntil: now + (options.leaseMs ?? MINUTE),
    limit: options.limit ?? 100,
    excludeSubscriptions: options.exclude ?? [],
  });
}

export type Next = Extract<DeliveryOutcome, { attempt: unknown }>['next'];

export function attempted(
  c: ClaimedDelivery,
  at: number,
  next: Next,
  result: { status?: number | null; error?: string | null; body?: string | null } = {},
): DeliveryOutcome {
  return {
    id: c.id,
    storeId: Number(c.store_id),
    subscriptionId: c.subscription_id,
    attempts: c.attempts,
    attempt: {
      attemptedAt: at,
      status: result.status === undefined ? 200 : result.status,
      latencyMs: 12,
      responseBody: result.body ?? null,
      error: result.error ?? null,
    },
    next,
  };
}

/** Ends every pending delivery of the shared database, so a queue test sees only its own. */
export async function drain(s: Storage): Promise<void> {
  for (;;) {
    const rows = await claim(s, 'drain', FAR, { limit: 500 });
    if (rows.length === 0) return;
    await s.deliveryQueue.recordOutcomes(
      rows.map((r) => ({
        id: r.id,
        storeId: Number(r.store_id),
        subscriptionId: r.subscription_id,
        attempts: r.attempts,
        cancelled: 'drained',
      })),
      { worker: 'drain', now: FAR, disableAfterDead: 5 },
    );
  }
}
