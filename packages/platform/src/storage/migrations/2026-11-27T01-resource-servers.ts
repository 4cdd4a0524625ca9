// The operator's own resource servers: services beside the platform that are handed an app's token
// and ask the platform, by token introspection, whether it is live and what it allows. Each has a
// client_id and a secret the operator created with the CLI; only the SHA-256 hash of the secret is
// kept, since the platform checks it and never has to present it anywhere. Not a store's record:
// one credential asks about tokens of any store. Frozen once landed.
import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migration-dialect.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  const pg = dialect === 'postgres';
  const table = db.schema.createTable('resource_servers');
  await (pg
    ? table.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
  )
    .addColumn('client_id', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('resource_servers').ifExists().execute();
}
