// `storegate apps api-health`, `storegate api-health`, `storegate api-versions list` and
// `storegate api-versions brownout add|list|remove` as an operator runs them, on SQLite and on
// PostgreSQL: usage of deprecated versions per app and for every caller, every version listed with
// its status, brown-outs scheduled and removed; bad input exits 1 or 2 and changes nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/src/config.ts';
import { createPlatform, type Platform } from '../../platform/src/platform.ts';
import { freshPostgresUrl } from '../../platform/test/harness.ts';
import { CLI_TEST_TIMEOUT_MS, type CliResult, runCliInProcess } from './run-cli.ts';

const DATABASES = process.env.TEST_PG_URL ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

describe.each(DATABASES)('storegate api health commands (%s)', { timeout: CLI_TEST_TIMEOUT_MS }, (kind) => {
  const dir = mkdtempSync(join(tmpdir(), 'storegate-api-health-cli-'));
  let database = join(dir, 'health.db');
  let drop: (() => Promise<void>) | undefined;
  let platform: Platform & { http: NonNullable<Platform['http']> };
  let clientId = '';
  let appId = 0;
  let privateId = 0;

  const run = (args: string[]): Promise<CliResult> =>
    runCliInProcess([...args, '--database', database], { ...process.env, DATABASE_URL: '', MASTER_KEY: '', SUNSET_2022_01: '2027-06-01' });
  const brownouts = async () => JSON.parse((await run(['api-versions', 'brownout', 'list', '--json'])).stdout) as unknown[];

  beforeAll(async () => {
    if (kind === 'postgres') {
      const pg = await freshPostgresUrl();
      database = pg.url;
      drop = pg.drop;
    }
    // The CLI's first command creates and migrates the database; the platform then serves it.
    const first = await run(['api-versions', 'brownout', 'list']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe('no brown-outs scheduled\n');
    platform = (await createPlatform(loadConfig({ database, logLevel: 'silent' }))) as typeof platform;
    await platform.http.ready();
    const store = await platform.services.accounts.createStore({
      name: 'healthshop',
      ownerEmail: 'o@health.test',
      ownerPassword: 'pw-health-1',
    });
    const created = await platform.services.apps.createApp({
      name: 'Old client',
      appUrl: 'https://app.example.test/',
      redirectUri: 'https://app.example.test/cb',
      scopes: 'read_products',
    });
    clientId = created.app.client_id;
    appId = created.app.id;
    const priv = await platform.services.apps.createPrivateApp({ storeId: store.id, name: 'Sync', scopes: 'read_products' });
    privateId = priv.id;
    // The private app calls the deprecated version through the server; the count is flushed.
    for (let i = 0; i < 3; i++) {
      const res = await platform.http.inject({
        method: 'GET',
        url: '/openapi/2022-01/products',
        headers: { host: 'healthshop.localhost:8080', 'access-token': priv.accessToken },
      });
      expect(res.statusCode).toBe(200);
    }
    await platform.services.apiUsage.flush();
  });

  afterAll(async () => {
    await platform?.close();
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows an app its deprecated usage in words and JSON, and every caller to the operator', async () => {
    const none = await run(['apps', 'api-health', clientId]);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toBe('"Old client" calls no deprecated API version\n');
    const now = Date.now();
    await platform.storage.apiHealth.addUsage([
      {
        callerKind: 'app',
        callerId: appId,
        storeId: 1,
        version: '2022-01',
        route: 'GET /openapi/{version}/orders',
        calls: 7,
        firstSeenAt: now,
        lastSeenAt: now,
      },
    ]);
    const text = await run(['apps', 'api-health', clientId]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^Version 2022-01 stops answering on 2027-06-01, in \d+ days; move to 2026-01\.\n7 call\(s\)/);
    expect(text.stdout).toContain('GET /openapi/{version}/orders  7');
    const json = JSON.parse((await run(['apps', 'api-health', clientId, '--json'])).stdout);
    expect(json).toMatchObject({
      client_id: clientId,
      versions: [{ version: '2022-01', sunset_at: '2027-06-01T00:00:00.000Z', use_version: '2026-01', calls: 7, notified_at: null }],
    });
    const all = JSON.parse((await run(['api-health', '--json'])).stdout) as {
      caller_kind: string;
      caller_id: number;
      versions: { calls: number }[];
    }[];
    expect(all.map((c) => [c.caller_kind, c.caller_id, c.versions[0]!.calls])).toEqual([
      ['app', appId, 7],
      ['private', privateId, 3],
    ]);
    const table = await run(['api-health']);
    expect(table.stdout.split('\n')[0]).toMatch(/^CALLER\s+VERSION\s+CALLS\s+LAST_SEEN\s+SUNSET\s+DAYS_LEFT\s+NOTIFIED$/);
    const unknown = await run(['apps', 'api-health', 'nope', '--json']);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr)).toEqual({ error: { code: 'not_found', message: 'no app with client_id "nope"' } });
  });

  it('lists every version with its status, schedules and removes brown-outs, refusing bad input with nothing changed', async () => {
    const versions = JSON.parse((await run(['api-versions', 'list', '--json'])).stdout) as { version: string; status: string }[];
    expect(versions.map((v) => [v.version, v.status])).toEqual([
      ['2022-01', 'deprecated'],
      ['2025-06', 'supported'],
      ['2026-01', 'current'],
      ['2026-10', 'latest'],
    ]);
    const refusals: [string[], number, string][] = [
      [['2019-01', '--start', '2027-05-01', '--end', '2027-05-02'], 1, 'unknown API version "2019-01"'],
      [['2026-01', '--start', '2027-05-01', '--end', '2027-05-02'], 1, 'version 2026-01 is not deprecated'],
      [['2022-01', '--start', '2027-05-02', '--end', '2027-05-01'], 1, 'the window must end after it starts'],
      [['2022-01', '--start', 'tomorrow', '--end', '2027-05-01'], 2, '--start: expected a date such as 2027-05-01'],
      [['2022-01', '--start', '2027-02-30', '--end', '2027-05-01'], 2, '--start: expected a date'],
    ];
    for (const [args, code, message] of refusals) {
      const res = await run(['api-versions', 'brownout', 'add', ...args]);
      expect(res.code, res.stderr).toBe(code);
      expect(res.stderr).toContain(message);
      expect(await brownouts()).toEqual([]);
    }
    const added = await run([
      'api-versions',
      'brownout',
      'add',
      '2022-01',
      '--start',
      '2027-05-01T09:00:00Z',
      '--end',
      '2027-05-01T10:00:00Z',
      '--json',
    ]);
    expect(added.code, added.stderr).toBe(0);
    const w = JSON.parse(added.stdout);
    expect(w).toMatchObject({
      version: '2022-01',
      starts_at: '2027-05-01T09:00:00.000Z',
      ends_at: '2027-05-01T10:00:00.000Z',
      sunset_at: '2027-06-01T00:00:00.000Z',
      use_version: '2026-01',
    });
    const overlap = await run([
      'api-versions',
      'brownout',
      'add',
      '2022-01',
      '--start',
      '2027-05-01T09:30:00Z',
      '--end',
      '2027-05-01T11:00:00Z',
    ]);
    expect(overlap.code).toBe(1);
    expect(overlap.stderr).toContain('overlaps the brown-out of 2022-01');
    expect((await brownouts()).length).toBe(1);
    const listed = await run(['api-versions', 'brownout', 'list']);
    expect(listed.stdout).toMatch(
      new RegExp(`^ID\\s+VERSION\\s+STARTS\\s+ENDS\\s+SUNSET\\n${w.id}\\s+2022-01\\s+2027-05-01T09:00:00.000Z`),
    );
    expect(JSON.parse((await run(['api-versions', 'list', '--json'])).stdout)[0]).toMatchObject({ version: '2022-01', brownouts: 1 });
    expect((await run(['api-versions', 'brownout', 'remove', 'abc'])).code).toBe(2);
    expect((await brownouts()).length).toBe(1);
    const removed = await run(['api-versions', 'brownout', 'remove', String(w.id)]);
    expect(removed.stdout).toBe(`removed brown-out ${w.id}\n`);
    const again = await run(['api-versions', 'brownout', 'remove', String(w.id)]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`no brown-out with id ${w.id}`);
    expect(await brownouts()).toEqual([]);
  });
});
