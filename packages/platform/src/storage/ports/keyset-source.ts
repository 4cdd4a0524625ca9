// Reading a store's rows of one table page by page in id order, the way every list of the Admin API reads.
import type { ListFilters } from '../../domain/list-filters.ts';

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
