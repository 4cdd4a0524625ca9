// Managed install and iss on the code redirect as an app developer sets them from the command line:
// apps create (--managed-install, --no-authorization-iss), apps update --managed-install on|off,
// apps list/show, and storegate.app.toml's managed_install and authorization_iss applied by apps
// deploy. Bad input exits non-zero with one line naming the flag or the file's line, and changes nothing.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, runCliInProcess } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-managed-cli-'));
const database = join(dir, 'managed.db');
const env = { ...process.env, DATABASE_URL: '', MASTER_KEY: '', NODE_ENV: '' };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[]) => runCliInProcess([...args, '--database', database], env);

interface Settings {
  name: string;
  scopes: string;
  managed_install: number;
  authorization_iss: number;
}

function apps(): Settings[] {
  const db = new Database(database, { readonly: true });
  try {
    return db.prepare('select name, scopes, managed_install, authorization_iss from apps order by id').all() as Settings[];
  } finally {
    db.close();
  }
}

const app = (clientId: string): Settings => {
  const db = new Database(database, { readonly: true });
  try {
    return db.prepare('select name, scopes, managed_install, authorization_iss from apps where client_id = ?').get(clientId) as Settings;
  } finally {
    db.close();
  }
};

const URLS = ['--app-url', 'http://localhost:3000/', '--redirect-uri', 'http://localhost:3000/cb'];

beforeAll(async () => {
  // Migrates the file, so the commands below may run side by side.
  expect((await run(['apps', 'list'])).code).toBe(0);
}, CLI_TEST_TIMEOUT_MS);

describe('storegate apps create/update --managed-install', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  let managedId = '';
  let plainId = '';
  let bareId = '';

  it('apps create: --managed-install needs --scopes; new apps get iss unless --no-authorization-iss', async () => {
    const refused = await run(['apps', 'create', '--name', 'No scopes', ...URLS, '--managed-install', '--json']);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(JSON.parse(refused.stderr)).toEqual({
      error: { code: 'usage', message: '--managed-install needs --scopes: the platform asks the merchant for the scopes the app declares' },
    });
    expect(apps()).toEqual([]);

    const [managed, plain, legacy] = await Promise.all([
      run([
        'apps',
        'create',
        '--name',
        'Managed',
        ...URLS,
        '--scopes',
        'read_products',
        '--managed-install',
        '--no-authorization-iss',
        '--json',
      ]),
      run(['apps', 'create', '--name', 'Plain', ...URLS, '--scopes', 'read_orders']),
      run(['apps', 'create', '--name', 'Bare', ...URLS, '--authorization-iss', '--json']),
    ]);
    for (const r of [managed, plain, legacy]) expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(managed.stdout);
    expect(out).toEqual({
      client_id: out.client_id,
      client_secret: expect.stringMatching(/^sg_cs_/),
      authorization_iss: false,
      managed_install: true,
    });
    managedId = out.client_id;
    expect(plain.stdout).not.toContain('managed install');
    plainId = /client_id\s+(\w+)/.exec(plain.stdout)![1]!;
    bareId = JSON.parse(legacy.stdout).client_id;
    expect(app(managedId)).toEqual({ name: 'Managed', scopes: 'read_products', managed_install: 1, authorization_iss: 0 });
    expect(app(plainId)).toEqual({ name: 'Plain', scopes: 'read_orders', managed_install: 0, authorization_iss: 1 });
    expect(app(bareId)).toEqual({ name: 'Bare', scopes: '', managed_install: 0, authorization_iss: 1 });
  });

  it('apps update --managed-install on|off; a bad value, an app without scopes or a refused address change nothing', async () => {
    const before = apps();
    const [badValue, noScopes, badAddress, unknown] = await Promise.all([
      run(['apps', 'update', plainId, '--managed-install', 'maybe', '--json']),
      run(['apps', 'update', bareId, '--managed-install', 'on', '--json']),
      run(['apps', 'update', plainId, '--managed-install', 'on', '--privacy-webhook-url', 'ftp://localhost/p', '--json']),
      run(['apps', 'update', 'no-such-app', '--managed-install', 'on', '--json']),
    ]);
    expect(badValue.code).toBe(2);
    expect(JSON.parse(badValue.stderr)).toEqual({
      error: { code: 'usage', message: '--managed-install: expected on or off, got "maybe"' },
    });
    expect(noScopes.code).toBe(1);
    expect(JSON.parse(noScopes.stderr)).toEqual({
      error: {
        code: 'invalid_input',
        message: '--managed-install on: "Bare" declares no scopes to ask merchants for (declare them with apps deploy)',
      },
    });
    expect(badAddress.code).toBe(1);
    expect(JSON.parse(badAddress.stderr).error.message).toMatch(/privacy_webhook_url must be an https URL/);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr).error.code).toBe('not_found');
    for (const r of [badValue, noScopes, badAddress, unknown]) expect(r.stdout).toBe('');
    expect(apps()).toEqual(before);

    const on = await run(['apps', 'update', plainId, '--managed-install', 'on', '--json']);
    expect(on.code, on.stderr).toBe(0);
    expect(JSON.parse(on.stdout)).toEqual({ client_id: plainId, managed_install: true });
    expect(app(plainId).managed_install).toBe(1);
    const off = await run(['apps', 'update', managedId, '--managed-install', 'off', '--authorization-iss', 'on']);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toBe(
      '"Managed": merchants now install it through its own authorization request\n"Managed": the redirect with the code now carries iss\n',
    );
    expect(app(managedId)).toMatchObject({ managed_install: 0, authorization_iss: 1 });
  });

  it('apps list and show say whether the platform installs the app', async () => {
    const [list, show] = await Promise.all([run(['apps', 'list']), run(['apps', 'show', plainId, '--json'])]);
    expect(list.code, list.stderr).toBe(0);
    const lines = list.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/\bMANAGED\b/);
    const managedColumn = lines[0]!.indexOf('MANAGED');
    const cell = (name: string) =>
      lines
        .find((l) => l.includes(` ${name} `))!
        .slice(managedColumn)
        .split(/\s+/)[0];
    expect([cell('Managed'), cell('Plain'), cell('Bare')]).toEqual(['no', 'yes', 'no']);
    expect(JSON.parse(show.stdout)).toMatchObject({ client_id: plainId, managed_install: true, authorization_iss: true });
  });
});

