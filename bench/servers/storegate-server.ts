// Child process for bench/token.bench.ts: the storegate platform on the database the parent made
// for this run (BENCH_TOKEN_DATABASE: a SQLite file path or a postgres:// URL; bench/database.ts).
// Talks to the parent over IPC (fork): sends {type:'ready', port, clientId, clientSecret, ...},
// answers {id, cmd:'codes', n} with fresh authorization codes and {id, cmd:'stats'} with CPU and
// event-loop figures. Exits when the parent disconnects or sends {cmd:'exit'}.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { createPlatform, loadConfig } from '../../packages/platform/src/index.ts';
import { openDatabase } from '../../packages/platform/src/storage/database.ts';

type Request = { id: number; cmd: 'codes'; n: number } | { id: number; cmd: 'stats' } | { id?: number; cmd: 'exit' };

const send = (msg: unknown) => process.send!(msg);
const REDIRECT = 'http://localhost:9/cb';
const database = process.env.BENCH_TOKEN_DATABASE;
if (!database) throw new Error('BENCH_TOKEN_DATABASE: the parent names the database of this run');

// Diagnostics only (BENCH_TOKEN_DIAG, comma-separated), to measure where the time goes without
// editing the platform; a run with any of them is not the benchmark and cannot pass the target:
//   db-timing: time every SQLite statement execution by kind (reported with the phase figures).
const diag = new Set(
  (process.env.BENCH_TOKEN_DIAG ?? '')
    .split(',')
    .map((d) => d.trim())
    .filter(Boolean),
);
for (const d of diag) if (d !== 'db-timing') throw new Error(`BENCH_TOKEN_DIAG: unknown diagnostic "${d}"`);
const dbTiming = new Map<string, { calls: number; ms: number }>();
if (diag.has('db-timing')) timeSqliteCalls();

const config = loadConfig({
  database,
  masterKey: randomBytes(32).toString('hex'),
  logLevel: 'silent',
  port: 0,
  rateLimit: 'off',
  // One client in one store makes every grant of the run: off unless BENCH_TOKEN_RATE_LIMIT asks
  // to count them (e.g. 100000/100000: counted in both buckets, never refused).
  tokenRateLimit: process.env.BENCH_TOKEN_RATE_LIMIT ?? 'off',
  tokenStoreRateLimit: process.env.BENCH_TOKEN_RATE_LIMIT ?? 'off',
});
const db = openDatabase(config.database);

/**
 * Wraps better-sqlite3's own prototypes (before the database opens, so the platform's handle and
 * its statement cache use them) to add up the time of each statement by kind.
 */
function timeSqliteCalls(): void {
  const SQLite = createRequire(import.meta.url)('better-sqlite3') as {
    prototype: { exec(source: string): unknown; prepare(source: string): object };
  };
  const add = (kind: string, ms: number) => {
    const t = dbTiming.get(kind) ?? { calls: 0, ms: 0 };
    t.calls++;
    t.ms += ms;
    dbTiming.set(kind, t);
  };
  const kindOf = (source: string) => {
    const m = /^\s*(select|insert into|update|delete from|begin|commit|rollback|savepoint|release)\b(?:.*?\bfrom\b)?\s*"?(\w+)?/is.exec(
      source,
    );
    if (!m) return source.slice(0, 30);
    const verb = m[1]!.toLowerCase();
    return ['begin', 'commit', 'rollback', 'savepoint', 'release'].includes(verb) ? verb : `${verb} ${m[2] ?? ''}`;
  };
  const exec = SQLite.prototype.exec;
  SQLite.prototype.exec = function (this: unknown, source: string) {
    const t = performance.now();
    try {
      return exec.call(this, source);
    } finally {
      add(kindOf(source), performance.now() - t);
    }
  };
  const prepare = SQLite.prototype.prepare;
  const wrapped = new WeakSet<object>();
  SQLite.prototype.prepare = function (this: unknown, source: string) {
    const stmt = prepare.call(this, source) as Record<string, (...a: unknown[]) => unknown>;
    const proto = Object.getPrototypeOf(stmt) as Record<string, (...a: unknown[]) => unknown>;
    if (!wrapped.has(proto)) {
      wrapped.add(proto);
      for (const name of ['run', 'get', 'all'] as const) {
        const fn = proto[name]!;
        proto[name] = function (this: { source: string }, ...args: unknown[]) {
          const t = performance.now();
          try {
            return fn.apply(this, args);
          } finally {
            add(kindOf(this.source), performance.now() - t);
          }
        };
      }
    }
    return stmt;
  };
}
const platform = await createPlatform(config, { db });
const { http: app, services } = platform;
const store = await services.accounts.createStore({ name: 'bench', ownerEmail: 'o@bench.test', ownerPassword: 'bench-password' });
const { app: appRow, clientSecret } = await services.apps.createApp({
  name: 'Bench',
  appUrl: 'http://localhost:9/',
  redirectUri: REDIRECT,
  scopes: 'read_products',
});
const inst = await services.apps.grant(store.id, appRow.id, ['read_products']);

