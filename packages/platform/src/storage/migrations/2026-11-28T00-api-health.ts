// API health: calls to deprecated Admin API versions counted per caller (a public app or a private
// app, in a store), per version and route pattern, added to by every node's periodic flush; the
// mark that an app was told of a version's coming sunset (one row per app and version, so it is
// told once); and the operator's brown-out windows, read by every node. Frozen once landed.
import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migration-dialect.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  const pg = dialect === 'postgres';
  await db.schema
    .createTable('api_version_usage')
    .addColumn('caller_kind', 'text', (c) => c.notNull())
    .addColumn('caller_id', 'bigint', (c) => c.notNull())
    .addColumn('store_id', 'bigint', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('route', 'text', (c) => c.notNull())
    .addColumn('calls', 'bigint', (c) => c.notNull())
    .addColumn('first_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('api_version_usage_pk', ['caller_kind', 'caller_id', 'version', 'route', 'store_id'])
    .execute();
  // The maintenance round looks for recent callers of one version.
  await db.schema.createIndex('api_version_usage_recent').on('api_version_usage').columns(['version', 'last_seen_at']).execute();
  await db.schema
    .createTable('api_version_notices')
    .addColumn('caller_kind', 'text', (c) => c.notNull())
    .addColumn('caller_id', 'bigint', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('store_id', 'bigint', (c) => c.notNull())
    .addColumn('notified_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('api_version_notices_pk', ['caller_kind', 'caller_id', 'version'])
    .execute();
  const table = db.schema.createTable('api_version_brownouts');
  await (pg
    ? table.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
  )
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('starts_at', 'bigint', (c) => c.notNull())
    .addColumn('ends_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('api_version_brownouts').ifExists().execute();
  await db.schema.dropTable('api_version_notices').ifExists().execute();
  await db.schema.dropTable('api_version_usage').ifExists().execute();
}
