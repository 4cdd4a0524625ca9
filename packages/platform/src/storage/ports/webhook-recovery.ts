// Bringing a subscription back after its endpoint failed: enabling it again in place, and
// replaying its deliveries since a time, each sent again with its original webhook id.
import type { Selectable } from 'kysely';
import type { Database } from '../schema.ts';
import type { DeliveryStatus, SubscriptionRow } from './rows.ts';

/** A subscription with what recovering it needs to know about it and its owner now. */
export interface RecoverableSubscription extends SubscriptionRow {
  disabled_reason: Selectable<Database['webhook_subscriptions']>['disabled_reason'];
  store_name: Selectable<Database['stores']>['name'];
  /** The owner's scopes now (stored form): an installed app's grant, or a private app's. */
  scopes: string | null;
  /** The owner can still receive: an app installed in the store, a private app not revoked. */
  reachable: boolean;
}

export interface ReplayRequest {
  storeId: number;
  subscriptionId: number;
  /** Deliveries created at or after this time. */
  since: number;
  /** Which finished deliveries go out again (pending ones are already queued). */
  statuses: readonly Exclude<DeliveryStatus, 'pending'>[];
  /** At most this many are queued. */
  limit: number;
  now: number;
}

export interface ReplayResult {
  /** Deliveries queued again by this replay. */
  queued: number;
  /** Deliveries of the window still queued (by an earlier replay, or never finished): left as they are. */
  alreadyQueued: number;
  /** When more matched than `limit`: the creation time of the first left out (replay again from there). */
  nextSince: number | undefined;
}

export interface WebhookRecoveryRepository {
  /** One subscription of `owner` in a store. */
  findOwned(storeId: number, owner: string, id: number): Promise<RecoverableSubscription | undefined>;
  /** One subscription of a public app, in whichever store it is (a partner acting on its app). */
  findOfApp(appId: number, id: number): Promise<RecoverableSubscription | undefined>;
  /** One subscription by its id alone (the operator). */
  findById(id: number): Promise<RecoverableSubscription | undefined>;
  /**
   * Makes a disabled subscription active again: no reason, a dead streak of 0, `enabled_at` now, a
   * new version. Undefined when it is not disabled (or gone).
   */
  enable(storeId: number, id: number, now: number): Promise<SubscriptionRow | undefined>;
  /**
   * Queues again, oldest first, at most `limit` of the subscription's deliveries created since
   * `since` whose status is one of `statuses`: same row and webhook id, a fresh retry schedule,
   * marked as a replay. Deliveries still pending are not touched, so replaying again while an
   * earlier replay is queued queues nothing twice.
   */
  replay(input: ReplayRequest): Promise<ReplayResult>;
}
