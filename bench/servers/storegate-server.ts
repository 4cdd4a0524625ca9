// Child process for bench/token.bench.ts: the storegate platform on SQLite in a temp directory.
// Talks to the parent over IPC (fork): sends {type:'ready', port, clientId, clientSecret, ...},
// answers {id, cmd:'codes', n} with fresh authorization codes and {id, cmd:'stats'} with CPU and
// event-loop figures. Exits when the parent disconnects or sends {cmd:'exit'}.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createPlatform, loadConfig } from '../../packages/platform/src/index.ts';
import { openDatabase } from '../../packages/platform/src/storage/database.ts';

type Request = { id: number; cmd: 'codes'; n: number } | { id: number; cmd: 'stats' } | { id?: number; cmd: 'exit' };

const send = (msg: unknown) => process.send!(msg);
const dir = mkdtempSync(join(tmpdir(), 'storegate-bench-'));
const REDIRECT = 'http://localhost:9/cb';

const config = loadConfig({
  database: join(dir, 'bench.db'),
  masterKey: randomBytes(32).toString('hex'),
  logLevel: 'silent',
  port: 0,
  rateLimit: 'off',
});
const db = openDatabase(config.database);
// Diagnostics only (BENCH_TOKEN_DIAG, comma-separated), to measure where the time goes without
// editing the platform; a run with any of them is not the benchmark and cannot pass the target:
//   sync-normal: PRAGMA synchronous=NORMAL (no fsync per commit: NOT durable against power loss);
//   stmt-cache:  reuse better-sqlite3 prepared statements (Kysely's SqliteDriver prepares every query);
//   db-timing:   time every prepare() and statement execution by kind (reported with the phase figures).
const diag = new Set(
  (process.env.BENCH_TOKEN_DIAG ?? '')
    .split(',')
    .map((d) => d.trim())
    .filter(Boolean),
);
for (const d of diag)
  if (!['sync-normal', 'stmt-cache', 'db-timing'].includes(d)) throw new Error(`BENCH_TOKEN_DIAG: unknown diagnostic "${d}"`);
if (diag.has('sync-normal')) db.sqlite!.pragma('synchronous = NORMAL');
if (diag.has('stmt-cache')) {
  const sqlite = db.sqlite!;
  const prepare = sqlite.prepare.bind(sqlite);
  const cache = new Map<string, ReturnType<typeof prepare>>();
  sqlite.prepare = ((source: string) => {
    let stmt = cache.get(source);
    if (!stmt) cache.set(source, (stmt = prepare(source)));
    return stmt;
  }) as typeof sqlite.prepare;
}
const dbTiming = new Map<string, { calls: number; ms: number }>();
if (diag.has('db-timing')) {
  const sqlite = db.sqlite!;
  const prepare = sqlite.prepare.bind(sqlite);
  const add = (kind: string, ms: number) => {
    const t = dbTiming.get(kind) ?? { calls: 0, ms: 0 };
    t.calls++;
    t.ms += ms;
    dbTiming.set(kind, t);
  };
  const kindOf = (source: string) => {
    const m = /^\s*(select|insert into|update|delete from|begin|commit|rollback)\b(?:.*?\bfrom\b)?\s*"?(\w+)?/is.exec(source);
    if (!m) return source.slice(0, 30);
    const verb = m[1]!.toLowerCase();
    return verb === 'begin' || verb === 'commit' || verb === 'rollback' ? verb : `${verb} ${m[2] ?? ''}`;
  };
  sqlite.prepare = ((source: string) => {
    const t0 = performance.now();
    const stmt = prepare(source);
    add('(prepare)', performance.now() - t0);
    const kind = kindOf(source);
    const timed =
      <A extends unknown[], R>(fn: (...a: A) => R) =>
      (...args: A): R => {
        const t = performance.now();
        try {
          return fn(...args);
        } finally {
          add(kind, performance.now() - t);
        }
      };
    return {
      reader: stmt.reader,
      run: timed(stmt.run.bind(stmt)),
      all: timed(stmt.all.bind(stmt)),
      get: timed(stmt.get.bind(stmt)),
      iterate: stmt.iterate.bind(stmt),
    };
  }) as unknown as typeof sqlite.prepare;
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
 * Mints n codes through the platform's own OAuthService.issueCode, inside one SQLite transaction so
 * that minting 30k codes costs one fsync instead of 30k (minting is set-up, not measured).
 */
async function mintCodes(n: number): Promise<string[]> {
  const codes: string[] = [];
  db.sqlite!.exec('BEGIN IMMEDIATE');
  try {
    for (let i = 0; i < n; i++) {
      codes.push(
        await services.oauth.issueCode({
          appId: appRow.id,
          storeId: store.id,
          installationId: inst.id,
          redirectUri: REDIRECT,
          scopes: ['read_products'],
          codeChallenge: null,
        }),
      );
    }
    db.sqlite!.exec('COMMIT');
  } catch (err) {
    db.sqlite!.exec('ROLLBACK');
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
  try {
    await platform.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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
const pragmas = {
  journal_mode: db.sqlite!.pragma('journal_mode', { simple: true }),
  synchronous: db.sqlite!.pragma('synchronous', { simple: true }),
};
send({
  type: 'ready',
  port,
  path: '/admin/oauth/token',
  host: 'bench.localhost',
  clientId: appRow.client_id,
  clientSecret,
  redirectUri: REDIRECT,
  info: { dir, ...pragmas, diag: [...diag].join(',') },
});
