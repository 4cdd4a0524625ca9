// The storegate command as a user runs it: a child process, --json on stdout, one-line errors.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../platform/src/domain/tokens.ts';
import { freshPostgresUrl } from '../../platform/test/harness.ts';
import { CLI_TEST_TIMEOUT_MS, runCli, runCliInProcess, STOREGATE_BIN } from './run-cli.ts';

const BIN = STOREGATE_BIN;
const dir = mkdtempSync(join(tmpdir(), 'storegate-cli-'));
const database = join(dir, 'cli.db');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * `input`, when given, is the command's standard input (a password for `--owner-password-stdin`).
 * Such a command, and `serve`, run as a child process of the real bin: the store created from
 * standard input below proves the command end to end. The other commands run in this process.
 */
function run(args: string[], db = database, input?: string) {
  const runner = input !== undefined || args.some((arg) => arg.endsWith('-stdin')) || args[0] === 'serve' ? runCli : runCliInProcess;
  return runner([...args, '--database', db], { ...process.env, DATABASE_URL: '' }, input);
}

function rows(sql: string): unknown[] {
  const db = new Database(database, { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

describe('storegate CLI on SQLite', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('migrate, then stores create with --json', async () => {
    const m = await run(['migrate', '--json']);
    expect(m.code).toBe(0);
    // Every dated migration file, in order.
    const files = readdirSync(new URL('../../platform/src/storage/migrations/', import.meta.url))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.slice(0, -3))
      .sort();
    expect(files[0]).toBe('2026-11-22T00-initial');
    expect(JSON.parse(m.stdout)).toEqual({ applied: files });
    expect(JSON.parse((await run(['migrate', '--json'])).stdout)).toEqual({ applied: [] });
    const res = await run(
      ['stores', 'create', 'acme', '--owner-email', 'owner@acme.test', '--owner-password-stdin', '--json'],
      database,
      'acme-password\n',
    );
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({
      store_id: expect.stringMatching(/^\d+$/),
      store_name: 'acme',
      base_url: 'http://acme.localhost:8080',
    });
    expect(res.stderr).toBe('');
  });

  it('bad input: non-zero exit, one line on stderr, nothing on stdout, nothing changed', async () => {
    const before = rows('select count(*) as n from stores');
    const cases: [string[], RegExp][] = [
      [['stores', 'create', 'acme', '--owner-email', 'x@acme.test', '--owner-password', 'acme-password'], /name is already taken/],
      [['stores', 'create', 'Bad Name!', '--owner-email', 'x@acme.test', '--owner-password', 'acme-password'], /name must start/],
      [
        ['stores', 'create', 'ok-name', '--owner-email', 'not-an-email', '--owner-password', 'short'],
        /email must be an email address; password must be at least 8/,
      ],
      [['stores', 'create', 'ok-name'], /required option '--owner-email/],
      [['seed', '--store', 'acme', '--products', '-5'], /--products: expected a whole number/],
      [['seed', '--store', 'nope', '--products', '5'], /no store named "nope"/],
      [['private-apps', 'create', '--store', 'acme', '--name', 'x', '--scopes', 'read_everything'], /unknown scope "read_everything"/],
      [['frobnicate'], /unknown command/],
    ];
    for (const [args, reason] of cases) {
      const res = await run([...args, '--json']);
      expect(res.code, args.join(' ')).not.toBe(0);
      expect(res.stdout).toBe('');
      expect(res.code, args.join(' ')).toBe(
        reason.source.startsWith('required') || args[0] === 'frobnicate' || (args[0] === 'seed' && args[2] === 'acme') ? 2 : 1,
      );
      expect((JSON.parse(res.stderr) as { error: { message: string } }).error.message).toMatch(reason);
    }
    expect(rows('select count(*) as n from stores')).toEqual(before);
    expect(rows('select count(*) as n from private_apps')).toEqual([{ n: 0 }]);
    expect(rows('select count(*) as n from products')).toEqual([{ n: 0 }]);
  });

  it('apps create validates URLs and prints the credentials once; the secret is stored encrypted', async () => {
    for (const [url, reason] of [
      ['http://localhost:3000/cb#x', /redirect_uri must not contain "#"/],
      ['ftp://localhost/cb', /redirect_uri must be an http or https URL/],
      ['not a url', /redirect_uri must be an absolute URL/],
    ] as const) {
      const res = await run(['apps', 'create', '--name', 'A', '--app-url', 'http://localhost:3000/', '--redirect-uri', url, '--json']);
      expect(res.code).toBe(1);
      expect((JSON.parse(res.stderr) as { error: { code: string; message: string } }).error).toMatchObject({
        code: 'invalid_input',
        message: expect.stringMatching(reason),
      });
    }
    const res = await run([
      'apps',
      'create',
      '--name',
      'Good app',
      '--app-url',
      'http://localhost:3000/',
      '--redirect-uri',
      'http://localhost:3000/cb',
      '--scopes',
      'read_products',
      '--json',
    ]);
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out).toEqual({
      client_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      client_secret: expect.stringMatching(/^sg_cs_/),
      authorization_iss: true,
      managed_install: false,
    });
    const stored = rows(`select client_secret_enc from apps where client_id = '${out.client_id}'`) as { client_secret_enc: string }[];
    expect(stored[0]!.client_secret_enc).not.toContain(out.client_secret);
    const missingPartner = await run([
      'apps',
      'create',
      '--name',
      'B',
      '--app-url',
      'http://localhost:3000/',
      '--redirect-uri',
      'http://localhost:3000/cb',
      '--partner',
      'ghost@x.test',
    ]);
    expect(missingPartner.stderr).toMatch(/no partner account with email ghost@x.test/);
  });

  it('partners create, private-apps create: token shown once, only its hash stored', async () => {
    expect(
      JSON.parse((await run(['partners', 'create', '--email', 'p@x.test', '--password', 'partner-pass', '--json'])).stdout),
    ).toMatchObject({
      email: 'p@x.test',
    });
    const res = await run([
      'private-apps',
      'create',
      '--store',
      'acme',
      '--name',
      'Inventory sync',
      '--scopes',
      'read_products write_product',
      '--json',
    ]);
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out.access_token).toMatch(/^sg_pt_[A-Za-z0-9_-]{43}$/);
    expect(out.webhook_secret).toMatch(/^sg_whs_/);
    expect(rows('select scopes, token_hash from private_apps')).toEqual([
      { scopes: 'read_products,write_products', token_hash: hashToken(out.access_token) },
    ]);
  });

  it('seed inserts in batches and reports its rate', async () => {
    const res = await run(['seed', '--store', 'acme', '--products', '2500', '--customers', '30', '--orders', '40', '--json']);
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out).toMatchObject({ store: 'acme', products: 2500, customers: 30, orders: 40 });
    expect(out.rows_per_second).toBeGreaterThan(0);
    expect(rows('select count(*) as n from products')).toEqual([{ n: 2500 }]);
    expect(rows('select count(*) as n from orders where customer_id is not null')).toEqual([{ n: 40 }]);
  });

  it('seeding a store again adds customers with emails of their own (emails are unique per store)', async () => {
    // The same counts as before: the same pseudo-random names come up again.
    const res = await run(['seed', '--store', 'acme', '--products', '2500', '--customers', '30', '--orders', '40', '--json']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(rows('select count(*) as n from customers')).toEqual([{ n: 60 }]);
    expect(rows('select count(distinct email) as n from customers')).toEqual([{ n: 60 }]);
  });

  it('serve refuses bad configuration with a clear reason', async () => {
    for (const [args, reason] of [
      [['serve', '--port', 'eighty'], /--port: expected an integer/],
      [['serve', '--rate-limit', '40-2'], /--rate-limit: expected <bucket>\/<per-second>/],
      [['serve', '--mode', 'production'], /--master-key \(MASTER_KEY\) is required in production mode/],
      [['serve', '--store-domain', 'bad_domain'], /--store-domain: not a valid domain name/],
      [['serve', '--master-key', 'abcd'], /--master-key: must be at least 32 bytes/],
      [['serve', '--mode', 'production', '--master-key', 'ab'.repeat(32)], /--public-scheme: production mode serves https only/],
      [['serve', '--mode', 'production', '--master-key', 'ab'.repeat(32), '--public-scheme', 'http'], /--public-scheme: production mode/],
      [['serve', '--request-timeout', 'soon'], /--request-timeout: expected an integer/],
      [['serve', '--password-scrypt-n', '1000'], /--password-scrypt-n: expected a power of two from 1024 to 1048576, got "1000"/],
      [
        [
          'serve',
          '--mode',
          'production',
          '--master-key',
          'ab'.repeat(32),
          '--store-domain',
          'shops.example',
          '--password-scrypt-n',
          '16384',
        ],
        /--password-scrypt-n: production mode needs at least 32768, got 16384/,
      ],
      [
        ['serve', '--headers-timeout', '60000', '--request-timeout', '1000'],
        /--headers-timeout: must not be longer than --request-timeout/,
      ],
      [['serve', '--keep-alive-timeout', '5'], /--keep-alive-timeout: expected an integer from 100/],
      [['serve', '--pool-size', '0'], /--pool-size: expected an integer from 1 to 1000, got "0"/],
      [['serve', '--db-statement-timeout', 'soon'], /--db-statement-timeout: expected an integer from 0/],
      [['serve', '--db-connect-timeout', '5'], /--db-connect-timeout: expected an integer from 100/],
      [['serve', '--deprecation-2022-01', 'last year'], /--deprecation-2022-01: expected a date such as 2027-06-01/],
      [['serve', '--sunset-2022-01', '2027-02-30'], /--sunset-2022-01: expected a date such as 2027-06-01/],
      [
        ['serve', '--deprecation-2022-01', '2026-01-01', '--sunset-2022-01', '2025-12-31'],
        /--sunset-2022-01: must not be earlier than --deprecation-2022-01 \(2026-01-01T00:00:00.000Z\)/,
      ],
    ] as const) {
      const res = await run([...args]);
      expect(res.code).not.toBe(0);
      expect(res.stderr.trim().split('\n')).toHaveLength(1);
      expect(res.stderr).toMatch(reason);
    }
    const badDb = await run(['migrate'], 'mysql://localhost/x');
    expect(badDb.stderr).toMatch(/--database: unsupported scheme/);
  });
});

