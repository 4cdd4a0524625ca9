// Opening a new SQLite file while another process is writing its first transaction in the
// rollback-journal mode every new file starts in: SQLite refuses the switch to WAL at once there
// (no busy handler), which made one of several commands started together on a fresh file die with
// "database is locked".
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { openDatabase } from '../src/storage/database.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-wal-open-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A process holding the write lock of `file` (still in rollback mode) for `holdMs`; resolves once it holds it. */
async function holdWriteLock(file: string, holdMs: number): Promise<{ exited: Promise<number | null> }> {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const D = require(${JSON.stringify(driver)}); const db = new D(${JSON.stringify(file)});
       db.exec('begin immediate'); db.exec('create table held (x)'); process.stdout.write('held\\n');
       setTimeout(() => { db.exec('commit'); db.close(); }, ${holdMs});`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`lock holder exited early (${code})`)));
  });
  // Wrapped: an async function returning the promise itself would wait for it.
  return { exited };
}

it('waits for a writer holding the new file rather than failing the switch to WAL', async () => {
  const file = join(dir, 'fresh.db');
  const holder = await holdWriteLock(file, 300);
  const db = openDatabase({ dialect: 'sqlite', path: file }, { sqliteBusyTimeoutMs: 10_000 });
  try {
    expect(db.sqlite?.pragma('journal_mode', { simple: true })).toBe('wal');
    // The other process's transaction committed before the switch: its table is there.
    expect(db.sqlite?.prepare("select count(*) as n from sqlite_master where name = 'held'").get()).toEqual({ n: 1 });
  } finally {
    await db.close();
  }
  expect(await holder.exited).toBe(0);
});

it('still gives up once the busy timeout has passed', async () => {
  const file = join(dir, 'held-long.db');
  const holder = await holdWriteLock(file, 1_500);
  expect(() => openDatabase({ dialect: 'sqlite', path: file }, { sqliteBusyTimeoutMs: 100 })).toThrow(/database is locked/);
  expect(await holder.exited).toBe(0);
});
