// The plans SQLite picks for keyset pages when many stores share a table: 100 small stores first,
// then a big store whose ids all come after theirs. Every page must seek the (store_id, id) index
// on both columns (store_id equal, id bounded), with no sort. A store written as a range
// (`store_id >= s and store_id <= s`) made SQLite skip-scan that index instead
// (`ANY(store_id) AND id>?`), and a page in the middle of a big store cost tens of times its first
// page; that plan fails here.
import { type CompiledQuery, Kysely, SqliteDialect, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Db, openDatabase } from '../src/storage/database.ts';
import type { KeysetQuery, KeysetScope } from '../src/storage/ports/keyset-source.ts';
import type { Storage } from '../src/storage/ports/storage.ts';
import type { Database } from '../src/storage/schema.ts';
import { storageOn } from '../src/storage/sql-storage.ts';

const SMALL_STORES = 100;
const SMALL_ROWS = 100;
const BIG_ROWS = 6000;
const BIG = SMALL_STORES + 1;
const SMALL = 37;

describe('keyset page plans on SQLite with many stores', () => {
  let real: Db;
  let kysely: Kysely<Database>;
  let storage: Storage;
  const queries: CompiledQuery[] = [];

  beforeAll(async () => {
    real = openDatabase({ dialect: 'sqlite', path: ':memory:' });
    // Every query the storage runs through Kysely is recorded, so the test explains exactly what a
    // page runs.
    kysely = new Kysely<Database>({
      dialect: new SqliteDialect({ database: real.sqlite! }),
      log: (event) => {
        if (event.level === 'query') queries.push(event.query);
      },
    });
    storage = storageOn({ ...real, kysely });
    await storage.migrate();
    await sql`insert into merchants (id, email, password_hash, created_at) values (1, 'm@example.test', 'x', 0)`.execute(kysely);
    await sql`with recursive s(x) as (select 1 union all select x + 1 from s where x < ${BIG})
      insert into stores (id, name, owner_merchant_id, created_at) select x, 'store' || x, 1, 0 from s`.execute(kysely);
    const fill = (from: number, to: number, rows: number) =>
      sql`with recursive s(x) as (select ${from} union all select x + 1 from s where x < ${to}),
          g(y) as (select 1 union all select y + 1 from g where y < ${rows})
        insert into products (store_id, title, body_html, vendor, product_type, status, price, sku, inventory_quantity, tags, created_at, updated_at)
        select x, 'p' || y, 'body', 'v', 't', 'active', '1.00', 'sku', 1, '', y, y from s, g order by x, y`.execute(kysely);
    await fill(1, SMALL_STORES, SMALL_ROWS);
    await fill(BIG, BIG, BIG_ROWS);
    await sql`analyze`.execute(kysely);
  });

  afterAll(async () => {
    await real?.close();
  });

  async function ids(storeId: number): Promise<number[]> {
    const rows = await sql<{ id: number }>`select id from products where store_id = ${storeId} order by id`.execute(kysely);
    return rows.rows.map((r) => Number(r.id));
  }

  /** SQLite's plan of the one query `run` sends, one line per step. */
  async function planOf(run: () => Promise<unknown>): Promise<string[]> {
    queries.length = 0;
    await run();
    expect(queries).toHaveLength(1);
    const q = queries[0]!;
    const rows = real.sqlite!.prepare(`explain query plan ${q.sql}`).all(...q.parameters) as { detail: string }[];
    return rows.map((r) => r.detail);
  }

  function expectIndexSeek(plan: string[], bound: '' | 'id>?' | 'id<?'): void {
    expect(plan.join('\n')).not.toMatch(/TEMP B-TREE|SCAN products/);
    expect(plan).toHaveLength(1);
    const cols = bound === '' ? 'store_id=?' : `store_id=? AND ${bound}`;
    expect(plan[0]).toMatch(
      new RegExp(`^SEARCH products USING (COVERING )?INDEX products_store_id \\(${cols.replace(/[?()]/g, '\\$&')}\\)$`),
    );
  }

  for (const [label, storeId] of [
    ['the big store created last', BIG],
    ['a small store', SMALL],
  ] as const) {
    it(`every page of ${label} seeks (store_id, id) on both columns`, async () => {
      const source = storage.resources.page('products');
      const all = await ids(storeId);
      const middle = all[Math.floor(all.length / 2)]!;
      const q: KeysetScope = { storeId };
      // What the pages return is right, too: the plan alone would not show a wrong condition.
      expect((await source.after(q, undefined, 51)).map((r) => r.id)).toEqual(all.slice(0, 51));
      expect((await source.after(q, middle, 51)).map((r) => r.id)).toEqual(all.filter((id) => id > middle).slice(0, 51));
      expect((await source.before(q, middle, 51)).map((r) => r.id)).toEqual(
        all
          .filter((id) => id < middle)
          .reverse()
          .slice(0, 51),
      );

      expectIndexSeek(await planOf(() => source.after(q, undefined, 51)), '');
      expectIndexSeek(await planOf(() => source.after(q, middle, 51)), 'id>?');
      expectIndexSeek(await planOf(() => source.before(q, middle, 51)), 'id<?');
      // Time ranges take other indexes: test/list-filter-plans.test.ts.
      const filtered: KeysetQuery = { storeId, filters: { sinceId: all[10]! } };
      expectIndexSeek(await planOf(() => source.window(filtered, 'after', undefined, 51)), 'id>?');
      const page = await source.window(filtered, 'after', middle, 51);
      expect(page.rows.map((r) => r.id)).toEqual(all.filter((id) => id > middle).slice(0, 51));
    });
  }
});
