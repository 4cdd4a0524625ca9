// Test harness: a platform on SQLite or PostgreSQL (own schema per instance), a frozen clock, captured
// logs, and helpers that walk the install flow through inject().
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { CompiledQuery } from 'kysely';
import pg from 'pg';
import { loadConfig, type Config } from '../src/config.ts';
import type { SecretBox } from '../src/domain/secret-box.ts';
import { createPlatform, type Platform, type WorkerSettings } from '../src/platform.ts';
import type { Services } from '../src/services/services.ts';
import type { Db } from '../src/storage/database.ts';
import { openStorage } from '../src/storage/sql-storage.ts';
import { recordingDb } from './partition-routing.ts';

export type Dialect = 'sqlite' | 'postgres' | 'postgres-partitioned';
export const DIALECTS: Dialect[] = process.env.TEST_PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];
/**
 * DIALECTS and, with PostgreSQL, the partitioned layout (every store table hash-partitioned by
 * store_id: see storage/partitioning.ts). For the suites that prove the layout (storage contract,
 * Admin API); the others run on DIALECTS.
 */
export const DIALECTS_WITH_PARTITIONED: Dialect[] = process.env.TEST_PG_URL ? [...DIALECTS, 'postgres-partitioned'] : DIALECTS;
/**
 * The cheapest password hash the platform allows: the suite creates thousands of stores and
 * partners, and at the default cost each hash is a tenth of a second of CPU. The hash's format and
 * checks are the same at any cost; the default cost has its own test.
 */
export const TEST_SCRYPT_N = 1024;
/** Partitions per store table in the partitioned layout under test: few, so a schema builds fast. */
export const TEST_PARTITIONS = 4;

export class TestClock {
  constructor(public now = Date.UTC(2026, 10, 22, 12, 0, 0)) {}
  readonly fn = () => this.now;
  advance(ms: number): void {
    this.now += ms;
  }
}

export interface TestPlatform {
  app: FastifyInstance;
  /** The services, plus the secret box (tests open sealed secrets to check signatures). */
  services: Services & { box: SecretBox };
  platform: Platform;
  db: Db;
  config: Config;
  clock: TestClock;
  logs: string[];
  /** Every query the platform ran, on the partitioned layout (and where asked for) only (empty elsewhere). */
  queries?: readonly CompiledQuery[];
  close(): Promise<void>;
}

