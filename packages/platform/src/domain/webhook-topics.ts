// The webhook topics an app can subscribe to, which scope each needs, and which change of a store
// resource emits which topic.
import { allows, type Resource, type Scope } from './scopes.ts';

export const TOPICS = [
  'products/create',
  'products/update',
  'products/delete',
  'orders/create',
  'orders/updated',
  'customers/create',
  'customers/update',
  'app/uninstalled',
  'app/scopes_update',
  'app/api_version_deprecated',
  'bulk_operations/finish',
  'subscription/disabled',
  'customers/data_request',
  'customers/redact',
  'shop/redact',
] as const;
export type WebhookTopic = (typeof TOPICS)[number];

/**
 * Topics sent to the privacy webhook address set on the app itself, without a subscription: every
 * app must be able to hear them, so no app may opt in or out through the Admin API.
 */
export const PRIVACY_TOPICS = ['customers/data_request', 'customers/redact', 'shop/redact'] as const satisfies readonly WebhookTopic[];
export type PrivacyTopic = (typeof PRIVACY_TOPICS)[number];

/**
 * Sent to an app when the platform disables one of its subscriptions, to wherever the app can still
 * be reached (its other subscriptions in the store, else its privacy webhook address): every app
 * hears it, so none subscribes to it.
 */
export const SUBSCRIPTION_DISABLED = 'subscription/disabled' as const satisfies WebhookTopic;

/** The topics an app may subscribe to through the Admin API. */
export const SUBSCRIBABLE_TOPICS = TOPICS.filter((t) => !isPrivacyTopic(t) && t !== SUBSCRIPTION_DISABLED);

/** Topics that may go to an app's privacy webhook address, with no subscription behind the delivery. */
export function sentToAppAddress(topic: string): boolean {
  return isPrivacyTopic(topic) || topic === SUBSCRIPTION_DISABLED;
}

export type ChangeKind = 'create' | 'update' | 'delete';

export function isTopic(value: string): value is WebhookTopic {
  return (TOPICS as readonly string[]).includes(value);
}

export function isPrivacyTopic(value: string): value is PrivacyTopic {
  return (PRIVACY_TOPICS as readonly string[]).includes(value);
}

/**
 * A privacy delivery has no subscription, yet the delivery table and the worker's per-receiver
 * fairness key every delivery by one. The app's negated id stands in for it: no subscription row
 * has a negative id, so the subscription bookkeeping after an attempt touches nothing, and each
 * app's privacy address still gets a key of its own.
 */
export function privacySubscriptionId(appId: number): number {
  return -appId;
}

/**
 * The resource whose read scope a topic needs. `app/*` topics are about the app itself,
 * `shop/redact` about a store the app has left, `bulk_operations/finish` about the app's own
 * export (whose scope was checked for it) and `subscription/disabled` about the app's own
 * subscription: they need none.
 */
export function topicResource(topic: WebhookTopic): Resource | undefined {
  const [resource] = topic.split('/');
  return resource === 'app' || resource === 'shop' || resource === 'bulk_operations' || resource === 'subscription'
    ? undefined
    : (resource as Resource);
}

/** Why a subscription or a queued delivery ends when its owner's scopes no longer cover its topic. */
export const SCOPE_LOST = 'the app may no longer read this topic';

/** Whether an owner holding `granted` may receive `topic`: the read scope of its resource (write implies read). */
export function mayReceive(topic: WebhookTopic, granted: readonly Scope[]): boolean {
  const resource = topicResource(topic);
  return resource === undefined || allows(granted, 'read', resource);
}

/** The topics an owner holding `granted` may not receive. */
export function unreadableTopics(granted: readonly Scope[]): WebhookTopic[] {
  return TOPICS.filter((topic) => !mayReceive(topic, granted));
}

/**
 * The topic a change emits, or none. Orders are never deleted, and a deleted customer emits
 * nothing (there is no such topic). `orders/updated` keeps the spelling apps of this platform
 * family already subscribe to.
 */
export function topicFor(resource: Resource, kind: ChangeKind): WebhookTopic | undefined {
  switch (`${resource}/${kind}`) {
    case 'products/create':
      return 'products/create';
    case 'products/update':
      return 'products/update';
    case 'products/delete':
      return 'products/delete';
    case 'orders/create':
      return 'orders/create';
    case 'orders/update':
      return 'orders/updated';
    case 'customers/create':
      return 'customers/create';
    case 'customers/update':
      return 'customers/update';
    default:
      return undefined;
  }
}
