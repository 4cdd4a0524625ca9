// Cursor pagination of list endpoints, in both conventions the platform's API versions use:
// - newer (`2025-06`, `2026-01`): `{data, cursor, has_more}`;
// - older (`2022-01`): `{data, cursor, pre_cursor}`, `cursor` "" on the last page, `pre_cursor`
//   null on the first; going backwards sends `pre_cursor`.
import type { PaginationConvention } from '../config/app-config.ts';
import { ParameterError } from '../errors.ts';
import type { QueryValue } from '../signature/query-signature.ts';

/** One page of a list endpoint. */
export interface Page<T> {
  data: T[];
  /** Cursor of the next page (forward), `null` when there is none (the platform sends ""). */
  cursor: string | null;
  /** Cursor of the previous page (older convention), `null` on the first page or when absent. */
  preCursor: string | null;
  /** Whether another page follows in the direction of travel. */
  hasMore: boolean;
  /** The cursor this page was fetched with (`null` for the first page): resume here to fetch it again. */
  requestCursor: string | null;
  direction: 'forward' | 'backward';
}

/** Options of `pages()` and `paginate()`. */
export interface PaginateOptions {
  /** Page size (`limit`, 1–250 on the platform). */
  limit?: number;
  /** Start from this cursor (resume a job): a page's `cursor`, or with `direction: 'backward'` a `preCursor`. */
  cursor?: string | null;
  /** `forward` (default) or `backward` (older convention only; start from a `preCursor`). */
  direction?: 'forward' | 'backward';
  /** Other query parameters sent on every page. */
  query?: Readonly<Record<string, QueryValue>>;
  /** Override the convention picked from the API version. */
  pagination?: PaginationConvention;
  /** Stop after this many pages. */
  maxPages?: number;
  signal?: AbortSignal;
}

/** Fetches one page body; supplied by the client. */
export type PageFetcher = (query: Record<string, QueryValue>, signal: AbortSignal | undefined) => Promise<unknown>;

function cursorOf(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * Reads a list envelope (either convention) into a {@link Page}.
 *
 * @example
 * ```ts
 * readPage({ data: [], cursor: '', pre_cursor: 'c3' }, 'c6', 'forward'); // { hasMore: false, cursor: null, preCursor: 'c3', … }
 * ```
 */
export function readPage<T>(body: unknown, requestCursor: string | null, direction: 'forward' | 'backward'): Page<T> {
  const b = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const data = Array.isArray(b['data']) ? (b['data'] as T[]) : [];
  const cursor = cursorOf(b['cursor']);
  const preCursor = cursorOf(b['pre_cursor']);
  let hasMore: boolean;
  if (direction === 'backward') hasMore = preCursor !== null;
  else if (typeof b['has_more'] === 'boolean') hasMore = b['has_more'] && cursor !== null;
  else hasMore = cursor !== null;
  return { data, cursor, preCursor, hasMore, requestCursor, direction };
}

/** Async iteration over pages, plus `toArray`. */
export class PageIterator<T> implements AsyncIterable<Page<T>> {
  readonly #fetch: PageFetcher;
  readonly #options: PaginateOptions;
  readonly #convention: PaginationConvention;
  /** The page most recently yielded. */
  current: Page<T> | undefined;

  constructor(fetcher: PageFetcher, options: PaginateOptions, convention: PaginationConvention) {
    this.#fetch = fetcher;
    this.#options = options;
    this.#convention = options.pagination ?? convention;
    if ((options.direction ?? 'forward') === 'backward') {
      if (this.#convention !== 'pre_cursor') {
        throw new ParameterError(
          'PARAMETER_INVALID',
          'direction',
          'backward pagination needs the pre_cursor convention (API version 2022-01)',
        );
      }
      if (!options.cursor)
        throw new ParameterError('PARAMETER_MISSING', 'cursor', 'backward pagination starts from a pre_cursor: pass it as `cursor`');
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Page<T>> {
    const direction = this.#options.direction ?? 'forward';
    let cursor = this.#options.cursor ?? null;
    let pages = 0;
    for (;;) {
      const query: Record<string, QueryValue> = { ...this.#options.query };
      if (this.#options.limit !== undefined) query['limit'] = this.#options.limit;
      if (cursor !== null) query[direction === 'backward' ? 'pre_cursor' : 'cursor'] = cursor;
      const page = readPage<T>(await this.#fetch(query, this.#options.signal), cursor, direction);
      this.current = page;
      pages++;
      yield page;
      if (!page.hasMore) return;
      const next = direction === 'backward' ? page.preCursor : page.cursor;
      if (next === null || next === cursor) return;
      if (this.#options.maxPages !== undefined && pages >= this.#options.maxPages) return;
      cursor = next;
    }
  }

  /**
   * Every page (at most `max` pages).
   *
   * @example
   * ```ts
   * const firstTwo = await client.pages('products', { limit: 50 }).toArray({ max: 2 });
   * ```
   */
  async toArray(options: { max?: number } = {}): Promise<Page<T>[]> {
    const out: Page<T>[] = [];
    for await (const page of this) {
      out.push(page);
      if (options.max !== undefined && out.length >= options.max) break;
    }
    return out;
  }
}

/** Async iteration over items across pages, plus `toArray`; `page` is the page being read. */
export class ItemIterator<T> implements AsyncIterable<T> {
  readonly #pages: PageIterator<T>;

  constructor(pages: PageIterator<T>) {
    this.#pages = pages;
  }

  /** The page the last item came from: `page.requestCursor` resumes at it, `page.cursor` after it. */
  get page(): Page<T> | undefined {
    return this.#pages.current;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for await (const page of this.#pages) yield* page.data;
  }

  /**
   * Every item, stopping (without fetching more pages) once `max` are collected.
   *
   * @example
   * ```ts
   * const products = await client.paginate('products').toArray({ max: 500 });
   * ```
   */
  async toArray(options: { max?: number } = {}): Promise<T[]> {
    const out: T[] = [];
    if (options.max !== undefined && options.max <= 0) return out;
    for await (const item of this) {
      out.push(item);
      if (options.max !== undefined && out.length >= options.max) break;
    }
    return out;
  }
}
