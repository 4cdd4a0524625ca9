// A private app's webhook secret can be rotated like a public app's client secret: the secret it
// replaces keeps signing (and is kept sealed) until the merchant finishes the rotation or the
// overlap ends, so these columns mirror `apps.previous_secret_enc` and its expiry.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('private_apps').addColumn('previous_webhook_secret_enc', 'text').execute();
  await db.schema.alterTable('private_apps').addColumn('previous_webhook_secret_expires_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('private_apps').dropColumn('previous_webhook_secret_expires_at').execute();
  await db.schema.alterTable('private_apps').dropColumn('previous_webhook_secret_enc').execute();
}
