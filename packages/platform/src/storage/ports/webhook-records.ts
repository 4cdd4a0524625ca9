// The port on a store's webhook subscriptions, the events written for them, and the delivery log.
import type { WebhookTopic } from '../../domain/webhook-topics.ts';
import type { KeysetSource } from './keyset-source.ts';
import type { WriteGuard } from './write-condition.ts';
import type {
  AttemptRow,
  DeliveryLogRow,
  DeliveryStatus,
  DisabledSubscriptionRow,
  NewDelivery,
  NewSubscription,
  PartnerDeliveryDetailRow,
  PartnerDeliveryRow,
  PrivacyRecipient,
  Recipient,
  SubscriptionRow,
} from './rows.ts';

/** A subscription's new topic, address, filter and fields; `enable` also clears its disabled state. */
export interface SubscriptionChange {
  topic: string;
  address: string;
  /** Left as they are when not given. */
  filter?: string | null | undefined;
  include_fields?: string | null | undefined;
  updated_at: number;
  enable: boolean;
}

export interface WebhookRepository {
  subscriptions(): KeysetSource<SubscriptionRow>;
  findSubscription(storeId: number, owner: string, id: number): Promise<SubscriptionRow | undefined>;
  subscriptionExists(storeId: number, owner: string, topic: string, address: string): Promise<boolean>;
  /** Throws DuplicateRecordError (record 'webhook_subscriptions') for a second identical subscription. */
  insertSubscription(input: NewSubscription): Promise<SubscriptionRow>;
  /**
   * Changes a subscription's topic, address, filter and fields (`enable`: and clears its disabled state) and adds
   * one to its version, while it meets `guard`; undefined when no row changed. Throws
   * DuplicateRecordError when another subscription of the owner has that topic and address.
   */
  updateSubscription(storeId: number, id: number, values: SubscriptionChange, guard?: WriteGuard): Promise<SubscriptionRow | undefined>;
  /** Deletes the subscription while it meets `guard`; whether a row was deleted. */
  deleteSubscription(storeId: number, id: number, guard?: WriteGuard): Promise<boolean>;
  /** How many subscriptions (disabled ones included) an owner has in a store. */
  countSubscriptions(storeId: number, owner: string): Promise<number>;
  /** How many subscriptions to `topic` (disabled ones included) a store has: `owner`'s and everyone's. */
  countTopicSubscriptions(storeId: number, topic: string, owner: string): Promise<{ owner: number; store: number }>;
  /**
   * Deletes an app's subscriptions to any of `topics` in a store and cancels their pending
   * deliveries with `reason`. Returns how many subscriptions it deleted.
   */
  removeSubscriptions(input: {
    storeId: number;
    appId: number;
    topics: readonly WebhookTopic[];
    reason: string;
    now: number;
  }): Promise<number>;
  /**
   * Active subscriptions to `topic` in the store whose owner is still there (an installed app, a
   * private app that is not revoked), each with its owner's scopes as granted now (the
   * installation's or the private app's; null when there is none); with `uninstalledAppId`, that
   * app's subscriptions only. Whether the scopes cover the topic is the caller's decision.
   */
  recipients(storeId: number, topic: WebhookTopic, uninstalledAppId?: number): Promise<Recipient[]>;
  /**
   * Installed apps of the store that have a privacy webhook address, each with the scopes its
   * installation grants now (stored form). Whether they cover a topic is the caller's decision.
   */
  privacyRecipients(storeId: number): Promise<PrivacyRecipient[]>;
  /**
   * Writes an event and its deliveries, due at `dueAt` (default `now`); the transaction's commit
   * wakes this process's worker.
   */
  insertEvent(
    event: { id: string; storeId: number; topic: WebhookTopic; payload: string; now: number; dueAt?: number },
    deliveries: NewDelivery[],
  ): Promise<void>;
  /** Cancels an app's queued deliveries of one topic in a store; returns how many. */
  cancelPendingTopic(input: { storeId: number; appId: number; topic: WebhookTopic; reason: string; now: number }): Promise<number>;
  /** Cancels an app's queued deliveries in a store except `app/uninstalled`. */
  cancelPending(storeId: number, appId: number, reason: string, now: number): Promise<void>;
  appIdByClientId(clientId: string): Promise<number | undefined>;
  storeIdByName(name: string): Promise<number | undefined>;
  listDeliveries(filter: {
    appId?: number | undefined;
    storeId?: number | undefined;
    status?: DeliveryStatus | undefined;
    id?: number | undefined;
    limit: number;
  }): Promise<DeliveryLogRow[]>;
  attempts(deliveryId: number): Promise<AttemptRow[]>;
  /** The last attempt of each delivery given. */
  lastAttempts(deliveryIds: readonly number[]): Promise<Map<number, AttemptRow>>;
  redeliveryCheck(id: number): Promise<{ status: DeliveryStatus; sub_id: number | null; disabled_at: number | null } | undefined>;
  requeue(id: number, now: number): Promise<void>;
  /** Deletes log rows older than `cutoff`; pending deliveries are never deleted. */
  prune(cutoff: number): Promise<{ attempts: number; deliveries: number; events: number }>;
  partnerDeliveries(
    appId: number,
    filter: { status?: DeliveryStatus | undefined; topic?: string | undefined; before?: number | undefined; limit: number },
  ): Promise<PartnerDeliveryRow[]>;
  partnerDelivery(appId: number, id: number): Promise<PartnerDeliveryDetailRow | undefined>;
  disabledSubscriptions(appIds: readonly number[]): Promise<DisabledSubscriptionRow[]>;
}
