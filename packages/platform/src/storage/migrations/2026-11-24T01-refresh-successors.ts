// When an access token was first used at the Admin API. A rotated refresh token presented again
// gets the same successor pair only while neither successor has been used, so the platform has to
// know whether the successor access token ever authenticated a call.
// Tokens issued before this migration count as used: nothing recorded whether they were, and
// treating them as unused would let an old refresh token fetch a pair an app may already be using.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('access_tokens').addColumn('used_at', 'bigint').execute();
  await sql`update access_tokens set used_at = created_at`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('access_tokens').dropColumn('used_at').execute();
}
