// Indexes for the maintenance round that deletes credentials past their last use (see
// domain/credential-retention.ts): each of its statements finds its rows through one of these
// instead of reading a whole table.
// - refresh_tokens (store_id, family_id, expires_at): whether a family still has a refresh token
//   that has not expired, and a family's refresh tokens when it has ended, each one index probe.
//   A grant adds one entry here per refresh token it issues.
// - access_tokens, authorization_codes, web_sessions, one_time_reveals (expires_at): the expired
//   rows. Expiry times grow with the clock, so new entries land at the end of the index.
// - token_families (created_at): the families old enough to have run out; (revoked_at), partial:
//   the revoked ones, few at any time.
//
// Locking: plain CREATE INDEX inside the migration's transaction, which blocks writes to the table
// while it builds; on a large database the indexes can be built beforehand with CREATE INDEX
// CONCURRENTLY under the same names (docs/operations.md), and `if not exists` then makes this step
// instant. Frozen once landed.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists refresh_tokens_family_expiry on refresh_tokens (store_id, family_id, expires_at)`.execute(db);
  await sql`create index if not exists access_tokens_expiry on access_tokens (expires_at)`.execute(db);
  await sql`create index if not exists authorization_codes_expiry on authorization_codes (expires_at)`.execute(db);
  await sql`create index if not exists token_families_created on token_families (created_at)`.execute(db);
  await sql`create index if not exists token_families_revoked on token_families (revoked_at) where revoked_at is not null`.execute(db);
  await sql`create index if not exists web_sessions_expiry on web_sessions (expires_at)`.execute(db);
  await sql`create index if not exists one_time_reveals_expiry on one_time_reveals (expires_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of [
    'one_time_reveals_expiry',
    'web_sessions_expiry',
    'token_families_revoked',
    'token_families_created',
    'authorization_codes_expiry',
    'access_tokens_expiry',
    'refresh_tokens_family_expiry',
  ]) {
    await db.schema.dropIndex(name).ifExists().execute();
  }
}
