// The Kysely database: better-sqlite3 (WAL) as the embedded default, pg for PostgreSQL.
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely } from 'kysely';
import { CurrentSchemaPostgresDialect } from './pg-dialect.ts';
import { WriteLockingSqliteDialect } from './sqlite-dialect.ts';
import { SqliteHandle } from './sqlite-handle.ts';
import { type DatabaseConfig, type DatabaseSettings, parseDatabaseSettings } from '../config.ts';
import { type CopyFrom, pgCopyFrom } from './pg-copy.ts';
import { DatabaseHealth, type DirectQuery, openPgPool, StatementNames } from './pg-pool.ts';
import type { PoolStats } from './ports/storage-stats.ts';
import type { Database } from './schema.ts';
import { startWalCheckpointer } from './wal-checkpointer.ts';
import { enableWal } from './wal-mode.ts';
import { DEFAULT_SYNCHRONOUS } from './durability.ts';
import { limitPageCache } from './sqlite-cache.ts';

export interface Db {
  kysely: Kysely<Database>;
  dialect: 'sqlite' | 'postgres';
  /**
   * The SQLite connection (SQLite only) that Kysely uses too, for synchronous hot paths: its
   * statements are cached and its writes counted (see sqlite-handle.ts).
   */
  sqlite: SqliteHandle | undefined;
  /** SQLite only: how many writing statements this process has run on its connection so far. */
  writes: () => number;
  /** The PostgreSQL pool's counters; undefined on SQLite (one connection, no pool). */
  poolStats(): PoolStats | undefined;
  /** Whether the database answered lately (PostgreSQL; SQLite is always 'up'). */
  health: DatabaseHealth;
  /**
   * Runs `work` with no statement timeout on one connection (migrations may take long), then puts
   * the connection's own timeout back.
   */
  withoutStatementTimeout<T>(work: (k: Kysely<Database>) => Promise<T>): Promise<T>;
  /**
   * Marks fixed statement texts as prepared once per connection (PostgreSQL: named statements;
   * SQLite keeps every statement prepared already).
   */
  prepareStatements(texts: Iterable<string>): void;
  /** PostgreSQL only: COPY … FROM STDIN on a connection of the pool (bulk inserts). */
  copyFrom: CopyFrom | undefined;
  /** PostgreSQL only: one statement straight on the pool, outside any transaction. */
  pgQuery: DirectQuery | undefined;
  /** Registers cleanup to run when the database closes. */
  onClose(fn: () => void): void;
  close(): Promise<void>;
}

/**
 * Creates the SQLite file (empty is a valid new database) readable by its owner only, unless it
 * exists: it holds sessions, token hashes and sealed secrets. SQLite gives the -wal and -shm
 * files it creates the same permissions as the database file.
 */
function createPrivately(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

export function openDatabase(config: DatabaseConfig, options: Partial<DatabaseSettings> = {}): Db {
  if (config.dialect === 'sqlite') {
    if (config.path !== ':memory:') createPrivately(config.path);
    const sqlite = new SQLite(config.path);
    // First: switching a new file to WAL takes a lock that another process opening the same
    // file may hold for a moment, and without a busy timeout that fails at once.
    const busyTimeoutMs = Math.trunc(options.sqliteBusyTimeoutMs ?? 5000);
    sqlite.pragma(`busy_timeout = ${busyTimeoutMs}`);
    enableWal(sqlite, busyTimeoutMs);
    sqlite.pragma(`synchronous = ${DEFAULT_SYNCHRONOUS}`);
    sqlite.pragma('foreign_keys = ON');
    limitPageCache(sqlite);
    // Checkpoints run on a worker thread while writes come (see wal-checkpointer.ts); this
    // connection only steps in when the WAL passes ~40 MB.
    const checkpointer = config.path === ':memory:' ? undefined : startWalCheckpointer(config.path);
    if (checkpointer) sqlite.pragma('wal_autocheckpoint = 10000');
    const handle = new SqliteHandle(sqlite, () => checkpointer?.wrote());
    const kysely = new Kysely<Database>({ dialect: new WriteLockingSqliteDialect({ database: handle }) });
    const cleanups: (() => void)[] = [];
    return {
      kysely,
      dialect: 'sqlite',
      sqlite: handle,
      writes: () => handle.writes,
      poolStats: () => undefined,
      health: new DatabaseHealth(),
      withoutStatementTimeout: (work) => work(kysely),
      prepareStatements: () => {},
      copyFrom: undefined,
      pgQuery: undefined,
      onClose: (fn) => void cleanups.push(fn),
      close: async () => {
        await checkpointer?.stop();
        await kysely.destroy();
        for (const fn of cleanups) fn();
      },
    };
  }
  const settings: DatabaseSettings = { ...parseDatabaseSettings({}), ...options };
  const health = new DatabaseHealth();
  const names = new StatementNames();
  const { pool, raw, query } = openPgPool(
    {
      url: config.url,
      size: settings.poolSize,
      statementTimeoutMs: settings.statementTimeoutMs,
      connectTimeoutMs: settings.connectTimeoutMs,
    },
    health,
    names,
  );
  const kysely = new Kysely<Database>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
  const cleanups: (() => void)[] = [];
  return {
    kysely,
    dialect: 'postgres',
    sqlite: undefined,
    writes: () => 0,
    poolStats: () => ({
      max: raw.options.max,
      inUse: raw.totalCount - raw.idleCount,
      idle: raw.idleCount,
      waiting: raw.waitingCount,
    }),
    health,
    prepareStatements: (texts) => names.add(texts),
    copyFrom: pgCopyFrom(raw, health),
    pgQuery: query,
    // A pool of its own with no statement deadline (neither the server's nor the client's).
    withoutStatementTimeout: async (work) => {
      const own = openPgPool(
        { url: config.url, size: 1, statementTimeoutMs: 0, connectTimeoutMs: settings.connectTimeoutMs },
        new DatabaseHealth(),
      );
      const unbounded = new Kysely<Database>({ dialect: new CurrentSchemaPostgresDialect({ pool: own.pool }) });
      try {
        return await work(unbounded);
      } finally {
        await unbounded.destroy();
      }
    },
    onClose: (fn) => void cleanups.push(fn),
    close: async () => {
      await kysely.destroy();
      for (const fn of cleanups) fn();
    },
  };
}
