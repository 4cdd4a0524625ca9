// Group commit on SQLite: many grants, one transaction, each under its own savepoint.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../src/storage/db.ts';
import { SqliteGroupCommit } from '../src/storage/group-commit.ts';
import { migrateToLatest } from '../src/storage/migrate.ts';
import { defineQuery } from '../src/storage/prepared-query.ts';

describe('SqliteGroupCommit', () => {
  let db: Db;
  beforeAll(async () => {
    db = openDatabase({ dialect: 'sqlite', path: ':memory:' });
    await migrateToLatest(db);
  });
  afterAll(async () => db.close());

  it('runs concurrent work in shared transactions; a failing step is rolled back alone', async () => {
    const gc = new SqliteGroupCommit(db);
    const insert = defineQuery(db.kysely, (p) => db.kysely.insertInto('token_families').values({ id: p('id'), installation_id: 1, created_at: 0, revoked_at: null }));
    const ids = Array.from({ length: 40 }, () => randomUUID());
    const results = await Promise.allSettled(
      ids.map((id, i) =>
        gc.run(async (q) => {
          await q.run(insert, { id });
          if (i % 10 === 3) throw new Error(`step ${i} fails after writing`);
          return i;
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(4);
    expect(results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<number>).value)).toEqual(ids.map((_, i) => i).filter((i) => i % 10 !== 3));
    const rows = await db.kysely.selectFrom('token_families').select('id').execute();
    expect(new Set(rows.map((r) => r.id))).toEqual(new Set(ids.filter((_, i) => i % 10 !== 3)));
    expect(db.sqlite!.inTransaction).toBe(false);
  });

  it('each step sees the steps before it in the same batch', async () => {
    const gc = new SqliteGroupCommit(db);
    const id = randomUUID();
    const insert = defineQuery(db.kysely, (p) => db.kysely.insertInto('token_families').values({ id: p('id'), installation_id: 2, created_at: 0, revoked_at: null }));
    const find = defineQuery(db.kysely, (p) => db.kysely.selectFrom('token_families').select('id').where('id', '=', p('id')));
    const [a, b] = await Promise.all([
      gc.run(async (q) => (await q.run(insert, { id })) === 1),
      gc.run(async (q) => (await q.first(find, { id })) !== undefined),
    ]);
    expect(a).toBe(true);
    expect(b).toBe(true);
  });

});
