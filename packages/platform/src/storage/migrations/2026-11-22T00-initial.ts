// Initial schema. Frozen once landed: later changes go in new dated migrations.
import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migration-dialect.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  const pg = dialect === 'postgres';
  // An auto-incrementing integer primary key on either dialect.
  const id = <TB extends string>(t: CreateTableBuilder<TB>) =>
    pg
      ? t.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  const big = 'bigint';

  await id(db.schema.createTable('merchants'))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', big, (c) => c.notNull())
    .execute();
  await id(db.schema.createTable('stores'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('owner_merchant_id', big, (c) => c.notNull().references('merchants.id'))
    .addColumn('created_at', big, (c) => c.notNull())
    .execute();
  await id(db.schema.createTable('partners'))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', big, (c) => c.notNull())
    .execute();
  await id(db.schema.createTable('apps'))
    .addColumn('client_id', 'text', (c) => c.notNull().unique())
    .addColumn('partner_id', big, (c) => c.references('partners.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('app_url', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('client_secret_enc', 'text', (c) => c.notNull())
    .addColumn('previous_secret_enc', 'text')
    .addColumn('previous_secret_expires_at', big)
    .addColumn('created_at', big, (c) => c.notNull())
    .execute();
  await id(db.schema.createTable('installations'))
    .addColumn('store_id', big, (c) => c.notNull().references('stores.id'))
    .addColumn('app_id', big, (c) => c.notNull().references('apps.id'))
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('installed_at', big, (c) => c.notNull())
    .addColumn('uninstalled_at', big)
    .addUniqueConstraint('installations_store_app', ['store_id', 'app_id'])
    .execute();
  await db.schema
    .createTable('authorization_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('app_id', big, (c) => c.notNull())
    .addColumn('store_id', big, (c) => c.notNull())
    .addColumn('installation_id', big, (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'text')
    .addColumn('expires_at', big, (c) => c.notNull())
    .addColumn('used_at', big)
    .addColumn('family_id', 'text')
    .addColumn('created_at', big, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('token_families')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('installation_id', big, (c) => c.notNull())
    .addColumn('created_at', big, (c) => c.notNull())
    .addColumn('revoked_at', big)
    .execute();
  await db.schema.createIndex('token_families_installation').on('token_families').column('installation_id').execute();
  // Tokens are found by hash only; revoking a family or an installation marks token_families, and
  // every lookup joins it. So a grant writes one B-tree page per token and nothing else (each
  // extra index would be another random page in every group commit), and on SQLite the hash is
  // the table's own key (WITHOUT ROWID) instead of an index beside a rowid table.
  for (const table of ['access_tokens', 'refresh_tokens'] as const) {
    let t = db.schema
      .createTable(table)
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('family_id', 'text', (c) => c.notNull())
      .addColumn('installation_id', big, (c) => c.notNull())
      .addColumn('store_id', big, (c) => c.notNull())
      .addColumn('app_id', big, (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('expires_at', big, (c) => c.notNull())
      .addColumn('revoked_at', big)
      .addColumn('created_at', big, (c) => c.notNull());
    if (table === 'refresh_tokens') t = t.addColumn('access_expires_at', big, (c) => c.notNull()).addColumn('rotated_at', big);
    if (!pg) t = t.modifyEnd(sql`without rowid`);
    await t.execute();
  }
  await id(db.schema.createTable('private_apps'))
    .addColumn('store_id', big, (c) => c.notNull().references('stores.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('webhook_secret_enc', 'text', (c) => c.notNull())
    .addColumn('created_at', big, (c) => c.notNull())
    .addColumn('revoked_at', big)
    .execute();
  await db.schema
    .createTable('web_sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('subject_id', big, (c) => c.notNull())
    .addColumn('store_id', big)
    .addColumn('expires_at', big, (c) => c.notNull())
    .addColumn('created_at', big, (c) => c.notNull())
    .execute();

  await id(db.schema.createTable('products'))
    .addColumn('store_id', big, (c) => c.notNull().references('stores.id'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('body_html', 'text', (c) => c.notNull())
    .addColumn('vendor', 'text', (c) => c.notNull())
    .addColumn('product_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('price', 'text', (c) => c.notNull())
    .addColumn('sku', 'text', (c) => c.notNull())
    .addColumn('inventory_quantity', 'integer', (c) => c.notNull())
    .addColumn('tags', 'text', (c) => c.notNull())
    .addColumn('created_at', big, (c) => c.notNull())
    .addColumn('updated_at', big, (c) => c.notNull())
    .execute();
  await id(db.schema.createTable('customers'))
    .addColumn('store_id', big, (c) => c.notNull().references('stores.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('first_name', 'text', (c) => c.notNull())
    .addColumn('last_name', 'text', (c) => c.notNull())
    .addColumn('phone', 'text')
    .addColumn('created_at', big, (c) => c.notNull())
    .addColumn('updated_at', big, (c) => c.notNull())
    .execute();
  await id(db.schema.createTable('orders'))
    .addColumn('store_id', big, (c) => c.notNull().references('stores.id'))
    .addColumn('customer_id', big)
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('financial_status', 'text', (c) => c.notNull())
    .addColumn('fulfillment_status', 'text')
    .addColumn('total_price', 'text', (c) => c.notNull())
    .addColumn('line_items', 'text', (c) => c.notNull())
    .addColumn('created_at', big, (c) => c.notNull())
    .addColumn('updated_at', big, (c) => c.notNull())
    .execute();
  // Keyset pagination walks (store_id, id).
  for (const table of ['products', 'customers', 'orders']) {
    await db.schema.createIndex(`${table}_store_id`).on(table).columns(['store_id', 'id']).execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of [
    'orders',
    'customers',
    'products',
    'web_sessions',
    'private_apps',
    'refresh_tokens',
    'access_tokens',
    'token_families',
    'authorization_codes',
    'installations',
    'apps',
    'partners',
    'stores',
    'merchants',
  ]) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
