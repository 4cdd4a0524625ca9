// Keyset reads over (store_id, id): every page is an index range scan, so a page deep in a large
// store costs what the first page costs, and a store's pages cost the same however many other
// stores share the table. Pages are in id order whatever the filters.
//
// Filters, and what bounds the rows each page reads:
// - `ids` (at most MAX_IDS) is one index probe per id; `since_id` bounds the id range of the scan.
// - A time range (created_at, updated_at) cannot bound an id-ordered scan: a page of
//   `created_at_min=<far future>` read every row of the store to find that none matched. So a
//   time-filtered page first reads the range itself from (store_id, created_at, id) or
//   (store_id, updated_at, id), ids only, at most READ_BOUNDS.range entries. A range that holds no
//   more than that is read whole: the page, and whether rows lie either side of it, come out of
//   those ids exactly, and the page's rows are then fetched by id. A range that holds more is dense
//   in the store, and the page scans the (store_id, id) index instead, checking the range on each
//   row, but reads at most READ_BOUNDS.scan rows: when they hold too few matches the page ends
//   short at the last row read (KeysetWindow.stoppedAt), with a cursor that continues from there.
//   Whether rows lie behind such a page is known exactly when fewer than READ_BOUNDS.scan rows lie
//   behind it, and assumed otherwise (a previous link may then lead to an empty page).
// - An exact-match filter of the list's own (a product's `title`, a subscription's `topic` or
//   `address`) is an equality on the scan: products have (store_id, title, id), which reads that
//   title's rows in id order; a subscription list reads one owner's rows, bounded anyway. A time
//   range read whole checks it on the ids it found (after the READ_BOUNDS.range limit, so a rare
//   title cannot make that read longer), the bounded scan reads the title's index stretch.
// - A count (`count`) reads every matching entry of the best index for its filters: exact, and
//   as costly as the store's matching rows (documented on the count endpoints).
// - The time checks on rows are written `column + 0` so that no planner picks a time index for a
//   statement that must walk ids (a probe by ids, or the bounded scan).
//
// Why the store is not written `store_id = s`: PostgreSQL then treats store_id as a constant,
// drops it from the ORDER BY, and may walk the primary key (id alone) in id order, skipping other
// stores' rows. It does so when it believes a store's rows are spread evenly over the ids, which
// they are not (a store created after many others has all its ids at the end): its first page
// then reads every row of the stores before it. Written as `store_id = any(array[s])` on
// PostgreSQL, store_id stays part of the order (so only an index led by (store_id, id) delivers
// rows in that order, and every page is the same short range scan), and the condition still
// routes the query to one partition in the partitioned layout (a range would read them all).
// SQLite goes wrong both ways too. Given a range (`store_id >= s and store_id <= s`) it seeks the
// index on store_id alone and filters the id bound row by row, so a page in the middle of a big
// store cost tens of times its first page; given `store_id = s`, its statistics of a big store can
// make it walk the primary key from the id bound instead, as PostgreSQL did. Written
// `likelihood(store_id = s, …)`, the same condition with the hint that it picks few rows, it seeks
// the (store_id, id) index on both columns (the store, then the id bound) and reads it in order.
// The plans are checked in test/keyset-plans.test.ts (PostgreSQL), test/keyset-plans-sqlite.test.ts
// and, for every list filter, test/list-filter-plans.test.ts; the routing in the storage contract.
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { ListFilters } from '../../domain/list-filters.ts';
import type { KeysetQuery, KeysetScope, KeysetSource, KeysetWindow } from '../ports/keyset-source.ts';

import type { Executor } from './executor.ts';

type KeysetTable = 'products' | 'orders' | 'customers' | 'webhook_subscriptions';
type KeysetRow = { id: number; store_id: number; created_at: number; updated_at: number } & Record<string, unknown>;
type KeysetDb = Record<KeysetTable, KeysetRow>;
// biome-ignore lint/complexity/noBannedTypes: a select that has not chosen its columns yet
type Select<O = {}> = SelectQueryBuilder<KeysetDb, KeysetTable, O>;

/** How many rows a time-filtered page may read (see the top of this file). */
export interface ReadBounds {
  /** Entries of a time index read to find every row of a range; a larger range is dense. */
  range: number;
  /** Rows of the (store_id, id) index a dense range's page reads, and the probe behind it. */
  scan: number;
}

