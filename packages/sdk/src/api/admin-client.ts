// The Admin API client of one shop: versioned paths (`/openapi/{version}/…`), the access token in
// its header, JSON in and out.
import { AbortedError, NetworkError, RateLimitError } from '../errors.ts';
import type { PaginationConvention } from '../config/app-config.ts';
import type { RandomBytes } from '../crypto/random.ts';
import type { SdkLogger } from '../logging/redacting-logger.ts';
import type { QueryValue } from '../signature/query-signature.ts';
import { apiErrorFromResponse } from './api-error-mapping.ts';
import type { CallLimitThrottle } from './call-limit.ts';
import { exchange, parseJsonBody, type HttpResult } from './http-transport.ts';
import { unwrapSuccess } from './success-envelope.ts';
import { type EventsOptions, eventsPagination, type WebhookEventEntry } from './events.ts';
import { BulkExports } from './bulk-exports.ts';
import type { ApiResponse } from './api-response.ts';
import { WebhookSubscriptions } from './webhook-subscriptions.ts';
import { apiUrl } from './api-url.ts';
import { ItemIterator, PageIterator, type PaginateOptions } from './paginator.ts';
import {
  backoffDelayMs,
  hasHeader,
  IDEMPOTENCY_KEY_HEADER,
  idempotencyKeyFor,
  isIdempotent,
  type ResolvedRetryOptions,
  type Sleep,
} from './retry-policy.ts';

/** Options of one API request. */
export interface RequestOptions {
  query?: Readonly<Record<string, QueryValue>>;
  /** Sent as JSON. */
  body?: unknown;
  headers?: Readonly<Record<string, string>>;
  signal?: AbortSignal;
  /** Per-request timeout in ms (default from the app config). */
  timeoutMs?: number;
  /** Retries for this request (default from the app config; 0 turns them off). */
  maxRetries?: number;
  /**
   * The `Idempotency-Key` of a write, sent unchanged on every retry of this call: pass your own
   * (e.g. derived from your order id) to make the write safe across restarts of your process too;
   * `false` sends none. By default a write gets a random UUID (see `retry.idempotencyKeys`).
   */
  idempotencyKey?: string | false;
  /** `If-Match`: the record's ETag as read (`etag`); the write then fails (PreconditionFailedError) if it changed since. */
  ifMatch?: string;
}

export type { ApiResponse };

/** HTTP methods the client sends. */
export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Everything a client needs; built by `createApp` or {@link createAdminClient}. */
export interface AdminClientContext {
  shop: string;
  origin: string;
  apiVersion: string;
  pagination: PaginationConvention;
  fetch: typeof fetch;
  now: () => number;
  sleep: Sleep;
  randomBytes: RandomBytes;
  log: SdkLogger;
  retry: ResolvedRetryOptions;
  throttle: CallLimitThrottle | undefined;
  timeoutMs: number;
  accessTokenHeader: string;
  /** `'bearer'`: the token goes in `Authorization: Bearer …` instead of `accessTokenHeader`. */
  apiAuthentication?: 'access-token' | 'bearer' | undefined;
  callLimitHeader: string;
  getAccessToken(signal?: AbortSignal): Promise<string>;
  /** Called once after a 401; returns the token to retry with. */
  refreshAfterUnauthorized?: (rejectedToken: string, signal?: AbortSignal) => Promise<string>;
}

const RETRYABLE_STATUS = new Set([502, 503, 504]);
// With an Idempotency-Key a 500 is safe to repeat too (the platform answers a repeat of a write that
// did happen with its stored response), and so is a 409 saying the key's first attempt is still running.
const RETRYABLE_WITH_KEY = new Set([500, 502, 503, 504]);

/** The Admin API of one shop: typed errors, retries, pacing and pagination. */
export class AdminClient {
  readonly #ctx: AdminClientContext;

  constructor(context: AdminClientContext) {
    this.#ctx = context;
  }

  /** The shop this client talks to. */
  get shop(): string {
    return this.#ctx.shop;
  }

