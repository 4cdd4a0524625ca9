// storegate apps rotate-secret and storegate private-apps rotate-secret as a user runs them: the new
// secret printed once, --finish, --json, --secret-overlap, one-line errors with the exit codes of the
// other commands, and nothing changed by a refused command.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createPlatform } from '../../platform/src/platform.ts';
import { loadConfig } from '../../platform/src/config.ts';
import { freshPostgresUrl } from '../../platform/test/harness.ts';
import { runCli, runCliInProcess } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-rotate-'));
const database = join(dir, 'rotate.db');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The administrative commands run in this process; `serve` runs as a child process, since a
 * command that failed to refuse its input would start a server.
 */
function run(args: string[], db = database, env: Record<string, string> = {}): Promise<Result> {
  const runner = args[0] === 'serve' ? runCli : runCliInProcess;
  return runner([...args, '--database', db], { ...process.env, DATABASE_URL: '', SECRET_OVERLAP: '', ...env });
}

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function json(args: string[], db = database, env: Record<string, string> = {}): Promise<Record<string, string>> {
  const res = await run([...args, '--json'], db, env);
  expect(res.stderr, args.join(' ')).toBe('');
  expect(res.code).toBe(0);
  return JSON.parse(res.stdout) as Record<string, string>;
}

function secretsRow(table: 'apps' | 'private_apps', where: string): unknown {
  const db = new Database(database, { readonly: true });
  try {
    return db.prepare(`select * from ${table} where ${where}`).get();
  } finally {
    db.close();
  }
}

/** Whether the platform (on the same database and master key) takes `secret` for the app now. */
async function authenticates(clientId: string, secret: string, db = database): Promise<boolean> {
  const platform = await createPlatform(loadConfig({ database: db }), { http: false, migrate: false });
  try {
    await platform.services.apps.authenticateClient(clientId, secret);
    return true;
  } catch {
    return false;
  } finally {
    await platform.close();
  }
}

function expectRefused(res: Result, code: number, reason: RegExp): void {
  expect(res.code).toBe(code);
  expect(res.stdout).toBe('');
  expect(res.stderr.trim().split('\n')).toHaveLength(1);
  expect(res.stderr).toMatch(reason);
}

describe('storegate apps rotate-secret', { timeout: 300_000 }, () => {
  it('rotates (new secret printed once), both secrets work, --finish ends the overlap', async () => {
    const created = await json([
      'apps',
      'create',
      '--name',
      'Rotor',
      '--app-url',
      'http://localhost:3000/',
      '--redirect-uri',
      'http://localhost:3000/cb',
    ]);
    const OLD = created.client_secret!;
    const id = created.client_id!;
    // Nothing to finish yet: exit 1, one line, nothing changed.
    const before = secretsRow('apps', `client_id = '${id}'`);
    expectRefused(await run(['apps', 'rotate-secret', id, '--finish']), 1, /^storegate: No rotation of the client secret is in progress/);
    expect(secretsRow('apps', `client_id = '${id}'`)).toEqual(before);

    const human = await run(['apps', 'rotate-secret', id]);
    expect(human.code).toBe(0);
    expect(human.stderr).toBe('');
    const NEW = /client_secret +(sg_cs_\S+)/.exec(human.stdout)![1]!;
    expect(human.stdout).toMatch(
      /keeps working and signing until you run this command with --finish, at the latest until \d{4}-\d\d-\d\dT/,
    );
    expect(JSON.stringify(secretsRow('apps', `client_id = '${id}'`))).not.toContain(NEW);
    expect(await authenticates(id, OLD)).toBe(true);
    expect(await authenticates(id, NEW)).toBe(true);

    // A second rotation meanwhile: refused, nothing changed.
    const rotating = secretsRow('apps', `client_id = '${id}'`);
    expectRefused(await run(['apps', 'rotate-secret', id]), 1, /already in progress: finish it before rotating again/);
    expect(secretsRow('apps', `client_id = '${id}'`)).toEqual(rotating);

    expect(await json(['apps', 'rotate-secret', id, '--finish'])).toEqual({ client_id: id, rotation: 'finished' });
    expect(await authenticates(id, OLD)).toBe(false);
    expect(await authenticates(id, NEW)).toBe(true);

    // --json, and the overlap from --secret-overlap (or SECRET_OVERLAP).
    const started = Date.now();
    const out = await json(['apps', 'rotate-secret', id, '--secret-overlap', '2h']);
    expect(Object.keys(out).sort()).toEqual(['client_id', 'client_secret', 'previous_secret_expires_at']);
    expect(out.client_secret).toMatch(/^sg_cs_/);
    const ends = Date.parse(out.previous_secret_expires_at!);
    expect(ends - started).toBeGreaterThanOrEqual(2 * 3_600_000 - 1000);
    expect(ends - started).toBeLessThanOrEqual(2 * 3_600_000 + 60_000);
    await json(['apps', 'rotate-secret', id, '--finish']);
    const viaEnv = await json(['apps', 'rotate-secret', id], database, { SECRET_OVERLAP: '7d' });
    expect(Date.parse(viaEnv.previous_secret_expires_at!) - started).toBeGreaterThanOrEqual(7 * 86_400_000 - 1000);
  });

  it('bad input: unknown app, bad --secret-overlap, missing argument; exit codes and nothing changed', async () => {
    const created = await json([
      'apps',
      'create',
      '--name',
      'Still',
      '--app-url',
      'http://localhost:3000/',
      '--redirect-uri',
      'http://localhost:3000/cb',
    ]);
    const before = secretsRow('apps', `client_id = '${created.client_id}'`);
    expectRefused(await run(['apps', 'rotate-secret', 'no-such-client']), 1, /^storegate: no app with client_id "no-such-client"/);
    expectRefused(await run(['apps', 'rotate-secret', 'no-such-client', '--finish', '--json']), 1, /"code":"not_found"/);
    expectRefused(
      await run(['apps', 'rotate-secret', created.client_id!, '--secret-overlap', '24']),
      2,
      /--secret-overlap: expected a duration such as 30m, 24h or 7d/,
    );
    expectRefused(
      await run(['apps', 'rotate-secret', created.client_id!, '--secret-overlap', '90d']),
      2,
      /--secret-overlap: must be from 1 minute to 30 days/,
    );
    const missing = await run(['apps', 'rotate-secret']);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/missing required argument 'client_id'/);
    expect(secretsRow('apps', `client_id = '${created.client_id}'`)).toEqual(before);
  });

  it('serve validates --secret-overlap at start-up', async () => {
    const res = await run(['serve', '--secret-overlap', 'soon', '--port', '0'], join(dir, 'serve.db'));
    expectRefused(res, 2, /--secret-overlap: expected a duration/);
    const help = await run(['serve', '--help']);
    expect(help.stdout).toMatch(/--secret-overlap <duration>[\s\S]*default 24h[\s\S]*SECRET_OVERLAP/);
  });
});

