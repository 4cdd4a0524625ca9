// Webhook attempts gain the store of their delivery, so the worker writes and the delivery log reads
// them by (store_id, delivery_id): the one webhook table that did not say which store a row belongs
// to. Existing attempts take their delivery's store. Frozen once landed.
//
// SQLite cannot add a NOT NULL column without a default, so the column arrives with default 0 and
// every row is filled at once; on PostgreSQL the default is dropped again, so an attempt written
// without its store is refused. The index on delivery_id alone becomes one led by store_id.
import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migration-dialect.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  const pg = dialect === 'postgres';
  await sql`alter table webhook_attempts add column store_id bigint not null default 0`.execute(db);
  // An attempt whose delivery is gone is pruned by age anyway; it keeps 0 until then.
  await sql`update webhook_attempts set store_id = coalesce(
      (select d.store_id from webhook_deliveries d where d.id = webhook_attempts.delivery_id), 0)`.execute(db);
  if (pg) await sql`alter table webhook_attempts alter column store_id drop default`.execute(db);
  await sql`drop index if exists webhook_attempts_delivery`.execute(db);
  await sql`create index webhook_attempts_store_delivery on webhook_attempts (store_id, delivery_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists webhook_attempts_store_delivery`.execute(db);
  await sql`create index webhook_attempts_delivery on webhook_attempts (delivery_id)`.execute(db);
  await sql`alter table webhook_attempts drop column store_id`.execute(db);
}
