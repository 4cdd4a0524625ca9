// Every filter of a list page reads a bounded number of rows, however large the store and however
// few rows match. A big store (30,000 products, orders and customers, next to a small store) is
// filled by direct inserts; each filter of the Admin API lists (ids, since_id, created_at_min/max,
// updated_at_min/max, and combinations) is paged forwards and backwards in both pagination
// conventions through the real pagination code, every statement a page runs is recorded, and each
// is explained: on SQLite its plan must seek an index on the time range, probe ids, or read a
// closed id range (never the store's whole id range with the time checked row by row); on
// PostgreSQL EXPLAIN ANALYZE must show it read at most a bounded number of rows. A time range that
// matched nothing once read every row of the store to say so (`created_at_min=2999-01-01`).
//
// The pages are checked against a plain filter of the store's rows too, with small read bounds on
// a store of random times, so that every way a page is built (the range read whole, the bounded
// scan, pages that stop short) is walked to the end and back.
import { type CompiledQuery, Kysely, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CursorCodec } from '../src/domain/cursor.ts';
import { filterDigest, type ListFilters } from '../src/domain/list-filters.ts';
import { linkedKeysetPage, type PageRequest } from '../src/services/pagination.ts';
import { type Db, openDatabase } from '../src/storage/database.ts';
import type { KeysetSource } from '../src/storage/ports/keyset-source.ts';
import type { ResourceRow } from '../src/storage/ports/rows.ts';
import type { Storage } from '../src/storage/ports/storage.ts';
import { EVENT_SCAN, SqlEventLogRepository } from '../src/storage/repositories/event-log-repository.ts';
import { READ_BOUNDS, type ReadBounds, SqlKeysetSource } from '../src/storage/repositories/keyset.ts';
import type { Database } from '../src/storage/schema.ts';
import { storageOn } from '../src/storage/sql-storage.ts';
import {
  api,
  createFixture,
  createTestPlatform,
  type Dialect,
  DIALECTS_WITH_PARTITIONED,
  type Fixture,
  freshPostgresUrl,
  privateToken,
  TEST_PARTITIONS,
  type TestPlatform,
} from './harness.ts';
import { recordingDb, unroutedQueries } from './partition-routing.ts';

const BIG = 2;
const SMALL = 1;
const BIG_ROWS = 30_000;
const SMALL_ROWS = 200;
const TABLES = ['products', 'orders', 'customers'] as const;
type Table = (typeof TABLES)[number];
const SECOND = 1000;
// created_at rises with the id (row i was created at i seconds); updated_at is scattered over the
// same span (row i last updated at (i * 7919 mod n) + 1 seconds), so a range of it is spread over the
// whole id range.
const created = (i: number) => i * SECOND;
const updated = (i: number, n: number) => (((i * 7919) % n) + 1) * SECOND;
const FAR_FUTURE = Date.parse('2999-01-01T00:00:00Z');
const FAR_PAST = Date.parse('1970-01-01T00:00:00Z');

const codec = new CursorCodec(Buffer.alloc(32, 9));