describe('storegate private-apps rotate-secret', { timeout: 300_000 }, () => {
  it('rotates the webhook secret of a store’s private app, --finish ends it; errors name the cause', async () => {
    // The owners' passwords are generated: nobody logs in here.
    await json(['stores', 'create', 'rotshop', '--owner-email', 'o@rot.test']);
    await json(['stores', 'create', 'othershop', '--owner-email', 'o@other.test']);
    const created = await json(['private-apps', 'create', '--store', 'rotshop', '--name', 'Sync', '--scopes', 'read_products']);
    expect(created.id).toMatch(/^\d+$/);
    const id = created.id!;
    const row = () => secretsRow('private_apps', `id = ${id}`);

    const rotated = await json(['private-apps', 'rotate-secret', id, '--store', 'rotshop']);
    expect(rotated).toEqual({
      id,
      store: 'rotshop',
      webhook_secret: expect.stringMatching(/^sg_whs_/),
      previous_secret_expires_at: expect.stringMatching(/^\d{4}-/),
    });
    expect(rotated.webhook_secret).not.toBe(created.webhook_secret);
    expect(JSON.stringify(row())).not.toContain(rotated.webhook_secret!);
    expect(row()).toMatchObject({ previous_webhook_secret_enc: expect.any(String) });

    const during = row();
    expectRefused(await run(['private-apps', 'rotate-secret', id, '--store', 'rotshop']), 1, /already in progress/);
    expectRefused(
      await run(['private-apps', 'rotate-secret', id, '--store', 'othershop']),
      1,
      /no active private app with id \d+ in store othershop/,
    );
    expectRefused(await run(['private-apps', 'rotate-secret', id, '--store', 'othershop', '--finish']), 1, /no active private app/);
    expectRefused(await run(['private-apps', 'rotate-secret', id, '--store', 'nowhere']), 1, /--store: no store named "nowhere"/);
    expectRefused(
      await run(['private-apps', 'rotate-secret', 'abc', '--store', 'rotshop']),
      2,
      /<id>: expected the private app's numeric id/,
    );
    expectRefused(await run(['private-apps', 'rotate-secret', '999999', '--store', 'rotshop']), 1, /no active private app with id 999999/);
    expect(row()).toEqual(during);

    const human = await run(['private-apps', 'rotate-secret', id, '--store', 'rotshop', '--finish']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/finished the webhook secret rotation of private app \d+ in rotshop/);
    expect(row()).toMatchObject({ previous_webhook_secret_enc: null, previous_webhook_secret_expires_at: null });
    expectRefused(await run(['private-apps', 'rotate-secret', id, '--store', 'rotshop', '--finish']), 1, /nothing to finish/);
  });
});

describe.skipIf(!process.env.TEST_PG_URL)('storegate apps rotate-secret on PostgreSQL', { timeout: 300_000 }, () => {
  it('rotates and finishes', async () => {
    const pg = await freshPostgresUrl();
    try {
      const created = await json(
        ['apps', 'create', '--name', 'PgRotor', '--app-url', 'http://localhost:3000/', '--redirect-uri', 'http://localhost:3000/cb'],
        pg.url,
      );
      const rotated = await json(['apps', 'rotate-secret', created.client_id!], pg.url);
      expect(await authenticates(created.client_id!, created.client_secret!, pg.url)).toBe(true);
      expect(await authenticates(created.client_id!, rotated.client_secret!, pg.url)).toBe(true);
      expect(await json(['apps', 'rotate-secret', created.client_id!, '--finish'], pg.url)).toMatchObject({ rotation: 'finished' });
      expect(await authenticates(created.client_id!, created.client_secret!, pg.url)).toBe(false);
    } finally {
      await pg.drop();
    }
  });
});
