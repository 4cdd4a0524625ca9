// Database faults: which driver errors mean "unavailable", the pool settings and their bad input,
// and what a request gets while the database cannot be reached (503 with Retry-After, /readyz 503,
// one log line), on PostgreSQL (a port that refuses, a server that accepts and never answers, a
// backend terminated under a checked-out connection) and SQLite (a write lock held elsewhere).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, rawConfigFromEnv } from '../src/config.ts';
import { ConfigError, DatabaseUnavailableError } from '../src/domain/errors.ts';
import { createPlatform, type Platform } from '../src/platform.ts';
import { databaseFault, translateDatabaseError } from '../src/storage/database-faults.ts';
import { type FaultProxy, faultProxy } from './fault-proxy.ts';
import { api, createFixture, createTestPlatform, freshPostgresUrl, privateToken } from './harness.ts';

function pgError(code: string, message: string): pg.DatabaseError {
  const err = new pg.DatabaseError(message, message.length, 'error');
  err.code = code;
  return err;
}
function sysError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code });
}

describe('which errors mean the database is unavailable', () => {
  const cases: [string, unknown, ReturnType<typeof databaseFault>][] = [
    ['refused', sysError('ECONNREFUSED'), 'cannot connect'],
    ['reset', sysError('ECONNRESET'), 'connection lost'],
    ['broken pipe', sysError('EPIPE'), 'connection lost'],
    ['socket timeout', sysError('ETIMEDOUT'), 'connection lost'],
    ['57P01 admin_shutdown', pgError('57P01', 'terminating connection due to administrator command'), 'connection lost'],
    ['57P02 crash_shutdown', pgError('57P02', 'terminating connection because of crash of another server process'), 'connection lost'],
    ['57P03 cannot_connect_now', pgError('57P03', 'the database system is starting up'), 'cannot connect'],
    ['53300 too_many_connections', pgError('53300', 'sorry, too many clients already'), 'cannot connect'],
    ['08006 connection_failure', pgError('08006', 'connection failure'), 'connection lost'],
    ['08P01 protocol_violation', pgError('08P01', 'protocol violation'), 'connection lost'],
    ['Connection terminated unexpectedly', new Error('Connection terminated unexpectedly'), 'connection lost'],
    ['Connection terminated', new Error('Connection terminated'), 'connection lost'],
    ['client not queryable', new Error('Client has encountered a connection error and is not queryable'), 'connection lost'],
    ['pool connect timeout', new Error('timeout exceeded when trying to connect'), 'cannot connect'],
    ['client connect timeout', new Error('Connection terminated due to connection timeout'), 'cannot connect'],
    ['server statement timeout', pgError('57014', 'canceling statement due to statement timeout'), 'statement timeout'],
    ['client deadline', new Error('Query read timeout'), 'statement timeout'],
    ['SQLite busy', Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }), 'busy'],
    ['SQLite busy snapshot', Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY_SNAPSHOT' }), 'busy'],
    // Errors of the query or the data: not unavailability.
    ['unique violation', pgError('23505', 'duplicate key value violates unique constraint'), undefined],
    ['undefined table', pgError('42P01', 'relation "nope" does not exist'), undefined],
    ['serialization failure', pgError('40001', 'could not serialize access'), undefined],
    ['cancelled by a user', pgError('57014', 'canceling statement due to user request'), undefined],
    ['SQLite unique', Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' }), undefined],
    ['a bug', new TypeError('cannot read properties of undefined'), undefined],
    ['not an error', 'Connection terminated', undefined],
    ['null', null, undefined],
  ];
  it.each(cases)('%s', (_name, err, fault) => {
    expect(databaseFault(err)).toBe(fault);
    const translated = translateDatabaseError(err);
    if (fault) {
      expect(translated).toBeInstanceOf(DatabaseUnavailableError);
      expect(translated).toMatchObject({ statusCode: 503, code: 'ServiceUnavailable', fault, retryAfterSeconds: 2 });
    } else {
      expect(translated).toBe(err);
    }
  });

  it('any failure to get a connection is "cannot connect" (nothing of the request ran)', () => {
    const notAccepting = pgError('55000', 'database "x" is not currently accepting connections');
    expect(databaseFault(notAccepting)).toBeUndefined();
    expect(databaseFault(notAccepting, true)).toBe('cannot connect');
    expect(translateDatabaseError(pgError('28P01', 'password authentication failed'), true)).toBeInstanceOf(DatabaseUnavailableError);
  });
});

