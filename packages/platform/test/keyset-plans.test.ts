// The plans PostgreSQL picks for keyset pages when many stores share a table. The data is laid out
// the way that once went wrong: 100 small stores first, then a big store whose ids all come after
// theirs. A page must be a range scan of an index led by store_id, with no sort and no sequential
// scan, for the first page, a page in the middle, a page backwards and a filtered page, of the big
// store and of a small one. Ordering by id alone (`where store_id = ? order by id`) let the planner
// walk the primary key from the first id, reading every small store's rows before the big store's
// first page; that plan fails here.
import { CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../src/storage/database.ts';
import type { KeysetQuery, KeysetScope } from '../src/storage/ports/keyset-source.ts';
import type { Storage } from '../src/storage/ports/storage.ts';
import type { Database } from '../src/storage/schema.ts';
import { storageOn } from '../src/storage/sql-storage.ts';
import { jsonPageStatement } from '../src/storage/repositories/json-page.ts';
import { tokenPageStatement } from '../src/storage/repositories/token-page.ts';
import { freshPostgresUrl } from './harness.ts';

const SMALL_STORES = 100;
const SMALL_ROWS = 100;
const BIG_ROWS = 6000;
const BIG = SMALL_STORES + 1;
const SMALL = 37;

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

// The ordinary layout reads the (store_id, id) index; the partitioned one reads the primary key
// (store_id, id) of the one partition that holds the store.
const LAYOUTS = [
  { name: 'ordinary layout', partitions: undefined, index: /^products_store_id$/ },
  { name: 'partitioned layout', partitions: 4, index: /^products_p\d_pkey$/ },
];

describe.skipIf(!process.env.TEST_PG_URL).each(LAYOUTS)('keyset page plans on PostgreSQL with many stores: $name', (layout) => {
  let schema: Awaited<ReturnType<typeof freshPostgresUrl>>;
  let pool: pg.Pool;
  let kysely: Kysely<Database>;
  let storage: Storage;
  let real: Db;
  const queries: CompiledQuery[] = [];

  beforeAll(async () => {
    schema = await freshPostgresUrl();
    pool = new pg.Pool({ connectionString: schema.url, max: 2 });
    // Every query the storage runs is recorded, so the test explains exactly what a page runs.
    kysely = new Kysely<Database>({
      dialect: new PostgresDialect({ pool }),
      log: (event) => {
        if (event.level === 'query') queries.push(event.query);
      },
    });
    real = openDatabase({ dialect: 'postgres', url: schema.url }, { poolSize: 1 });
    storage = storageOn({ ...real, kysely });
    await storage.migrate({ partitions: layout.partitions });
    await sql`insert into merchants (id, email, password_hash, created_at) values (1, 'm@example.test', 'x', 0)`.execute(kysely);
    await sql`insert into stores (id, name, owner_merchant_id, created_at)
      select s, 'store' || s, 1, 0 from generate_series(1, ${BIG}) s`.execute(kysely);
    await sql`insert into products (store_id, title, body_html, vendor, product_type, status, price, sku, inventory_quantity, tags, created_at, updated_at)
      select s, 'p' || g, repeat('x', 200), 'v', 't', 'active', '1.00', 'sku', 1, '', g, g
      from generate_series(1, ${SMALL_STORES}) s, generate_series(1, ${SMALL_ROWS}) g order by s, g`.execute(kysely);
    await sql`insert into products (store_id, title, body_html, vendor, product_type, status, price, sku, inventory_quantity, tags, created_at, updated_at)
      select ${BIG}, 'p' || g, repeat('x', 200), 'v', 't', 'active', '1.00', 'sku', 1, '', g, g
      from generate_series(1, ${BIG_ROWS}) g`.execute(kysely);
    await sql`analyze products`.execute(kysely);
  }, 60_000);

  afterAll(async () => {
    await kysely?.destroy();
    await real?.close();
    await schema?.drop();
  });

  async function ids(storeId: number): Promise<number[]> {
    const rows = await sql<{ id: number }>`select id from products where store_id = ${storeId} order by id`.execute(kysely);
    return rows.rows.map((r) => Number(r.id));
  }

  /** The plan of the one query `run` sends, as PostgreSQL's JSON explains it. */
  async function planOf(run: () => Promise<unknown>): Promise<PlanNode[]> {
    queries.length = 0;
    await run();
    expect(queries).toHaveLength(1);
    const q = queries[0]!;
    const res = await kysely.executeQuery<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
      CompiledQuery.raw(`explain (format json) ${q.sql}`, [...q.parameters]),
    );
    return nodes(res.rows[0]!['QUERY PLAN'][0]!.Plan);
  }

  function expectStoreIndexRangeScan(plan: PlanNode[]): void {
    const types = plan.map((n) => n['Node Type']);
    expect(types).not.toContain('Sort');
    expect(types).not.toContain('Incremental Sort');
    expect(types).not.toContain('Seq Scan');
    expect(types).not.toContain('Bitmap Heap Scan');
    expect(types).not.toContain('Append');
    expect(types).not.toContain('Merge Append');
    const scans = plan.filter((n) => n['Node Type'] === 'Index Scan' || n['Node Type'] === 'Index Only Scan');
    expect(scans).toHaveLength(1);
    expect(scans[0]!['Index Name']).toMatch(layout.index);
  }

  /** The plan PostgreSQL makes of the one query `run` sends for any parameters (a named statement's, after a few runs). */
  async function genericPlanOf(run: () => Promise<unknown>): Promise<PlanNode[]> {
    queries.length = 0;
    await run();
    const q = queries[0]!;
    const literal = (v: unknown) =>
      Array.isArray(v) ? `'{${v.join(',')}}'::bigint[]` : typeof v === 'string' ? `'${v.replace(/'/g, "''")}'` : String(Number(v));
    const client = await pool.connect();
    try {
      await client.query('set plan_cache_mode = force_generic_plan');
      await client.query(`prepare generic as ${q.sql}`);
      const res = await client.query(`explain (format json) execute generic(${q.parameters.map(literal).join(', ')})`);
      await client.query('deallocate generic');
      return nodes(res.rows[0]['QUERY PLAN'][0].Plan);
    } finally {
      await client.query('reset plan_cache_mode');
      client.release();
    }
  }

  function expectStoreIndexRangeScans(plan: PlanNode[], count: number): void {
    const types = plan.map((n) => n['Node Type']);
    for (const bad of ['Sort', 'Incremental Sort', 'Seq Scan', 'Bitmap Heap Scan', 'Merge Append']) expect(types).not.toContain(bad);
    const scans = plan.filter((n) => n['Node Type'] === 'Index Scan' || n['Node Type'] === 'Index Only Scan');
    expect(scans).toHaveLength(count);
    for (const scan of scans) expect(scan['Index Name']).toMatch(layout.index);
  }

  function expectTwoStoreIndexRangeScans(plan: PlanNode[]): void {
    const types = plan.map((n) => n['Node Type']);
    for (const bad of ['Sort', 'Incremental Sort', 'Seq Scan', 'Bitmap Heap Scan', 'Merge Append']) expect(types).not.toContain(bad);
    // The one Append is UNION ALL's; no partition is scanned beyond the store's own.
    expect(types.filter((t) => t === 'Append')).toHaveLength(1);
    const scans = plan.filter((n) => n['Node Type'] === 'Index Scan' || n['Node Type'] === 'Index Only Scan');
    expect(scans).toHaveLength(2);
    for (const scan of scans) expect(scan['Index Name']).toMatch(layout.index);
  }

  /** The plan's scans of products: `count` range scans of (store_id, id); nothing sorted, no table read whole. */
  function expectProductRangeScans(plan: PlanNode[], count: number): void {
    const types = plan.map((n) => n['Node Type']);
    for (const bad of ['Sort', 'Incremental Sort', 'Merge Append']) expect(types).not.toContain(bad);
    const products = plan.filter((n) => /^products(_p\d+)?$/.test(n['Relation Name'] ?? ''));
    expect(products).toHaveLength(count);
    for (const scan of products) expect(['Index Scan', 'Index Only Scan']).toContain(scan['Node Type']);
    for (const scan of products) expect(scan['Index Name']).toMatch(layout.index);
  }

  for (const [label, storeId] of [
    ['the big store created last', BIG],
    ['a small store', SMALL],
  ] as const) {
    it(`every page of ${label} read with its Access-Token is range scans of (store_id, id), also as a generic plan`, async () => {
      const all = await ids(storeId);
      const middle = all[Math.floor(all.length / 2)]!;
      for (const kind of ['access', 'private'] as const) {
        for (const [side, from] of [
          ['after', undefined],
          ['after', middle],
          ['before', middle],
        ] as const) {
          const statement = tokenPageStatement(kysely, kind, 'products', side, from !== undefined)!;
          const params: Record<string, unknown> = { store: [storeId], tokenStore: storeId, hash: 'h'.repeat(64), from, limit: 50 };
          const parameters = statement.slots.map((s) => ('value' in s ? s.value : params[s.name]));
          const q = CompiledQuery.raw(statement.compiled.sql, parameters);
          // The page and the probe past it, and the probe behind the cursor when there is one.
          expectProductRangeScans(await planOf(() => kysely.executeQuery(q)), from === undefined ? 2 : 3);
          if (layout.partitions === undefined)
            expectProductRangeScans(await genericPlanOf(() => kysely.executeQuery(q)), from === undefined ? 2 : 3);
        }
      }
    });

    it(`every page of ${label} is a range scan of (store_id, id)`, async () => {
      const source = storage.resources.page('products');
      const all = await ids(storeId);
      const middle = all[Math.floor(all.length / 2)]!;
      const q: KeysetScope = { storeId };
      // What the pages return is right, too: the plan alone would not show a wrong filter.
      expect((await source.after(q, undefined, 51)).map((r) => r.id)).toEqual(all.slice(0, 51));

      expectStoreIndexRangeScan(await planOf(() => source.after(q, undefined, 51)));
      expectStoreIndexRangeScan(await planOf(() => source.after(q, middle, 51)));
      expectStoreIndexRangeScan(await planOf(() => source.before(q, middle, 51)));
      // A page after a cursor and the probe for the previous page: one statement, two range scans.
      expectTwoStoreIndexRangeScans(await planOf(() => source.window(q, 'after', middle, 51)));
      expectTwoStoreIndexRangeScans(await planOf(() => source.window(q, 'before', middle, 51)));
      // Time ranges take other indexes: test/list-filter-plans.test.ts.
      const filtered: KeysetQuery = { storeId, filters: { sinceId: all[10]! } };
      expectStoreIndexRangeScan(await planOf(() => source.window(filtered, 'after', undefined, 51)));
      expectTwoStoreIndexRangeScans(await planOf(() => source.window(filtered, 'after', middle, 51)));
      const page = await source.window(filtered, 'after', undefined, 51);
      expect(page.rows.map((r) => r.id)).toEqual(all.filter((id) => id > all[10]!).slice(0, 51));
    });

    it(`every page of ${label} written as JSON is range scans of (store_id, id), also as a generic plan`, async () => {
      const all = await ids(storeId);
      const middle = all[Math.floor(all.length / 2)]!;
      const page = await storage.resources.jsonPage('products', { storeId, side: 'after', from: middle, limit: 50 });
      expect(JSON.parse(`[${page!.objects}]`).map((p: { id: string }) => Number(p.id))).toEqual(
        all.filter((id) => id > middle).slice(0, 50),
      );
      for (const [side, from] of [
        ['after', undefined],
        ['after', middle],
        ['before', middle],
      ] as const) {
        // Prepared statements run on the pool directly: the statement is taken from where it is defined.
        const statement = jsonPageStatement(kysely as unknown as Kysely<unknown>, 'postgres', 'products', side, from !== undefined)!;
        const params: Record<string, unknown> = { store: [storeId], from, limit: 50 };
        const parameters = statement.slots.map((s) => ('value' in s ? s.value : params[s.name]));
        const q = CompiledQuery.raw(statement.compiled.sql, parameters);
        // The page and the probe past it, and the probe behind the cursor when there is one.
        expectStoreIndexRangeScans(await planOf(() => kysely.executeQuery(q)), from === undefined ? 2 : 3);
        // Named statements are planned once for any parameters after a few runs: that plan too.
        if (layout.partitions === undefined)
          expectStoreIndexRangeScans(await genericPlanOf(() => kysely.executeQuery(q)), from === undefined ? 2 : 3);
      }
    });
  }
});
