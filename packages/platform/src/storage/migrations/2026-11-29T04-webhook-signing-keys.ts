// The platform's Ed25519 key pairs that sign webhooks asymmetrically (Standard Webhooks `v1a`),
// and the app setting that asks for them. The keys are the platform's, not a store's: every node
// signs with the same ones, so they live here, the private key sealed under the master key like any
// other secret. `active` is 1 on the one key that signs alone outside a rotation and null on the
// others; being unique, it lets two nodes that create the first key at once agree on one (the
// second insert does nothing). A replaced key keeps signing until `retires_at`. Frozen once landed.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('private_key_enc', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('retires_at', 'bigint')
    .execute();
  await db.schema
    .alterTable('apps')
    .addColumn('webhook_signature_ed25519', 'integer', (c) => c.notNull().defaultTo(sql`0`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('apps').dropColumn('webhook_signature_ed25519').execute();
  await db.schema.dropTable('webhook_signing_keys').ifExists().execute();
}