describe('pool settings', () => {
  const key = randomBytes(32).toString('hex');
  it('default to 10 connections, a 30 s statement timeout and a 5 s connect timeout', () => {
    expect(loadConfig({ masterKey: key }).databaseSettings).toEqual({ poolSize: 10, statementTimeoutMs: 30_000, connectTimeoutMs: 5_000 });
  });
  it('come from the flags or the environment', () => {
    expect(loadConfig({ masterKey: key, poolSize: '25', dbStatementTimeout: '0', dbConnectTimeout: '1500' }).databaseSettings).toEqual({
      poolSize: 25,
      statementTimeoutMs: 0,
      connectTimeoutMs: 1500,
    });
    const raw = rawConfigFromEnv({ MASTER_KEY: key, DB_POOL_SIZE: '3', DB_STATEMENT_TIMEOUT_MS: '8000', DB_CONNECT_TIMEOUT_MS: '700' });
    expect(loadConfig(raw).databaseSettings).toEqual({ poolSize: 3, statementTimeoutMs: 8000, connectTimeoutMs: 700 });
  });
  it.each([
    ['poolSize', '0', '--pool-size'],
    ['poolSize', '1001', '--pool-size'],
    ['poolSize', 'ten', '--pool-size'],
    ['dbStatementTimeout', '-1', '--db-statement-timeout'],
    ['dbStatementTimeout', '1.5', '--db-statement-timeout'],
    ['dbConnectTimeout', '50', '--db-connect-timeout'],
    ['dbConnectTimeout', '', undefined],
  ] as const)('%s=%j is refused naming its flag', (field, value, flag) => {
    const load = () => loadConfig({ masterKey: key, [field]: value });
    if (flag === undefined) return expect(load).not.toThrow();
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(flag);
  });
});

