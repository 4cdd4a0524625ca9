// The store's own record as apps read it (GET /shop): the currency its prices are in and its time
// zone. Existing stores get the defaults a new store gets when none are given.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('stores')
    .addColumn('currency', 'text', (c) => c.notNull().defaultTo('USD'))
    .execute();
  await db.schema
    .alterTable('stores')
    .addColumn('timezone', 'text', (c) => c.notNull().defaultTo('UTC'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('stores').dropColumn('timezone').execute();
  await db.schema.alterTable('stores').dropColumn('currency').execute();
}
