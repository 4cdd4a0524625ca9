// Bulk exports: the operations, the snapshot of the rows each one exports (copied in one
// transaction when it starts, so it can be read back in pieces, resumed after a crash, and still
// be the store at one instant), and the finished JSON Lines file in chunks, kept in the database
// so that every node of a deployment can serve the download. Frozen once landed.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = db.getExecutor().adapter.constructor.name.startsWith('Postgres');
  const ops = db.schema.createTable('bulk_operations');
  await (pg
    ? ops.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    : ops.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
  )
    .addColumn('store_id', 'bigint', (c) => c.notNull())
    .addColumn('app_id', 'bigint')
    .addColumn('private_app_id', 'bigint')
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('filters', 'text', (c) => c.notNull())
    .addColumn('fields', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('rows', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('position', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('chunks', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('snapshot_at', 'bigint')
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('bulk_operations_owner')
    .on('bulk_operations')
    .columns(['store_id', 'app_id', 'private_app_id', 'id'])
    .execute();
  await db.schema.createIndex('bulk_operations_status').on('bulk_operations').columns(['status', 'claimed_until']).execute();
  await db.schema
    .createTable('bulk_operation_rows')
    .addColumn('operation_id', 'bigint', (c) => c.notNull())
    .addColumn('id', 'bigint', (c) => c.notNull())
    .addColumn('row', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('bulk_operation_rows_pk', ['operation_id', 'id'])
    .execute();
  await db.schema
    .createTable('bulk_operation_chunks')
    .addColumn('operation_id', 'bigint', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('start', 'bigint', (c) => c.notNull())
    .addColumn('data', pg ? 'bytea' : 'blob', (c) => c.notNull())
    .addPrimaryKeyConstraint('bulk_operation_chunks_pk', ['operation_id', 'seq'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['bulk_operation_chunks', 'bulk_operation_rows', 'bulk_operations']) await db.schema.dropTable(t).ifExists().execute();
}