describe('storegate serve in production mode', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('refuses --seed-demo with a one-line reason, before it opens or creates anything', async () => {
    const db = join(dir, 'production.db');
    const res = spawnSync(
      process.execPath,
      [
        BIN,
        'serve',
        '--mode',
        'production',
        '--seed-demo',
        '--master-key',
        'ab'.repeat(32),
        '--store-domain',
        'shops.example',
        '--port',
        '0',
        '--database',
        db,
      ],
      // Killed after 20 s if it starts serving instead of refusing.
      // The suite's cheap password cost (vitest.config.ts) is one production mode refuses: unset here.
      { encoding: 'utf8', env: { ...process.env, DATABASE_URL: '', PASSWORD_SCRYPT_N: '' }, timeout: 20_000 },
    );
    expect(res.error, 'it started serving').toBeUndefined();
    expect(res.status).not.toBe(0);
    expect(res.stdout).toBe('');
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(/--seed-demo: not allowed in production mode/);
    expect(existsSync(db)).toBe(false);
  });

  it('serve --help lists the HTTP timeouts with their defaults and variables', async () => {
    const res = await runCli(['serve', '--help'], process.env);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/--headers-timeout <ms>[\s\S]*default 10000[\s\S]*HEADERS_TIMEOUT_MS/);
    expect(res.stdout).toMatch(/--request-timeout <ms>[\s\S]*default 30000[\s\S]*REQUEST_TIMEOUT_MS/);
    expect(res.stdout).toMatch(/--keep-alive-timeout <ms>[\s\S]*default 72000[\s\S]*KEEP_ALIVE_TIMEOUT_MS/);
    expect(res.stdout).toMatch(/--pool-size <n>[\s\S]*default 10[\s\S]*DB_POOL_SIZE/);
    expect(res.stdout).toMatch(/--db-statement-timeout <ms>[\s\S]*default 30000[\s\S]*DB_STATEMENT_TIMEOUT_MS/);
    expect(res.stdout).toMatch(/--db-connect-timeout <ms>[\s\S]*default 5000[\s\S]*DB_CONNECT_TIMEOUT_MS/);
  });
});

