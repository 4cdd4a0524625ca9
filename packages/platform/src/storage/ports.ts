// What the services need from storage, one repository per aggregate. Services and the webhook
// worker see only these interfaces; the SQL, the dialects (SQLite or PostgreSQL), prepared
// statements and the commit-and-fsync policy stay behind them.
import type { ApiHealthRepository } from './ports/api-health.ts';
import type { EndpointHealthRepository } from './ports/endpoint-health.ts';
import type { ResourceName } from '../domain/resources.ts';
import type { JsonPage, JsonPageQuery } from './ports/json-page.ts';

export type { JsonPage, JsonPageQuery } from './ports/json-page.ts';
import type {
  StoreRow,
  ShopRow,
  CredentialRow,
  WebSessionRow,
  ResourceRow,
  SubscriptionRow,
  NewSubscription,
  DeliveryStatus,
  DeliveryLogRow,
  AttemptRow,
  DisabledSubscriptionRow,
  Recipient,
  PrivacyRecipient,
  NewDelivery,
  PartnerDeliveryRow,
  PartnerDeliveryDetailRow,
  IdempotencyKeyId,
  IdempotencyKeyRow,
  NewReservation,
  StoredResponse,
} from './ports/rows.ts';
import type { EventLogPage, EventLogQuery } from './ports/event-log.ts';
import type { WebhookTopic } from '../domain/webhook-topics.ts';
import type { ListFilters } from '../domain/list-filters.ts';

export type * from './ports/rows.ts';
export type * from './ports/event-log.ts';
export type { DeliveryQueue } from './ports/delivery-queue.ts';
export type * from './ports/endpoint-health.ts';
export type { AppSubscriptionRow, AppWebhookRepository, CopyShape, StoreCopyRow } from './ports/app-webhooks.ts';
import type { AppWebhookRepository } from './ports/app-webhooks.ts';
export type { BulkChunk, BulkOperationRepository, BulkOperationRow, BulkOwner, NewBulkOperation } from './ports/bulk-operations.ts';
export type { EventPayloadRepository, StoredEventPayload } from './ports/event-payloads.ts';
export type { IdempotentAnswerRepository, RewrittenAnswer, StoredAnswer } from './ports/idempotent-answers.ts';
export type {
  AccessTokenLookup,
  CodeRedemption,
  GrantClient,
  GrantOutcome,
  GrantQueries,
  GrantStore,
  Issued,
  NewCode,
  NewOnlineAccess,
  NewTokenPair,
  RefreshRotation,
  TokenKey,
  TokenRepository,
} from './ports/tokens.ts';
import type { GrantStore, TokenRepository } from './ports/tokens.ts';
import type { DeliveryQueue } from './ports/delivery-queue.ts';
import type { EventPayloadRepository } from './ports/event-payloads.ts';
import type { IdempotentAnswerRepository } from './ports/idempotent-answers.ts';
import type { BulkOperationRepository } from './ports/bulk-operations.ts';
import type { WebhookRecoveryRepository } from './ports/webhook-recovery.ts';
import type { BulkRows } from './ports/bulk-rows.ts';
export type { BulkRows, BulkTable, NewRecord } from './ports/bulk-rows.ts';
export type { RecoverableSubscription, ReplayResult, WebhookRecoveryRepository } from './ports/webhook-recovery.ts';

export interface AccountRepository {
  findStoreByName(name: string): Promise<StoreRow | undefined>;
  findStoreNameById(id: number): Promise<string | undefined>;
  storeNameTaken(name: string): Promise<boolean>;
  /**
   * Inside a transaction: holds the store until the transaction ends, so that transactions which
   * count a store's records before adding one (the caps on subscriptions and private apps) take
   * turns instead of both counting below the cap. Writes that only reference the store go on.
   */
  lockStore(storeId: number): Promise<void>;
  insertStore(input: { name: string; ownerMerchantId: number; now: number; currency?: string; timezone?: string }): Promise<StoreRow>;
  /** The store's profile with its owner's email. */
  findShop(storeId: number): Promise<ShopRow | undefined>;
  findMerchantByEmail(email: string): Promise<CredentialRow | undefined>;
  insertMerchant(input: { email: string; passwordHash: string; now: number }): Promise<CredentialRow>;
  findPartnerByEmail(email: string): Promise<CredentialRow | undefined>;
  findPartnerById(id: number): Promise<{ id: number; email: string } | undefined>;
  insertPartner(input: { email: string; passwordHash: string; now: number }): Promise<{ id: number; email: string }>;
}

export interface SessionRepository {
  insertSession(input: {
    idHash: string;
    kind: 'merchant' | 'partner';
    subjectId: number;
    storeId: number | null;
    expiresAt: number;
    now: number;
  }): Promise<void>;
  findSession(idHash: string): Promise<WebSessionRow | undefined>;
  deleteSession(idHash: string): Promise<void>;
}

