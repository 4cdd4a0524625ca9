// Bulk exports (API version 2026-01 and later): start an export of every product, order or
// customer matching a list's filters, wait for it with progress, then read its rows from the
// JSON Lines file. The file is the shop at one instant (`snapshot_at`); continue with
// `client.events({ createdAtMin: op.snapshot_at })` to follow every change after it, with no gap
// and no overlap.
import { AbortedError, ApiError, NetworkError, ParameterError, RateLimitError } from '../errors.ts';
import { apiErrorFromResponse } from './api-error-mapping.ts';
import { parseJsonBody } from './http-transport.ts';
import type { Sleep } from './retry-policy.ts';

/** A bulk operation as the platform describes it. */
export interface BulkOperation {
  id: string;
  status: 'created' | 'running' | 'completed' | 'failed' | 'canceled';
  resource: 'products' | 'orders' | 'customers';
  filters: Record<string, string>;
  fields: string | null;
  /** Rows written so far. */
  rows: number;
  /** Bytes written so far. */
  bytes: number;
  error: string | null;
  /** ISO 8601: the instant the file shows the shop at. */
  snapshot_at: string | null;
  created_at: string;
  completed_at?: string | null;
  /** Once completed: the signed address of the file, valid until `url_expires_at`. */
  url: string | null;
  url_expires_at?: string | null;
}

/** What to export: a resource, its list's filters (as strings) and `fields`. */
export interface BulkExportInput {
  resource: 'products' | 'orders' | 'customers';
  filters?: Record<string, string>;
  fields?: string | readonly string[];
}

export interface BulkWaitOptions {
  /** Called after every poll with the operation as it stands. */
  onProgress?: (op: BulkOperation) => void;
  /** First wait between polls in ms (default 1000); grows by half each poll up to `maxIntervalMs`. */
  intervalMs?: number;
  /** Longest wait between polls in ms (default 30000). */
  maxIntervalMs?: number;
  signal?: AbortSignal;
}

export interface BulkRowsOptions {
  /** How often a broken download is resumed (with Range) before giving up (default 5). */
  maxResumes?: number;
  signal?: AbortSignal;
}

/** The few parts of the Admin API client the helper needs. */
export interface BulkClient {
  get<T>(resource: string, options?: { signal?: AbortSignal }): Promise<T>;
  post<T>(resource: string, body?: unknown, options?: { idempotencyKey?: string | false; signal?: AbortSignal }): Promise<T>;
}

const FINISHED = new Set(['completed', 'failed', 'canceled']);

/** `client.bulk`: start, wait and read bulk exports. */
export class BulkExports {
  constructor(
    private readonly client: BulkClient,
    private readonly http: { fetch: typeof fetch; sleep: Sleep },
  ) {}

  /**
   * Starts an export; answers at once with the operation (status `created`). At most two run per
   * app in a shop: a third is refused with `RateLimitError` (429) until one finishes.
   *
   * @example
   * ```ts
   * const op = await client.bulk.start({ resource: 'products', filters: { updated_at_min: '2026-01-01' }, fields: ['id', 'title'] });
   * ```
   */
  async start(input: BulkExportInput, options: { signal?: AbortSignal } = {}): Promise<BulkOperation> {
    if (!input || typeof input.resource !== 'string') throw new ParameterError('PARAMETER_MISSING', 'resource');
    const fields = input.fields === undefined ? undefined : typeof input.fields === 'string' ? input.fields : input.fields.join(',');
    const body = { resource: input.resource, ...(input.filters ? { filters: input.filters } : {}), ...(fields ? { fields } : {}) };
    // No Idempotency-Key: the platform does not keep them for this route, so only a 429 is retried.
    const res = await this.client.post<{ data: BulkOperation }>(
      'bulk_operations',
      { bulk_operation: body },
      { idempotencyKey: false, ...options },
    );
    return res.data;
  }

  /** The operation now (a completed one with a fresh download address). */
  async get(id: string, options: { signal?: AbortSignal } = {}): Promise<BulkOperation> {
    return (await this.client.get<{ data: BulkOperation }>(`bulk_operations/${encodeURIComponent(id)}`, options)).data;
  }

