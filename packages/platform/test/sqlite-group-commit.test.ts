// Group commit on SQLite: many grants, one transaction, each under its own savepoint.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../src/storage/database.ts';
import { durabilityFor } from '../src/storage/durability.ts';
import { SqliteGroupCommit } from '../src/storage/sqlite-group-commit.ts';
import { migrateToLatest } from '../src/storage/migrate.ts';
import { preparedStatements } from '../src/storage/repositories/prepared-statements.ts';

const groupCommit = (db: Db) => new SqliteGroupCommit(db, durabilityFor(db.kysely, db.sqlite), preparedStatements(db.kysely));
const durable = (db: Db) => durabilityFor(db.kysely, db.sqlite);

describe('SqliteGroupCommit', () => {
  let db: Db;
  beforeAll(async () => {
    db = openDatabase({ dialect: 'sqlite', path: ':memory:' });
    await migrateToLatest(db);
  });
  afterAll(async () => db.close());

  it('runs concurrent work in shared transactions; a failing step is rolled back alone', async () => {
    const gc = groupCommit(db);
    const ids = Array.from({ length: 40 }, () => randomUUID());
    const results = await Promise.allSettled(
      ids.map((id, i) =>
        gc.run(async (q) => {
          await q.insertFamily(1, id, 1, 0);
          if (i % 10 === 3) throw new Error(`step ${i} fails after writing`);
          return i;
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(4);
    expect(results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<number>).value)).toEqual(
      ids.map((_, i) => i).filter((i) => i % 10 !== 3),
    );
    const rows = await db.kysely.selectFrom('token_families').select('id').execute();
    expect(new Set(rows.map((r) => r.id))).toEqual(new Set(ids.filter((_, i) => i % 10 !== 3)));
    expect(db.sqlite!.inTransaction).toBe(false);
  });

  it('each step sees the steps before it in the same batch', async () => {
    const gc = groupCommit(db);
    const id = randomUUID();
    const pair = {
      familyId: id,
      installationId: 2,
      storeId: 1,
      appId: 1,
      scopes: 'read_products',
      accessHash: `a-${id}`,
      refreshHash: `r-${id}`,
      accessExpiresAt: 1,
      refreshExpiresAt: 2,
      now: 0,
    };
    const [a, b] = await Promise.all([
      gc.run(async (q) => {
        await q.insertFamily(1, id, 2, 0);
        await q.insertPair(pair);
        return true;
      }),
      gc.run(async (q) => (await q.refreshByHash(pair.storeId, `r-${id}`)) !== undefined),
    ]);
    expect(a).toBe(true);
    expect(b).toBe(true);
  });

  it('on a file database: batches commit with the WAL flushed before answering, and synchronous=FULL is restored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'storegate-gc-'));
    const file = openDatabase({ dialect: 'sqlite', path: join(dir, 'gc.db') });
    try {
      await migrateToLatest(file);
      const gc = groupCommit(file);
      const ids = Array.from({ length: 30 }, () => randomUUID());
      await Promise.all(ids.map((id) => gc.run((q) => q.insertFamily(1, id, 4, 0))));
      expect(file.sqlite!.pragma('synchronous', { simple: true })).toBe(2);
      // Another connection (another process) sees every answered grant.
      const other = openDatabase({ dialect: 'sqlite', path: join(dir, 'gc.db') });
      expect((await other.kysely.selectFrom('token_families').select('id').execute()).length).toBe(30);
      await other.close();
    } finally {
      await file.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a durable transaction on a file database: committed, flushed, visible to another connection, synchronous=FULL restored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'storegate-dt-'));
    const file = openDatabase({ dialect: 'sqlite', path: join(dir, 'dt.db') });
    try {
      await migrateToLatest(file);
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          durable(file).transaction(async (trx) =>
            trx
              .insertInto('token_families')
              .values({ id: `f${i}`, installation_id: 5, store_id: 1, created_at: 0, revoked_at: null })
              .execute()
              .then(() => i),
          ),
        ),
      );
      expect(results).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(file.sqlite!.pragma('synchronous', { simple: true })).toBe(2);
      await expect(
        durable(file).transaction(async (trx) => {
          await trx
            .insertInto('token_families')
            .values({ id: 'rolled-back', installation_id: 5, store_id: 1, created_at: 0, revoked_at: null })
            .execute();
          throw new Error('no');
        }),
      ).rejects.toThrow('no');
      expect(file.sqlite!.pragma('synchronous', { simple: true })).toBe(2);
      const other = openDatabase({ dialect: 'sqlite', path: join(dir, 'dt.db') });
      expect((await other.kysely.selectFrom('token_families').select('id').orderBy('id').execute()).map((r) => r.id)).toEqual(
        results.map((i) => `f${i}`),
      );
      await other.close();
    } finally {
      await file.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the background checkpointer moves committed pages from the WAL into the database file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'storegate-ckpt-'));
    const path = join(dir, 'ckpt.db');
    const file = openDatabase({ dialect: 'sqlite', path });
    try {
      await migrateToLatest(file);
      // Let the checkpointer catch up with the migrations, then write well past a page's worth.
      await new Promise((r) => setTimeout(r, 600));
      const before = statSync(path).size;
      await durable(file).transaction(async (trx) => {
        for (let i = 0; i < 2000; i++)
          await trx
            .insertInto('token_families')
            .values({ id: `c${i}`.padEnd(40, 'x'), installation_id: 6, store_id: 1, created_at: 0, revoked_at: null })
            .execute();
      });
      const deadline = Date.now() + 5000;
      while (statSync(path).size <= before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(statSync(path).size).toBeGreaterThan(before);
    } finally {
      await file.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
