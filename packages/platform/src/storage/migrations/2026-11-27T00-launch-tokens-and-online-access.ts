// Access without a redirect of the app's own, and access bound to one merchant:
// - apps.managed_install: the platform runs consent for the scopes the app declares, and opens the
//   app with a launch token it exchanges; off for every app that exists already.
// - launch_token_uses: the launch tokens already exchanged, by store and token id, kept until the
//   token has expired (after that it is refused for its expiry anyway). Its primary key is what
//   makes a launch token single use, also between nodes.
// - token_families.merchant_id and authorization_codes.merchant_id: set for online access, which is
//   bound to the merchant who opened the app and ends when they log out; null for the store's own
//   (offline) access, as every row so far. Nullable columns without a default change only the
//   catalogue: instant, whatever the tables hold. The partial index finds a merchant's live online
//   families at logout without reading the store's others.
// Frozen once landed.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('apps')
    .addColumn('managed_install', 'integer', (c) => c.notNull().defaultTo(sql`0`))
    .execute();
  await db.schema
    .createTable('launch_token_uses')
    .addColumn('store_id', 'bigint', (c) => c.notNull())
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('launch_token_uses_pk', ['store_id', 'jti'])
    .execute();
  await sql`create index if not exists launch_token_uses_expiry on launch_token_uses (expires_at)`.execute(db);
  await db.schema.alterTable('token_families').addColumn('merchant_id', 'bigint').execute();
  await db.schema.alterTable('authorization_codes').addColumn('merchant_id', 'bigint').execute();
  await sql`create index if not exists token_families_merchant on token_families (store_id, merchant_id)
    where merchant_id is not null and revoked_at is null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('token_families_merchant').ifExists().execute();
  await db.schema.alterTable('authorization_codes').dropColumn('merchant_id').execute();
  await db.schema.alterTable('token_families').dropColumn('merchant_id').execute();
  await db.schema.dropTable('launch_token_uses').ifExists().execute();
  await db.schema.alterTable('apps').dropColumn('managed_install').execute();
}
