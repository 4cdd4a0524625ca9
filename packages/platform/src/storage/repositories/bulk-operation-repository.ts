// Bulk exports in SQL. How one consistent snapshot and resuming after a crash hold together, on
// both databases: the rows an export selects are copied, in one transaction, into the resource's
// snapshot table (bulk_rows_products, …: its columns and the operation), and the file is then written
// from that copy in pieces, each piece committed with the position it reached. A worker that
// takes over a crashed export continues from that position in the same copy, so the file is the
// store at one instant however often the export is interrupted, and no row is written twice.
//
// The snapshot time T (`snapshot_at`) is the boundary with the events list (`created_at_min=T`
// reads events at or after T): every write of the resource committed before the copy must have an
// event time below T, and every write after it a time of T or later. A write stamps its event
// inside its transaction, after changing the row. The copy keeps such writes out while it runs:
// on SQLite its transaction holds the database's one write lock (BEGIN IMMEDIATE), on PostgreSQL
// it takes the resource's table in SHARE mode, which waits for the writing transactions under way
// and holds new ones back until it commits. The caller's `at()` is read after the copy and waits
// until the clock has passed the time it returns minus one millisecond, so a write that was
// waiting stamps T or later once it goes on. On PostgreSQL, writes of that resource in every
// store wait for the copy (seconds for a million rows): the price of an exact boundary.
import { type Kysely, sql } from 'kysely';
import type { ListFilters } from '../../domain/list-filters.ts';
import type { ResourceName } from '../../domain/resources.ts';
import type { BulkChunk, BulkOperationRepository, BulkOperationRow, BulkOwner, NewBulkOperation } from '../ports/bulk-operations.ts';
import type { Database } from '../schema.ts';
import type { Executor } from './executor.ts';
import { RECORD_COLUMNS } from './bulk-rows.ts';

/** Rows copied per statement of the snapshot; the event loop gets a turn between statements. */
const COPY_SLICE = 20_000;

/** The columns of each resource table, as its snapshot table repeats them. */
const COLUMNS: Record<ResourceName, readonly string[]> = {
  products: ['id', ...RECORD_COLUMNS.products],
  customers: ['id', ...RECORD_COLUMNS.customers],
  orders: ['id', ...RECORD_COLUMNS.orders],
};

const OPEN = ['created', 'running'];

/** The snapshot table of each resource. */
const SNAPSHOT_TABLES = { products: 'bulk_rows_products', customers: 'bulk_rows_customers', orders: 'bulk_rows_orders' } as const;

type ResourceTables = Record<ResourceName, { id: number; store_id: number; created_at: number; updated_at: number }>;

export class SqlBulkOperationRepository implements BulkOperationRepository {
  constructor(private readonly x: Pick<Executor, 'k' | 'dialect'>) {}

  private get k(): Kysely<Database> {
    return this.x.k;
  }

  private owned(storeId: number, owner: BulkOwner) {
    const q = this.k.selectFrom('bulk_operations').where('store_id', '=', storeId);
    return 'appId' in owner ? q.where('app_id', '=', owner.appId) : q.where('private_app_id', '=', owner.privateAppId);
  }