describe('storegate apps deploy: managed_install and authorization_iss', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  const file = join(dir, 'storegate.app.toml');
  const toml = (lines: string[]) =>
    [
      'name = "Toml managed"',
      'application_url = "http://localhost:3000/"',
      'redirect_url = "http://localhost:3000/auth/callback"',
      ...lines,
      '',
    ].join('\n');
  const deploy = (text: string, name = 'storegate.app.toml') => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return run(['apps', 'deploy', '--config', path]);
  };

  it('refuses a non-boolean or managed_install = true without scopes, naming the line; nothing is created', async () => {
    const bad = [
      [
        toml(['scopes = []', 'managed_install = true']),
        /bad0\.toml:5: managed_install needs scopes: an app the platform installs must declare/,
      ],
      [toml(['managed_install = true']), /bad1\.toml:4: managed_install needs scopes/],
      [
        toml(['scopes = ["read_products"]', 'managed_install = "yes"']),
        /bad2\.toml:5: managed_install must be true or false \(without quotes\)/,
      ],
      [toml(['scopes = ["read_products"]', 'authorization_iss = 0']), /bad3\.toml:5: authorization_iss must be true or false/],
    ] as const;
    const before = apps();
    const results = await Promise.all(bad.map(([text], i) => deploy(text, `bad${i}.toml`)));
    results.forEach((r, i) => {
      expect(r.code, String(i)).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(bad[i]![1]);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    });
    expect(apps()).toEqual(before);
  });

  it('creates the app with them, shows each change, and keeps scopes on an app the platform installs', async () => {
    const created = await deploy(toml(['scopes = ["read_products"]', 'managed_install = true', 'authorization_iss = false']));
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('managed install: merchants install it from the store admin');
    const id = /client_id\s+(\w+)/.exec(created.stdout)![1]!;
    expect(app(id)).toEqual({ name: 'Toml managed', scopes: 'read_products', managed_install: 1, authorization_iss: 0 });
    const withId = (lines: string[]) => `client_id = "${id}"\n${toml(lines)}`;

    // Left out: left as they are.
    const same = await deploy(withId(['scopes = ["read_products"]']));
    expect(same.stdout.trim()).toBe(`"Toml managed" (${id}): nothing to change`);

    // Scopes emptied while the app stays managed: refused, naming the scopes line, nothing changed.
    const before = apps();
    const emptied = await deploy(withId(['scopes = []', 'authorization_iss = true']));
    expect(emptied.code).toBe(1);
    expect(emptied.stderr).toMatch(/storegate\.app\.toml:5: scopes must not be empty while managed_install is on/);
    expect(apps()).toEqual(before);

    writeFileSync(file, withId(['scopes = ["read_products"]', 'managed_install = false', 'authorization_iss = true']));
    const json = await run(['apps', 'deploy', '--config', file, '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).changes).toEqual([
      { field: 'managed_install', from: true, to: false },
      { field: 'authorization_iss', from: false, to: true },
    ]);
    expect(app(id)).toMatchObject({ managed_install: 0, authorization_iss: 1 });

    // On again with new scopes: the scopes are declared before the platform installs the app.
    const again = await deploy(withId(['scopes = ["read_orders"]', 'managed_install = true']));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('scopes: read_products -> read_orders');
    expect(again.stdout).toContain('asked for them the next time they open it');
    expect(again.stdout).toContain('managed_install: false -> true');
    expect(app(id)).toMatchObject({ scopes: 'read_orders', managed_install: 1 });

    // Off and no scopes in one file: turned off first, then the scopes cleared.
    const off = await deploy(withId(['scopes = []', 'managed_install = false']));
    expect(off.code, off.stderr).toBe(0);
    expect(app(id)).toMatchObject({ scopes: '', managed_install: 0 });
  });
});
