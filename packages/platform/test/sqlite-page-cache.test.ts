// SQLite's page cache is a chosen size, not the 16 MiB per connection better-sqlite3 builds SQLite
// with: under steady writes that cache filled for many minutes and the node's resident memory
// climbed with it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { openDatabase } from '../src/storage/database.ts';
import { SQLITE_CACHE_KIB } from '../src/storage/sqlite-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-page-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('opens every SQLite connection with the chosen page cache, in KiB', async () => {
  expect(SQLITE_CACHE_KIB).toBe(4096);
  for (const path of [join(dir, 'cache.db'), ':memory:']) {
    const db = openDatabase({ dialect: 'sqlite', path });
    try {
      expect(db.sqlite!.pragma('cache_size', { simple: true })).toBe(-SQLITE_CACHE_KIB);
    } finally {
      await db.close();
    }
  }
});
