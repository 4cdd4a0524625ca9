// `stores create` and `partners create` take the new password from standard input, or generate one
// and show it once; the password as a flag's value (seen by `ps`, kept in shell history) still
// works, with a warning. Bad input creates nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/src/config.ts';
import { createPlatform, type Platform } from '../../platform/src/platform.ts';
import { CLI_TEST_TIMEOUT_MS, type CliResult, runCli, runCliInProcess } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-password-cli-'));
const database = join(dir, 'passwords.db');
let platform: Platform;

// A command that reads standard input (--*-stdin) runs as a child process, the rest in this one.
function run(args: string[], input?: string): Promise<CliResult> {
  const runner = input !== undefined || args.some((arg) => arg.endsWith('-stdin')) ? runCli : runCliInProcess;
  return runner([...args, '--database', database], { ...process.env, DATABASE_URL: '', MASTER_KEY: '' }, input);
}

async function ownerLogsIn(storeName: string, email: string, password: string): Promise<boolean> {
  const store = await platform.services.accounts.findStoreByName(storeName);
  return store !== undefined && (await platform.services.accounts.authenticateMerchant(store, email, password)) !== undefined;
}

async function storeCount(): Promise<number> {
  const row = await platform.db.kysely
    .selectFrom('stores')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function partnerCount(): Promise<number> {
  const row = await platform.db.kysely
    .selectFrom('partners')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

beforeAll(async () => {
  platform = await createPlatform(loadConfig({ database, logLevel: 'silent' }), { http: false });
});
afterAll(async () => {
  await platform.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('passwords of new accounts, off the command line', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('stores create --owner-password-stdin reads the first line of standard input and prints no password', async () => {
    const res = await run(
      ['stores', 'create', 'piped', '--owner-email', 'o@piped.test', '--owner-password-stdin', '--json'],
      'piped-password\nrest\n',
    );
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toBe('');
    expect(JSON.parse(res.stdout)).toEqual({
      store_id: expect.stringMatching(/^\d+$/),
      store_name: 'piped',
      base_url: 'http://piped.localhost:8080',
    });
    expect(await ownerLogsIn('piped', 'o@piped.test', 'piped-password')).toBe(true);
  });

  it('stores create without a password generates a strong one and shows it once (in --json too)', async () => {
    const res = await run(['stores', 'create', 'generated', '--owner-email', 'o@generated.test', '--json']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toBe('');
    const out = JSON.parse(res.stdout);
    expect(out.generated_password).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(await ownerLogsIn('generated', 'o@generated.test', out.generated_password)).toBe(true);

    const human = await run(['stores', 'create', 'generated-too', '--owner-email', 'o@generated-too.test']);
    expect(human.code, human.stderr).toBe(0);
    const [created, shown, password, ...rest] = human.stdout.split('\n');
    expect(created).toMatch(/^created store generated-too \(id \d+\) at http:\/\/generated-too\.localhost:8080$/);
    expect(shown).toBe('password of o@generated-too.test (generated; shown once, pass it on safely):');
    expect(password).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(rest).toEqual(['']);
    expect(password).not.toBe(out.generated_password);
    expect(await ownerLogsIn('generated-too', 'o@generated-too.test', password!)).toBe(true);
  });

  it('stores create --owner-password still works, with a warning on stderr that does not repeat the password', async () => {
    const res = await run([
      'stores',
      'create',
      'flagged',
      '--owner-email',
      'o@flagged.test',
      '--owner-password',
      'flagged-password',
      '--json',
    ]);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).not.toHaveProperty('generated_password');
    expect(res.stderr).toMatch(/^warning: --owner-password shows the password .*\(ps\).*shell history.*--owner-password-stdin/);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).not.toContain('flagged-password');
    expect(await ownerLogsIn('flagged', 'o@flagged.test', 'flagged-password')).toBe(true);
  });

  it('bad input: a clear error, nothing created', async () => {
    const before = await storeCount();
    const [empty, nothing, short, both] = await Promise.all([
      run(['stores', 'create', 'bad-a', '--owner-email', 'o@bad.test', '--owner-password-stdin'], '\nsecond line\n'),
      run(['stores', 'create', 'bad-b', '--owner-email', 'o@bad.test', '--owner-password-stdin', '--json'], ''),
      run(['stores', 'create', 'bad-c', '--owner-email', 'o@bad.test', '--owner-password-stdin', '--json'], 'short\n'),
      run(['stores', 'create', 'bad-d', '--owner-email', 'o@bad.test', '--owner-password', 'long-enough', '--owner-password-stdin'], 'x\n'),
    ]);
    expect(empty).toMatchObject({ code: 2, stdout: '' });
    expect(empty.stderr).toBe('storegate: --owner-password-stdin: standard input held no password (its first line is empty)\n');
    expect(nothing).toMatchObject({ code: 2, stdout: '' });
    expect(JSON.parse(nothing.stderr).error.code).toBe('usage');
    expect(short).toMatchObject({ code: 1, stdout: '' });
    expect(JSON.parse(short.stderr).error).toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/password must be at least 8/),
    });
    expect(short.stderr).not.toContain('short');
    expect(both).toMatchObject({ code: 2, stdout: '' });
    expect(both.stderr).toMatch(/--owner-password and --owner-password-stdin: give the password one way, not both/);
    expect(await storeCount()).toBe(before);
  });

  it('partners create: from standard input, generated, or the old flag with a warning; bad input creates nothing', async () => {
    const piped = await run(['partners', 'create', '--email', 'piped@partner.test', '--password-stdin', '--json'], 'partner-password\n');
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stderr).toBe('');
    expect(JSON.parse(piped.stdout)).toEqual({ partner_id: expect.stringMatching(/^\d+$/), email: 'piped@partner.test' });
    expect(await platform.services.accounts.authenticatePartner('piped@partner.test', 'partner-password')).toBeDefined();

    const generated = await run(['partners', 'create', '--email', 'generated@partner.test', '--json']);
    expect(generated.code, generated.stderr).toBe(0);
    const { generated_password } = JSON.parse(generated.stdout);
    expect(generated_password).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(await platform.services.accounts.authenticatePartner('generated@partner.test', generated_password)).toBeDefined();

    const flagged = await run(['partners', 'create', '--email', 'flagged@partner.test', '--password', 'flagged-password']);
    expect(flagged.code, flagged.stderr).toBe(0);
    expect(flagged.stdout).toMatch(/^created partner flagged@partner\.test \(id \d+\)\n$/);
    expect(flagged.stderr).toMatch(/^warning: --password shows the password .*--password-stdin/);
    expect(flagged.stderr).not.toContain('flagged-password');

    const before = await partnerCount();
    const [empty, short] = await Promise.all([
      run(['partners', 'create', '--email', 'empty@partner.test', '--password-stdin'], ''),
      run(['partners', 'create', '--email', 'short@partner.test', '--password-stdin'], 'short\n'),
    ]);
    expect(empty).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'storegate: --password-stdin: standard input held no password (its first line is empty)\n',
    });
    expect(short).toMatchObject({ code: 1, stdout: '' });
    expect(short.stderr).toMatch(/password must be at least 8/);
    expect(await partnerCount()).toBe(before);
  });
});
