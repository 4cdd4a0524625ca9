// Asymmetric webhook signatures from the command line: `keys webhook-signing list|rotate|finish`
// (the overlap, one rotation at a time), `apps update --ed25519-signatures on|off`, and
// storegate.app.toml's `ed25519_signatures` applied by `apps deploy`. Bad input exits non-zero with
// one line naming the flag or the file's line, and changes nothing.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, runCliInProcess } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-ed25519-cli-'));
const database = join(dir, 'ed25519.db');
const env = { ...process.env, DATABASE_URL: '', MASTER_KEY: '', NODE_ENV: '' };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[]) => runCliInProcess([...args, '--database', database], env);

function query<T>(sql: string, ...params: unknown[]): T[] {
  const db = new Database(database, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}
const keyRows = () => query<{ kid: string; active: number | null }>('select kid, active from webhook_signing_keys order by kid');
const flagOf = (clientId: string) =>
  query<{ v: number }>('select webhook_signature_ed25519 as v from apps where client_id = ?', clientId)[0]?.v;

beforeAll(async () => {
  expect((await run(['apps', 'list'])).code).toBe(0);
}, CLI_TEST_TIMEOUT_MS);

describe('storegate keys webhook-signing', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('lists, rotates with an overlap, refuses a second rotation, finishes; bad --overlap changes nothing', async () => {
    const empty = await run(['keys', 'webhook-signing', 'list']);
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout).toContain('no webhook signing key yet');

    const bad = await Promise.all([
      run(['keys', 'webhook-signing', 'rotate', '--overlap', '91d']),
      run(['keys', 'webhook-signing', 'rotate', '--overlap', 'soon', '--json']),
    ]);
    expect(bad[0]).toMatchObject({ code: 2, stdout: '', stderr: 'storegate: --overlap: at most 90 days, got "91d"\n' });
    expect(bad[1]!.code).toBe(2);
    expect(JSON.parse(bad[1]!.stderr).error.message).toBe('--overlap: expected 0 or a duration such as 12h or 7d, got "soon"');
    expect(keyRows()).toEqual([]);

    // The first rotation makes the first key on the way, then replaces it.
    const rotated = await run(['keys', 'webhook-signing', 'rotate', '--overlap', '48h', '--json']);
    expect(rotated.code, rotated.stderr).toBe(0);
    const r = JSON.parse(rotated.stdout) as { kid: string; replaced: string; retires_at: string };
    expect(r.kid).not.toBe(r.replaced);
    const listed = JSON.parse((await run(['keys', 'webhook-signing', 'list', '--json'])).stdout) as {
      keys: { kid: string; state: string; retires_at: string | null; jwk: { kty: string; crv: string; x: string } }[];
    };
    expect(listed.keys.map((k) => [k.kid, k.state])).toEqual([
      [r.kid, 'active'],
      [r.replaced, 'retiring'],
    ]);
    expect(listed.keys[1]!.retires_at).toBe(r.retires_at);
    expect(listed.keys[0]!.jwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
    expect(JSON.stringify(listed)).not.toMatch(/private|"d":/);

    const before = keyRows();
    const second = await run(['keys', 'webhook-signing', 'rotate']);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/^storegate: a replaced webhook signing key still signs .*`storegate keys webhook-signing finish`\n$/);
    expect(keyRows()).toEqual(before);

    const finished = await run(['keys', 'webhook-signing', 'finish', '--json']);
    expect(finished.code, finished.stderr).toBe(0);
    expect(JSON.parse(finished.stdout)).toEqual({ retired: [r.replaced] });
    expect(keyRows()).toEqual([{ kid: r.kid, active: 1 }]);
  });
});

describe('storegate apps update --ed25519-signatures, apps deploy ed25519_signatures', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('turns v1a signatures on and off; a bad value exits 2 and changes nothing', async () => {
    const created = await run([
      'apps',
      'create',
      '--name',
      'Signed',
      '--app-url',
      'http://localhost:3000/',
      '--redirect-uri',
      'http://localhost:3000/cb',
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const id = (JSON.parse(created.stdout) as { client_id: string }).client_id;
    expect(flagOf(id)).toBe(0);
    const bad = await run(['apps', 'update', id, '--ed25519-signatures', 'yes']);
    expect(bad).toMatchObject({ code: 2, stdout: '', stderr: 'storegate: --ed25519-signatures: expected on or off, got "yes"\n' });
    expect(flagOf(id)).toBe(0);
    const on = await run(['apps', 'update', id, '--ed25519-signatures', 'on', '--json']);
    expect(on.code, on.stderr).toBe(0);
    expect(JSON.parse(on.stdout)).toEqual({ client_id: id, ed25519_signatures: true });
    expect(flagOf(id)).toBe(1);

    const file = join(dir, 'storegate.app.toml');
    const toml = (value: string) =>
      [
        `client_id = "${id}"`,
        'name = "Signed"',
        'application_url = "http://localhost:3000/"',
        'redirect_url = "http://localhost:3000/cb"',
        `ed25519_signatures = ${value}`,
        '',
      ].join('\n');
    writeFileSync(file, toml('"no"'));
    const refused = await run(['apps', 'deploy', '--config', file]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/storegate\.app\.toml:5: ed25519_signatures must be true or false \(without quotes\)/);
    expect(flagOf(id)).toBe(1);
    writeFileSync(file, toml('false'));
    const off = await run(['apps', 'deploy', '--config', file]);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toContain('ed25519_signatures: true -> false');
    expect(flagOf(id)).toBe(0);
  });
});
