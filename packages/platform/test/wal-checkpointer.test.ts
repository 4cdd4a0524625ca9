// The SQLite WAL checkpointer's thread lives only while writes come: none on a node that only
// reads, one from the first write, gone again (after a last checkpoint) once writes stop.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openDatabase, type Db } from '../src/storage/database.ts';
import { migrateToLatest } from '../src/storage/migrate.ts';
import { startWalCheckpointer } from '../src/storage/wal-checkpointer.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'storegate-wal-'));
  dirs.push(dir);
  return join(dir, 'wal.db');
};

describe('startWalCheckpointer', () => {
  it('starts no thread until a write, and ends it once writes stop', async () => {
    const path = tempFile();
    const db = openDatabase({ dialect: 'sqlite', path });
    await migrateToLatest(db);
    await db.close();
    const checkpointer = startWalCheckpointer(path, { intervalMs: 10, idleMs: 50 });
    try {
      expect(checkpointer.running).toBe(false);
      checkpointer.wrote();
      expect(checkpointer.running).toBe(true);
      await vi.waitFor(() => expect(checkpointer.running).toBe(false), { timeout: 5000, interval: 20 });
      // The next write brings a thread back.
      checkpointer.wrote();
      expect(checkpointer.running).toBe(true);
    } finally {
      await checkpointer.stop();
    }
    expect(checkpointer.running).toBe(false);
    // Stopped for good: writes after stop() start nothing.
    checkpointer.wrote();
    expect(checkpointer.running).toBe(false);
  });

  it('keeps checkpointing writes of a database that writes, and the last ones after writes stop', async () => {
    const path = tempFile();
    const db: Db = openDatabase({ dialect: 'sqlite', path });
    try {
      await migrateToLatest(db);
      const before = statSync(path).size;
      db.sqlite!.exec('create table filler (v text)');
      const insert = db.sqlite!.prepare('insert into filler (v) values (?)');
      for (let i = 0; i < 500; i++) insert.run('x'.repeat(200));
      // The pages reach the database file without any further write to prompt it.
      await vi.waitFor(() => expect(statSync(path).size).toBeGreaterThan(before), { timeout: 5000, interval: 50 });
    } finally {
      await db.close();
    }
  });
});
