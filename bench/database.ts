// Which database a benchmark runs on, and a fresh one of that kind for each run.
//
// `npm run bench -- <name> --database sqlite|postgres://…|both` sets BENCH_DATABASE for the
// benchmark process (bench/run.ts). A postgres:// URL names the server and a database the
// benchmark may connect to for administration: every run creates its own database there and drops
// it at the end, so a benchmark never writes into the database the URL names.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export type BenchDatabaseKind = 'sqlite' | 'postgres';

export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** The database this benchmark process was asked to run on. */
export function benchDatabaseKind(): BenchDatabaseKind {
  const v = process.env.BENCH_DATABASE ?? 'sqlite';
  return v === 'sqlite' ? 'sqlite' : 'postgres';
}

/** "SQLite" or "PostgreSQL", for a benchmark's own lines. */
export function benchDatabaseName(kind: BenchDatabaseKind = benchDatabaseKind()): string {
  return kind === 'sqlite' ? 'SQLite' : 'PostgreSQL';
}

/** The server URL given with --database postgres://… (or the local test server). */
export function benchPostgresServer(): string {
  const v = process.env.BENCH_DATABASE;
  return v && /^postgres(ql)?:\/\//.test(v) ? v : (process.env.BENCH_PG_URL ?? DEFAULT_POSTGRES_URL);
}

export interface BenchDatabase {
  kind: BenchDatabaseKind;
  /** What the platform's --database takes: a file path (SQLite) or a postgres:// URL. */
  url: string;
  /** The same database as the platform's storage takes it (openStorage in a benchmark process). */
  config: { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string };
  /** Removes the database (drops it on PostgreSQL, deletes the folder for SQLite). Safe to call twice. */
  drop(): Promise<void>;
}

// Databases not dropped yet: an interrupted run (Ctrl-C, a kill) drops them before it exits, so
// the server does not collect abandoned benchmark databases of a million rows each.
const live = new Set<BenchDatabase>();
let signalsHandled = false;

function dropOnSignals(): void {
  if (signalsHandled) return;
  signalsHandled = true;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      // Dropping ends the benchmark's own sessions, and its queries then fail: let them, and
      // exit once the databases are gone rather than on the first of those errors.
      process.on('uncaughtException', () => {});
      process.on('unhandledRejection', () => {});
      console.error(`\n${signal}: dropping ${live.size} benchmark database(s)`);
      setTimeout(() => process.exit(130), 10_000).unref();
      void Promise.allSettled([...live].map((db) => db.drop())).then(() => process.exit(130));
    });
  }
}

/** A new, empty database of the kind this run was asked for; `label` goes into its name. */
export async function createBenchDatabase(label: string, kind: BenchDatabaseKind = benchDatabaseKind()): Promise<BenchDatabase> {
  // PostgreSQL cuts names at 63 bytes (and would then connect to no database of the longer name).
  const clean = label
    .replace(/[^a-z0-9]/gi, '_')
    .toLowerCase()
    .slice(0, 40);
  const tag = `${clean}_${randomBytes(4).toString('hex')}`;
  dropOnSignals();
  let db: BenchDatabase;
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), `storegate-bench-${tag}-`));
    const path = join(dir, 'bench.db');
    db = {
      kind,
      url: path,
      config: { dialect: 'sqlite', path },
      drop: async () => {
        live.delete(db);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } else {
    const server = benchPostgresServer();
    const name = `sg_bench_${tag}`;
    await adminQuery(server, `create database ${name}`);
    const url = new URL(server);
    url.pathname = `/${name}`;
    let dropped = false;
    db = {
      kind,
      url: url.toString(),
      config: { dialect: 'postgres', url: url.toString() },
      drop: async () => {
        if (dropped) return;
        dropped = true;
        live.delete(db);
        // `with (force)` ends this database's own sessions (a pool the benchmark left open, a
        // server child still exiting) and nothing else on the server.
        await adminQuery(server, `drop database if exists ${name} with (force)`);
      },
    };
  }
  live.add(db);
  return db;
}

async function adminQuery(server: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: server });
  try {
    await client.connect();
  } catch (err) {
    throw new Error(`cannot reach the PostgreSQL server ${redact(server)}: ${(err as Error).message}`);
  }
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** The server URL without its password, for error messages. */
function redact(server: string): string {
  const url = new URL(server);
  if (url.password) url.password = '***';
  return url.toString();
}