  /** Cancels a created or running operation (a finished one: `ApiError` 409). */
  async cancel(id: string, options: { signal?: AbortSignal } = {}): Promise<BulkOperation> {
    const path = `bulk_operations/${encodeURIComponent(id)}/cancel`;
    return (await this.client.post<{ data: BulkOperation }>(path, {}, { idempotencyKey: false, ...options })).data;
  }

  /**
   * Polls until the operation is completed, failed or canceled, waiting longer between polls as
   * it runs (and as long as a 429's Retry-After asks); returns it as it ended.
   *
   * @example
   * ```ts
   * const done = await client.bulk.wait(op.id, { onProgress: (o) => console.log(`${o.rows} rows`) });
   * ```
   */
  async wait(id: string, options: BulkWaitOptions = {}): Promise<BulkOperation> {
    let interval = options.intervalMs ?? 1000;
    const max = options.maxIntervalMs ?? 30_000;
    for (;;) {
      let op: BulkOperation | undefined;
      try {
        op = await this.get(id, options.signal ? { signal: options.signal } : {});
      } catch (err) {
        // The client retried already; past that, a 429 still only means "later".
        if (!(err instanceof RateLimitError)) throw err;
        await this.pause(Math.max(interval, (err.retryAfter ?? 0) * 1000), options.signal);
        continue;
      }
      options.onProgress?.(op);
      if (FINISHED.has(op.status)) return op;
      await this.pause(interval, options.signal);
      interval = Math.min(max, Math.ceil(interval * 1.5));
    }
  }

  /**
   * The rows of a completed operation, parsed, in file order. A download that breaks is resumed
   * where it stopped (a fresh address, `Range` and `If-Range`), so no row is read twice.
   *
   * @example
   * ```ts
   * for await (const product of client.bulk.rows<Product>(done.id)) await save(product);
   * ```
   */
  async *rows<T = Record<string, unknown>>(id: string, options: BulkRowsOptions = {}): AsyncGenerator<T> {
    const decoder = new TextDecoder();
    let offset = 0;
    let etag: string | undefined;
    let partial = '';
    let resumes = 0;
    for (;;) {
      const op = await this.get(id, options.signal ? { signal: options.signal } : {});
      if (op.status !== 'completed' || !op.url)
        throw new ParameterError('PARAMETER_INVALID', 'id', `bulk operation ${id} is ${op.status}, not completed: nothing to read`);
      if (offset >= op.bytes) break;
      const headers: Record<string, string> = offset > 0 ? { range: `bytes=${offset}-`, ...(etag ? { 'if-range': etag } : {}) } : {};
      let res: Response;
      try {
        res = await this.http.fetch(op.url, { headers, ...(options.signal ? { signal: options.signal } : {}) });
      } catch (cause) {
        if (options.signal?.aborted) throw new AbortedError({ cause });
        if (++resumes > (options.maxResumes ?? 5)) throw new NetworkError('the bulk export download kept failing', { cause });
        continue;
      }
      if (res.status !== 200 && res.status !== 206) {
        const body = parseJsonBody(await res.text());
        throw apiErrorFromResponse(res.status, res.headers, body, { method: 'GET', path: '/bulk_downloads', nowMs: Date.now() });
      }
      if (offset > 0 && res.status !== 206)
        throw new ApiError('HTTP_ERROR', 'the bulk export file changed while it was being read', { status: res.status });
      etag = res.headers.get('etag') ?? etag;
      const reader = res.body?.getReader();
      if (!reader) break;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          offset += value.byteLength;
          partial += decoder.decode(value, { stream: true });
          const lines = partial.split('\n');
          partial = lines.pop() ?? '';
          for (const line of lines) if (line !== '') yield JSON.parse(line) as T;
        }
      } catch (cause) {
        if (options.signal?.aborted) throw new AbortedError({ cause });
        if (++resumes > (options.maxResumes ?? 5)) throw new NetworkError('the bulk export download kept failing', { cause });
      }
    }
    partial += decoder.decode();
    if (partial.trim() !== '') yield JSON.parse(partial) as T;
  }

  private async pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
    try {
      await this.http.sleep(ms, signal);
    } catch (cause) {
      throw new AbortedError({ cause });
    }
  }
}
