// A worker's hold on a delivery moves out of the delivery row into a table of its own,
// webhook_delivery_leases: one row per held delivery (its id and store, the worker, when the lease
// lapses), inserted by the claim and deleted by the outcome. Claiming then writes a small row instead
// of a new version of the wide, multiply indexed delivery row, so a delivered delivery's row is
// written twice (queued, finished) rather than three times.
//
// The claims held when this runs move into the new table, and the delivery's claimed_by and
// claimed_until columns go: a worker of the previous release still running beside a new one
// would otherwise claim through the columns while the new one claims through the table, and both
// would send the same delivery; without the columns the old worker fails instead.
//
// On the partitioned layout the table is a store table like the deliveries: on an empty database
// the partitioning step that follows the migrations rebuilds it, and on one already partitioned it
// is created partitioned here, as that step would have made it (store_id leads its key). Frozen
// once landed.
import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migration-dialect.ts';

const LEASES = 'webhook_delivery_leases';

async function partitions(db: Kysely<unknown>): Promise<number | undefined> {
  const layout = await sql<{ t: string | null }>`select to_regclass('storegate_layout')::text as t`.execute(db);
  if (!layout.rows[0]?.t) return undefined;
  const row = await sql<{ value: string }>`select value from storegate_layout where key = 'store_partitions'`.execute(db);
  return row.rows[0] ? Number(row.rows[0].value) : undefined;
}

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  const pg = dialect === 'postgres';
  if (!pg) {
    // delivery_id is the rowid: a lease is found by its delivery's id alone.
    await sql`create table webhook_delivery_leases (
      delivery_id integer primary key,
      store_id integer not null,
      worker text not null,
      leased_until integer not null
    )`.execute(db);
  } else {
    const n = await partitions(db);
    if (n === undefined) {
      await sql`create table webhook_delivery_leases (
        delivery_id bigint not null,
        store_id bigint not null,
        worker text not null,
        leased_until bigint not null,
        constraint webhook_delivery_leases_pkey primary key (delivery_id)
      )`.execute(db);
    } else {
      await sql`create table webhook_delivery_leases (
        delivery_id bigint not null,
        store_id bigint not null,
        worker text not null,
        leased_until bigint not null,
        constraint webhook_delivery_leases_pkey primary key (store_id, delivery_id)
      ) partition by hash (store_id)`.execute(db);
      for (let r = 0; r < n; r++) {
        await sql`create table ${sql.id(`${LEASES}_p${r}`)} partition of webhook_delivery_leases
          for values with (modulus ${sql.lit(n)}, remainder ${sql.lit(r)})`.execute(db);
      }
    }
  }
  await sql`insert into webhook_delivery_leases (delivery_id, store_id, worker, leased_until)
    select id, store_id, claimed_by, claimed_until from webhook_deliveries
    where status = 'pending' and claimed_by is not null and claimed_until is not null`.execute(db);
  await db.schema.alterTable('webhook_deliveries').dropColumn('claimed_by').execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('claimed_until').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('claimed_by', 'text').execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('claimed_until', 'bigint').execute();
  await sql`update webhook_deliveries set claimed_by = l.worker, claimed_until = l.leased_until
    from webhook_delivery_leases l where l.delivery_id = webhook_deliveries.id and l.store_id = webhook_deliveries.store_id`.execute(db);
  await db.schema.dropTable(LEASES).ifExists().execute();
}
