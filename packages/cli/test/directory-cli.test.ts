// `list`, `show` and `merchants` commands end to end, as an operator runs them: a table or JSON on
// stdout, never a secret; a missing record exits 1 with one JSON error object under --json; a
// password is read from standard input, never from the command line.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/src/config.ts';
import type { Scope } from '../../platform/src/domain/scopes.ts';
import { createPlatform, type Platform } from '../../platform/src/platform.ts';
import { CLI_TEST_TIMEOUT_MS, type CliResult, runCli, runCliInProcess } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-directory-cli-'));
const database = join(dir, 'directory.db');
const printed: string[] = [];
let platform: Platform;
let clientId = '';
let secrets: string[] = [];
let storeId = 0;

// A command that reads standard input (--password-stdin) runs as a child process, the rest in this one.
function run(args: string[], input?: string): Promise<CliResult> {
  const runner = input !== undefined || args.some((arg) => arg.endsWith('-stdin')) ? runCli : runCliInProcess;
  return runner([...args, '--database', database], { ...process.env, DATABASE_URL: '', MASTER_KEY: '' }, input).then((res) => {
    printed.push(res.stdout, res.stderr);
    return res;
  });
}

beforeAll(async () => {
  platform = await createPlatform(loadConfig({ database, logLevel: 'silent' }), { http: false });
  const s = platform.services;
  const store = await s.accounts.createStore({ name: 'dirshop', ownerEmail: 'owner@dirshop.test', ownerPassword: 'first-password' });
  storeId = store.id;
  const created = await s.apps.createApp({
    name: 'Dir app',
    appUrl: 'http://localhost:3000/',
    redirectUri: 'http://localhost:3000/cb',
    scopes: 'read_products',
  });
  clientId = created.app.client_id;
  const priv = await s.apps.createPrivateApp({ storeId, name: 'Sync', scopes: 'read_products' });
  secrets = [created.clientSecret, priv.accessToken, priv.webhookSecret];
  await s.apps.grant(storeId, created.app.id, ['read_products'] as Scope[]);
});

afterAll(async () => {
  await platform?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('storegate list, show and merchants', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('lists as a table or JSON and shows one record, never a secret; a missing record exits 1 with a JSON error', async () => {
    const [table, app, installs, missing] = await Promise.all([
      run(['stores', 'list']),
      run(['apps', 'show', clientId, '--json']),
      run(['installations', 'list', '--store', 'dirshop', '--json']),
      run(['stores', 'show', 'nope', '--json']),
    ]);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+OWNER\s+CURRENCY\s+TIMEZONE\s+APPS\s+PRIVATE APPS\s+CREATED$/);
    expect(lines[1]).toMatch(/^dirshop\s+owner@dirshop\.test\s+USD\s+UTC\s+1\s+1\s+\d{4}-/);
    expect(app.code, app.stderr).toBe(0);
    expect(JSON.parse(app.stdout)).toMatchObject({ client_id: clientId, name: 'Dir app', installations: 1 });
    expect(installs.code, installs.stderr).toBe(0);
    expect(JSON.parse(installs.stdout)).toEqual([expect.objectContaining({ store: 'dirshop', client_id: clientId, status: 'installed' })]);
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(JSON.parse(missing.stderr)).toEqual({ error: { code: 'not_found', message: 'no store named "nope"' } });
    for (const secret of secrets) expect(printed.join('\n')).not.toContain(secret);
  });

  it('merchants unlock lifts a lock; reset-password takes the new one from stdin and ends sessions', async () => {
    const s = platform.services;
    const account = { account: `merchant:${storeId}:owner@dirshop.test`, address: '127.0.0.1' };
    for (let i = 0; i < 6; i++) {
      const attempt = await s.loginThrottle.begin(account);
      if (attempt.wait === 0) await s.loginThrottle.failed(attempt);
    }
    expect(await s.loginThrottle.lockedFor(account)).toBeGreaterThan(0);
    const unlocked = await run(['merchants', 'unlock', 'owner@dirshop.test', '--json']);
    expect(unlocked.code, unlocked.stderr).toBe(0);
    expect(JSON.parse(unlocked.stdout)).toEqual({ email: 'owner@dirshop.test', unlocked: ['dirshop'] });
    expect(await s.loginThrottle.lockedFor(account)).toBe(0);

    const store = (await s.accounts.findStoreByName('dirshop'))!;
    const [reset, short] = await Promise.all([
      run(['merchants', 'reset-password', 'owner@dirshop.test', '--password-stdin'], 'second-password\n'),
      run(['merchants', 'reset-password', 'owner@dirshop.test', '--password-stdin', '--json'], 'short\n'),
    ]);
    expect(short).toMatchObject({ code: 1, stdout: '' });
    expect(JSON.parse(short.stderr).error.code).toBe('invalid_input');
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toMatch(/^password of owner@dirshop\.test changed; \d+ sessions? ended\n$/);
    expect(printed.join('\n')).not.toContain('second-password');
    expect(await s.accounts.authenticateMerchant(store, 'owner@dirshop.test', 'second-password')).toBe(store.owner_merchant_id);
    expect(await s.accounts.authenticateMerchant(store, 'owner@dirshop.test', 'first-password')).toBeUndefined();
  });
});