describe.skipIf(!process.env.TEST_PG_URL)('storegate CLI on PostgreSQL', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('migrate --pg-partitions partitions an empty database once; a bad count or another count is refused', async () => {
    const pg = await freshPostgresUrl();
    try {
      for (const bad of ['abc', '1', '1025', '-4']) {
        const res = await run(['migrate', `--pg-partitions=${bad}`], pg.url);
        expect(res.code).toBe(2);
        expect(res.stdout).toBe('');
        expect(res.stderr.trim()).toBe(`storegate: --pg-partitions: expected an integer from 2 to 1024, got "${bad}"`);
      }
      const m = await run(['migrate', '--pg-partitions', '4', '--json'], pg.url);
      expect(m.stderr).toBe('');
      expect(JSON.parse(m.stdout).applied.length).toBeGreaterThan(0);
      // Later runs keep the layout without the flag; another count is refused and changes nothing.
      expect(JSON.parse((await run(['migrate', '--json'], pg.url)).stdout)).toEqual({ applied: [] });
      const other = await run(['migrate', '--pg-partitions', '8'], pg.url);
      expect(other.code).not.toBe(0);
      expect(other.stderr.trim()).toBe(
        'storegate: --pg-partitions: this database is partitioned into 4 partitions per store table, not 8; the number is fixed when the database is first migrated',
      );
      const res = await run(
        ['stores', 'create', 'partshop', '--owner-email', 'o@part.test', '--owner-password-stdin', '--json'],
        pg.url,
        'pg-password\n',
      );
      expect(res.stderr).toBe('');
      const seeded = await run(['seed', '--store', 'partshop', '--products', '300', '--json'], pg.url);
      expect(JSON.parse(seeded.stdout)).toMatchObject({ products: 300 });
    } finally {
      await pg.drop();
    }
  });

  it('creates a store and seeds it', async () => {
    const pg = await freshPostgresUrl();
    try {
      const res = await run(
        ['stores', 'create', 'pgshop', '--owner-email', 'o@pg.test', '--owner-password-stdin', '--json'],
        pg.url,
        'pg-password\n',
      );
      expect(res.stderr).toBe('');
      expect(JSON.parse(res.stdout)).toMatchObject({ store_name: 'pgshop' });
      const seeded = await run(['seed', '--store', 'pgshop', '--products', '1500', '--json'], pg.url);
      expect(JSON.parse(seeded.stdout)).toMatchObject({ products: 1500 });
      expect(
        (await run(['stores', 'create', 'pgshop', '--owner-email', 'o@pg.test', '--owner-password', 'pg-password'], pg.url)).stderr,
      ).toMatch(/already taken/);
    } finally {
      await pg.drop();
    }
  });
});
