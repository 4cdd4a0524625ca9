// Bulk exports: the operations, the snapshot of the rows each one exports (copied in one
// transaction when it starts, so it can be read back in pieces, resumed after a crash, and still
// be the store at one instant: one table per resource, with the resource's own columns), and the
// finished JSON Lines file in chunks, kept in the database so that every node of a deployment can
// serve the download. Frozen once landed.
import { type Kysely, sql } from 'kysely';
import type { MigrationDialect } from '../migration-dialect.ts';

type Column = [name: string, type: 'text' | 'bigint' | 'integer', nullable?: true];
const TIMES: Column[] = [
  ['created_at', 'bigint'],
  ['updated_at', 'bigint'],
];
const SNAPSHOT_COLUMNS: Record<string, Column[]> = {
  products: [
    ['title', 'text'],
    ['body_html', 'text'],
    ['vendor', 'text'],
    ['product_type', 'text'],
    ['status', 'text'],
    ['price', 'text'],
    ['sku', 'text'],
    ['inventory_quantity', 'integer'],
    ['tags', 'text'],
    ...TIMES,
  ],
  customers: [['email', 'text'], ['first_name', 'text'], ['last_name', 'text'], ['phone', 'text', true], ...TIMES],
  orders: [
    ['customer_id', 'bigint', true],
    ['email', 'text'],
    ['currency', 'text'],
    ['financial_status', 'text'],
    ['fulfillment_status', 'text', true],
    ['total_price', 'text'],
    ['line_items', 'text'],
    ...TIMES,
  ],
};

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  const pg = dialect === 'postgres';
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
  for (const [resource, columns] of Object.entries(SNAPSHOT_COLUMNS)) {
    let table = db.schema
      .createTable(`bulk_rows_${resource}`)
      .addColumn('operation_id', 'bigint', (c) => c.notNull())
      .addColumn('id', 'bigint', (c) => c.notNull())
      .addColumn('store_id', 'bigint', (c) => c.notNull());
    for (const [name, type, nullable] of columns) table = table.addColumn(name, type, (c) => (nullable ? c : c.notNull()));
    await table.addPrimaryKeyConstraint(`bulk_rows_${resource}_pk`, ['operation_id', 'id']).execute();
  }
  await db.schema
    .createTable('bulk_operation_chunks')
    .addColumn('operation_id', 'bigint', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('start', 'bigint', (c) => c.notNull())
    .addColumn('data', pg ? 'bytea' : 'blob', (c) => c.notNull())
    .addPrimaryKeyConstraint('bulk_operation_chunks_pk', ['operation_id', 'seq'])
    .execute();
  // JSON Lines compress well, but compressing each megabyte as it is written and inflating it at
  // every download costs more CPU than the disk it saves for a file kept a few days.
  if (pg) await sql`alter table bulk_operation_chunks alter column data set storage external`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['bulk_operation_chunks', 'bulk_rows_products', 'bulk_rows_customers', 'bulk_rows_orders', 'bulk_operations'])
    await db.schema.dropTable(t).ifExists().execute();
}
