// `client.webhooks`: the app's webhook subscriptions in one shop, typed, with the options a
// subscription takes beyond its address and topic: `filter` (which changes it gets) and
// `includeFields` (which fields of each), sent as the platform names them (`include_fields`).
import { ParameterError } from '../errors.ts';
import type { ItemIterator, PaginateOptions } from './paginator.ts';
import { enableSubscription, type ReplayInput, type ReplayResult, replaySubscription } from './webhook-recovery.ts';

/** A webhook subscription as the platform returns it. */
export interface WebhookSubscription {
  id: string;
  address: string;
  topic: string;
  api_version: string;
  status: 'active' | 'disabled';
  /** The filter query (e.g. `status:active AND price:>=10`); null: every change of the topic. */
  filter: string | null;
  /** The top-level fields each delivery holds; null: the whole object. */
  include_fields: string[] | null;
  created_at: string;
  updated_at: string;
}

/** What a subscription sends beyond its topic: null removes a filter or field list on update. */
export interface WebhookSubscriptionShape {
  /**
   * Only changes whose object matches: `field:value`, ranges `field:>=10` (`>`, `<`, `<=`) on
   * numbers and times, `title:"blue shirt"`, `AND`, `OR` (AND binds tighter) and parentheses.
   * Fields and value types are checked by the platform (`ValidationError` naming `filter`).
   */
  filter?: string | null;
  /** Top-level fields of each delivery's body, as a list's `fields` takes them. */
  includeFields?: readonly string[] | null;
}

export interface WebhookSubscriptionInput extends WebhookSubscriptionShape {
  address: string;
  topic: string;
}

export type WebhookSubscriptionUpdate = Partial<Pick<WebhookSubscriptionInput, 'address' | 'topic'>> & WebhookSubscriptionShape;

/** The parts of the Admin API client these calls use. */
export interface WebhooksClient {
  get<T>(resource: string, options?: { signal?: AbortSignal }): Promise<T>;
  post<T>(resource: string, body?: unknown, options?: { idempotencyKey?: string | false; signal?: AbortSignal }): Promise<T>;
  put<T>(resource: string, body?: unknown, options?: { ifMatch?: string; signal?: AbortSignal }): Promise<T>;
  delete<T>(resource: string, options?: { ifMatch?: string; signal?: AbortSignal }): Promise<T>;
  paginate<T>(resource: string, options?: PaginateOptions): ItemIterator<T>;
}

/**
 * The request body of a subscribe or an update: the fields given, `includeFields` as
 * `include_fields`; fields left undefined are not sent (an update leaves them as they are).
 */
export function webhookSubscriptionBody(input: WebhookSubscriptionUpdate): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (input.address !== undefined) body.address = input.address;
  if (input.topic !== undefined) body.topic = input.topic;
  if (input.filter !== undefined) body.filter = input.filter;
  if (input.includeFields !== undefined) body.include_fields = input.includeFields === null ? null : [...input.includeFields];
  return body;
}

const path = (id: string) => `webhooks/${encodeURIComponent(id)}`;

export class WebhookSubscriptions {
  constructor(private readonly client: WebhooksClient) {}

  /**
   * Subscribes `address` to `topic`, optionally filtered and narrowed.
   *
   * @example
   * ```ts
   * const sub = await client.webhooks.create({
   *   address: 'https://app.example/hooks/stock',
   *   topic: 'products/update',
   *   filter: 'status:active AND inventory_quantity:<5',
   *   includeFields: ['id', 'title', 'inventory_quantity'],
   * });
   * ```
   */
  async create(input: WebhookSubscriptionInput, options: { idempotencyKey?: string | false; signal?: AbortSignal } = {}) {
    if (!input || typeof input.address !== 'string') throw new ParameterError('PARAMETER_MISSING', 'address', 'address is required');
    if (typeof input.topic !== 'string') throw new ParameterError('PARAMETER_MISSING', 'topic', 'topic is required');
    return (await this.client.post<{ data: WebhookSubscription }>('webhooks', webhookSubscriptionBody(input), options)).data;
  }

  /** Changes only what `changes` names; `filter: null` / `includeFields: null` remove them. */
  async update(id: string, changes: WebhookSubscriptionUpdate, options: { ifMatch?: string; signal?: AbortSignal } = {}) {
    const body = webhookSubscriptionBody(changes);
    if (Object.keys(body).length === 0) throw new ParameterError('PARAMETER_MISSING', 'changes', 'name at least one field to change');
    return (await this.client.put<{ data: WebhookSubscription }>(path(id), body, options)).data;
  }

  async get(id: string, options: { signal?: AbortSignal } = {}): Promise<WebhookSubscription> {
    return (await this.client.get<{ data: WebhookSubscription }>(path(id), options)).data;
  }

  /** Every subscription of the app in this shop, page after page. */
  list(options: PaginateOptions = {}): ItemIterator<WebhookSubscription> {
    return this.client.paginate<WebhookSubscription>('webhooks', options);
  }

  async delete(id: string, options: { ifMatch?: string; signal?: AbortSignal } = {}): Promise<void> {
    await this.client.delete(path(id), options);
  }

  /**
   * Makes a subscription the platform disabled active again in place: same id, history and
   * deliveries (2026-01 on). An active one is answered as it is.
   *
   * @example
   * ```ts
   * const sub = await client.webhooks.enable('42'); // sub.status === 'active'
   * ```
   */
  enable(id: string | number, options: { signal?: AbortSignal } = {}): Promise<WebhookSubscription> {
    return enableSubscription<WebhookSubscription>(this.client, id, options);
  }

  /**
   * Queues the subscription's deliveries since a time again, each with its original webhook id
   * (2026-01 on). The subscription must be active (enable it first).
   *
   * @example
   * ```ts
   * let r = await client.webhooks.replay('42', { since: outageStartedAt });
   * while (r.capped) r = await client.webhooks.replay('42', { since: r.next_since! });
   * ```
   */
  replay(id: string | number, input: ReplayInput, options: { signal?: AbortSignal } = {}): Promise<ReplayResult> {
    return replaySubscription(this.client, id, input, options);
  }
}
