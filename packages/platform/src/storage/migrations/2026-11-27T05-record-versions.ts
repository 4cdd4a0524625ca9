// A version number on every record the Admin API lets apps change (products, customers, orders,
// webhook subscriptions): it grows by one with each change, so two changes within the same
// millisecond still differ. The ETag of a record is made of it, and a conditional write compares
// it in the WHERE clause of its UPDATE or DELETE. Existing records start at 1. Frozen once landed.
import { sql, type Kysely } from 'kysely';

const TABLES = ['products', 'customers', 'orders', 'webhook_subscriptions'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES)
    await db.schema
      .alterTable(table)
      .addColumn('version', 'integer', (c) => c.notNull().defaultTo(sql`1`))
      .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) await db.schema.alterTable(table).dropColumn('version').execute();
}
