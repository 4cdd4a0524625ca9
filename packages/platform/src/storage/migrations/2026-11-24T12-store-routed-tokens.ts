// Token families gain the store they belong to, so every query of a grant can name its store: the
// tokens, codes and installations it reads already carry store_id, and a family is the one row of
// a grant that did not. Existing families take the store of their tokens (or of their installation). Frozen once landed.
//
// SQLite cannot add a NOT NULL column without a default, so the column arrives with default 0 and
// every row is filled at once. On
// PostgreSQL the default is dropped again, so a family written without its store is refused.
import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migration-dialect.ts';

export async function up(db: Kysely<unknown>, dialect: MigrationDialect): Promise<void> {
  const pg = dialect === 'postgres';
  await sql`alter table token_families add column store_id bigint not null default 0`.execute(db);
  // The store of the family's own tokens (what every token lookup compares it with), else of its
  // installation; a family with neither is never read.
  await sql`update token_families set store_id = coalesce(
      (select r.store_id from refresh_tokens r where r.family_id = token_families.id limit 1),
      (select a.store_id from access_tokens a where a.family_id = token_families.id limit 1),
      (select i.store_id from installations i where i.id = token_families.installation_id),
      0)`.execute(db);
  if (pg) await sql`alter table token_families alter column store_id drop default`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table token_families drop column store_id`.execute(db);
}
