// The partitioned PostgreSQL layout: every table whose rows belong to one store is hash-partitioned
// by store_id, which imposes the rules a sharded PostgreSQL (Citus, store_id as the distribution
// column) imposes: store_id is part of every primary and unique key, and a query that names its
// store reads one partition. Chosen once, when an empty database is first migrated
// (`storegate migrate --pg-partitions N`), and recorded in the database, so every later node and
// every later migration follows it without being told.
//
// How: the dated migrations create the ordinary tables (they are empty then), and this step
// rebuilds each store table as a partitioned one with the same columns, defaults, identity and
// foreign keys, its primary key and unique keys led by store_id, its other indexes as they were.
// Ids keep coming from one identity sequence per table, so they stay unique across the whole table
// although the database only enforces (store_id, id). Later migrations run on the partitioned
// tables as they are: a unique key they add must include store_id, or they fail here first (the
// test suites run the contract and the Admin API on this layout).
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './schema.ts';

/**
 * Tables whose rows each belong to one store and whose every query names the store (or is marked
 * fleet-wide, see fleet-wide.ts): partitioned in this layout. The others stay whole: merchants,
 * partners, apps and the stores themselves (shared by every store: reference tables under Citus),
 * sessions and login throttles (of people, not stores). The token tables are looked up by hash and
 * the store of the request's Host together, so they fit. The webhook tables are joined to each
 * other on (store_id, id) and carry no foreign keys between them (the rebuild refuses a table that
 * one points at), so they partition as they are; their unique keys (event id, webhook id) become
 * unique per store, which is all a random id needs.
 */
export const STORE_TABLES = [
  'products',
  'customers',
  'orders',
  'idempotency_keys',
  'installations',
  'authorization_codes',
  'token_families',
  'access_tokens',
  'refresh_tokens',
  'launch_token_uses',
  'private_apps',
  'webhook_subscriptions',
  'webhook_events',
  'webhook_deliveries',
  'webhook_attempts',
  'webhook_delivery_leases',
] as const;

const LAYOUT_TABLE = 'storegate_layout';
// Any constant shared by every node: serialises the one-time rebuild between nodes migrating at once.
const LOCK = 7_301_124;

/** The recorded number of partitions per store table; undefined for the ordinary layout. */
export async function storePartitions(k: Kysely<Database> | Transaction<Database>): Promise<number | undefined> {
  const exists = await sql<{ t: string | null }>`select to_regclass(${LAYOUT_TABLE})::text as t`.execute(k);
  if (!exists.rows[0]?.t) return undefined;
  const row = await sql<{ value: string }>`select value from storegate_layout where key = 'store_partitions'`.execute(k);
  return row.rows[0] ? Number(row.rows[0].value) : undefined;
}

/** Before migrating: partitioning is chosen on an empty database and never changed afterwards. */
export async function checkPartitionRequest(k: Kysely<Database>, partitions: number): Promise<void> {
  const recorded = await storePartitions(k);
  if (recorded !== undefined) {
    if (recorded !== partitions)
      throw new Error(
        `--pg-partitions: this database is partitioned into ${recorded} partitions per store table, not ${partitions}; the number is ` +
          `fixed when the database is first migrated`,
      );
    return;
  }
  const migrated = await sql<{ t: string | null }>`select to_regclass('products')::text as t`.execute(k);
  if (migrated.rows[0]?.t)
    throw new Error(
      '--pg-partitions: this database already holds the ordinary layout; partitioning is chosen when an empty database is first migrated',
    );
}

interface IndexDef {
  name: string;
  def: string;
  primary: boolean;
  unique: boolean;
  constraint: boolean;
  columns: string[];
}

