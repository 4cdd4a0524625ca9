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
] as const;
export type WebhookTopic = (typeof TOPICS)[number];

export type ChangeKind = 'create' | 'update' | 'delete';

export function isTopic(value: string): value is WebhookTopic {
  return (TOPICS as readonly string[]).includes(value);
}

/** The resource whose read scope a topic needs; `app/uninstalled` needs none (it is about the app itself). */
export function topicResource(topic: WebhookTopic): Resource | undefined {
  const [resource] = topic.split('/');
  return resource === 'app' ? undefined : (resource as Resource);
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
