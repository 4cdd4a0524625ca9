// The Kysely database: better-sqlite3 (WAL) as the embedded default, pg for PostgreSQL.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config.ts';
import type { Database } from './schema.ts';

// int8 (bigint) columns hold unix milliseconds and ids: return them as numbers, not strings.
pg.types.setTypeParser(20, (v) => Number(v));

export interface Db {
  kysely: Kysely<Database>;
  dialect: 'sqlite' | 'postgres';
  /** The raw better-sqlite3 handle (SQLite only), for batched synchronous hot paths. */
  sqlite: SQLite.Database | undefined;
  close(): Promise<void>;
}

export function openDatabase(config: DatabaseConfig, options: { poolSize?: number } = {}): Db {
  if (config.dialect === 'sqlite') {
    if (config.path !== ':memory:') mkdirSync(dirname(config.path), { recursive: true });
    const sqlite = new SQLite(config.path);
    sqlite.pragma('journal_mode = WAL');
    // FULL: every commit is on disk before the client hears about it (grants must survive a crash).
    sqlite.pragma('synchronous = FULL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    return { kysely, dialect: 'sqlite', sqlite, close: () => kysely.destroy() };
  }
  const pool = new pg.Pool({ connectionString: config.url, max: options.poolSize ?? 10 });
  // A broken idle connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { kysely, dialect: 'postgres', sqlite: undefined, close: () => kysely.destroy() };
}
