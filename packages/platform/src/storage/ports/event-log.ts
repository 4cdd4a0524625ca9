// The events list's query and rows: an owner's deliveries in a store, as apps read them back.
import type { Selectable } from 'kysely';
import type { Database } from '../schema.ts';

type Deliveries = Selectable<Database['webhook_deliveries']>;

/** Whose deliveries the events list reads: a public app's or a private app's. */
export type EventOwner = { appId: number } | { privateAppId: number };

/** One page of an owner's delivered (or to be delivered) events in a store. */
export interface EventLogQuery {
  storeId: number;
  owner: EventOwner;
  /** Only deliveries of these topics; an empty list reads nothing. */
  topics: readonly string[];
  /** Only deliveries created at or after this time (unix ms). */
  since: number;
  /** Exclusive keyset position: rows after (created_at, id), in that order. */
  after?: { createdAt: number; id: number } | undefined;
  limit: number;
}

/** A page of the events list: its rows, and where it stopped reading when it stopped short. */
export interface EventLogPage {
  rows: EventLogRow[];
  /**
   * Set when the page read as many deliveries as it may without finding `limit` of the topics
   * asked: the position of the last one it read. The next page continues after it.
   */
  stoppedAt?: { createdAt: number; id: number };
}

/** A delivery with what its request carries: the ids, the topic, the body and the API version. */
export interface EventLogRow
  extends Pick<Deliveries, 'id' | 'webhook_id' | 'event_id' | 'topic' | 'status' | 'attempts' | 'created_at' | 'include_fields'> {
  /** The event's payload, which the delivery sends narrowed to `include_fields` when set. */
  payload: Selectable<Database['webhook_events']>['payload'];
  /** The subscription's API version; null once the subscription is deleted. */
  api_version: Selectable<Database['webhook_subscriptions']>['api_version'] | null;
}

/** What an owner's subscriptions delivered or will deliver, for the owner to reconcile against. */
export interface EventLogRepository {
  /**
   * Up to `limit` deliveries of the owner in the store, ascending by (created_at, id), read from
   * one index range of at most a bounded number of deliveries whatever the position, the window or
   * the topics: a page whose topics are rare there stops short (EventLogPage.stoppedAt).
   */
  page(q: EventLogQuery): Promise<EventLogPage>;
}