/**
 * Mints n codes through the platform's own OAuthService.issueCode (minting is set-up, not
 * measured). On SQLite inside one transaction, so that 30k codes cost one fsync instead of 30k; on
 * PostgreSQL many at a time over the pool.
 */
async function mintCodes(n: number): Promise<string[]> {
  const issue = () =>
    services.oauth.issueCode({
      appId: appRow.id,
      storeId: store.id,
      installationId: inst.id,
      redirectUri: REDIRECT,
      scopes: ['read_products'],
      codeChallenge: null,
    });
  const codes: string[] = [];
  const sqlite = db.sqlite;
  if (!sqlite) {
    while (codes.length < n) codes.push(...(await Promise.all(Array.from({ length: Math.min(200, n - codes.length) }, issue))));
    return codes;
  }
  sqlite.exec('BEGIN IMMEDIATE');
  try {
    for (let i = 0; i < n; i++) codes.push(await issue());
    sqlite.exec('COMMIT');
  } catch (err) {
    sqlite.exec('ROLLBACK');
    throw err;
  }
  return codes;
}

let lastCpu = process.cpuUsage();
let lastElu = performance.eventLoopUtilization();
let lastAt = performance.now();
function stats() {
  const cpu = process.cpuUsage(lastCpu);
  const elu = performance.eventLoopUtilization(lastElu);
  const now = performance.now();
  const db = Object.fromEntries([...dbTiming].sort((a, b) => b[1].ms - a[1].ms));
  dbTiming.clear();
  const out = {
    wallMs: now - lastAt,
    userMs: cpu.user / 1000,
    systemMs: cpu.system / 1000,
    elu: elu.utilization,
    rssMb: process.memoryUsage().rss / 2 ** 20,
    ...(diag.has('db-timing') ? { db } : {}),
  };
  lastCpu = process.cpuUsage();
  lastElu = performance.eventLoopUtilization();
  lastAt = now;
  return out;
}

async function shutdown(): Promise<never> {
  await platform.close();
  process.exit(0);
}

process.on('message', (raw) => {
  const msg = raw as Request;
  if (msg.cmd === 'exit') return void shutdown();
  if (msg.cmd === 'codes') {
    mintCodes(msg.n).then(
      (codes) => send({ id: msg.id, codes }),
      (err: Error) => send({ id: msg.id, error: String(err?.stack ?? err) }),
    );
  } else if (msg.cmd === 'stats') {
    send({ id: msg.id, stats: stats() });
  }
});
process.on('disconnect', () => void shutdown());

await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;
// What "committed" means on this database: SQLite's journal and sync settings, PostgreSQL's.
const durability = db.sqlite
  ? {
      journal_mode: db.sqlite.pragma('journal_mode', { simple: true }),
      synchronous: db.sqlite.pragma('synchronous', { simple: true }),
    }
  : {
      synchronous_commit: (await sql<{ v: string }>`select current_setting('synchronous_commit') as v`.execute(db.kysely)).rows[0]!.v,
      fsync: (await sql<{ v: string }>`select current_setting('fsync') as v`.execute(db.kysely)).rows[0]!.v,
    };
send({
  type: 'ready',
  port,
  path: '/admin/oauth/token',
  host: 'bench.localhost',
  clientId: appRow.client_id,
  clientSecret,
  redirectUri: REDIRECT,
  info: { dialect: db.dialect, ...durability, diag: [...diag].join(',') },
});