describe.runIf(process.env.TEST_PG_URL).each([
  ['stops answering (connections accepted, never a word back)', 'silent'],
  ['refuses connections', 'refuse'],
] as const)('PostgreSQL %s after the node started', (_name, mode) => {
  let schema: Awaited<ReturnType<typeof freshPostgresUrl>>;
  let proxy: FaultProxy;
  let platform: Platform & { http: NonNullable<Platform['http']> };
  const logs: string[] = [];
  const ready = () => platform.http.inject({ method: 'GET', url: '/readyz', headers: { host: 'localhost:8080' } });
  const products = (method: 'GET' | 'POST') =>
    platform.http.inject({
      method,
      url: '/openapi/2026-01/products',
      headers: { host: 'shop.localhost:8080', 'access-token': 'tok_whatever', 'content-type': 'application/json' },
      ...(method === 'POST' ? { payload: JSON.stringify({ product: { title: 'x' } }) } : {}),
    });

  beforeAll(async () => {
    schema = await freshPostgresUrl();
    const base = new URL(process.env.TEST_PG_URL!);
    proxy = await faultProxy({ host: '127.0.0.1', port: Number(base.port || 5432) });
    const url = new URL(schema.url);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    const config = loadConfig({ database: url.toString(), masterKey: randomBytes(32).toString('hex'), dbConnectTimeout: '300' });
    const logStream = new Writable({
      write(chunk, _enc, cb) {
        logs.push(String(chunk));
        cb();
      },
    });
    platform = await createPlatform(config, { logStream });
    // Served while the database is there (an unknown store is a 404, not a 503).
    expect((await products('GET')).statusCode).toBe(404);
    proxy.cut(mode);
  });
  afterAll(async () => {
    proxy?.restore();
    await platform?.close();
    await proxy?.close();
    await schema?.drop();
  });

  it('the Admin API answers 503 ServiceUnavailable with Retry-After, never 500', async () => {
    for (const method of ['GET', 'POST'] as const) {
      const res = await products(method);
      expect(res.statusCode, method).toBe(503);
      expect(res.headers['retry-after']).toBe('2');
      expect(res.json()).toEqual({
        code: 'ServiceUnavailable',
        message: expect.stringMatching(/database/),
        request_id: expect.any(String),
      });
      expect(res.body).not.toContain('127.0.0.1');
    }
  });

  it('the token endpoint answers 503 temporarily_unavailable with Retry-After', async () => {
    const res = await platform.http.inject({
      method: 'POST',
      url: '/admin/oauth/token',
      headers: { host: 'shop.localhost:8080', 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=authorization_code&code=abc&client_id=x&client_secret=y',
    });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('2');
    expect(res.json()).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
  });

  it('/readyz is 503 naming the database, /healthz stays 200, and one warning was logged for the outage', async () => {
    const res = await ready();
    expect(res.statusCode).toBe(503);
    // A balancer probes every few seconds for the whole outage: the probes themselves log nothing.
    for (let i = 0; i < 5; i++) expect((await ready()).statusCode).toBe(503);
    expect(logs.filter((l) => l.includes('"level":40'))).toHaveLength(1);
    expect(res.json()).toEqual({ status: 'unavailable', draining: false, dependencies: { database: 'down' } });
    expect((await platform.http.inject({ method: 'GET', url: '/healthz', headers: { host: 'localhost:8080' } })).statusCode).toBe(200);
    expect(logs.filter((l) => l.includes('the database is unavailable'))).toHaveLength(1);
    expect(logs.filter((l) => l.includes('"level":50'))).toEqual([]);
  });

  it('once the database is back, the node serves again by itself and says so once', async () => {
    proxy.restore();
    const deadline = Date.now() + 10_000;
    while ((await ready()).statusCode !== 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect((await ready()).statusCode).toBe(200);
    expect((await products('GET')).statusCode).toBe(404);
    expect(logs.filter((l) => l.includes('the database is back'))).toHaveLength(1);
    expect(logs.filter((l) => l.includes('the database is unavailable'))).toHaveLength(1);
  });
});

describe.runIf(process.env.TEST_PG_URL)('a checked-out PostgreSQL connection whose backend is terminated', () => {
  it('fails its next statement with DatabaseUnavailableError; the process lives on and the pool recovers', async () => {
    const fixture = new URL('./fixtures/held-connection.ts', import.meta.url).pathname;
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, process.env.TEST_PG_URL!], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (out += c));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const admin = new pg.Client({ connectionString: process.env.TEST_PG_URL });
    await admin.connect();
    try {
      const deadline = Date.now() + 20_000;
      while (!/pid \d+/.test(out) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const pid = Number(/pid (\d+)/.exec(out)?.[1]);
      expect(pid, out).toBeGreaterThan(0);
      const { rows } = await admin.query<{ ok: boolean }>('select pg_terminate_backend($1) as ok', [pid]);
      expect(rows[0]!.ok).toBe(true);
      // Gone from the server's list: its termination notice is on its way to the child.
      while ((await admin.query('select 1 from pg_stat_activity where pid = $1', [pid])).rowCount! > 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 200));
      if (child.exitCode === null) child.stdin.write('go\n');
      expect(await exited, out).toBe(0);
      expect(out).toContain('failed DatabaseUnavailableError connection lost');
      expect(out).toContain('recovered');
    } finally {
      await admin.end();
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

describe.runIf(process.env.TEST_PG_URL)('every pooled PostgreSQL connection busy past the connect timeout', () => {
  it('is 503 with Retry-After, without reporting the database down; the next call after the release succeeds', async () => {
    const t = await createTestPlatform('postgres');
    const logs: string[] = [];
    const small = await createPlatform(
      { ...t.config, databaseSettings: { poolSize: 1, statementTimeoutMs: 30_000, connectTimeoutMs: 300 } },
      {
        migrate: false,
        logStream: new Writable({
          write(chunk, _enc, cb) {
            logs.push(String(chunk));
            cb();
          },
        }),
      },
    );
    try {
      const f = await createFixture(t);
      const token = await privateToken(t, f.storeName, 'read_products');
      const call = () =>
        small.http.inject({ method: 'GET', url: '/openapi/2026-01/products', headers: { host: f.host, 'access-token': token } });
      expect((await call()).statusCode).toBe(200);
      let release = () => {};
      const held = small.db.kysely.transaction().execute(async (trx) => {
        await trx.selectFrom('stores').select('id').execute();
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      });
      // The only connection is now checked out.
      while (small.db.poolStats()?.inUse !== 1) await new Promise((r) => setTimeout(r, 10));
      const waited = await call();
      expect(waited.statusCode).toBe(503);
      expect(waited.headers['retry-after']).toBe('2');
      expect(waited.json()).toMatchObject({ code: 'ServiceUnavailable' });
      expect(small.db.health.state).toBe('up');
      // Overloaded, not gone: the node stays in the balancer.
      const ready = await small.http.inject({ method: 'GET', url: '/readyz', headers: { host: 'localhost:8080' } });
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toMatchObject({ dependencies: { database: 'up' } });
      release();
      await held;
      expect((await call()).statusCode).toBe(200);
      expect(logs.filter((l) => l.includes('the database is unavailable'))).toEqual([]);
    } finally {
      await small.close();
      await t.close();
    }
  });
});

describe('SQLite: a write lock held by another process past busy_timeout', () => {
  it('is 503 with Retry-After for writes (reads go on); the same write succeeds once the lock is gone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sg-busy-'));
    const path = join(dir, 'busy.db');
    const t = await createTestPlatform('sqlite', { database: { dialect: 'sqlite', path } });
    const other = new SQLite(path);
    try {
      const f = await createFixture(t);
      const token = await privateToken(t, f.storeName, 'write_products');
      // Shorter than the 5 s default, so the test does not wait for it.
      t.db.sqlite!.pragma('busy_timeout = 50');
      other.exec('BEGIN IMMEDIATE');
      const refused = await api(t, f, token, 'POST', '/openapi/2026-01/products', { product: { title: 'locked out' } });
      expect(refused.statusCode).toBe(503);
      expect(refused.headers['retry-after']).toBe('2');
      expect(refused.json()).toMatchObject({ code: 'ServiceUnavailable' });
      expect((await api(t, f, token, 'GET', '/openapi/2026-01/products')).statusCode).toBe(200);
      other.exec('COMMIT');
      const created = await api(t, f, token, 'POST', '/openapi/2026-01/products', { product: { title: 'locked out' } });
      expect(created.statusCode).toBe(201);
      const rows = await t.db.kysely.selectFrom('products').select('id').where('title', '=', 'locked out').execute();
      expect(rows).toHaveLength(1);
    } finally {
      other.close();
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
