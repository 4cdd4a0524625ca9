// Bringing a webhook subscription back after its endpoint failed: enabling it again in place (same
// id, history and deliveries, a clean dead streak) and replaying its deliveries since a time, each
// with its original webhook id so the app de-duplicates what it had already received. The same
// rules whoever asks: the app itself (Admin API), its partner (dashboard) or the operator (CLI).
import type { Clock } from '../domain/clock.ts';
import { ConflictError, NotFoundError, ValidationFailedError } from '../domain/errors.ts';
import { parseIsoTime } from '../domain/list-filters.ts';
import { storedScopes } from '../domain/scopes.ts';
import { isTopic, mayReceive } from '../domain/webhook-topics.ts';
import type { SubscriptionRow } from '../storage/ports/rows.ts';
import type { Storage } from '../storage/ports/storage.ts';
import type { RecoverableSubscription } from '../storage/ports/webhook-recovery.ts';

export type { RecoverableSubscription };
import type { ApiPrincipal } from './api-auth.ts';
import { LOG_RETENTION_MS } from './delivery-log.ts';

/** Deliveries one replay queues at most; the answer says when more matched and where to go on from. */
export const MAX_REPLAY = 1000;
export const REPLAY_STATUSES = ['failed', 'all'] as const;
export type ReplayStatus = (typeof REPLAY_STATUSES)[number];

/** Who acts: the subscription's owner through the Admin API, the partner of its app, or the operator. */
export type RecoveryActor = { principal: ApiPrincipal } | { appId: number } | 'operator';

export interface ReplayAnswer {
  subscription_id: string;
  since: string;
  status: ReplayStatus;
  /** Deliveries queued again now. */
  queued: number;
  /** Deliveries of the window already queued (an earlier replay still running, or retries under way): left as they are. */
  already_queued: number;
  /** More deliveries matched than one replay queues (`MAX_REPLAY`). */
  capped: boolean;
  /** When capped: replay again with this `since` for the rest. */
  next_since: string | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The finished statuses a replay takes: failed means never delivered (dead, or cancelled before it could be). */
function statusesOf(status: ReplayStatus) {
  return status === 'all' ? (['dead', 'cancelled', 'delivered'] as const) : (['dead', 'cancelled'] as const);
}

export class WebhookRecovery {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  /** The subscription `id` as `actor` may see it; 404 otherwise (another app's subscription included). */
  async find(actor: RecoveryActor, id: number): Promise<RecoverableSubscription> {
    const repo = this.storage.webhookRecovery;
    const row =
      actor === 'operator'
        ? await repo.findById(id)
        : 'appId' in actor
          ? await repo.findOfApp(actor.appId, id)
          : await repo.findOwned(actor.principal.storeId, actor.principal.owner, id);
    if (!row) throw new NotFoundError(`No webhook subscription with id ${id}`);
    return row;
  }

  /**
   * Makes a disabled subscription active again in place and returns it; an active one is returned
   * as it is. Refused (409) when its owner could no longer receive it: an app uninstalled, a private
   * app revoked, a grant that no longer covers the topic.
   */
  async enable(actor: RecoveryActor, id: number): Promise<SubscriptionRow & { disabled_reason: string | null }> {
    const sub = await this.find(actor, id);
    if (sub.disabled_at === null) return sub;
    checkReachable(sub);
    const now = this.clock();
    const enabled = await this.storage.transaction((tx) => tx.webhookRecovery.enable(sub.store_id, sub.id, now));
    // Enabled (or deleted) by someone else in between: what is there now is the answer.
    return enabled ? { ...enabled, disabled_reason: null } : this.find(actor, id);
  }

  /**
   * Queues again the subscription's deliveries created since `input.since` (failed ones, or all),
   * oldest first, at most `MAX_REPLAY`. Each keeps its webhook id; the worker checks the grant as it
   * is when it sends. `input` is checked first (422 naming each bad field), then the subscription
   * (404), which must be active (422: enable it first).
   */
  async replay(actor: RecoveryActor, id: number, input: { since?: unknown; status?: unknown }): Promise<ReplayAnswer> {
    const now = this.clock();
    const errors: Record<string, string[]> = {};
    const since = typeof input.since === 'string' && input.since.length <= 64 ? parseIsoTime(input.since) : undefined;
    if (since === undefined) errors.since = ['must be an ISO 8601 date-time, such as 2026-01-31T09:00:00Z'];
    else if (since > now) errors.since = ['must not be in the future'];
    else if (since < now - LOG_RETENTION_MS)
      errors.since = [`must be within the last ${LOG_RETENTION_MS / 86_400_000} days (deliveries are kept that long)`];
    const status = input.status ?? 'failed';
    if (typeof status !== 'string' || !(REPLAY_STATUSES as readonly string[]).includes(status))
      errors.status = [`must be one of: ${REPLAY_STATUSES.join(', ')}`];
    if (Object.keys(errors).length > 0) throw new ValidationFailedError(errors);
    const sub = await this.find(actor, id);
    if (sub.disabled_at !== null)
      throw new ValidationFailedError({ base: ['the subscription is disabled: enable it first, then replay its deliveries'] });
    checkReachable(sub);
    const chosen = status as ReplayStatus;
    const result = await this.storage.transaction((tx) =>
      tx.webhookRecovery.replay({
        storeId: sub.store_id,
        subscriptionId: sub.id,
        since: since!,
        statuses: statusesOf(chosen),
        limit: MAX_REPLAY,
        now,
      }),
    );
    return {
      subscription_id: String(sub.id),
      since: iso(since!),
      status: chosen,
      queued: result.queued,
      already_queued: result.alreadyQueued,
      capped: result.nextSince !== undefined,
      next_since: result.nextSince === undefined ? null : iso(result.nextSince),
    };
  }
}

/** Its owner can still receive the subscription's topic (the worker checks this again at each send). */
function checkReachable(sub: RecoverableSubscription): void {
  if (!sub.reachable)
    throw new ConflictError(sub.app_id !== null ? 'The app is no longer installed in this store' : 'The private app was revoked');
  if (!isTopic(sub.topic) || !mayReceive(sub.topic, storedScopes(sub.scopes)))
    throw new ConflictError(`The app's grant no longer covers ${sub.topic}`);
}