interface Env {
  storage: Storage;
  queries: CompiledQuery[];
  /** The kysely handle the storage runs on (its statements are recorded). */
  kysely: Kysely<Database>;
  dialect: 'sqlite' | 'postgres';
  /**
   * A recorded statement's plan: SQLite's plan lines; or PostgreSQL's scan nodes, the index
   * conditions of its index scans, and the rows it read (what its scans returned and what they
   * removed by filter, over every loop; rows an index condition on a later column of the index
   * skips are not counted, so those are checked by their conditions).
   */
  explain(q: CompiledQuery): Promise<{ plan: string[]; rowsRead: number; indexConds: string[] }>;
  close(): Promise<void>;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

const nodes = (p: PlanNode): PlanNode[] => [p, ...(p.Plans ?? []).flatMap(nodes)];
const SCANS = new Set(['Seq Scan', 'Index Scan', 'Index Only Scan', 'Bitmap Heap Scan']);

async function openEnv(dialect: Dialect): Promise<Env> {
  if (dialect === 'sqlite') {
    const real: Db = openDatabase({ dialect: 'sqlite', path: ':memory:' });
    const queries: CompiledQuery[] = [];
    const kysely = new Kysely<Database>({
      dialect: new SqliteDialect({ database: real.sqlite! }),
      log: (event) => {
        if (event.level === 'query') queries.push(event.query);
      },
    });
    const storage = storageOn({ ...real, kysely });
    await storage.migrate();
    return {
      storage,
      queries,
      kysely,
      dialect: 'sqlite',
      async explain(q) {
        const rows = real.sqlite!.prepare(`explain query plan ${q.sql}`).all(...q.parameters) as { detail: string }[];
        return { plan: rows.map((r) => r.detail), rowsRead: Number.NaN, indexConds: [] };
      },
      close: () => real.close(),
    };
  }
  const schema = await freshPostgresUrl();
  const { db, queries } = recordingDb(schema.url, 4);
  const storage = storageOn(db);
  await storage.migrate(dialect === 'postgres-partitioned' ? { partitions: TEST_PARTITIONS } : {});
  const client = new pg.Client({ connectionString: schema.url });
  await client.connect();
  return {
    storage,
    queries,
    kysely: db.kysely,
    dialect: 'postgres',
    async explain(q) {
      const res = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`explain (analyze, format json) ${q.sql}`, [...q.parameters]);
      const all = nodes(res.rows[0]!['QUERY PLAN'][0]!.Plan);
      let rowsRead = 0;
      for (const n of all.filter((n) => SCANS.has(n['Node Type'])))
        rowsRead +=
          ((n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Index Recheck'] ?? 0)) *
          (n['Actual Loops'] ?? 1);
      const indexConds = all.flatMap((n) => (n['Index Cond'] ? [`${n['Index Name']}: ${n['Index Cond']}`] : []));
      return {
        plan: all.map((n) => `${n['Node Type']} ${n['Relation Name'] ?? ''} ${n['Index Name'] ?? ''}`.trim()),
        rowsRead,
        indexConds,
      };
    },
    async close() {
      await client.end();
      await storage.close();
      await schema.drop();
    },
  };
}

/** Rows 1..n of `table` in `store`, with the times given (ids rise with i). */
async function fill(
  env: Pick<Env, 'kysely'>,
  table: Table,
  store: number,
  n: number,
  times: (i: number) => [number, number],
): Promise<void> {
  const rows = Array.from({ length: n }, (_, k) => {
    const [c, u] = times(k + 1);
    return `(${store}, ${c}, ${u})`;
  });
  for (let at = 0; at < rows.length; at += 2000) {
    const values = sql.raw(rows.slice(at, at + 2000).join(','));
    if (table === 'products')
      await sql`with v(s, c, u) as (values ${values})
        insert into products (store_id, title, body_html, vendor, product_type, status, price, sku, inventory_quantity, tags, created_at, updated_at)
        select s, 'p', 'body', 'v', 't', 'active', '1.00', 'sku', 1, '', c, u from v`.execute(env.kysely);
    else if (table === 'orders')
      await sql`with v(s, c, u) as (values ${values})
        insert into orders (store_id, customer_id, email, currency, financial_status, fulfillment_status, total_price, line_items, created_at, updated_at)
        select s, null, 'o@example.test', 'EUR', 'paid', null, '1.00', '[]', c, u from v`.execute(env.kysely);
    else
      await sql`with v(s, c, u) as (values ${values})
        insert into customers (store_id, email, first_name, last_name, phone, created_at, updated_at)
        select s, 'c' || s || '-' || c || '@example.test', 'A', 'B', null, c, u from v`.execute(env.kysely);
  }
}

async function setUp(env: Env): Promise<void> {
  await sql`insert into merchants (id, email, password_hash, created_at) values (1, 'm@example.test', 'x', 0)`.execute(env.kysely);
  await sql`insert into stores (id, name, owner_merchant_id, created_at) values (1, 'small', 1, 0), (2, 'big', 1, 0)`.execute(env.kysely);
  for (const table of TABLES) {
    await fill(env, table, SMALL, SMALL_ROWS, (i) => [created(i), updated(i, SMALL_ROWS)]);
    await fill(env, table, BIG, BIG_ROWS, (i) => [created(i), updated(i, BIG_ROWS)]);
  }
  // A title few products of the big store have (every other one is 'p'), spread over its ids.
  await sql`update products set title = 'rare' where store_id = ${BIG} and id in (${sql.join(RARE_IDS)})`.execute(env.kysely);
}

/** The ids of the big store's products titled 'rare' (its ids start at SMALL_ROWS + 1). */
const RARE_IDS = [150, 700, 15_000, 29_950].map((i) => SMALL_ROWS + i);

/** The store's ids matching `f`, ascending: the plain filter pages must agree with. */
async function expected(env: Env, table: Table, store: number, f: ListFilters): Promise<number[]> {
  const title = table === 'products' ? sql`title` : sql`'' as title`;
  const rows = await sql<{ id: number; created_at: number; updated_at: number; title: string }>`
    select id, created_at, updated_at, ${title} from ${sql.table(table)} where store_id = ${store} order by id`.execute(env.kysely);
  return rows.rows
    .map((r) => ({ id: Number(r.id), c: Number(r.created_at), u: Number(r.updated_at), title: r.title }))
    .filter(
      (r) =>
        (f.match?.title === undefined || f.match.title === r.title) &&
        (f.ids === undefined || f.ids.includes(r.id)) &&
        (f.sinceId === undefined || r.id > f.sinceId) &&
        (f.createdAtMin === undefined || r.c >= f.createdAtMin) &&
        (f.createdAtMax === undefined || r.c <= f.createdAtMax) &&
        (f.updatedAtMin === undefined || r.u >= f.updatedAtMin) &&
        (f.updatedAtMax === undefined || r.u <= f.updatedAtMax),
    )
    .map((r) => r.id);
}

type Page = Awaited<ReturnType<typeof linkedKeysetPage<{ id: number }, number>>>;

function pager(source: KeysetSource<ResourceRow>, table: Table, store: number, f: ListFilters, limit: number) {
  const scope = { storeId: store, resource: table };
  return (convention: PageRequest['convention'], cursor?: string, preCursor?: string): Promise<Page> =>
    linkedKeysetPage(source, codec, scope, { limit, cursor, preCursor, convention, filters: f }, (r) => Number(r.id));
}

/**
 * Walks every page forwards from the first, then backwards from the last by its previous links, in
 * one convention; returns the ids of each walk and the pages read.
 */
async function walk(page: ReturnType<typeof pager>, convention: PageRequest['convention'], limit: number) {
  const forward: number[] = [];
  let p = await page(convention);
  const pages = [p];
  for (;;) {
    const data = p.envelope.data as number[];
    expect(data.length).toBeLessThanOrEqual(limit);
    forward.push(...data);
    if (p.next === '') break;
    p = await page(convention, p.next);
    pages.push(p);
    expect(pages.length).toBeLessThan(10_000);
  }
  const backward: number[] = [...(p.envelope.data as number[])].reverse();
  while (p.previous !== null) {
    p = convention === 'older' ? await page(convention, undefined, p.previous) : await page(convention, p.previous);
    pages.push(p);
    backward.push(...[...(p.envelope.data as number[])].reverse());
    expect(pages.length).toBeLessThan(20_000);
  }
  return { forward, backward: backward.reverse(), pages };
}

const mid = created(BIG_ROWS / 2);
/** Every filter of the lists, and combinations of them. */
const FILTERS: [string, ListFilters][] = [
  ['no filter', {}],
  ['since_id', { sinceId: 100 }],
  ['ids', { ids: [5, 700, 12_000, 29_999] }],
  ['created_at_min in the far future', { createdAtMin: FAR_FUTURE }],
  ['created_at_max in the far past', { createdAtMax: FAR_PAST }],
  ['updated_at_min in the far future', { updatedAtMin: FAR_FUTURE }],
  ['updated_at_max in the far past', { updatedAtMax: FAR_PAST }],
  ['a narrow created_at range', { createdAtMin: mid, createdAtMax: mid + 300 * SECOND }],
  ['a narrow updated_at range', { updatedAtMin: mid, updatedAtMax: mid + 300 * SECOND }],
  ['created_at_min matching the newest tenth', { createdAtMin: created(BIG_ROWS - BIG_ROWS / 10) }],
  ['created_at_max matching the oldest tenth', { createdAtMax: created(BIG_ROWS / 10) }],
  ['updated_at_min matching a scattered half', { updatedAtMin: mid }],
  ['both ranges', { createdAtMin: created(BIG_ROWS / 4), updatedAtMax: mid, createdAtMax: created(BIG_ROWS - 10) }],
  ['since_id and a wide created_at range', { sinceId: 25_000, createdAtMin: FAR_PAST }],
  ['ids and a time range', { ids: [5, 700, 12_000, 29_999], createdAtMin: created(600) }],
  ['a title every product has', { match: { title: 'p' } }],
  ['a rare title', { match: { title: 'rare' } }],
  ['a title no product has', { match: { title: 'nope' } }],
  ['a rare title and a wide created_at range', { match: { title: 'rare' }, createdAtMin: created(10) }],
  ['a rare title and a narrow created_at range', { match: { title: 'rare' }, createdAtMin: mid, createdAtMax: mid + 300 * SECOND }],
  ['a common title and a range dense at the end', { match: { title: 'p' }, createdAtMin: created(BIG_ROWS - BIG_ROWS / 10) }],
  ['a rare title and since_id', { match: { title: 'rare' }, sinceId: 1000 }],
];

describe.each(DIALECTS_WITH_PARTITIONED)('list filters read a bounded number of rows (%s)', (dialect) => {
  let env: Env;

  beforeAll(async () => {
    env = await openEnv(dialect);
    await setUp(env);
    if (env.dialect === 'postgres') for (const t of TABLES) await sql`analyze ${sql.table(t)}`.execute(env.kysely);
  }, 120_000);

  afterAll(async () => {
    await env?.close();
  });

  const LIMIT = 50;
  // The most rows one statement may read: the stretch of the id index a page may scan, on both
  // sides of its position, and the page itself. A whole-store read is BIG_ROWS.
  const MAX_ROWS_READ = 2 * READ_BOUNDS.scan + LIMIT + 1;

  /** Runs one page, then explains every statement it ran and checks that each is bounded. */
  async function checkedPage(run: () => Promise<Page>): Promise<Page> {
    env.queries.length = 0;
    const page = await run();
    const ran = [...env.queries];
    expect(ran.length).toBeGreaterThan(0);
    expect(ran.length).toBeLessThanOrEqual(5);
    for (const q of ran) {
      const { plan, rowsRead } = await env.explain(q);
      const text = `${q.sql}\n${plan.join('\n')}`;
      if (env.dialect === 'sqlite') {
        expect(plan.join('\n'), text).not.toMatch(/^SCAN (products|orders|customers)\b/m);
        const timeChecked = /\b(created_at|updated_at)\b/.test(q.sql);
        for (const line of plan.filter((l) => /^SEARCH (products|orders|customers)\b/.test(l))) {
          // Reading a time index on its range, probing ids, or a closed stretch of ids; a statement
          // without time checks reads ids alone, as many as its LIMIT says.
          const bounded =
            /INDEX \w+_store_(created|updated) \(store_id=\? AND (created_at|updated_at)[<>]/.test(line) ||
            /\((rowid=\?|store_id=\? AND id=\?)/.test(line) ||
            /id>\? AND id<\?\)/.test(line) ||
            !timeChecked;
          expect(bounded, text).toBe(true);
        }
      } else {
        expect(plan, text).not.toContain('Seq Scan');
        expect(rowsRead, text).toBeLessThanOrEqual(MAX_ROWS_READ);
      }
    }
    return page;
  }

  for (const [label, f] of FILTERS) {
    it(`${label}: the first page, a page after a cursor, a page back, in both conventions, each statement bounded`, async () => {
      const all = await expected(env, 'products', BIG, f);
      const page = pager(env.storage.resources.page('products'), 'products', BIG, f, LIMIT);
      for (const convention of ['newer', 'older'] as const) {
        const first = await checkedPage(() => page(convention));
        // A page never holds a row that does not match, and what it holds is in order.
        const firstIds = first.envelope.data as number[];
        expect(firstIds.every((id) => all.includes(id))).toBe(true);
        expect(firstIds).toEqual([...firstIds].sort((a, b) => a - b));
        if (all.length > 0 && firstIds.length === LIMIT) expect(firstIds).toEqual(all.slice(0, LIMIT));
        if (all.length === 0) {
          expect(first.envelope.data).toEqual([]);
          expect(first.next).toBe('');
          expect(first.previous).toBeNull();
        }
        // After a cursor in the middle of the store, and back from it.
        const cursor = codec.encode({ storeId: BIG, resource: 'products', direction: 'next', id: BIG_ROWS / 2, filters: filterDigest(f) });
        const later = await checkedPage(() => page(convention, cursor));
        expect((later.envelope.data as number[]).every((id) => id > BIG_ROWS / 2 && all.includes(id))).toBe(true);
        const back = codec.encode({ storeId: BIG, resource: 'products', direction: 'prev', id: BIG_ROWS / 2, filters: filterDigest(f) });
        const earlier = await checkedPage(() => (convention === 'older' ? page(convention, undefined, back) : page(convention, back)));
        expect((earlier.envelope.data as number[]).every((id) => id < BIG_ROWS / 2 && all.includes(id))).toBe(true);
      }
    });
  }

  for (const table of TABLES) {
    it(`${table}: limit=1&created_at_min=2999-01-01 and every other empty range answer at once, with nothing`, async () => {
      for (const f of [
        { createdAtMin: FAR_FUTURE },
        { createdAtMax: FAR_PAST },
        { updatedAtMin: FAR_FUTURE },
        { updatedAtMax: FAR_PAST },
      ]) {
        const page = pager(env.storage.resources.page(table), table, BIG, f, 1);
        for (const convention of ['newer', 'older'] as const) {
          const first = await checkedPage(() => page(convention));
          expect(first.envelope).toEqual(
            convention === 'newer' ? { data: [], cursor: '', has_more: false } : { data: [], cursor: '', pre_cursor: null },
          );
          // Nothing in the range: a read of the time index that finds nothing, not a walk of the store.
          if (env.dialect === 'postgres')
            for (const q of env.queries) expect((await env.explain(q)).rowsRead, q.sql).toBeLessThanOrEqual(1);
        }
      }
    });
  }

  it('counts: exact, each one statement on an index that reads only the matching entries when the filter is selective', async () => {
    const counted: [ListFilters, boolean][] = [
      [{}, false],
      [{ match: { title: 'rare' } }, true],
      [{ match: { title: 'nope' } }, true],
      [{ ids: [5, 700, 12_000, 29_999] }, true],
      [{ createdAtMin: FAR_FUTURE }, true],
      [{ createdAtMin: mid, createdAtMax: mid + 300 * SECOND }, true],
      [{ updatedAtMin: mid, updatedAtMax: mid + 300 * SECOND }, true],
      [{ sinceId: BIG_ROWS + SMALL_ROWS - 20 }, true],
      [{ match: { title: 'rare' }, createdAtMin: created(10) }, true],
      [{ match: { title: 'p' }, createdAtMin: mid }, false],
    ];
    for (const [f, selective] of counted) {
      const want = (await expected(env, 'products', BIG, f)).length;
      env.queries.length = 0;
      expect(await env.storage.resources.page('products').count({ storeId: BIG, filters: f }), JSON.stringify(f)).toBe(want);
      expect(env.queries.length).toBe(1);
      const q = env.queries[0]!;
      const { plan, rowsRead } = await env.explain(q);
      const text = `${JSON.stringify(f)}\n${q.sql}\n${plan.join('\n')}`;
      if (env.dialect === 'sqlite') {
        expect(plan.join('\n'), text).not.toMatch(/^SCAN products\b/m);
        if (selective) expect(plan.join('\n'), text).toMatch(/SEARCH products USING (COVERING )?INDEX|INTEGER PRIMARY KEY/);
      } else {
        expect(plan, text).not.toContain('Seq Scan');
        if (selective) expect(rowsRead, text).toBeLessThanOrEqual(want + 10);
      }
    }
    // Another store's rows are never counted.
    expect(await env.storage.resources.page('products').count({ storeId: SMALL, filters: { match: { title: 'rare' } } })).toBe(0);
  });

  it('a range dense in the store but not where the page starts: pages stop short, bounded, and walk to the end', async () => {
    // The newest tenth of the store matches: the first pages find nothing in the rows they may
    // read and say where they stopped; the walk still reaches every matching row.
    const f = { createdAtMin: created(BIG_ROWS - BIG_ROWS / 10) };
    const all = await expected(env, 'products', BIG, f);
    const page = pager(env.storage.resources.page('products'), 'products', BIG, f, 250);
    const first = await checkedPage(() => page('newer'));
    expect(first.envelope).toMatchObject({ data: [], has_more: true });
    const { forward } = await walk(page, 'newer', 250);
    expect(forward).toEqual(all);
  });
});

describe.each(DIALECTS_WITH_PARTITIONED)('filtered pages agree with a plain filter, walked to the end and back (%s)', (dialect) => {
  let env: Env;
  // Small bounds on a small store, so that every way of building a page is taken many times.
  const bounds: ReadBounds = { range: 12, scan: 20 };
  const N = 200;
  let seed = 42;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };

  beforeAll(async () => {
    env = await openEnv(dialect);
    await sql`insert into merchants (id, email, password_hash, created_at) values (1, 'm@example.test', 'x', 0)`.execute(env.kysely);
    await sql`insert into stores (id, name, owner_merchant_id, created_at) values (1, 'small', 1, 0), (2, 'big', 1, 0)`.execute(env.kysely);
    // Times in 0..99 seconds, with repeats, in no order: created_at is not monotonic in the id.
    await fill(env, 'products', BIG, N, () => [Math.floor(random() * 100) * SECOND, Math.floor(random() * 100) * SECOND]);
    await fill(env, 'products', SMALL, 50, () => [Math.floor(random() * 100) * SECOND, Math.floor(random() * 100) * SECOND]);
    await sql`update products set title = 'rare' where store_id = ${BIG} and (id * 7919) % 9 = 0`.execute(env.kysely);
  }, 60_000);

  afterAll(async () => {
    await env?.close();
  });

  it('every filter, both conventions, forwards to the end and back to the start', async () => {
    const source = new SqlKeysetSource<ResourceRow>({ k: env.kysely, dialect: env.dialect }, 'products', bounds);
    const s = SECOND;
    const filters: ListFilters[] = [
      {},
      { sinceId: 37 },
      { createdAtMin: 2 * s, createdAtMax: 6 * s },
      { createdAtMin: 10 * s },
      { createdAtMax: 3 * s },
      { updatedAtMin: 97 * s },
      { updatedAtMin: 20 * s, updatedAtMax: 70 * s },
      { createdAtMin: 50 * s, updatedAtMax: 8 * s },
      { createdAtMin: 5 * s, updatedAtMin: 5 * s, sinceId: 120 },
      { ids: [3, 9, 44, 45, 120, 199], createdAtMin: 30 * s },
      { createdAtMin: 1000 * s },
      { match: { title: 'rare' } },
      { match: { title: 'p' }, sinceId: 30 },
      { match: { title: 'rare' }, createdAtMin: 2 * s, createdAtMax: 40 * s },
      { match: { title: 'rare' }, updatedAtMin: 20 * s },
      { match: { title: 'p' }, createdAtMin: 90 * s },
      { match: { title: 'nope' }, createdAtMin: 1 * s },
    ];
    for (const f of filters) {
      const all = await expected(env, 'products', BIG, f);
      for (const limit of [4, 25]) {
        const page = pager(source, 'products', BIG, f, limit);
        for (const convention of ['newer', 'older'] as const) {
          const { forward, backward } = await walk(page, convention, limit);
          expect(forward, JSON.stringify({ f, limit, convention })).toEqual(all);
          expect(backward, JSON.stringify({ f, limit, convention, back: true })).toEqual(all);
        }
      }
    }
  }, 120_000);
});

describe.each(DIALECTS_WITH_PARTITIONED)('the events list reads a bounded number of deliveries whatever the topic (%s)', (dialect) => {
  let env: Env;
  const NOW = Date.UTC(2026, 10, 20);
  const OWNER = { appId: 7 };
  const BUSY = 6000;
  const RARE = ['orders/create'];

  beforeAll(async () => {
    env = await openEnv(dialect);
    await sql`insert into merchants (id, email, password_hash, created_at) values (1, 'm@example.test', 'x', 0)`.execute(env.kysely);
    await sql`insert into stores (id, name, owner_merchant_id, created_at) values (1, 'small', 1, 0), (2, 'big', 1, 0)`.execute(env.kysely);
    await sql`insert into webhook_events (id, store_id, topic, payload, created_at) values ('evt_1', ${BIG}, 'products/update', '{}', ${NOW})`.execute(
      env.kysely,
    );
    // A month of one app's product updates, then three orders at the end of it.
    const rows = Array.from({ length: BUSY + 3 }, (_, i) => {
      const topic = i < BUSY ? 'products/update' : 'orders/create';
      return `('wh_${i}', 'evt_1', 1, ${BIG}, 7, null, '${topic}', 'delivered', 1, 0, ${NOW + i}, ${NOW + i})`;
    });
    for (let at = 0; at < rows.length; at += 2000)
      await sql`insert into webhook_deliveries (webhook_id, event_id, subscription_id, store_id, app_id, private_app_id, topic, status, attempts,
          next_attempt_at, created_at, updated_at) values ${sql.raw(rows.slice(at, at + 2000).join(','))}`.execute(env.kysely);
    if (env.dialect === 'postgres') await sql`analyze webhook_deliveries`.execute(env.kysely);
  }, 60_000);

  afterAll(async () => {
    await env?.close();
  });

  it('a topic rare among the owner’s deliveries: pages stop short, each statement bounded, and the walk finds every one', async () => {
    const found: string[] = [];
    let after: { createdAt: number; id: number } | undefined;
    let pages = 0;
    for (;;) {
      env.queries.length = 0;
      const page = await env.storage.events.page({ storeId: BIG, owner: OWNER, topics: RARE, since: NOW, after, limit: 2 });
      pages++;
      for (const q of [...env.queries]) {
        const { plan, rowsRead } = await env.explain(q);
        const text = `${q.sql}\n${plan.join('\n')}`;
        if (env.dialect === 'sqlite') {
          expect(plan.join('\n'), text).not.toMatch(/^SCAN d\b/m);
          // The statement that checks topics reads a stretch of the index closed on both sides.
          if (/"topic" in/.test(q.sql))
            expect(plan.find((l) => /^SEARCH d USING (COVERING )?INDEX webhook_deliveries_app_events/.test(l)) ?? '', text).toMatch(
              />.*<|<.*>/,
            );
        } else {
          expect(plan, text).not.toContain('Seq Scan');
          expect(rowsRead, text).toBeLessThanOrEqual(EVENT_SCAN + 10);
          // The topic may be an index condition, whose skipped entries go uncounted: the stretch
          // of the index it reads is closed on both sides.
          if (/"topic" in/.test(q.sql)) {
            const { indexConds } = await env.explain(q);
            const cond = indexConds.find((c) => c.startsWith('webhook_deliveries')) ?? '';
            expect(cond, `${text}\n${indexConds.join('\n')}`).toMatch(/<=/);
            expect(cond, `${text}\n${indexConds.join('\n')}`).toMatch(/>/);
          }
        }
      }
      found.push(...page.rows.map((r) => r.webhook_id));
      const last = page.rows.at(-1);
      if (page.rows.length >= 2 && last) after = { createdAt: last.created_at, id: last.id };
      else if (page.stoppedAt) after = page.stoppedAt;
      else break;
      expect(pages).toBeLessThan(100);
    }
    expect(found).toEqual([`wh_${BUSY}`, `wh_${BUSY + 1}`, `wh_${BUSY + 2}`]);
    // The first pages read their stretch of updates and found nothing: they stopped short.
    expect(pages).toBeGreaterThan(2);
  });

  it('every topic, small stretches: the walk agrees with a plain filter', async () => {
    const repo = new SqlEventLogRepository({ k: env.kysely }, 7);
    for (const topics of [['products/update'], RARE, ['products/update', 'orders/create'], ['customers/create']]) {
      for (const limit of [1, 5, 50]) {
        const seen: string[] = [];
        let after: { createdAt: number; id: number } | undefined;
        for (let n = 0; n < 20_000; n++) {
          const page = await repo.page({ storeId: BIG, owner: OWNER, topics, since: NOW + BUSY - 40, after, limit });
          expect(page.rows.length).toBeLessThanOrEqual(limit);
          seen.push(...page.rows.map((r) => r.webhook_id));
          const last = page.rows.at(-1);
          if (page.rows.length === limit && last) after = { createdAt: last.created_at, id: last.id };
          else if (page.stoppedAt) after = page.stoppedAt;
          else break;
        }
        const want = Array.from({ length: BUSY + 3 }, (_, i) => i)
          .filter((i) => i >= BUSY - 40 && topics.includes(i < BUSY ? 'products/update' : 'orders/create'))
          .map((i) => `wh_${i}`);
        expect(seen, JSON.stringify({ topics, limit })).toEqual(want);
      }
    }
  });
});

describe.each(DIALECTS_WITH_PARTITIONED)('Admin API lists with time ranges on a big store (%s)', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  let token: string;
  const ROWS = 5000;

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off' });
    f = await createFixture(t);
    token = await privateToken(t, f.storeName, 'read_products read_orders read_customers');
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    const env = { kysely: t.db.kysely };
    for (const table of TABLES) await fill(env, table, store.id, ROWS, (i) => [created(i), updated(i, ROWS)]);
    for (let i = 0; i < 3; i++) {
      const res = await api(t, f, token, 'POST', '/openapi/2026-01/webhooks', {
        address: `https://hooks.example.test/${i}`,
        topic: 'products/create',
      });
      expect(res.statusCode).toBe(201);
    }
  }, 120_000);

