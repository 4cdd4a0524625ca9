// Keyset reads over (store_id, id): every page is an index range scan, so a page deep in a large
// store costs what the first page costs, and a store's pages cost the same however many other
// stores share the table. A list's filters narrow that same scan: ids and since_id bound the id
// range of the index (an `in` list is one index probe per id), and the time ranges are checked on
// the rows the scan visits, so no filter turns a page into a sort of the whole table.
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
// The plans are checked in test/keyset-plans.test.ts (PostgreSQL) and
// test/keyset-plans-sqlite.test.ts, the routing in the storage contract.
import { sql, type Kysely } from 'kysely';
import type { KeysetQuery, KeysetSource } from '../ports.ts';

import type { Executor } from './executor.ts';

type KeysetTable = 'products' | 'orders' | 'customers' | 'webhook_subscriptions';

export class SqlKeysetSource<R> implements KeysetSource<R> {
  constructor(
    private readonly x: Executor,
    private readonly table: KeysetTable,
  ) {}

  private base(q: KeysetQuery) {
    // The tables differ in columns but share (store_id, id); the rows are the caller's type R.
    const k = this.x.k as unknown as Kysely<
      Record<KeysetTable, { id: number; store_id: number; created_at: number; updated_at: number } & Record<string, unknown>>
    >;
    let query = k.selectFrom(this.table).selectAll();
    query =
      this.x.dialect === 'postgres'
        ? query.where(sql<boolean>`store_id = any(${sql.val([q.storeId])}::bigint[])`)
        : query.where(sql<boolean>`likelihood(store_id = ${sql.val(q.storeId)}, 0.000001)`);
    for (const [column, value] of Object.entries(q.where ?? {})) query = query.where(column as 'id', '=', value as number);
    const f = q.filters;
    if (f?.ids) query = query.where('id', 'in', f.ids.length > 0 ? f.ids : [0]);
    if (f?.sinceId !== undefined) query = query.where('id', '>', f.sinceId);
    if (f?.createdAtMin !== undefined) query = query.where('created_at', '>=', f.createdAtMin);
    if (f?.createdAtMax !== undefined) query = query.where('created_at', '<=', f.createdAtMax);
    if (f?.updatedAtMin !== undefined) query = query.where('updated_at', '>=', f.updatedAtMin);
    if (f?.updatedAtMax !== undefined) query = query.where('updated_at', '<=', f.updatedAtMax);
    return query;
  }

  async after(q: KeysetQuery, after: number | undefined, limit: number): Promise<R[]> {
    let query = this.base(q);
    if (after !== undefined) query = query.where('id', '>', after);
    return (await query.orderBy('store_id', 'asc').orderBy('id', 'asc').limit(limit).execute()) as R[];
  }

  async before(q: KeysetQuery, before: number, limit: number): Promise<R[]> {
    return (await this.base(q).where('id', '<', before).orderBy('store_id', 'desc').orderBy('id', 'desc').limit(limit).execute()) as R[];
  }

  async window(q: KeysetQuery, side: 'after' | 'before', from: number, limit: number): Promise<{ rows: R[]; behind: boolean }> {
    // The page and a probe of one row on the other side, each the same bounded range scan as a
    // page, joined by UNION ALL: one round trip where a page and a separate probe took two.
    const forward = side === 'after';
    const dir = forward ? 'asc' : 'desc';
    const back = forward ? 'desc' : 'asc';
    const page = this.base(q)
      .where('id', forward ? '>' : '<', from)
      .orderBy('store_id', dir)
      .orderBy('id', dir)
      .limit(limit);
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

  async exists(q: KeysetQuery, op: '<' | '>', id: number): Promise<boolean> {
    // Ordered too, so that this probe is the same bounded range scan as a page.
    const dir = op === '>' ? 'asc' : 'desc';
    const query = this.base(q).clearSelect().select('id').where('id', op, id).orderBy('store_id', dir).orderBy('id', dir);
    return (await query.limit(1).executeTakeFirst()) !== undefined;
  }
}
