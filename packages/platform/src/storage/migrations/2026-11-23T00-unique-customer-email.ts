// Keys the database itself enforces, so that two transactions running at once cannot both pass a
// check made before their writes:
// - customers: one customer per email in a store. Refused when rows already break it (an earlier
//   version let two simultaneous creates through on PostgreSQL): silently dropping or renaming a
//   customer is not the migration's call, so it stops and says which stores to clean up.
// - webhook_subscriptions already has its unique key on (store_id, owner, topic, address)
//   (webhook_subscriptions_unique); a second index on the same columns would only cost writes.
// - authorization_codes by installation: uninstalls and grant changes end every open code of an
//   installation, which without an index reads the whole table.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const duplicates = await sql<{ store_id: number }>`
    select store_id from customers group by store_id, email having count(*) > 1`.execute(db);
  if (duplicates.rows.length > 0) {
    const stores = [...new Set(duplicates.rows.map((r) => String(r.store_id)))];
    throw new Error(
      `cannot make customer emails unique: ${duplicates.rows.length} email(s) belong to more than one customer of the same store ` +
        `(store ids ${stores.slice(0, 20).join(', ')}${stores.length > 20 ? ', …' : ''}). ` +
        'Give each of those customers its own email (select store_id, email from customers group by store_id, email having count(*) > ' +
        '1), then migrate again.',
    );
  }
  await db.schema.createIndex('customers_store_email').on('customers').columns(['store_id', 'email']).unique().execute();
  await db.schema.createIndex('authorization_codes_installation').on('authorization_codes').column('installation_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('authorization_codes_installation').ifExists().execute();
  await db.schema.dropIndex('customers_store_email').ifExists().execute();
}
