// `storegate stores create --currency --timezone`: the store's profile as apps read it (GET /shop).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runCliInProcess } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-cli-profile-'));
const database = join(dir, 'cli.db');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[]) {
  return runCliInProcess([...args, '--database', database, '--json'], { ...process.env, DATABASE_URL: '' });
}

function stores(): { name: string; currency: string; timezone: string }[] {
  const db = new Database(database, { readonly: true });
  try {
    return db.prepare('select name, currency, timezone from stores order by id').all() as {
      name: string;
      currency: string;
      timezone: string;
    }[];
  } finally {
    db.close();
  }
}

const owner = ['--owner-email', 'owner@profile.test', '--owner-password', 'profile-password'];

describe('storegate stores create: currency and time zone', () => {
  it('defaults to USD and UTC; takes --currency and --timezone (the zone in its canonical spelling)', async () => {
    expect((await run(['stores', 'create', 'plain', ...owner])).code).toBe(0);
    expect((await run(['stores', 'create', 'paris', ...owner, '--currency', 'EUR', '--timezone', 'europe/paris'])).code).toBe(0);
    expect(stores()).toEqual([
      { name: 'plain', currency: 'USD', timezone: 'UTC' },
      { name: 'paris', currency: 'EUR', timezone: 'Europe/Paris' },
    ]);
  }, 120_000);

  it('bad values: non-zero exit, one line naming the option, nothing created', async () => {
    const cases: [string[], RegExp][] = [
      [['--currency', 'eur'], /currency must be a three-letter ISO 4217 code/],
      [['--currency', 'ABC'], /currency "ABC" is not a known ISO 4217/],
      [['--timezone', 'Moon/Base'], /timezone "Moon\/Base" is not a known IANA/],
      [['--timezone', 'UTC; drop table stores'], /timezone must be an IANA time zone name/],
    ];
    for (const [extra, reason] of cases) {
      const res = await run(['stores', 'create', 'broken', ...owner, ...extra]);
      expect(res.code, extra.join(' ')).toBe(1);
      expect(res.stdout).toBe('');
      expect(res.stderr.trim().split('\n')).toHaveLength(1);
      const { error } = JSON.parse(res.stderr) as { error: { code: string; message: string } };
      expect(error.code).toBe('invalid_input');
      expect(error.message).toMatch(reason);
    }
    expect(stores().map((s) => s.name)).toEqual(['plain', 'paris']);
  }, 240_000);
});
