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

/** The server URL given with --database postgres://… (or the local test server). */
export function benchPostgresServer(): string {
  const v = process.env.BENCH_DATABASE;
  return v && /^postgres(ql)?:\/\//.test(v) ? v : (process.env.BENCH_PG_URL ?? DEFAULT_POSTGRES_URL);
}

export interface BenchDatabase {
  kind: BenchDatabaseKind;
  /** What the platform's --database takes: a file path (SQLite) or a postgres:// URL. */
  url: string;
  /** Removes the database (drops it on PostgreSQL, deletes the folder for SQLite). */
  drop(): Promise<void>;
}

/** A new, empty database of the kind this run was asked for; `label` goes into its name. */
export async function createBenchDatabase(label: string, kind: BenchDatabaseKind = benchDatabaseKind()): Promise<BenchDatabase> {
  const tag = `${label.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), `storegate-bench-${tag}-`));
    return { kind, url: join(dir, 'bench.db'), drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const server = benchPostgresServer();
  const name = `sg_bench_${tag}`;
  await adminQuery(server, `create database ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    kind,
    url: url.toString(),
    drop: async () => {
      // Only this database's own sessions are ended; nothing else on the server is touched.
      await adminQuery(
        server,
        `select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}' and pid <> pg_backend_pid()`,
      );
      await adminQuery(server, `drop database if exists ${name}`);
    },
  };
}

async function adminQuery(server: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
