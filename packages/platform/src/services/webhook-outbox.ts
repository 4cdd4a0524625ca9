// The transactional outbox: every change that emits an event writes the event and one delivery per
// matching active subscription inside the change's own transaction. A rollback takes them with it;
// a commit makes them durable before anyone is told (storage then wakes this process's worker;
// other processes find the rows when they poll).
import type { Clock } from '../domain/clock.ts';
import type { ResourceName } from '../domain/resources.ts';
import { storedScopes } from '../domain/scopes.ts';
import {
  type ChangeKind,
  mayReceive,
  type PrivacyTopic,
  privacySubscriptionId,
  topicFor,
  topicResource,
  type WebhookTopic,
} from '../domain/webhook-topics.ts';
import { FilterCache } from '../domain/webhook-filter.ts';
import type { Repositories } from '../storage/ports/repositories.ts';
import type { Recipient } from '../storage/ports/rows.ts';
import { newEventId, newWebhookId } from '../domain/webhook-ids.ts';

export { newWebhookId };

export interface ResourceChange {
  storeId: number;
  resource: ResourceName;
  kind: ChangeKind;
  object: Record<string, unknown>;
}

/** What the outbox reports: deliveries a subscription's filter kept from being written. */
export interface OutboxMetrics {
  deliveriesFiltered(topic: WebhookTopic, count: number): void;
}

export class WebhookOutbox {
  private readonly filters = new FilterCache();

  constructor(
    private readonly clock: Clock,
    private readonly metrics?: OutboxMetrics,
  ) {}

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
   * installed. `appId`: an event about one app (`app/scopes_update`), for its subscriptions only;
   * `privateAppId` likewise for one private app. Returns the number of deliveries written.
   */
  async enqueue(
    tx: Repositories,
    input: {
      storeId: number;
      topic: WebhookTopic;
      payload: Record<string, unknown>;
      uninstalledAppId?: number;
      appId?: number;
      privateAppId?: number;
    },
  ): Promise<number> {
    const only = input.uninstalledAppId ?? input.appId;
    const readers = (await tx.webhooks.recipients(input.storeId, input.topic, only)).filter(
      (s) =>
        mayReceive(input.topic, storedScopes(s.scopes)) && (input.privateAppId === undefined || s.private_app_id === input.privateAppId),
    );
    const subs = this.passing(input.topic, input.payload, readers);
    if (subs.length < readers.length) this.metrics?.deliveriesFiltered(input.topic, readers.length - subs.length);
    if (subs.length === 0) return 0;
    await tx.webhooks.insertEvent(
      { id: newEventId(), storeId: input.storeId, topic: input.topic, payload: JSON.stringify(input.payload), now: this.clock() },
      subs.map((s) => ({
        subscriptionId: s.id,
        appId: s.app_id,
        privateAppId: s.private_app_id,
        webhookId: newWebhookId(),
        includeFields: s.include_fields,
      })),
    );
    return subs.length;
  }

  /**
   * The recipients whose filter the object passes; those without one always do. A filter is
   * evaluated against the object the event carries (for a delete, the object as it was). A stored
   * filter that no longer compiles lets everything through: an app that asked for fewer events
   * gets more rather than silently none.
   */
  private passing(topic: WebhookTopic, payload: Record<string, unknown>, recipients: Recipient[]): Recipient[] {
    const resource = topicResource(topic);
    if (resource === undefined || recipients.every((r) => r.filter === null)) return recipients;
    return recipients.filter((r) => r.filter === null || (this.filters.get(resource, r.filter)?.(payload) ?? true));
  }

  /**
   * A privacy topic for every app installed in the store that has a privacy webhook address and
   * whose scopes as granted now cover the topic; no subscription is involved. Returns the number
   * of deliveries written.
   */
  async enqueuePrivacy(
    tx: Repositories,
    input: { storeId: number; topic: PrivacyTopic; payload: Record<string, unknown> },
  ): Promise<number> {
    const apps = (await tx.webhooks.privacyRecipients(input.storeId)).filter((r) => mayReceive(input.topic, storedScopes(r.scopes)));
    return this.enqueueToApps(tx, { ...input, appIds: apps.map((a) => a.app_id) });
  }

  /**
   * Writes a privacy event for the apps given, to their privacy addresses, due `delayMs` after now
   * (at once by default): the worker leaves a delivery alone until it is due, so a later send
   * needs no timer.
   */
  async enqueueToApps(
    tx: Repositories,
    input: { storeId: number; topic: PrivacyTopic; payload: Record<string, unknown>; appIds: readonly number[]; delayMs?: number },
  ): Promise<number> {
    if (input.appIds.length === 0) return 0;
    const now = this.clock();
    await tx.webhooks.insertEvent(
      {
        id: newEventId(),
        storeId: input.storeId,
        topic: input.topic,
        payload: JSON.stringify(input.payload),
        now,
        dueAt: now + (input.delayMs ?? 0),
      },
      input.appIds.map((appId) => ({ subscriptionId: privacySubscriptionId(appId), appId, privateAppId: null, webhookId: newWebhookId() })),
    );
    return input.appIds.length;
  }
}
