// Missed-event recovery: the platform's `events` list (API version 2026-01 and later) replays what
// an app's webhook subscriptions delivered, or still try to deliver, in a shop over the last 30
// days, with the ids and body each delivery carries.
import { ParameterError } from '../errors.ts';
import type { QueryValue } from '../signature/query-signature.ts';
import type { PaginateOptions } from './paginator.ts';

/** The first API version that has the `events` list. */
export const EVENTS_SINCE_VERSION = '2026-01';

/** One entry of the `events` list: a delivery queued for the app, with what its requests carry. */
export interface WebhookEventEntry {
  /** `X-Service-Webhook-Id` / `webhook-id` of the delivery: the same on every retry, the de-duplication key. */
  webhook_id: string;
  /** `X-Service-Event-Id`: one change, shared by the deliveries to each subscriber. */
  event_id: string;
  /** `X-Service-Topic`, e.g. `products/create`. */
  topic: string;
  /** ISO 8601: when the change happened (`X-Service-Triggered-At`). */
  created_at: string;
  /** `X-Service-Api-Version` of the subscription; `null` once the subscription is deleted. */
  api_version: string | null;
  /** `pending` (not sent yet, or failing and retried), `delivered`, `dead` (retries exhausted) or `cancelled`. */
  status: 'pending' | 'delivered' | 'dead' | 'cancelled';
  /** Attempts made so far. */
  attempts: number;
  /** The delivery's JSON body, parsed. */
  payload: Record<string, unknown>;
}

/** Options of `client.events()`. */
export interface EventsOptions {
  /** Only this topic (the platform refuses one the app may not read: `ScopeError`). */
  topic?: string;
  /**
   * Only events at or after this time: a `Date`, unix milliseconds, or ISO 8601 with a time zone.
   * The platform keeps 30 days; anything earlier counts as 30 days ago.
   */
  createdAtMin?: Date | number | string;
  /** Page size, 1–250 (default 50 on the platform). */
  limit?: number;
  /** Resume from a page's `cursor` (see `ItemIterator.page`). */
  cursor?: string | null;
  /** Stop after this many pages. */
  maxPages?: number;
  signal?: AbortSignal;
}

/** Whether `version` (year-month) has the `events` list. */
export function hasEvents(version: string): boolean {
  return /^\d{4}-\d{2}$/.test(version) && version >= EVENTS_SINCE_VERSION;
}

/**
 * Checks `options` and turns them into the pagination options of the `events` list.
 *
 * @example
 * ```ts
 * eventsPagination('2026-01', { topic: 'orders/create', createdAtMin: new Date('2026-11-20T00:00:00Z') });
 * // { query: { topic: 'orders/create', created_at_min: '2026-11-20T00:00:00.000Z' }, pagination: 'has_more' }
 * ```
 */
export function eventsPagination(apiVersion: string, options: EventsOptions = {}): PaginateOptions {
  if (!hasEvents(apiVersion)) {
    throw new ParameterError(
      'PARAMETER_INVALID',
      'apiVersion',
      `events needs API version ${EVENTS_SINCE_VERSION} or later; this client uses ${apiVersion}`,
    );
  }
  const query: Record<string, QueryValue> = {};
  if (options.topic !== undefined) {
    if (typeof options.topic !== 'string' || !/^[a-z_]+\/[a-z_]+$/.test(options.topic))
      throw new ParameterError('PARAMETER_INVALID', 'topic', 'topic must look like "products/create"');
    query['topic'] = options.topic;
  }
  if (options.createdAtMin !== undefined) {
    const at = options.createdAtMin;
    const ms = at instanceof Date ? at.getTime() : typeof at === 'number' ? at : Number.NaN;
    if (typeof at === 'string') {
      // Sent as given, so the platform sees the caller's own offset; it must still be a date-time.
      if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(at) || Number.isNaN(Date.parse(at)))
        throw new ParameterError('PARAMETER_INVALID', 'createdAtMin', 'createdAtMin must be ISO 8601 with a time zone');
      query['created_at_min'] = at;
    } else {
      if (!Number.isFinite(ms)) throw new ParameterError('PARAMETER_INVALID', 'createdAtMin', 'createdAtMin is not a valid time');
      query['created_at_min'] = new Date(ms).toISOString();
    }
  }
  const out: PaginateOptions = { query, pagination: 'has_more' };
  if (options.limit !== undefined) out.limit = options.limit;
  if (options.cursor !== undefined) out.cursor = options.cursor;
  if (options.maxPages !== undefined) out.maxPages = options.maxPages;
  if (options.signal !== undefined) out.signal = options.signal;
  return out;
}
