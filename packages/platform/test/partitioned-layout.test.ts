// The partitioned PostgreSQL layout itself: which tables it partitions and how, that it is chosen
// once on an empty database and kept by every later migration, and that any other request is
// refused with a sentence saying why, changing nothing. (The storage contract and the Admin API
// suites run on the layout; this file checks the layout.)
import { CompiledQuery, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { FLEET_WIDE, fleetWide } from '../src/storage/fleet-wide.ts';
import { STORE_TABLES } from '../src/storage/partitioning.ts';
import { MIGRATIONS } from '../src/storage/migrate.ts';
import type { Storage } from '../src/storage/ports/storage.ts';
import { openStorage } from '../src/storage/sql-storage.ts';
import { freshPostgresUrl } from './harness.ts';
import { unroutedQueries } from './partition-routing.ts';

type Opened = Storage & { db: { kysely: import('kysely').Kysely<import('../src/storage/schema.ts').Database> } };

describe.skipIf(!process.env.TEST_PG_URL)('partitioned PostgreSQL layout', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  async function fresh(): Promise<Opened> {
    const schema = await freshPostgresUrl();
    const s = openStorage({ dialect: 'postgres', url: schema.url }, { poolSize: 2 });
    cleanups.push(
      () => schema.drop(),
      () => s.close(),
    );
    return s;
  }
  async function partitioned(s: Opened): Promise<{ table: string; strategy: string; key: string; parts: number }[]> {
    const r = await sql<{ table: string; strategy: string; key: string; parts: number }>`
      select c.relname as table, p.partstrat as strategy, pg_get_partkeydef(c.oid) as key,
        (select count(*)::int from pg_inherits i where i.inhparent = c.oid) as parts
      from pg_partitioned_table p join pg_class c on c.oid = p.partrelid
      where c.relnamespace = current_schema()::regnamespace order by c.relname`.execute(s.db.kysely);
    return r.rows;
  }

  it('partitions every store table by a hash of store_id, with store_id in every primary and unique key', async () => {
    const s = await fresh();
    expect(await s.migrate({ partitions: 4 })).toHaveLength(Object.keys(MIGRATIONS).length);
    expect(await partitioned(s)).toEqual(
      [...STORE_TABLES].sort().map((table) => ({ table, strategy: 'h', key: 'HASH (store_id)', parts: 4 })),
    );
    const keys = await sql<{ table: string; index: string; columns: string[] }>`
      select t.relname as table, c.relname as index,
        array(select a.attname from unnest(i.indkey) with ordinality as u(attnum, ord)
              join pg_attribute a on a.attrelid = i.indrelid and a.attnum = u.attnum order by u.ord)::text[] as columns
      from pg_index i join pg_class c on c.oid = i.indexrelid join pg_class t on t.oid = i.indrelid
      where i.indisunique and t.relkind = 'p' and t.relnamespace = current_schema()::regnamespace`.execute(s.db.kysely);
    expect(keys.rows.length).toBeGreaterThanOrEqual(STORE_TABLES.length);
    for (const k of keys.rows) expect(k.columns[0], `${k.table}.${k.index}`).toBe('store_id');
    // Ids still come from one sequence per table: unique across stores and partitions.
    const k = s.db.kysely;
    await sql`insert into merchants (id, email, password_hash, created_at) values (1, 'm@example.test', 'x', 0)`.execute(k);
    await sql`insert into stores (id, name, owner_merchant_id, created_at) select g, 's' || g, 1, 0 from generate_series(1, 8) g`.execute(
      k,
    );
    const ids = [];
    for (let store = 1; store <= 8; store++) {
      const row = await s.resources.insert('products', {
        store_id: store,
        title: 't',
        body_html: '',
        vendor: '',
        product_type: '',
        status: 'active',
        price: '1.00',
        sku: '',
        inventory_quantity: 0,
        tags: '',
        created_at: 0,
        updated_at: 0,
      });
      ids.push(row.id);
    }
    expect(new Set(ids).size).toBe(8);
    const spread = await sql<{ n: number }>`select count(distinct tableoid)::int as n from products`.execute(k);
    expect(spread.rows[0]!.n).toBeGreaterThan(1);
  });

  it('the routing check passes a statement that names its store, and a fleet-wide one only under a listed name', async () => {
    const schema = await freshPostgresUrl();
    const s = openStorage({ dialect: 'postgres', url: schema.url }, { poolSize: 2 }) as Opened;
    cleanups.push(
      () => schema.drop(),
      () => s.close(),
    );
    await s.migrate({ partitions: 4 });
    const query = (text: string, parameters: unknown[]) => CompiledQuery.raw(text, parameters);
    const unmarked = 'select token_hash from access_tokens where token_hash = $1';
    const listed = `select token_hash from access_tokens where expires_at < $1 ${fleetWide('idempotency-prune').compile(s.db.kysely).sql}`;
    const unlisted = 'select token_hash from access_tokens where expires_at < $1 /* fleet-wide: anything-else */';
    const routed = 'select token_hash from access_tokens where store_id = $1 and token_hash = $2';
    const report = await unroutedQueries(schema.url, [
      query(unmarked, ['h']),
      query(listed, [1]),
      query(unlisted, [1]),
      query(routed, [1, 'h']),
    ]);
    expect(report.map((r) => r.sql)).toEqual([unmarked, unlisted]);
    expect(Object.keys(FLEET_WIDE).sort()).toEqual([
      'app-installations',
      'app-subscription-copies',
      'credential-prune',
      'delivery-attempts-by-id',
      'idempotency-prune',
      'master-key-check',
      'master-key-reseal',
      'operator-delivery-log',
      'operator-directory',
      'operator-redeliver',
      'operator-subscription',
      'outbox-backlog',
      'partner-delivery-log',
      'partner-disabled-subscriptions',
      'partner-endpoint-health',
      'partner-subscription',
      'webhook-claim',
      'webhook-claim-load',
      'webhook-claims-defer',
      'webhook-claims-release',
      'webhook-claims-renew',
      'webhook-prune',
    ]);
  });

  it('is recorded: a later migration without the option keeps it, the same count is accepted, another is refused', async () => {
    const s = await fresh();
    await s.migrate({ partitions: 4 });
    expect(await s.migrate()).toEqual([]);
    expect(await s.migrate({ partitions: 4 })).toEqual([]);
    await expect(s.migrate({ partitions: 8 })).rejects.toThrow(
      '--pg-partitions: this database is partitioned into 4 partitions per store table, not 8; the number is fixed when the database is first migrated',
    );
    expect((await partitioned(s)).map((p) => p.parts)).toEqual(STORE_TABLES.map(() => 4));
  });

  it('is refused on a database that already holds the ordinary layout, which stays as it was', async () => {
    const s = await fresh();
    await s.migrate();
    await expect(s.migrate({ partitions: 4 })).rejects.toThrow(
      '--pg-partitions: this database already holds the ordinary layout; partitioning is chosen when an empty database is first migrated',
    );
    expect(await partitioned(s)).toEqual([]);
    const layout = await sql<{ t: string | null }>`select to_regclass('storegate_layout')::text as t`.execute(s.db.kysely);
    expect(layout.rows[0]!.t).toBeNull();
  });

  it('refuses a count out of range, and SQLite, before touching the database', async () => {
    const s = await fresh();
    for (const bad of [0, 1, 1025, 2.5]) {
      await expect(s.migrate({ partitions: bad })).rejects.toThrow(`--pg-partitions: expected an integer from 2 to 1024, got ${bad}`);
    }
    const tables = await sql<{ n: number }>`select count(*)::int as n from pg_tables where schemaname = current_schema()`.execute(
      s.db.kysely,
    );
    expect(tables.rows[0]!.n).toBe(0);
    const lite = openStorage({ dialect: 'sqlite', path: ':memory:' });
    cleanups.push(() => lite.close());
    await expect(lite.migrate({ partitions: 4 })).rejects.toThrow('--pg-partitions: partitioning is for PostgreSQL databases only');
  });
});