  /** The pinned API version. */
  get apiVersion(): string {
    return this.#ctx.apiVersion;
  }

  /**
   * `{origin}/openapi/{version}/{resource}` (or `{origin}{path}` for a path starting with `/`).
   *
   * @example
   * ```ts
   * client.url('products', { limit: 5 }); // 'http://demo.localhost:8080/openapi/2026-01/products?limit=5'
   * ```
   */
  url(resource: string, query?: Readonly<Record<string, QueryValue>>): string {
    return apiUrl(this.#ctx.origin, this.#ctx.apiVersion, resource, query);
  }

  async #sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    try {
      await this.#ctx.sleep(ms, signal);
    } catch (cause) {
      throw new AbortedError({ cause });
    }
  }

  /**
   * Sends a request and returns status, headers and parsed body; throws the typed error of an
   * error status (`AuthError`, `ScopeError`, `NotFoundError`, `ValidationError`, `RateLimitError`,
   * `ServerError`, `ApiError`) or `NetworkError` / `TimeoutError` / `AbortedError`.
   *
   * Retries (exponential backoff with full jitter): 429 for every method, honouring `Retry-After`
   * in seconds or as an HTTP date; 502/503/504 and network failures for GET, HEAD, PUT and DELETE;
   * and for every write that carries an `Idempotency-Key` (by default each POST, PUT, PATCH and
   * DELETE gets a random one, the same on every retry): network failures, 500/502/503/504 and 409
   * `IdempotencyKeyInUse`. A 401 triggers one token refresh and one retry.
   *
   * @example
   * ```ts
   * const res = await client.request('POST', 'webhooks', { body: { address, topic: 'products/create' }, timeoutMs: 5000 });
   * console.log(res.status, res.requestId, res.data);
   * // Your own key: a retry after a crash of your process is answered with the first response.
   * const again = await client.request('POST', 'products', { body: { title: 'Hat' }, idempotencyKey: `import-${row.id}` });
   * if (again.replayed) console.log('created earlier, not created twice');
   * ```
   */
  async request<T = unknown>(method: HttpMethod, resource: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const ctx = this.#ctx;
    const url = this.url(resource, options.query);
    const path = url.slice(ctx.origin.length).split('?')[0] ?? '';
    const maxRetries = options.maxRetries ?? ctx.retry.maxRetries;
    const key = idempotencyKeyFor(method, options, ctx.retry.idempotencyKeys);
    const keyHeader: Record<string, string> =
      key !== undefined && !hasHeader(options.headers, IDEMPOTENCY_KEY_HEADER) ? { [IDEMPOTENCY_KEY_HEADER]: key } : {};
    // A failure without a clear answer may be retried when repeating cannot do the work twice.
    const idempotent = isIdempotent(method) || key !== undefined;
    const retryable = key !== undefined ? RETRYABLE_WITH_KEY : RETRYABLE_STATUS;
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    let token = await ctx.getAccessToken(options.signal);
    let refreshed = false;
    for (let attempt = 0; ; attempt++) {
      if (ctx.throttle) {
        const waited = ctx.throttle.delayMs(ctx.shop);
        if (waited > 0) {
          ctx.log.debug('call limit nearly reached; pacing', { shop: ctx.shop, delayMs: waited });
          await this.#sleep(waited, options.signal);
        }
      }
      let result: HttpResult;
      try {
        result = await exchange(ctx.fetch, {
          url,
          method,
          headers: {
            ...(ctx.apiAuthentication === 'bearer' ? { Authorization: `Bearer ${token}` } : { [ctx.accessTokenHeader]: token }),
            'Content-Type': 'application/json',
            Accept: 'application/json',
            ...keyHeader,
            ...(options.ifMatch !== undefined ? { 'If-Match': options.ifMatch } : {}),
            ...options.headers,
          },
          body,
          timeoutMs: options.timeoutMs ?? ctx.timeoutMs,
          signal: options.signal,
        });
      } catch (error) {
        if (error instanceof NetworkError && idempotent && attempt < maxRetries) {
          const delay = backoffDelayMs(attempt, ctx.retry, ctx.randomBytes);
          ctx.log.warn('request failed before an answer; retrying', {
            method,
            path,
            attempt: attempt + 1,
            delayMs: delay,
            error: error.message,
          });
          await this.#sleep(delay, options.signal);
          continue;
        }
        throw error;
      }
      ctx.throttle?.observe(ctx.shop, result.headers.get(ctx.callLimitHeader));
      const parsed = parseJsonBody(result.text);
      if (result.status < 400) {
        ctx.log.debug('api request', { method, path, status: result.status, attempt });
        return {
          status: result.status,
          headers: result.headers,
          data: unwrapSuccess(path, parsed) as T,
          requestId: result.headers.get('x-request-id') ?? undefined,
          etag: result.headers.get('etag') ?? undefined,
          idempotencyKey: key,
          replayed: result.headers.get('idempotent-replayed') === 'true',
        };
      }
      if (result.status === 401 && !refreshed && ctx.refreshAfterUnauthorized) {
        refreshed = true;
        ctx.log.info('401 from the API; refreshing the token once', { shop: ctx.shop, method, path });
        token = await ctx.refreshAfterUnauthorized(token, options.signal);
        attempt--;
        continue;
      }
      const error = apiErrorFromResponse(result.status, result.headers, parsed, { method, path, nowMs: ctx.now() });
      if (attempt < maxRetries) {
        let delay: number | undefined;
        if (error instanceof RateLimitError) {
          if (error.retryAfter === undefined) delay = backoffDelayMs(attempt, ctx.retry, ctx.randomBytes);
          else if (error.retryAfter <= ctx.retry.maxRetryAfterSeconds) delay = Math.ceil(error.retryAfter * 1000);
        } else if ((retryable.has(result.status) && idempotent) || (key !== undefined && error.platformCode === 'IdempotencyKeyInUse')) {
          delay = backoffDelayMs(attempt, ctx.retry, ctx.randomBytes);
        }
        if (delay !== undefined) {
          ctx.log.warn('retrying after an error answer', {
            method,
            path,
            status: result.status,
            attempt: attempt + 1,
            delayMs: delay,
            requestId: error.requestId,
          });
          await this.#sleep(delay, options.signal);
          continue;
        }
      }
      ctx.log.debug('api request failed', { method, path, status: result.status, requestId: error.requestId });
      throw error;
    }
  }

  /**
   * GET a resource; returns the parsed body.
   *
   * @example
   * ```ts
   * const { data } = await client.get<{ data: Product }>('products/123');
   * ```
   */
  async get<T = unknown>(resource: string, options?: RequestOptions): Promise<T> {
    return (await this.request<T>('GET', resource, options)).data;
  }

  /**
   * GET one record with its ETag: pass it as `ifMatch` to `put`, `patch` or `delete`.
   *
   * @example
   * ```ts
   * const { data, etag } = await client.getWithEtag<{ data: Product }>('products/123');
   * await client.put('products/123', { tags: `${data.data.tags},sale` }, { ifMatch: etag });
   * ```
   */
  async getWithEtag<T = unknown>(resource: string, options?: RequestOptions): Promise<{ data: T; etag: string | undefined }> {
    const res = await this.request<T>('GET', resource, options);
    return { data: res.data, etag: res.etag };
  }

  /**
   * POST a JSON body; returns the parsed body. Sent with an `Idempotency-Key`, so it is retried
   * after network errors and 5xx as well as 429 without creating twice; pass
   * `{ idempotencyKey: yourKey }` to choose the key, `{ idempotencyKey: false }` to send none (then
   * only a 429 is retried).
   *
   * @example
   * ```ts
   * const created = await client.post('products', { title: 'Hat', price: '12.00' });
   * await client.post('orders', order, { idempotencyKey: `checkout-${cartId}` });
   * ```
   */
  async post<T = unknown>(resource: string, body?: unknown, options?: RequestOptions): Promise<T> {
    return (await this.request<T>('POST', resource, { ...options, body })).data;
  }

  /**
   * PUT a JSON body; returns the parsed body.
   *
   * @example
   * ```ts
   * await client.put('products/123', { title: 'Cap' });
   * ```
   */
  async put<T = unknown>(resource: string, body?: unknown, options?: RequestOptions): Promise<T> {
    return (await this.request<T>('PUT', resource, { ...options, body })).data;
  }

  /**
   * PATCH a JSON body (only the fields sent change); returns the parsed body.
   *
   * @example
   * ```ts
   * await client.patch('products/123', { inventory_quantity: 4, expected_inventory_quantity: 5 }, { ifMatch: etag });
   * ```
   */
  async patch<T = unknown>(resource: string, body?: unknown, options?: RequestOptions): Promise<T> {
    return (await this.request<T>('PATCH', resource, { ...options, body })).data;
  }

  /**
   * DELETE a resource; returns the parsed body (often empty).
   *
   * @example
   * ```ts
   * await client.delete('products/123');
   * ```
   */
  async delete<T = unknown>(resource: string, options?: RequestOptions): Promise<T> {
    return (await this.request<T>('DELETE', resource, options)).data;
  }

  /**
   * Pages of a list endpoint, in either pagination convention (`has_more`, or `pre_cursor` before
   * API version 2025-01). Each page exposes its `cursor`
   * (to resume after it) and `requestCursor` (to fetch it again).
   *
   * @example
   * ```ts
   * for await (const page of client.pages<Product>('products', { limit: 100, cursor: savedCursor })) {
   *   await save(page.data);
   *   savedCursor = page.cursor;
   * }
   * ```
   */
  pages<T = unknown>(resource: string, options: PaginateOptions = {}): PageIterator<T> {
    return new PageIterator<T>(
      async (query, signal) => (await this.request('GET', resource, { query, signal })).data,
      options,
      this.#ctx.pagination,
    );
  }

  /**
   * Every item of a list endpoint, page after page.
   *
   * @example
   * ```ts
   * for await (const product of client.paginate<Product>('products', { limit: 250 })) console.log(product.title);
   * const first500 = await client.paginate<Product>('products').toArray({ max: 500 });
   * ```
   */
  paginate<T = unknown>(resource: string, options: PaginateOptions = {}): ItemIterator<T> {
    return new ItemIterator<T>(this.pages<T>(resource, options));
  }

  /**
   * Every webhook event the app's subscriptions delivered, or still try to deliver, in this shop
   * over the last 30 days, oldest first, whatever the delivery's state (API version 2026-01 and
   * later). Each entry carries the `webhook_id`, `event_id`, `topic` and body its delivery has, so
   * an app back from downtime handles whatever it has not seen: topics it may no longer read are
   * left out.
   *
   * @example
   * ```ts
   * // After downtime: handle every event not handled yet, de-duplicated by webhook id.
   * const since = new Date(lastSeenAt.getTime() - 5 * 60_000); // a margin for events committed late
   * for await (const event of client.events({ createdAtMin: since })) {
   *   if (await handled.has(event.webhook_id)) continue;
   *   await handleWebhook(event.topic, event.payload);
   *   await handled.add(event.webhook_id);
   * }
   * ```
   */
  events(options: EventsOptions = {}): ItemIterator<WebhookEventEntry> {
    return this.paginate<WebhookEventEntry>('events', eventsPagination(this.#ctx.apiVersion, options));
  }

  /** Bulk exports (2026-01 on): `start`, `wait` with progress, `rows` (resumed with Range), `get`, `cancel`. */
  get bulk(): BulkExports {
    return new BulkExports(this, this.#ctx);
  }

  /**
   * The app's webhook subscriptions in this shop: `create`, `update` (filter, includeFields), `get`, `list`, `delete`;
   * `enable` one the platform disabled and `replay` its deliveries since a time (2026-01 on).
   */
  get webhooks(): WebhookSubscriptions {
    return new WebhookSubscriptions(this);
  }
}