/** A fresh PostgreSQL schema in the test database, so test files never see each other's rows. */
export async function freshPostgresUrl(): Promise<{ url: string; drop(): Promise<void> }> {
  const base = process.env.TEST_PG_URL!;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop schema ${schema} cascade`);
      await c.end();
    },
  };
}

/** `record`: record every query on PostgreSQL's ordinary layout too (`TestPlatform.queries`). */
export async function createTestPlatform(
  dialect: Dialect,
  overrides: Partial<Config> = {},
  options: { record?: boolean } = {},
): Promise<TestPlatform> {
  const pgSchema = dialect === 'sqlite' ? undefined : await freshPostgresUrl();
  if (pgSchema && dialect === 'postgres-partitioned') {
    // Partitioning is chosen by the first migration; the platform's own migration then finds
    // nothing left to do and keeps the layout.
    const storage = openStorage({ dialect: 'postgres', url: pgSchema.url }, { poolSize: 1 });
    await storage.migrate({ partitions: TEST_PARTITIONS }).finally(() => storage.close());
  }
  const config: Config = {
    ...loadConfig({
      database: pgSchema ? pgSchema.url : ':memory:',
      masterKey: randomBytes(32).toString('hex'),
      logLevel: 'info',
      passwordScryptN: TEST_SCRYPT_N,
    }),
    ...overrides,
  };
  const clock = new TestClock();
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  // On the partitioned layout every query is recorded, so a suite can check that each reads one
  // partition of a store table (partition-routing.ts).
  const recorder = pgSchema && (dialect === 'postgres-partitioned' || options.record) ? recordingDb(pgSchema.url, 20) : undefined;
  const platform = await createPlatform(config, { clock: clock.fn, logStream, poolSize: 20, ...(recorder ? { db: recorder.db } : {}) });
  await platform.http.ready();
  return {
    app: platform.http,
    services: { ...platform.services, box: platform.box },
    platform,
    db: platform.db,
    config,
    clock,
    logs,
    queries: recorder?.queries ?? [],
    async close() {
      await platform.close();
      await pgSchema?.drop();
    },
  };
}

/**
 * A webhook worker on the test platform's database, built by the composition root as production
 * builds it. It schedules retries by the wall clock (the platform's frozen test clock would never
 * let a retry come due), unless the test passes a clock.
 */
export async function testWorker(t: TestPlatform, settings: WorkerSettings = {}, options: { db?: Db } = {}) {
  const p = await createPlatform(t.config, {
    clock: t.clock.fn,
    http: false,
    migrate: false,
    worker: { clock: Date.now, ...settings },
    db: options.db ?? t.db,
  });
  return p.worker!;
}

export interface Fixture {
  storeName: string;
  host: string;
  email: string;
  password: string;
  clientId: string;
  /** The fixture app's name, as pages show it. */
  appName: string;
  clientSecret: string;
  redirectUri: string;
  appUrl: string;
}

let counter = 0;
export async function createFixture(t: TestPlatform, options: { storeName?: string; scopes?: string } = {}): Promise<Fixture> {
  counter += 1;
  const storeName = options.storeName ?? `shop${counter}`;
  const email = `owner-${storeName}@example.test`;
  const password = 'correct horse battery';
  await t.services.accounts.createStore({ name: storeName, ownerEmail: email, ownerPassword: password });
  const redirectUri = 'http://localhost:3000/auth/callback';
  const appUrl = 'http://localhost:3000/';
  const { app, clientSecret } = await t.services.apps.createApp({
    name: `App ${counter}`,
    appUrl,
    redirectUri,
    scopes: options.scopes ?? 'read_products write_orders',
  });
  return {
    storeName,
    host: `${storeName}.localhost:8080`,
    email,
    password,
    clientId: app.client_id,
    appName: app.name,
    clientSecret,
    redirectUri,
    appUrl,
  };
}

/** Cookie jar for inject(): keeps name=value pairs from Set-Cookie. */
export class Jar {
  private readonly cookies = new Map<string, string>();
  take(res: LightMyRequestResponse): void {
    for (const c of res.cookies) {
      if (c.value === '' || (c.maxAge !== undefined && c.maxAge <= 0) || (c.expires && c.expires.getTime() < Date.now()))
        this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
}

export function csrfFrom(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error('no CSRF token in page');
  return m[1]!;
}

export function formBody(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

/** Logs the store owner in; returns the jar holding the session cookie. */
export async function login(t: TestPlatform, f: Fixture, jar = new Jar()): Promise<Jar> {
  const page = await t.app.inject({ method: 'GET', url: '/admin/login', headers: { host: f.host, cookie: jar.header() } });
  jar.take(page);
  const res = await t.app.inject({
    method: 'POST',
    url: '/admin/login',
    headers: { host: f.host, cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    payload: formBody({ _csrf: csrfFrom(page.body), email: f.email, password: f.password, return_to: '/admin' }),
  });
  if (res.statusCode !== 303 || res.headers.location !== '/admin')
    throw new Error(`login failed: ${res.statusCode} ${res.headers.location}`);
  jar.take(res);
  return jar;
}

export function authorizeUrl(f: Fixture, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams({
    client_id: f.clientId,
    scope: 'read_products write_orders',
    redirect_uri: f.redirectUri,
    response_type: 'code',
    state: 'st-123',
    ...extra,
  });
  return `/admin/oauth/authorize?${params}`;
}

/** Logs in, opens the consent page, presses "Install app"; returns the redirect URL to the app. */
export async function consent(t: TestPlatform, f: Fixture, extra: Record<string, string> = {}, jar?: Jar): Promise<URL> {
  const j = jar ?? (await login(t, f));
  const page = await t.app.inject({ method: 'GET', url: authorizeUrl(f, extra), headers: { host: f.host, cookie: j.header() } });
  j.take(page);
  if (page.statusCode === 303) return new URL(page.headers.location as string);
  if (page.statusCode !== 200) throw new Error(`consent page: ${page.statusCode} ${page.body}`);
  const fields: Record<string, string> = {};
  for (const m of page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]!] = decodeEntities(m[2]!);
  const res = await t.app.inject({
    method: 'POST',
    url: '/admin/oauth/authorize',
    headers: { host: f.host, cookie: j.header(), 'content-type': 'application/x-www-form-urlencoded' },
    payload: formBody({ ...fields, decision: 'install' }),
  });
  if (res.statusCode !== 303) throw new Error(`consent POST: ${res.statusCode} ${res.body}`);
  return new URL(res.headers.location as string);
}

function decodeEntities(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

export async function codeFor(t: TestPlatform, f: Fixture, extra: Record<string, string> = {}): Promise<string> {
  const url = await consent(t, f, extra);
  const code = url.searchParams.get('code');
  if (!code) throw new Error(`no code in ${url}`);
  return code;
}

export function tokenRequest(t: TestPlatform, f: Fixture, fields: Record<string, string>, as: 'form' | 'json' = 'form') {
  return t.app.inject({
    method: 'POST',
    url: '/admin/oauth/token',
    headers: { host: f.host, 'content-type': as === 'form' ? 'application/x-www-form-urlencoded' : 'application/json' },
    payload: as === 'form' ? formBody(fields) : JSON.stringify(fields),
  });
}

export async function exchange(t: TestPlatform, f: Fixture, code: string) {
  const res = await tokenRequest(t, f, {
    client_id: f.clientId,
    client_secret: f.clientSecret,
    code,
    grant_type: 'authorization_code',
    redirect_uri: f.redirectUri,
  });
  if (res.statusCode !== 200) throw new Error(`exchange: ${res.statusCode} ${res.body}`);
  return res.json() as {
    access_token: string;
    refresh_token: string;
    expires_at: number;
    expires_in: number;
    scope: string;
    store_id: string;
    store_name: string;
    token_type: string;
  };
}

export function refreshRequest(t: TestPlatform, f: Fixture, refreshToken: string) {
  return tokenRequest(t, f, {
    client_id: f.clientId,
    client_secret: f.clientSecret,
    refresh_token: refreshToken,
    grant_type: 'refresh_token',
    redirect_uri: f.redirectUri,
  });
}

/** Whether an access token is currently usable (not revoked, not expired). */
export async function accessTokenActive(t: TestPlatform, token: string): Promise<boolean> {
  const { hashToken } = await import('../src/domain/tokens.ts');
  const row = await t.db.kysely
    .selectFrom('access_tokens as a')
    .innerJoin('token_families as f', 'f.id', 'a.family_id')
    .select(['a.revoked_at', 'a.expires_at', 'f.revoked_at as family_revoked_at'])
    .where('a.token_hash', '=', hashToken(token))
    .executeTakeFirst();
  return !!row && row.revoked_at === null && row.family_revoked_at === null && row.expires_at > t.clock.now;
}

/** A public-app access token with `scopes`, through the real consent and code exchange. */
export async function appToken(t: TestPlatform, f: Fixture, scopes = 'read_products write_orders'): Promise<string> {
  const url = await consent(t, f, { scope: scopes });
  return (await exchange(t, f, url.searchParams.get('code')!)).access_token;
}

export async function privateToken(t: TestPlatform, storeName: string, scopes: string): Promise<string> {
  const store = await t.services.accounts.findStoreByName(storeName);
  return (await t.services.apps.createPrivateApp({ storeId: store!.id, name: 'Private', scopes })).accessToken;
}

export function api(
  t: TestPlatform,
  f: { host: string },
  token: string | undefined,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
) {
  return t.app.inject({
    method,
    url: path,
    headers: {
      host: f.host,
      ...(token !== undefined ? { 'access-token': token } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
}
