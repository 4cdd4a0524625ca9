// The one statement mechanism: a query defined once with typed parameters, run through the runner
// the database's kind and the caller's scope call for. On SQLite the connection keeps statements
// prepared and counts writes; a 'when-idle' write waits for an open transaction instead of joining
// it. On PostgreSQL a defined query becomes a named statement of the connection at its first run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../src/storage/database.ts';
import { defineQuery, queryRunner } from '../src/storage/prepared-query.ts';
import { DIALECTS, freshPostgresUrl } from './harness.ts';

async function open(dialect: string): Promise<{ db: Db; done(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const db = openDatabase({ dialect: 'sqlite', path: ':memory:' });
    return { db, done: () => db.close() };
  }
  const fresh = await freshPostgresUrl();
  // One connection, so the statements it prepared can be read back on it.
  const db = openDatabase({ dialect: 'postgres', url: fresh.url }, { poolSize: 1 });
  return {
    db,
    done: async () => {
      await db.close();
      await fresh.drop();
    },
  };
}

describe.each(DIALECTS)('defineQuery and queryRunner (%s)', (dialect) => {
  let db: Db;
  let done: () => Promise<void>;
  const insert = () =>
    defineQuery<unknown, { id: number; name: string }>((p) =>
      db.kysely.insertInto('items' as never).values({ id: p('id'), name: p('name') } as never),
    );
  const byId = () =>
    defineQuery<{ name: string }, { id: number }>((p) =>
      db.kysely
        .selectFrom('items' as never)
        .select('name' as never)
        .where('id' as never, '=', p('id') as never),
    );

  beforeAll(async () => {
    ({ db, done } = await open(dialect));
    await db.kysely.schema
      .createTable('items')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('name', 'text')
      .execute();
  });
  afterAll(() => done());

  it('runs a defined query with its parameters by name, a fixed value staying as written', async () => {
    const run = queryRunner(db);
    expect(await run.run(insert(), { id: 1, name: 'one' })).toBe(1);
    const fixed = defineQuery<{ name: string }>((p) =>
      db.kysely
        .selectFrom('items' as never)
        .select('name' as never)
        .where('id' as never, '=', p<number>('id') as never)
        .where('name' as never, '<>', 'none' as never),
    );
    expect(await run.first(fixed, { id: 1 })).toEqual({ name: 'one' });
    expect(await run.all(byId(), { id: 2 })).toEqual([]);
    await expect(run.first(byId(), {} as { id: number })).rejects.toThrow(/missing query parameter id/);
  });

  it('runs inside a Kysely transaction when given one, and rolls back with it', async () => {
    const q = insert();
    await expect(
      db.kysely.transaction().execute(async (trx) => {
        await queryRunner(db, { scope: trx }).run(q, { id: 10, name: 'ten' });
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await queryRunner(db).first(byId(), { id: 10 })).toBeUndefined();
  });

  if (dialect === 'sqlite') {
    it('keeps statements prepared and counts only the writes that changed something', async () => {
      const sqlite = db.sqlite!;
      expect(sqlite.prepare('select 1')).toBe(sqlite.prepare('select 1'));
      const before = db.writes();
      const run = queryRunner(db);
      await run.first(byId(), { id: 1 });
      expect(db.writes()).toBe(before);
      const rename = defineQuery<unknown, { id: number; name: string }>((p) =>
        db.kysely
          .updateTable('items' as never)
          .set({ name: p('name') } as never)
          .where('id' as never, '=', p('id') as never),
      );
      expect(await run.run(rename, { id: 999, name: 'x' })).toBe(0);
      expect(db.writes()).toBe(before);
      expect(await run.run(rename, { id: 1, name: 'uno' })).toBe(1);
      expect(db.writes()).toBe(before + 1);
    });

    it("'when-idle' waits for an open transaction instead of joining it", async () => {
      const q = insert();
      let inside!: () => void;
      const opened = new Promise<void>((resolve) => {
        inside = resolve;
      });
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const trx = db.kysely
        .transaction()
        .execute(async (t) => {
          await queryRunner(db, { scope: t }).run(q, { id: 20, name: 'in the transaction' });
          inside();
          await held;
          throw new Error('undo');
        })
        .catch(() => 'rolled back');
      await opened;
      const whenIdle = queryRunner(db, { scope: 'when-idle' });
      expect(whenIdle.sync()).toBeUndefined();
      const idle = whenIdle.run(q, { id: 21, name: 'outside' });
      release();
      expect(await trx).toBe('rolled back');
      expect(await idle).toBe(1);
      const run = queryRunner(db);
      expect(await run.first(byId(), { id: 20 })).toBeUndefined();
      expect(await run.first(byId(), { id: 21 })).toEqual({ name: 'outside' });
      expect(whenIdle.sync()?.firstSync(byId(), { id: 21 })).toEqual({ name: 'outside' });
    });

    it('runs synchronously what runs outside a transaction, wrapped as asked', async () => {
      const calls: string[] = [];
      const run = queryRunner(db, {
        around: (work) => {
          calls.push('around');
          return work();
        },
      });
      await run.first(byId(), { id: 1 });
      expect(calls).toEqual(['around']);
    });
  } else {
    it('makes a defined query a named statement of the connection at its first run', async () => {
      // A text no other case here runs.
      const q = defineQuery<{ fresh: string }, { id: number }>((p) =>
        db.kysely
          .selectFrom('items' as never)
          .select('name as fresh' as never)
          .where('id' as never, '=', p('id') as never),
      );
      const prepared = async () =>
        (
          await db.kysely.executeQuery<{ n: number }>({
            sql: 'select count(*)::int as n from pg_prepared_statements where statement = $1',
            parameters: [q.compiled.sql],
            query: q.compiled.query,
            queryId: q.compiled.queryId,
          })
        ).rows[0]!.n;
      expect(await prepared()).toBe(0);
      await queryRunner(db).first(q, { id: 1 });
      expect(await prepared()).toBe(1);
      expect(queryRunner(db, { scope: 'when-idle' }).sync()).toBeUndefined();
    });
  }
});