  async countOpen(storeId: number, owner: BulkOwner): Promise<number> {
    const r = await this.owned(storeId, owner)
      .where('status', 'in', OPEN)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async insert(input: NewBulkOperation): Promise<BulkOperationRow> {
    const row = await this.k
      .insertInto('bulk_operations')
      .values({
        store_id: input.storeId,
        app_id: 'appId' in input.owner ? input.owner.appId : null,
        private_app_id: 'privateAppId' in input.owner ? input.owner.privateAppId : null,
        resource: input.resource,
        filters: input.filters,
        fields: input.fields,
        status: 'created',
        created_at: input.now,
        updated_at: input.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toRow(row);
  }

  async get(storeId: number, owner: BulkOwner, id: number): Promise<BulkOperationRow | undefined> {
    const row = await this.owned(storeId, owner).selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRow(row);
  }

  async getById(storeId: number, id: number): Promise<BulkOperationRow | undefined> {
    const row = await this.k
      .selectFrom('bulk_operations')
      .selectAll()
      .where('store_id', '=', storeId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toRow(row);
  }

  async list(storeId: number, owner: BulkOwner, limit: number): Promise<BulkOperationRow[]> {
    const rows = await this.owned(storeId, owner).selectAll().orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toRow);
  }

  async end(
    id: number,
    status: 'canceled' | 'failed',
    error: string | null,
    now: number,
    holder?: string,
  ): Promise<BulkOperationRow | undefined> {
    let q = this.k
      .updateTable('bulk_operations')
      .set({ status, error, finished_at: now, updated_at: now, claimed_by: null, claimed_until: null })
      .where('id', '=', id)
      .where('status', 'in', OPEN);
    if (holder !== undefined) q = q.where('claimed_by', '=', holder);
    const row = await q.returningAll().executeTakeFirst();
    return row && toRow(row);
  }

  async ownerScopes(storeId: number, owner: BulkOwner): Promise<string | undefined> {
    const row =
      'appId' in owner
        ? await this.k
            .selectFrom('installations')
            .select('scopes')
            .where('store_id', '=', storeId)
            .where('app_id', '=', owner.appId)
            .where('uninstalled_at', 'is', null)
            .executeTakeFirst()
        : await this.k
            .selectFrom('private_apps')
            .select('scopes')
            .where('store_id', '=', storeId)
            .where('id', '=', owner.privateAppId)
            .where('revoked_at', 'is', null)
            .executeTakeFirst();
    return row?.scopes;
  }

  async claim(worker: string, now: number, leaseUntil: number): Promise<BulkOperationRow | undefined> {
    let next = this.k
      .selectFrom('bulk_operations')
      .select('id')
      .where('status', 'in', OPEN)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
      .orderBy('id')
      .limit(1);
    // Two workers never take the same one: PostgreSQL skips a row another claim has locked, and
    // the update checks again that the lease is free (SQLite runs one writer at a time anyway).
    // `id = (…)`, not `id in (…)`: PostgreSQL may run an IN subquery once per row it compares,
    // and with SKIP LOCKED each run picks another row, so one claim took several.
    if (this.x.dialect === 'postgres') next = next.forUpdate().skipLocked();
    const row = await this.k
      .updateTable('bulk_operations')
      .set((eb) => ({
        claimed_by: worker,
        claimed_until: leaseUntil,
        status: 'running',
        attempts: eb('attempts', '+', 1),
        updated_at: now,
      }))
      .where((eb) => eb('id', '=', next))
      .where('status', 'in', OPEN)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
      .returningAll()
      .executeTakeFirst();
    return row && toRow(row);
  }

  async renew(id: number, worker: string, leaseUntil: number): Promise<boolean> {
    const r = await this.k
      .updateTable('bulk_operations')
      .set({ claimed_until: leaseUntil })
      .where('id', '=', id)
      .where('claimed_by', '=', worker)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async snapshot(op: BulkOperationRow, filters: ListFilters, worker: string, at: () => Promise<number>): Promise<number | undefined> {
    const table = op.resource;
    const copy = SNAPSHOT_TABLES[table];
    if (this.x.dialect === 'postgres') await sql`lock table ${sql.table(table)} in share mode`.execute(this.k);
    await this.k.deleteFrom(copy).where('operation_id', '=', op.id).execute();
    const columns = COLUMNS[table];
    const k = this.k as unknown as Kysely<ResourceTables & Database>;
    let last = filters.sinceId ?? 0;
    for (;;) {
      let q = k
        .selectFrom(table)
        .select([sql<number>`${op.id}`.as('operation_id'), ...columns.map((c) => sql.ref(c).as(c))])
        .where('store_id', '=', op.store_id)
        .where('id', '>', last);
      if (filters.ids) q = q.where('id', 'in', filters.ids.length > 0 ? filters.ids : [0]);
      if (filters.createdAtMin !== undefined) q = q.where('created_at', '>=', filters.createdAtMin);
      if (filters.createdAtMax !== undefined) q = q.where('created_at', '<=', filters.createdAtMax);
      if (filters.updatedAtMin !== undefined) q = q.where('updated_at', '>=', filters.updatedAtMin);
      if (filters.updatedAtMax !== undefined) q = q.where('updated_at', '<=', filters.updatedAtMax);
      for (const [column, value] of Object.entries(filters.match ?? {})) q = q.where(sql.ref(column), '=', value);
      const slice = q.orderBy('store_id').orderBy('id').limit(COPY_SLICE);
      const res = await k
        .insertInto(copy)
        .columns(['operation_id', ...columns] as never[])
        .expression(slice)
        .executeTakeFirst();
      if (Number(res.numInsertedOrUpdatedRows ?? 0) < COPY_SLICE) break;
      const top = await this.k
        .selectFrom(copy)
        .select((eb) => eb.fn.max('id').as('id'))
        .where('operation_id', '=', op.id)
        .executeTakeFirstOrThrow();
      last = Number(top.id);
      await new Promise((resolve) => setImmediate(resolve));
    }
    // The copy was empty when PostgreSQL last looked at it: without fresh statistics it may read
    // each batch of the file by scanning and sorting the whole copy instead of its primary key.
    if (this.x.dialect === 'postgres') await sql`analyze ${sql.table(copy)}`.execute(this.k);
    const t = await at();
    const r = await this.k
      .updateTable('bulk_operations')
      .set({ snapshot_at: t, position: 0, chunks: 0, rows: 0, bytes: 0, updated_at: t })
      .where('id', '=', op.id)
      .where('claimed_by', '=', worker)
      .where('status', '=', 'running')
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) > 0) return t;
    // Canceled or taken over meanwhile: the copy is of no use to anyone.
    await this.k.deleteFrom(copy).where('operation_id', '=', op.id).execute();
    return undefined;
  }

  async snapshotRows(operationId: number, resource: ResourceName, after: number, limit: number): Promise<Record<string, unknown>[]> {
    return (await this.k
      .selectFrom(SNAPSHOT_TABLES[resource])
      .select(COLUMNS[resource] as never[])
      .where('operation_id', '=', operationId)
      .where('id', '>', after)
      .orderBy('operation_id')
      .orderBy('id')
      .limit(limit)
      .execute()) as Record<string, unknown>[];
  }

  async appendChunk(id: number, worker: string, chunk: BulkChunk, leaseUntil: number): Promise<boolean> {
    const r = await this.k
      .updateTable('bulk_operations')
      .set({ position: chunk.position, rows: chunk.rows, bytes: chunk.bytes, chunks: chunk.seq + 1, claimed_until: leaseUntil })
      .where('id', '=', id)
      .where('claimed_by', '=', worker)
      .where('status', '=', 'running')
      .where('chunks', '=', chunk.seq)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return false;
    await this.k
      .insertInto('bulk_operation_chunks')
      .values({ operation_id: id, seq: chunk.seq, start: chunk.start, data: chunk.data })
      .execute();
    return true;
  }

  async complete(id: number, worker: string, now: number): Promise<boolean> {
    const r = await this.k
      .updateTable('bulk_operations')
      .set({ status: 'completed', finished_at: now, updated_at: now, claimed_by: null, claimed_until: null })
      .where('id', '=', id)
      .where('claimed_by', '=', worker)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async dropSnapshot(operationId: number, resource: ResourceName): Promise<void> {
    await this.k.deleteFrom(SNAPSHOT_TABLES[resource]).where('operation_id', '=', operationId).execute();
  }

  async dropFinishedSnapshots(): Promise<number> {
    let n = 0;
    for (const copy of Object.values(SNAPSHOT_TABLES)) {
      const finished = this.k.selectFrom('bulk_operations').select('id').where('status', 'not in', OPEN);
      const r = await this.k.deleteFrom(copy).where('operation_id', 'in', finished).executeTakeFirst();
      n += Number(r.numDeletedRows);
    }
    return n;
  }

  async *chunks(operationId: number, from: number): AsyncIterable<{ start: number; data: Buffer }> {
    const first = await this.k
      .selectFrom('bulk_operation_chunks')
      .select('seq')
      .where('operation_id', '=', operationId)
      .where('start', '<=', from)
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!first) return;
    for (let seq = Number(first.seq); ; seq++) {
      const c = await this.k
        .selectFrom('bulk_operation_chunks')
        .select(['start', 'data'])
        .where('operation_id', '=', operationId)
        .where('seq', '=', seq)
        .executeTakeFirst();
      if (!c) return;
      yield { start: Number(c.start), data: Buffer.from(c.data) };
    }
  }

  async prune(cutoff: number): Promise<number> {
    const old = await this.k
      .selectFrom('bulk_operations')
      .select('id')
      .where('finished_at', '<', cutoff)
      .orderBy('id')
      .limit(100)
      .execute();
    const ids = old.map((r) => Number(r.id));
    if (ids.length === 0) return 0;
    await this.k.deleteFrom('bulk_operation_chunks').where('operation_id', 'in', ids).execute();
    for (const copy of Object.values(SNAPSHOT_TABLES)) await this.k.deleteFrom(copy).where('operation_id', 'in', ids).execute();
    await this.k.deleteFrom('bulk_operations').where('id', 'in', ids).execute();
    return ids.length;
  }
}

function toRow(r: Record<string, unknown>): BulkOperationRow {
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    ...(r as unknown as BulkOperationRow),
    id: Number(r.id),
    store_id: Number(r.store_id),
    app_id: num(r.app_id),
    private_app_id: num(r.private_app_id),
    rows: Number(r.rows),
    bytes: Number(r.bytes),
    position: Number(r.position),
    chunks: Number(r.chunks),
    snapshot_at: num(r.snapshot_at),
    claimed_until: num(r.claimed_until),
    attempts: Number(r.attempts),
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
    finished_at: num(r.finished_at),
  };
}
