// Whether an app's authorization responses carry `iss` on the redirect with the code. Off for every
// app that exists already: that redirect is signed, and a client that signs the percent-encoded
// query cannot match a signature over a URL-valued parameter, so turning it on is the app's choice.
// Frozen once landed.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('apps')
    .addColumn('authorization_iss', 'integer', (c) => c.notNull().defaultTo(sql`0`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('apps').dropColumn('authorization_iss').execute();
}
