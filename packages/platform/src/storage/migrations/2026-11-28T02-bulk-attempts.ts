// Bulk exports: how many times a worker has claimed each operation, so that one which fails on
// every attempt is ended as failed instead of being taken over forever. Frozen once landed.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('bulk_operations')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('bulk_operations').dropColumn('attempts').execute();
}
