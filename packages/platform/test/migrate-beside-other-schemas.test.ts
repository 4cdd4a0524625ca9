// Several platforms may share one PostgreSQL database, each in a schema of its own (this suite
// does; an operator may too). Before every run the migrator asks whether its bookkeeping tables
// exist; answering that by reading every schema's tables made a migration fail with "schema …
// does not exist" whenever another schema was dropped while it read them (seen as rare failures of
// unrelated suites). The question is answered from the platform's own schema only.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../src/storage/database.ts';
import { storageOn } from '../src/storage/sql-storage.ts';
import { freshPostgresUrl } from './harness.ts';

function schemaOf(url: string): string {
  const options = new URL(url).searchParams.get('options') ?? '';
  const schema = /search_path=(\w+)/.exec(options)?.[1];
  if (!schema) throw new Error(`no search_path in ${options}`);
  return schema;
}

describe.skipIf(!process.env.TEST_PG_URL)('migrations beside other schemas of the database (postgres)', () => {
  it("the migrator's view of the database is its own schema: another schema's tables are never read", async () => {
    const mine = await freshPostgresUrl();
    const other = await freshPostgresUrl();
    const neighbour = new pg.Client({ connectionString: other.url });
    await neighbour.connect();
    await neighbour.query('create table held (id serial primary key, note text)');
    const db = openDatabase({ dialect: 'postgres', url: mine.url }, { poolSize: 1 });
    try {
      await storageOn(db).migrate();
      const tables = await db.kysely.introspection.getTables({ withInternalKyselyTables: true });
      expect(new Set(tables.map((t) => t.schema))).toEqual(new Set([schemaOf(mine.url)]));
      const names = tables.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['kysely_migration', 'kysely_migration_lock', 'products']));
      expect(names).not.toContain('held');
      const products = tables.find((t) => t.name === 'products');
      expect(products?.columns.find((c) => c.name === 'id')).toMatchObject({ isNullable: false });
      // Without the internal tables, as Kysely's own introspector answers.
      const plain = await db.kysely.introspection.getTables();
      expect(plain.map((t) => t.name)).not.toContain('kysely_migration');
    } finally {
      await neighbour.end();
      await db.close();
      await mine.drop();
      await other.drop();
    }
  });
});