/** One key's count of login attempts in its window, as left by the attempt just recorded. */
export interface AttemptCount {
  /** Attempts in the window so far, the one just recorded included. */
  attempts: number;
  windowStartedAt: number;
  lockedUntil: number | null;
}

export interface ThrottleRepository {
  /** `locked_until` of each key that has a row. */
  lockedUntil(keys: readonly string[]): Promise<(number | null)[]>;
  /**
   * Records an attempt for `key` in one atomic step, before anything about it is known: a count
   * whose window started at or before `windowStart`, or whose lock has ended, starts again at 1;
   * an attempt that takes the count over `max` while no lock is in force locks the key until
   * `lockUntil` in the same step. Concurrent attempts therefore each get their own number.
   */
  countAttempt(key: string, now: number, windowStart: number, limit: { max: number; lockUntil: number }): Promise<AttemptCount>;
  lock(key: string, until: number): Promise<void>;
  /**
   * Drops the count only if it is still exactly `seen` (same window, no attempt recorded since);
   * a count that has moved on is left alone.
   */
  clearIfUnchanged(key: string, seen: Pick<AttemptCount, 'attempts' | 'windowStartedAt'>): Promise<void>;
  /** Takes one attempt off the count of the window that started at `windowStartedAt` (never below 0). */
  uncount(key: string, windowStartedAt: number): Promise<void>;
  /** Drops counts whose window started before `oldest` and whose lock (if any) has ended. */
  prune(oldest: number, now: number): Promise<void>;
}

export interface RevealRepository {
  put(input: { idHash: string; sessionHash: string; payloadEnc: string; expiresAt: number; now: number }): Promise<void>;
  /** Deletes the reveal and returns it, in one statement (so it can be taken once). */
  take(idHash: string, sessionHash: string): Promise<{ payload_enc: string; expires_at: number } | undefined>;
}

import type { AppRepository } from './ports/apps.ts';
export type { AppRepository, SecretOwner, PrivateAppSecrets } from './ports/apps.ts';

/** Which rows of a keyset table: one store's, optionally narrowed by equality on other columns. */
export interface KeysetScope {
  storeId: number;
  /** Extra equality filters on columns of the table (e.g. the subscription owner). */
  where?: Record<string, string | number>;
}

export interface KeysetQuery extends KeysetScope {
  /**
   * A list's row filters: ids, since_id, created_at/updated_at ranges (every keyset table has them),
   * and exact matches on columns the list names (`ListFilters.match`).
   */
  filters?: ListFilters;
}

/** A page of rows past a position, and what lies around it. */
export interface KeysetWindow<R> {
  rows: R[];
  /** Whether any row lies on the other side of the position, the position included. */
  behind: boolean;
  /**
   * Set when the statement stopped reading before it found `limit` rows, because the filters
   * matched too few of the rows it may read: the id of the last row it examined. Rows past it were
   * not examined; the page ends there and the next one continues from it.
   */
  stoppedAt?: number;
}

/** Rows of a table in id order, each call a bounded number of index range scans. */
export interface KeysetSource<R> {
  /** Up to `limit` rows with id > `after` (or from the start), ascending. Row filters go through `window`. */
  after(q: KeysetScope & { filters?: never }, after: number | undefined, limit: number): Promise<R[]>;
  /** Up to `limit` rows with id < `before`, descending. */
  before(q: KeysetScope & { filters?: never }, before: number, limit: number): Promise<R[]>;
  /**
   * Up to `limit` rows matching the query past `from` (`after`: id > from, ascending; `before`:
   * id < from, descending; an undefined `from` is the start or the end), and whether any matching
   * row lies on the other side, `from` included (none when `from` is undefined). With a time range
   * it may stop early (KeysetWindow.stoppedAt) rather than read without bound.
   */
  window(q: KeysetQuery, side: 'after' | 'before', from: number | undefined, limit: number): Promise<KeysetWindow<R>>;
  /** How many rows match the query: exact, reading every matching entry of an index. */
  count(q: KeysetQuery): Promise<number>;
}

