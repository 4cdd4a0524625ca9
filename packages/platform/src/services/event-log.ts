// Missed-event recovery: what the calling app's subscriptions delivered, or still try to deliver,
// in its store over the retention window, with the same ids and body each delivery carries. An
// app back from downtime lists it and handles every `webhook_id` it has not seen.
import type { Clock } from '../domain/clock.ts';
import type { CursorCodec } from '../domain/cursor.ts';
import { ForbiddenError, InvalidCursor, InvalidCursorError, ValidationFailedError } from '../domain/errors.ts';
import { shapePayload } from '../domain/webhook-subscription-shape.ts';
import { mayReceive, TOPICS, topicResource, type WebhookTopic } from '../domain/webhook-topics.ts';
import type { EventLogRow, EventOwner } from '../storage/ports/event-log.ts';
import type { DeliveryStatus } from '../storage/ports/rows.ts';
import type { Storage } from '../storage/ports/storage.ts';
import type { ApiPrincipal } from './api-auth.ts';
import { LOG_RETENTION_MS } from './delivery-log.ts';

/** One entry of the list, as the Admin API answers it. */
export interface EventView {
  /** `X-Service-Webhook-Id` and `webhook-id` of the delivery: the same on every attempt. */
  webhook_id: string;
  /** `X-Service-Event-Id`: shared by the deliveries of one change to every subscriber. */
  event_id: string;
  topic: string;
  /** When the change happened: the delivery's `X-Service-Triggered-At`. */
  created_at: string;
  /** `X-Service-Api-Version` of the subscription; null once the subscription is deleted. */
  api_version: string | null;
  status: DeliveryStatus;
  attempts: number;
  /** The delivery's body, parsed. */
  payload: unknown;
}

export interface EventPageRequest {
  topic?: WebhookTopic | undefined;
  /** ISO 8601 with a time zone. */
  createdAtMin?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

export interface EventPage {
  data: EventView[];
  cursor: string;
  has_more: boolean;
}

function toView(r: EventLogRow): EventView {
  return {
    webhook_id: r.webhook_id,
    event_id: r.event_id,
    topic: r.topic,
    created_at: new Date(r.created_at).toISOString(),
    api_version: r.api_version,
    status: r.status,
    attempts: r.attempts,
    payload: JSON.parse(shapePayload(r.payload, r.include_fields)),
  };
}

export class EventLog {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly cursors: CursorCodec,
    private readonly retentionMs = LOG_RETENTION_MS,
  ) {}

  async page(p: ApiPrincipal, req: EventPageRequest): Promise<EventPage> {
    // The scopes the caller holds now decide, not those it held when the event was queued: an app
    // whose grant shrank must not read back what it may no longer receive.
    const readable = TOPICS.filter((topic) => mayReceive(topic, p.scopes));
    if (req.topic !== undefined && !readable.includes(req.topic)) {
      throw new ForbiddenError(
        `The topic ${req.topic} needs the read_${topicResource(req.topic)} scope`,
        `read_${topicResource(req.topic)}`,
      );
    }
    const windowStart = this.clock() - this.retentionMs;
    let since = windowStart;
    if (req.createdAtMin !== undefined) {
      const at = Date.parse(req.createdAtMin);
      if (!Number.isFinite(at))
        throw new ValidationFailedError({ created_at_min: ['must be an ISO 8601 date-time such as 2026-11-01T00:00:00Z'] });
      // Older than the window is clamped to it: nothing older is kept, and an app asking from its
      // last-seen time after a long outage should get what there is rather than an error.
      since = Math.max(windowStart, at);
    }
    const resource = `events:${p.owner}`;
    let after: { createdAt: number; id: number } | undefined;
    if (req.cursor !== undefined && req.cursor !== '') {
      try {
        const pos = this.cursors.decode(req.cursor, { storeId: p.storeId, resource, direction: 'next' });
        if (pos.at === undefined) throw new InvalidCursorError('cursor is malformed');
        after = { createdAt: pos.at, id: pos.id };
      } catch (err) {
        if (err instanceof InvalidCursorError) throw new InvalidCursor(err.message);
        throw err;
      }
    }
    const owner: EventOwner = p.kind === 'app' ? { appId: p.id } : { privateAppId: p.id };
    const { rows, stoppedAt } = await this.storage.events.page({
      storeId: p.storeId,
      owner,
      topics: req.topic !== undefined ? [req.topic] : readable,
      since,
      after,
      limit: req.limit + 1,
    });
    const page = rows.slice(0, req.limit);
    const last = page.at(-1);
    // A page that read as far as it may without filling up continues after the last delivery it
    // read (its topics were rare there); it may hold fewer events than asked, even none.
    const from =
      rows.length > req.limit && last
        ? { at: last.created_at, id: last.id }
        : stoppedAt
          ? { at: stoppedAt.createdAt, id: stoppedAt.id }
          : undefined;
    const hasMore = from !== undefined;
    const cursor = from ? this.cursors.encode({ storeId: p.storeId, resource, direction: 'next', id: from.id, at: from.at }) : '';
    return { data: page.map(toView), cursor, has_more: hasMore };
  }
}