/** Rebuilds every store table as hash-partitioned by store_id, once (no-op when already recorded). */
export async function partitionStoreTables(k: Kysely<Database>, partitions: number): Promise<void> {
  await k.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(${LOCK})`.execute(tx);
    const recorded = await storePartitions(tx);
    if (recorded !== undefined) {
      if (recorded !== partitions) throw new Error(`--pg-partitions: this database is partitioned into ${recorded}, not ${partitions}`);
      return;
    }
    for (const table of STORE_TABLES) await rebuild(tx, table, partitions);
    await sql`create table storegate_layout (key text primary key, value text not null)`.execute(tx);
    await sql`insert into storegate_layout (key, value) values ('store_partitions', ${String(partitions)})`.execute(tx);
  });
}

async function rebuild(tx: Transaction<Database>, table: string, partitions: number): Promise<void> {
  const t = sql.id(table);
  const rows = await sql<{ n: number }>`select count(*)::int as n from ${t}`.execute(tx);
  if (rows.rows[0]!.n > 0) throw new Error(`--pg-partitions: ${table} already holds rows; partition an empty database`);
  const referenced = await sql<{ name: string }>`
    select conname as name from pg_constraint where contype = 'f' and confrelid = ${table}::regclass`.execute(tx);
  if (referenced.rows.length > 0) throw new Error(`cannot partition ${table}: foreign keys point at it (${referenced.rows[0]!.name})`);
  const indexes = (
    await sql<IndexDef>`
      select c.relname as name, pg_get_indexdef(i.indexrelid) as def, i.indisprimary as primary, i.indisunique as unique,
        exists (select 1 from pg_constraint k where k.conindid = i.indexrelid and k.contype in ('p', 'u')) as constraint,
        array(select a.attname from unnest(i.indkey) with ordinality as u(attnum, ord)
              join pg_attribute a on a.attrelid = i.indrelid and a.attnum = u.attnum order by u.ord)::text[] as columns
      from pg_index i join pg_class c on c.oid = i.indexrelid
      where i.indrelid = ${table}::regclass`.execute(tx)
  ).rows;
  const foreign = (
    await sql<{ name: string; def: string }>`
      select conname as name, pg_get_constraintdef(oid) as def from pg_constraint
      where contype = 'f' and conrelid = ${table}::regclass`.execute(tx)
  ).rows;
  const building = sql.id(`${table}__partitioned`);
  await sql`create table ${building} (like ${t} including defaults including identity including generated)
    partition by hash (store_id)`.execute(tx);
  await sql`drop table ${t}`.execute(tx);
  await sql`alter table ${building} rename to ${t}`.execute(tx);
  for (let r = 0; r < partitions; r++) {
    await sql`create table ${sql.id(`${table}_p${r}`)} partition of ${t}
      for values with (modulus ${sql.lit(partitions)}, remainder ${sql.lit(r)})`.execute(tx);
  }
  const primary = indexes.find((ix) => ix.primary);
  const key = (columns: string[]) => (columns.includes('store_id') ? columns : ['store_id', ...columns]);
  for (const ix of indexes) {
    // An index on exactly the new primary key's columns, such as (store_id, id), would be a copy.
    if (!ix.primary && !ix.unique && primary && ix.columns.join() === key(primary.columns).join() && !/ where /i.test(ix.def)) continue;
    // A key the database enforces must contain the partition key; store_id leads it, so a lookup of
    // one store's row is a probe of one partition's index.
    const columns = key(ix.columns);
    const list = sql.join(columns.map((c) => sql.id(c)));
    if (ix.primary) await sql`alter table ${t} add constraint ${sql.id(ix.name)} primary key (${list})`.execute(tx);
    else if (ix.unique && ix.constraint) await sql`alter table ${t} add constraint ${sql.id(ix.name)} unique (${list})`.execute(tx);
    else if (ix.unique) {
      const where = / where (.*)$/i.exec(ix.def)?.[1];
      await sql`create unique index ${sql.id(ix.name)} on ${t} (${list})${where ? sql.raw(` where ${where}`) : sql``}`.execute(tx);
    } else {
      // Everything after the table name (method, columns, predicate) as PostgreSQL printed it.
      const rest = /\bON\s+(?:\S+\.)?\S+\s+(USING .*)$/i.exec(ix.def)?.[1];
      if (!rest) throw new Error(`cannot read the definition of index ${ix.name}`);
      await sql`create index ${sql.id(ix.name)} on ${t} ${sql.raw(rest)}`.execute(tx);
    }
  }
  for (const fk of foreign) await sql`alter table ${t} add constraint ${sql.id(fk.name)} ${sql.raw(fk.def)}`.execute(tx);
}
