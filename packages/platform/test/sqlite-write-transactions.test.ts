// A storage transaction on SQLite holds the write lock from its first statement. With a plain BEGIN
// it took the lock only at its first write, and when another connection (another process on the
// same file) had committed in between, SQLite refused the upgrade at once, without waiting for the
// busy timeout: a transaction that reads before it writes (creating a store checks its name first)
// failed as "database unavailable" whenever two commands wrote to one file at the same moment.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../src/domain/errors.ts';
import { openDatabase } from '../src/storage/database.ts';
import { storageOn } from '../src/storage/sql-storage.ts';

const dir = mkdtempSync(join(tmpdir(), 'sg-write-tx-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('a transaction that reads, then writes, is not failed by another connection’s commit in between', async () => {
  const path = join(dir, 'shared.db');
  const storage = storageOn(openDatabase({ dialect: 'sqlite', path }));
  await storage.migrate();
  // The other connection gives up quickly rather than holding this thread for the default 5 s.
  const other = openDatabase({ dialect: 'sqlite', path }, { sqliteBusyTimeoutMs: 50 });
  try {
    const now = Date.now();
    let otherWrite: unknown;
    await storage.transaction(async (tx) => {
      expect(await tx.accounts.storeNameTaken('first')).toBe(false);
      // Between this transaction's read and its write, the other connection tries to commit.
      try {
        other.sqlite!.prepare("insert into merchants (email, password_hash, created_at) values ('other@test', 'x', ?)").run(now);
        otherWrite = 'committed';
      } catch (err) {
        otherWrite = err instanceof DatabaseUnavailableError ? 'busy' : err;
      }
      const merchant = await tx.accounts.insertMerchant({ email: 'first@test', passwordHash: 'x', now });
      await tx.accounts.insertStore({ name: 'first', ownerMerchantId: merchant.id, now });
    });
    // This transaction held the lock, so the other connection waited its busy timeout and gave up.
    expect(otherWrite).toBe('busy');
    expect(await storage.accounts.storeNameTaken('first')).toBe(true);
  } finally {
    other.close();
    await storage.close();
  }
});