export const READ_BOUNDS: ReadBounds = { range: 1000, scan: 2000 };

/**
 * The tables that carry the time indexes (store_id, created_at, id) and (store_id, updated_at, id).
 * Webhook subscriptions do not: a list reads one owner's, at most MAX_SUBSCRIPTIONS_PER_OWNER rows,
 * through (store_id, owner, id).
 */
const TIME_INDEXED: ReadonlySet<KeysetTable> = new Set(['products', 'orders', 'customers']);

const TIME_RANGES = [
  { column: 'created_at', min: 'createdAtMin', max: 'createdAtMax' },
  { column: 'updated_at', min: 'updatedAtMin', max: 'updatedAtMax' },
] as const;
type TimeRange = (typeof TIME_RANGES)[number];

const hasRange = (f: ListFilters, t: TimeRange) => f[t.min] !== undefined || f[t.max] !== undefined;
const inRange = (f: ListFilters, t: TimeRange, v: number) => (f[t.min] ?? v) <= v && v <= (f[t.max] ?? v);

export class SqlKeysetSource<R> implements KeysetSource<R> {
  constructor(
    private readonly x: Pick<Executor, 'k' | 'dialect'>,
    private readonly table: KeysetTable,
    private readonly bounds: ReadBounds = READ_BOUNDS,
  ) {}

  /** The store's rows of the table (and the caller's equality filters), no columns chosen yet. */
  private scope(q: KeysetScope): Select {
    // The tables differ in columns but share (store_id, id) and the two times; the rows are the caller's type R.
    const k = this.x.k as unknown as Kysely<KeysetDb>;
    let query = k.selectFrom(this.table);
    query =
      this.x.dialect === 'postgres'
        ? query.where(sql<boolean>`store_id = any(${sql.val([q.storeId])}::bigint[])`)
        : query.where(sql<boolean>`likelihood(store_id = ${sql.val(q.storeId)}, 0.000001)`);
    for (const [column, value] of Object.entries(q.where ?? {})) query = query.where(column as 'id', '=', value as number);
    return query;
  }

  /** The scope narrowed by the list's exact-match filters (column equalities). */
  private matched<O>(query: Select<O>, f: ListFilters | undefined): Select<O> {
    let out = query;
    for (const [column, value] of Object.entries(f?.match ?? {})) out = out.where(column as 'id', '=', value as unknown as number);
    return out;
  }

  /** The scope narrowed by the id and match filters, which bound the index range (or probe it by id). */
  private ided<O>(query: Select<O>, f: ListFilters | undefined): Select<O> {
    let out = this.matched(query, f);
    if (f?.ids) out = out.where('id', 'in', f.ids.length > 0 ? f.ids : [0]);
    if (f?.sinceId !== undefined) out = out.where('id', '>', f.sinceId);
    return out;
  }

  /** The time ranges checked on each row read (never an index: see the top of this file). */
  private timed<O>(query: Select<O>, f: ListFilters | undefined): Select<O> {
    let out = query;
    for (const t of TIME_RANGES) {
      const min = f?.[t.min];
      const max = f?.[t.max];
      if (min !== undefined) out = out.where(sql<boolean>`${sql.ref(t.column)} + 0 >= ${min}`);
      if (max !== undefined) out = out.where(sql<boolean>`${sql.ref(t.column)} + 0 <= ${max}`);
    }
    return out;
  }

  private base(q: KeysetQuery) {
    return this.timed(this.ided(this.scope(q), q.filters), q.filters).selectAll();
  }

  async after(q: KeysetScope, after: number | undefined, limit: number): Promise<R[]> {
    let query = this.base(q);
    if (after !== undefined) query = query.where('id', '>', after);
    return (await query.orderBy('store_id', 'asc').orderBy('id', 'asc').limit(limit).execute()) as R[];
  }

  async before(q: KeysetScope, before: number, limit: number): Promise<R[]> {
    return (await this.base(q).where('id', '<', before).orderBy('store_id', 'desc').orderBy('id', 'desc').limit(limit).execute()) as R[];
  }

