// Commands started together on a fresh SQLite file all succeed: each process migrates before it
// works, one at a time (they used to race, and all but one died on "table merchants already exists").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, runCli } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-fresh-db-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('migrate and three stores create at once on a fresh file: all exit 0', { timeout: CLI_TEST_TIMEOUT_MS }, async () => {
  const database = join(dir, 'fresh.db');
  const env = { ...process.env, DATABASE_URL: '', MASTER_KEY: '' };
  const owner = (n: number) => ['--owner-email', `o${n}@fresh.test`, '--owner-password', 'fresh-password'];
  const results = await Promise.all([
    runCli(['migrate', '--database', database, '--json'], env),
    ...[1, 2, 3].map((n) => runCli(['stores', 'create', `fresh${n}`, ...owner(n), '--database', database, '--json'], env)),
  ]);
  for (const res of results) expect(res.code, res.stderr).toBe(0);
  const listed = await runCli(['stores', 'list', '--database', database, '--json'], env);
  expect((JSON.parse(listed.stdout) as { name: string }[]).map((s) => s.name)).toEqual(['fresh1', 'fresh2', 'fresh3']);
});
