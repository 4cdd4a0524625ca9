// `storegate resource-servers create|list|delete` as an operator runs them: the secret printed once
// (text or JSON) and never again, the credential working at a store's introspection endpoint, a
// deleted one refused there; malformed arguments exit 2 and unknown records exit 1, changing nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/src/config.ts';
import { createPlatform, type Platform } from '../../platform/src/platform.ts';
import { CLI_TEST_TIMEOUT_MS, type CliResult, runCliInProcess } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-resource-servers-cli-'));
const database = join(dir, 'rs.db');
const printed: string[] = [];
let platform: Platform & { http: NonNullable<Platform['http']> };
let privateToken = '';

function run(args: string[]): Promise<CliResult> {
  return runCliInProcess([...args, '--database', database], { ...process.env, DATABASE_URL: '', MASTER_KEY: '' }).then((res) => {
    printed.push(res.stdout, res.stderr);
    return res;
  });
}

function introspect(clientId: string, secret: string) {
  return platform.http.inject({
    method: 'POST',
    url: '/admin/oauth/introspect',
    headers: {
      host: 'rsshop.localhost:8080',
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
    },
    payload: new URLSearchParams({ token: privateToken }).toString(),
  });
}

beforeAll(async () => {
  // The CLI's first command creates and migrates the file; the platform then serves it.
  const first = await run(['resource-servers', 'list']);
  expect(first.code, first.stderr).toBe(0);
  expect(first.stdout).toBe('no resource servers (create one with storegate resource-servers create)\n');
  platform = (await createPlatform(loadConfig({ database, logLevel: 'silent' }))) as typeof platform;
  await platform.http.ready();
  const store = await platform.services.accounts.createStore({
    name: 'rsshop',
    ownerEmail: 'o@rsshop.test',
    ownerPassword: 'first-password',
  });
  privateToken = (await platform.services.apps.createPrivateApp({ storeId: store.id, name: 'Sync', scopes: 'read_products' })).accessToken;
});

afterAll(async () => {
  await platform?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('storegate resource-servers', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('creates a credential that introspects, lists it without its secret, deletes it', async () => {
    const [text, json] = await Promise.all([
      run(['resource-servers', 'create', '--name', 'API gateway']),
      run(['resource-servers', 'create', '--name', 'Reports', '--json']),
    ]);
    expect(text.code, text.stderr).toBe(0);
    const textId = /client_id\s+(rs_[0-9a-f]{32})/.exec(text.stdout)![1]!;
    const textSecret = /client_secret\s+(sg_rss_[A-Za-z0-9_-]{43})/.exec(text.stdout)![1]!;
    expect(text.stdout).toContain('created resource server "API gateway"');
    expect(json.code, json.stderr).toBe(0);
    const created = JSON.parse(json.stdout) as { client_id: string; client_secret: string; name: string; created_at: string };
    expect(created).toMatchObject({
      name: 'Reports',
      client_id: expect.stringMatching(/^rs_/),
      client_secret: expect.stringMatching(/^sg_rss_/),
    });

    const answer = await introspect(created.client_id, created.client_secret);
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toMatchObject({ active: true, scope: 'read_products', store: 'rsshop', token_type: 'Bearer' });
    expect((await introspect(textId, textSecret)).json()).toMatchObject({ active: true });

    const [table, listed] = await Promise.all([run(['resource-servers', 'list']), run(['resource-servers', 'list', '--json'])]);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^CLIENT_ID\s+NAME\s+CREATED$/);
    expect(lines).toHaveLength(3);
    expect(JSON.parse(listed.stdout)).toEqual(
      expect.arrayContaining([{ client_id: created.client_id, name: 'Reports', created_at: created.created_at }]),
    );
    expect(table.stdout + listed.stdout).not.toContain(created.client_secret);
    expect(table.stdout + listed.stdout).not.toContain(textSecret);

    const deleted = await run(['resource-servers', 'delete', created.client_id, '--json']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(JSON.parse(deleted.stdout)).toEqual({ client_id: created.client_id, deleted: true });
    const refused = await introspect(created.client_id, created.client_secret);
    expect(refused.statusCode).toBe(401);
    expect(refused.json().error).toBe('invalid_client');
    expect((await introspect(textId, textSecret)).statusCode).toBe(200);
  });

  it('refuses bad input: malformed client_id and missing --name exit 2, unknown or bad name exit 1', async () => {
    const [malformed, missingName, unknown, badName] = await Promise.all([
      run(['resource-servers', 'delete', 'not-an-id', '--json']),
      run(['resource-servers', 'create', '--json']),
      run(['resource-servers', 'delete', `rs_${'0'.repeat(32)}`, '--json']),
      run(['resource-servers', 'create', '--name', '   ', '--json']),
    ]);
    expect(malformed).toMatchObject({ code: 2, stdout: '' });
    expect(JSON.parse(malformed.stderr).error.code).toBe('usage');
    expect(JSON.parse(malformed.stderr).error.message).toContain("expected a resource server's client_id");
    expect(missingName).toMatchObject({ code: 2, stdout: '' });
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
    expect(JSON.parse(unknown.stderr)).toEqual({
      error: { code: 'not_found', message: `no resource server with client_id "rs_${'0'.repeat(32)}"` },
    });
    expect(badName).toMatchObject({ code: 1, stdout: '' });
    expect(JSON.parse(badName.stderr).error.code).toBe('invalid_input');
    const list = await run(['resource-servers', 'list', '--json']);
    expect(JSON.parse(list.stdout)).toHaveLength(1);
  });
});
