// The privacy webhook address from the command line (apps create/update --privacy-webhook-url) and
// the delay of shop/redact after `apps uninstall`, as a user runs them: --json on stdout, one-line
// errors that change nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, runCli, runCliInProcess } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-privacy-cli-'));
const database = join(dir, 'privacy.db');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The administrative commands run in this process; `serve` runs as a child process, since a
// command that failed to refuse its input would start a server.
function run(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const runner = args[0] === 'serve' ? runCli : runCliInProcess;
  return runner([...args, '--database', database], { ...process.env, DATABASE_URL: '', SHOP_REDACT_DELAY: '', ...env });
}

function rows<T>(sql: string, ...params: unknown[]): T[] {
  const db = new Database(database, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

const APP = ['--name', 'Privacy app', '--app-url', 'http://localhost:3000/', '--redirect-uri', 'http://localhost:3000/cb'];

describe('storegate apps --privacy-webhook-url and --shop-redact-delay', () => {
  let clientId: string;

  beforeAll(async () => {
    expect(
      (await run(['stores', 'create', 'privacy', '--owner-email', 'o@privacy.test', '--owner-password', 'privacy-password'])).code,
    ).toBe(0);
  }, 180_000);

  it('apps create checks the address like a subscription address and stores it', async () => {
    for (const [url, reason] of [
      ['ftp://localhost/p', /privacy_webhook_url must be an https URL/],
      ['http://hooks.example.com/p', /privacy_webhook_url must use https/],
    ] as const) {
      const res = await run(['apps', 'create', ...APP, '--privacy-webhook-url', url, '--json']);
      expect(res.code, url).not.toBe(0);
      expect(res.stdout).toBe('');
      expect(res.stderr).toMatch(reason);
      expect(res.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(rows('select id from apps')).toEqual([]);
    const res = await run(['apps', 'create', ...APP, '--privacy-webhook-url', 'http://localhost:4000/privacy', '--json']);
    expect(res.code, res.stderr).toBe(0);
    clientId = JSON.parse(res.stdout).client_id;
    expect(rows('select privacy_webhook_url from apps where client_id = ?', clientId)).toEqual([
      { privacy_webhook_url: 'http://localhost:4000/privacy' },
    ]);
  }, 180_000);

  it('apps update sets, refuses and clears it; bad input changes nothing', async () => {
    const set = await run(['apps', 'update', clientId, '--privacy-webhook-url', 'https://hooks.example.com/privacy', '--json']);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ client_id: clientId, privacy_webhook_url: 'https://hooks.example.com/privacy' });
    const stored = () =>
      rows<{ privacy_webhook_url: string | null }>('select privacy_webhook_url from apps where client_id = ?', clientId)[0];
    for (const [args, reason] of [
      [['apps', 'update', clientId, '--privacy-webhook-url', 'https://user:pw@hooks.example.com/'], /must not contain credentials/],
      [['apps', 'update', 'no-such-app', '--privacy-webhook-url', 'https://hooks.example.com/'], /no app with client_id "no-such-app"/],
      [
        ['apps', 'update', clientId],
        /nothing to change: give --privacy-webhook-url, --authorization-iss, --managed-install or --ed25519-signatures/,
      ],
    ] as const) {
      const res = await run([...args, '--json']);
      expect(res.code, args.join(' ')).toBe(args.length === 3 ? 2 : 1);
      expect(res.stdout).toBe('');
      expect((JSON.parse(res.stderr) as { error: { message: string } }).error.message).toMatch(reason);
      expect(stored()).toEqual({ privacy_webhook_url: 'https://hooks.example.com/privacy' });
    }
    const cleared = await run(['apps', 'update', clientId, '--privacy-webhook-url', '']);
    expect(cleared.code).toBe(0);
    expect(cleared.stdout).toMatch(/has no privacy webhook address: it is sent no privacy webhooks/);
    expect(stored()).toEqual({ privacy_webhook_url: null });
  }, 180_000);

  it('apps update --authorization-iss turns iss on the code redirect on and off; a bad value changes nothing', async () => {
    const iss = () => rows<{ authorization_iss: number }>('select authorization_iss from apps where client_id = ?', clientId)[0];
    // A new app gets it unless created with --no-authorization-iss.
    expect(iss()).toEqual({ authorization_iss: 1 });
    const off = await run(['apps', 'update', clientId, '--authorization-iss', 'off']);
    expect(off.code).toBe(0);
    expect(off.stdout).toMatch(/no longer carries iss/);
    expect(iss()).toEqual({ authorization_iss: 0 });
    const bad = await run(['apps', 'update', clientId, '--authorization-iss', 'yes', '--json']);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(JSON.parse(bad.stderr)).toEqual({ error: { code: 'usage', message: '--authorization-iss: expected on or off, got "yes"' } });
    expect(iss()).toEqual({ authorization_iss: 0 });
    const on = await run(['apps', 'update', clientId, '--authorization-iss', 'on', '--json']);
    expect(on.code, on.stderr).toBe(0);
    expect(JSON.parse(on.stdout)).toEqual({ client_id: clientId, authorization_iss: true });
    expect(iss()).toEqual({ authorization_iss: 1 });
  }, 180_000);

  it('apps uninstall writes shop/redact due after --shop-redact-delay (also SHOP_REDACT_DELAY); a bad delay changes nothing', async () => {
    expect((await run(['apps', 'update', clientId, '--privacy-webhook-url', 'http://localhost:4000/privacy'])).code).toBe(0);
    const install = () => {
      const db = new Database(database);
      try {
        db.prepare(
          `insert into installations (store_id, app_id, scopes, installed_at, uninstalled_at)
           select s.id, a.id, 'read_products', 1, null from stores s, apps a where s.name = 'privacy' and a.client_id = ?
           on conflict (store_id, app_id) do update set uninstalled_at = null`,
        ).run(clientId);
      } finally {
        db.close();
      }
    };
    install();
    const bad = await run(['apps', 'uninstall', '--store', 'privacy', '--client-id', clientId, '--shop-redact-delay', 'soon']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--shop-redact-delay: expected a wait/);
    expect(rows('select id from installations where uninstalled_at is not null')).toEqual([]);

    const res = await run(['apps', 'uninstall', '--store', 'privacy', '--client-id', clientId, '--shop-redact-delay', '10m', '--json']);
    expect(res.code, res.stderr).toBe(0);
    install();
    expect((await run(['apps', 'uninstall', '--store', 'privacy', '--client-id', clientId], { SHOP_REDACT_DELAY: '2h' })).code).toBe(0);
    const queued = rows<{ status: string; wait: number; subscription_id: number }>(
      `select status, next_attempt_at - created_at as wait, subscription_id from webhook_deliveries where topic = 'shop/redact' order by id`,
    );
    // The second uninstall cancelled what the first left waiting (the app had been installed again).
    expect(queued.map((d) => [d.status, Number(d.wait)])).toEqual([
      ['cancelled', 600_000],
      ['pending', 7_200_000],
    ]);
    expect(queued.every((d) => d.subscription_id < 0)).toBe(true);
  }, 180_000);

  it('serve refuses a bad --shop-redact-delay before it starts', async () => {
    const res = await run(['serve', '--port', '0', '--shop-redact-delay', '40d']);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/--shop-redact-delay: expected a wait from 0 to 30 days/);
  }, 180_000);
});