export interface ResourceRepository {
  page(resource: ResourceName): KeysetSource<ResourceRow>;
  /**
   * The page as JSON in the shape of the resource's `jsonFields`, or undefined when the database
   * cannot write it exactly as ResourceDef.toJson would (then read it as rows).
   */
  jsonPage(resource: ResourceName, q: JsonPageQuery): Promise<JsonPage | undefined>;
  get(resource: ResourceName, storeId: number, id: number): Promise<ResourceRow | undefined>;
  /** Throws DuplicateRecordError (record: the resource name) when a unique key is taken: a customer's email in its store. */
  insert(resource: ResourceName, values: Record<string, unknown>): Promise<ResourceRow>;
  /**
   * Sets `values` and adds one to the row's version, only while the row still meets `guard` (checked
   * in the statement itself, so two writers with the same guard cannot both pass); undefined when
   * no row was changed. Throws DuplicateRecordError like `insert`.
   */
  update(
    resource: ResourceName,
    storeId: number,
    id: number,
    values: Record<string, unknown>,
    guard?: WriteGuard,
  ): Promise<ResourceRow | undefined>;
  /** Deletes the row while it still meets `guard`; undefined when no row was deleted. */
  delete(resource: ResourceName, storeId: number, id: number, guard?: WriteGuard): Promise<ResourceRow | undefined>;
  exists(resource: ResourceName, storeId: number, id: number): Promise<boolean>;
  customerEmailTaken(storeId: number, email: string, exceptId: number | undefined): Promise<boolean>;
  /** Ids of the store's orders placed by the customer, oldest first. */
  customerOrderIds(storeId: number, customerId: number): Promise<number[]>;
  /**
   * Replaces what identifies a customer (email, names, phone) with placeholders, in the customer
   * record and in the email of its orders. Returns whether the customer exists.
   */
  redactCustomer(storeId: number, customerId: number, placeholderEmail: string, now: number): Promise<boolean>;
  /** The first `limit` customers of a store (seeding orders). */
  someCustomers(storeId: number, limit: number): Promise<{ id: number; email: string }[]>;
}

/** What a conditional write needs the row to hold still: one of these versions, this inventory quantity. */
export interface WriteGuard {
  versions?: readonly number[] | undefined;
  inventoryQuantity?: number | undefined;
}

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

/** What an owner's subscriptions delivered or will deliver, for the owner to reconcile against. */
export interface EventLogRepository {
  /**
   * Up to `limit` deliveries of the owner in the store, ascending by (created_at, id), read from
   * one index range of at most a bounded number of deliveries whatever the position, the window or
   * the topics: a page whose topics are rare there stops short (EventLogPage.stoppedAt).
   */
  page(q: EventLogQuery): Promise<EventLogPage>;
}

/**
 * Idempotency keys of Admin API writes. Every change is one statement guarded by the reservation's
 * token, so concurrent requests, and processes on other nodes, agree on who holds a key.
 */
export interface IdempotencyRepository {
  /** Inserts the reservation unless the key already has a row, whatever its state; true when inserted. */
  reserve(reservation: NewReservation): Promise<boolean>;
  find(id: IdempotencyKeyId): Promise<IdempotencyKeyRow | undefined>;
  /**
   * Replaces the key's row with a new reservation, only while it still carries `seenToken` and is
   * either abandoned (no response and `locked_until` at or before `now`) or created at or before
   * `expiredAt`. True when replaced.
   */
  replace(reservation: NewReservation, seenToken: string, expiredAt: number): Promise<boolean>;
  /** Stores the response of the reservation holding `token` while it runs; false when the key is no longer its own. */
  complete(id: IdempotencyKeyId, token: string, response: StoredResponse): Promise<boolean>;
  /** Deletes the reservation holding `token` while it runs (no response stored), freeing the key. */
  release(id: IdempotencyKeyId, token: string): Promise<void>;
  /** Deletes every key created before `cutoff`; returns how many. */
  prune(cutoff: number): Promise<number>;
}

/** The repositories bound to one transaction. */
export interface Repositories {
  accounts: AccountRepository;
  sessions: SessionRepository;
  throttles: ThrottleRepository;
  reveals: RevealRepository;
  apps: AppRepository;
  tokens: TokenRepository;
  resources: ResourceRepository;
  webhooks: WebhookRepository;
  idempotency: IdempotencyRepository;
  events: EventLogRepository;
  eventPayloads: EventPayloadRepository;
  idempotentAnswers: IdempotentAnswerRepository;
  apiHealth: ApiHealthRepository;
  endpointHealth: EndpointHealthRepository;
  bulkOperations: BulkOperationRepository;
  appWebhooks: AppWebhookRepository;
  webhookRecovery: WebhookRecoveryRepository;
}

export interface Storage extends Repositories {
  grants: GrantStore;
  deliveryQueue: DeliveryQueue;
  /** Many new records of a store at once, each call one transaction (seeding). */
  bulkRows: BulkRows;
  /**
   * Runs `work` in one transaction: everything it does through `tx` commits or rolls back
   * together, and the caller hears back only once the commit is on disk.
   */
  transaction<T>(work: (tx: Repositories) => Promise<T>): Promise<T>;
  /**
   * A value that changes whenever the data may have changed (any write, by any process), cheap to
   * read; undefined when the database cannot tell (then nothing may be cached against it).
   */
  changeStamp(): string | undefined;
  /** Calls `listener` after each commit in this process that queued webhook deliveries. */
  onDeliveriesQueued(listener: () => void): () => void;
  /** Throws when the database does not answer. */
  ping(): Promise<void>;
  /**
   * Applies pending migrations; returns their names. `partitions` (PostgreSQL, an empty database):
   * hash-partition every store table by store_id into that many partitions, recorded in the
   * database so later runs keep the layout without being told.
   */
  migrate(options?: { partitions?: number | undefined }): Promise<string[]>;
  close(): Promise<void>;
}