  async count(q: KeysetQuery): Promise<number> {
    // The time ranges as plain conditions here, so that a time index may answer the count.
    let query = this.ided(this.scope(q), q.filters);
    for (const t of TIME_RANGES) {
      const min = q.filters?.[t.min];
      const max = q.filters?.[t.max];
      if (min !== undefined) query = query.where(t.column, '>=', min);
      if (max !== undefined) query = query.where(t.column, '<=', max);
    }
    const row = await query.select(sql<number>`count(*)`.as('n')).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async window(q: KeysetQuery, side: 'after' | 'before', from: number | undefined, limit: number): Promise<KeysetWindow<R>> {
    const f = q.filters;
    // With `ids` the page is at most MAX_IDS probes whatever else is asked; `where` is an equality
    // the caller's own index answers (a subscription owner's, itself bounded).
    if (f && !f.ids && !q.where && TIME_INDEXED.has(this.table)) {
      for (const t of TIME_RANGES) {
        if (!hasRange(f, t)) continue;
        const ids = await this.rangeIds(q, f, t);
        if (ids) return this.windowOfIds(q, ids, side, from, limit);
      }
      if (TIME_RANGES.some((t) => hasRange(f, t))) return this.scanWindow(q, side, from, limit);
    }
    return this.plainWindow(q, side, from, limit);
  }

  /** A page whose filters bound the index range themselves: one statement, the page and the probe behind it. */
  private async plainWindow(q: KeysetQuery, side: 'after' | 'before', from: number | undefined, limit: number): Promise<KeysetWindow<R>> {
    const forward = side === 'after';
    const dir = forward ? 'asc' : 'desc';
    let page = this.base(q);
    if (from !== undefined) page = page.where('id', forward ? '>' : '<', from);
    page = page.orderBy('store_id', dir).orderBy('id', dir).limit(limit);
    if (from === undefined) return { rows: (await page.execute()) as R[], behind: false };
    // The page and a probe of one row on the other side, each the same bounded range scan as a
    // page, joined by UNION ALL: one round trip where a page and a separate probe took two.
    const back = forward ? 'desc' : 'asc';
    const probe = this.base(q)
      .where('id', forward ? '<=' : '>=', from)
      .orderBy('store_id', back)
      .orderBy('id', back)
      .limit(1);
    const k = this.x.k as unknown as Kysely<Record<'page' | 'probe', { id: number }>>;
    const all = (await k
      .selectFrom(probe.as('probe'))
      .selectAll()
      .unionAll(k.selectFrom(page.as('page')).selectAll())
      .execute()) as unknown as (R & { id: number })[];
    const rows = all.filter((r) => (forward ? r.id > from : r.id < from));
    rows.sort(forward ? (a, b) => a.id - b.id : (a, b) => b.id - a.id);
    return { rows, behind: rows.length !== all.length };
  }

  /**
   * Every id of the store whose time lies in the range of `t` and that matches the other filters,
   * ascending, read from the time index; undefined when the range holds more than
   * READ_BOUNDS.range rows (whatever the other filters: they are checked here, not in the scan, so
   * that they cannot make it read further).
   */
  private async rangeIds(q: KeysetQuery, f: ListFilters, t: TimeRange): Promise<number[] | undefined> {
    const other = TIME_RANGES.find((o) => o !== t && hasRange(f, o));
    const matchColumns = Object.keys(f.match ?? {}) as 'id'[];
    let query = this.scope(q).select([...(other ? ['id', other.column] : ['id']), ...matchColumns] as 'id'[]);
    const min = f[t.min];
    const max = f[t.max];
    if (min !== undefined) query = query.where(t.column, '>=', min);
    if (max !== undefined) query = query.where(t.column, '<=', max);
    const rows = (await query
      .orderBy('store_id')
      .orderBy(t.column)
      .orderBy('id')
      .limit(this.bounds.range + 1)
      .execute()) as Record<string, unknown>[];
    if (rows.length > this.bounds.range) return undefined;
    const ids: number[] = [];
    for (const r of rows) {
      const id = Number(r.id);
      if (f.sinceId !== undefined && id <= f.sinceId) continue;
      if (other && !inRange(f, other, Number(r[other.column]))) continue;
      if (f.match && Object.entries(f.match).some(([column, value]) => r[column] !== value)) continue;
      ids.push(id);
    }
    return ids.sort((a, b) => a - b);
  }

  /** The page out of every matching id, then its rows by id. */
  private async windowOfIds(
    q: KeysetQuery,
    ids: number[],
    side: 'after' | 'before',
    from: number | undefined,
    limit: number,
  ): Promise<KeysetWindow<R>> {
    const forward = side === 'after';
    const past = from === undefined ? ids : ids.filter((id) => (forward ? id > from : id < from));
    const wanted = (forward ? past : [...past].reverse()).slice(0, limit);
    const behind = from !== undefined && past.length < ids.length;
    if (wanted.length === 0) return { rows: [], behind };
    // Checked again on the rows: one that changed since the range was read is left out, as it
    // would be had it changed just before.
    const fetched = (await this.timed(this.matched(this.scope(q), q.filters), q.filters)
      .selectAll()
      .where('id', 'in', wanted)
      .execute()) as (R & { id: number })[];
    const byId = new Map(fetched.map((r) => [Number(r.id), r]));
    const rows = wanted.flatMap((id) => byId.get(id) ?? []);
    // A row gone in between shortens the page; it then ends at the last id it covered, so the next
    // page neither repeats nor skips a row.
    return rows.length < wanted.length ? { rows, behind, stoppedAt: wanted.at(-1)! } : { rows, behind };
  }

  /**
   * A page of a dense range: the (store_id, id) index read from `from` for at most READ_BOUNDS.scan
   * rows, the range checked on each. One statement measures that stretch (and the one behind
   * `from`) by ids alone, the next reads the page within it, a third is needed only when fewer
   * than READ_BOUNDS.scan rows lie behind and whether one of them matches is not yet known.
   */
  private async scanWindow(q: KeysetQuery, side: 'after' | 'before', from: number | undefined, limit: number): Promise<KeysetWindow<R>> {
    const forward = side === 'after';
    const ahead = this.stretch(q, forward ? 'asc' : 'desc', from === undefined ? undefined : forward ? '>' : '<', from, 'ahead');
    const stretches =
      from === undefined
        ? await ahead.execute()
        : await ahead.unionAll(this.stretch(q, forward ? 'desc' : 'asc', forward ? '<=' : '>=', from, 'behind')).execute();
    const front = stretches.find((s) => s.side === 'ahead');
    const back = stretches.find((s) => s.side === 'behind');

    let rows: R[] = [];
    let stoppedAt: number | undefined;
    const n = Number(front?.n ?? 0);
    if (n > 0) {
      const dir = forward ? 'asc' : 'desc';
      rows = (await this.base(q)
        .where('id', '>=', Number(front!.lo))
        .where('id', '<=', Number(front!.hi))
        .orderBy('store_id', dir)
        .orderBy('id', dir)
        .limit(limit)
        .execute()) as R[];
      if (rows.length < limit && n >= this.bounds.scan) stoppedAt = Number(forward ? front!.hi : front!.lo);
    }

    let behind = false;
    const b = Number(back?.n ?? 0);
    if (b >= this.bounds.scan) behind = true;
    else if (b > 0) {
      const probe = await this.base(q)
        .clearSelect()
        .select('id')
        .where('id', '>=', Number(back!.lo))
        .where('id', '<=', Number(back!.hi))
        .limit(1)
        .executeTakeFirst();
      behind = probe !== undefined;
    }
    return stoppedAt === undefined ? { rows, behind } : { rows, behind, stoppedAt };
  }

  /** How many ids (at most READ_BOUNDS.scan) lie past `from` in one direction, and the first and last of them. */
  private stretch(
    q: KeysetQuery,
    dir: 'asc' | 'desc',
    op: '>' | '<' | '<=' | '>=' | undefined,
    from: number | undefined,
    label: Stretch['side'],
  ) {
    let ids = this.ided(this.scope(q), q.filters).select('id');
    if (op !== undefined && from !== undefined) ids = ids.where('id', op, from);
    ids = ids.orderBy('store_id', dir).orderBy('id', dir).limit(this.bounds.scan);
    const k = this.x.k as unknown as Kysely<Record<'w', { id: number }>>;
    return k
      .selectFrom(ids.as('w'))
      .select([
        sql<Stretch['side']>`${sql.lit(label)}`.as('side'),
        sql<number>`count(*)`.as('n'),
        sql<number | null>`min(id)`.as('lo'),
        sql<number | null>`max(id)`.as('hi'),
      ]);
  }
}

interface Stretch {
  side: 'ahead' | 'behind';
  n: number;
  lo: number | null;
  hi: number | null;
}
