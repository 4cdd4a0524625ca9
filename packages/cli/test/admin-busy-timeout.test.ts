// An administrative command waits out another process's write lock on a SQLite file (a server
// migrating it at start, on a busy machine, may hold it for seconds) instead of failing as a
// request would after 5 s.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { loadConfig } from '../../platform/src/config.ts';
import { createPlatform } from '../../platform/src/platform.ts';
import { adminConfig } from '../src/database.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-busy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('commands wait up to a minute for the SQLite write lock; the server keeps 5 s', async () => {
  const database = join(dir, 'busy.db');
  for (const [config, expected] of [
    [adminConfig(database), 60_000],
    [loadConfig({ database }), 5_000],
  ] as const) {
    const platform = await createPlatform(config, { http: false });
    try {
      expect(platform.db.sqlite!.pragma('busy_timeout', { simple: true })).toBe(expected);
    } finally {
      await platform.close();
    }
  }
});
