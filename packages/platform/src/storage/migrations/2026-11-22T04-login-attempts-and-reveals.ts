// Login protection against password guessing, and secrets shown only once:
// - login_attempts: failed logins counted per key (an account or an address) in a window, and the
//   lock that follows too many of them. In the database so every platform node sees the same count.
// - one_time_reveals: a secret created by a POST (a private app's token, a client secret) waiting to
//   be shown once by the GET the POST redirects to (303), bound to the browser session that made it.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('login_attempts')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('window_started_at', 'bigint', (c) => c.notNull())
    .addColumn('locked_until', 'bigint')
    .execute();
  await db.schema
    .createTable('one_time_reveals')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('session_hash', 'text', (c) => c.notNull())
    .addColumn('payload_enc', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('one_time_reveals').execute();
  await db.schema.dropTable('login_attempts').execute();
}
