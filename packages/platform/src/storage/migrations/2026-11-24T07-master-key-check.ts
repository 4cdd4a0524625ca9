// What the database knows of the master key its secrets are sealed with: the key's public id under
// `current` (and after a change, the replaced key's id under `previous`), never the key. Beside
// them, under `data:` names, the keys that must outlive a change of the master key (the refresh
// successor derivation key and the cursor signing key), sealed like any other secret. One row per
// name, so two nodes starting at once on a fresh database cannot both record their own key.
// Frozen once landed.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('master_keys')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('master_keys').ifExists().execute();
}
