// The transactional outbox: every change that emits an event writes the event and one delivery per
// matching active subscription inside the change's own transaction. A rollback takes them with it;
// a commit makes them durable before anyone is told (storage then wakes this process's worker;
// other processes find the rows when they poll).
import { randomBytes } from 'node:crypto';
import type { Clock } from '../domain/clock.ts';
import type { ResourceName } from '../domain/resources.ts';
import { storedScopes } from '../domain/scopes.ts';
import { type ChangeKind, mayReceive, topicFor, type WebhookTopic } from '../domain/webhook-topics.ts';
import type { Repositories } from '../storage/ports.ts';

export function newWebhookId(): string {
  return `wh_${randomBytes(16).toString('base64url')}`;
}

function newEventId(): string {
  return `evt_${randomBytes(16).toString('base64url')}`;
}

export interface ResourceChange {
  storeId: number;
  resource: ResourceName;
  kind: ChangeKind;
  object: Record<string, unknown>;
}

export class WebhookOutbox {
  constructor(private readonly clock: Clock) {}

  /** The event a change of a store resource emits, if any, in the change's transaction `tx`. */
  async record(tx: Repositories, change: ResourceChange): Promise<void> {
    const topic = topicFor(change.resource, change.kind);
    if (topic) await this.enqueue(tx, { storeId: change.storeId, topic, payload: change.object });
  }

  /**
   * Writes the event and its deliveries for every active subscription to `topic` in the store
   * whose owner may still receive it: an installed app, a private app that is not revoked, whose
   * scopes as granted now cover the topic (a subscription made under a wider grant gets nothing).
   * `uninstalledAppId`: the `app/uninstalled` event, sent to that app although it is no longer
   * installed. Returns the number of deliveries written.
   */
  async enqueue(
    tx: Repositories,
    input: { storeId: number; topic: WebhookTopic; payload: Record<string, unknown>; uninstalledAppId?: number },
  ): Promise<number> {
    const subs = (await tx.webhooks.recipients(input.storeId, input.topic, input.uninstalledAppId)).filter((s) =>
      mayReceive(input.topic, storedScopes(s.scopes)),
    );
    if (subs.length === 0) return 0;
    await tx.webhooks.insertEvent(
      { id: newEventId(), storeId: input.storeId, topic: input.topic, payload: JSON.stringify(input.payload), now: this.clock() },
      subs.map((s) => ({ subscriptionId: s.id, appId: s.app_id, privateAppId: s.private_app_id, webhookId: newWebhookId() })),
    );
    return subs.length;
  }
}