  afterAll(async () => {
    await t?.close();
  });

  const get = async (path: string) => {
    const res = await api(t, f, token, 'GET', path);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { data: { id: string }[]; cursor: string; has_more?: boolean; pre_cursor?: string | null };
  };

  it('limit=1&created_at_min=2999-01-01 (and every other empty range) is an empty last page on every list, in both conventions', async () => {
    for (const list of ['products', 'orders', 'customers', 'webhooks']) {
      for (const range of [
        'created_at_min=2999-01-01',
        'updated_at_min=2999-01-01',
        'created_at_max=1970-01-01',
        'updated_at_max=1970-01-01',
      ]) {
        expect(await get(`/openapi/2026-01/${list}?limit=1&${range}`)).toEqual({ data: [], cursor: '', has_more: false });
        expect(await get(`/openapi/2022-01/${list}?limit=1&${range}`)).toEqual({ data: [], cursor: '', pre_cursor: null });
      }
    }
  });

  it('a range dense in the store but not at its start: short pages with a cursor, then every matching row in id order', async () => {
    // More rows than a range is read whole for, all at the end of the store's ids.
    const since = new Date(created(ROWS - 1500)).toISOString();
    const ids: number[] = [];
    let path = `/openapi/2026-01/products?limit=250&created_at_min=${since}`;
    let pages = 0;
    for (;;) {
      const page = await get(path);
      pages++;
      ids.push(...page.data.map((p) => Number(p.id)));
      if (!page.has_more) break;
      expect(page.cursor).not.toBe('');
      path = `/openapi/2026-01/products?limit=250&created_at_min=${since}&cursor=${page.cursor}`;
      expect(pages).toBeLessThan(50);
    }
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    const all = await sql<{
      id: number;
    }>`select id from products where store_id = ${store.id} and created_at >= ${created(ROWS - 1500)} order by id`.execute(t.db.kysely);
    expect(ids).toEqual(all.rows.map((r) => Number(r.id)));
    expect(pages).toBeGreaterThan(2);
  });

  it.runIf(dialect === 'postgres-partitioned')('every statement those lists ran reads one partition of a store table', async () => {
    const url = t.config.database.dialect === 'postgres' ? t.config.database.url : '';
    expect(await unroutedQueries(url, t.queries ?? [])).toEqual([]);
  });
});
