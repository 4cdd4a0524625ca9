// The Kysely database: better-sqlite3 (WAL) as the embedded default, pg for PostgreSQL.
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely } from 'kysely';
import { CurrentSchemaPostgresDialect } from './pg-dialect.ts';
import { WriteLockingSqliteDialect } from './sqlite-dialect.ts';
import { type DatabaseConfig, type DatabaseSettings, parseDatabaseSettings } from '../config.ts';
import { DatabaseUnavailableError } from '../domain/errors.ts';
import { databaseFault } from './database-faults.ts';
import { type CopyFrom, pgCopyFrom } from './pg-copy.ts';
import { DatabaseHealth, openPgPool, StatementNames } from './pg-pool.ts';
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
   * The better-sqlite3 handle (SQLite only) that Kysely uses too, for synchronous hot paths: its
   * statements are cached and its writes counted (see countingHandle).
   */
  sqlite: SQLite.Database | undefined;
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
  /** Registers cleanup to run when the database closes. */
  onClose(fn: () => void): void;
  close(): Promise<void>;
}

/**
 * The SQLite handle every part of the platform uses:
 * - Kysely's SQLite driver prepares every query anew, and preparing costs as much as running a
 *   small query; queries come from a fixed set of shapes, so prepared statements are kept
 *   (bounded, least recently used first out). Safe because statements run synchronously to
 *   completion (nothing here iterates a statement lazily).
 * - Every execution of a statement that writes (`!readonly`, which includes INSERT … RETURNING)
 *   and changed a row, and every `exec`, is counted, so caches can tell the data may have changed.
 */
/**
 * Runs a writing call, turning SQLITE_BUSY (another process held the write lock past busy_timeout)
 * into DatabaseUnavailableError: the same request succeeds once that process lets go. Readers
 * never wait for a lock in WAL mode, so only writes are wrapped.
 */
function unlessBusy<T>(call: () => T): T {
  try {
    return call();
  } catch (err) {
    if (databaseFault(err) === 'busy') throw new DatabaseUnavailableError('busy');
    throw err;
  }
}

function countingHandle(db: SQLite.Database, onWrite: () => void, max = 500): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = db.prepare.bind(db);
  const exec = db.exec.bind(db);
  const counted = (stmt: SQLite.Statement): SQLite.Statement => {
    if (stmt.readonly) return stmt;
    // Counted after the statement ran, and only when it changed something (an idle poll such as
    // an UPDATE that matched no row does not empty caches).
    const run = (...args: unknown[]) => {
      const r = unlessBusy(() => (stmt.run as (...a: unknown[]) => SQLite.RunResult)(...args));
      if (r.changes > 0) onWrite();
      return r;
    };
    const all = (...args: unknown[]) => {
      const rows = unlessBusy(() => (stmt.all as (...a: unknown[]) => unknown[])(...args));
      if (rows.length > 0) onWrite();
      return rows;
    };
    const get = (...args: unknown[]) => {
      const row = unlessBusy(() => (stmt.get as (...a: unknown[]) => unknown)(...args));
      if (row !== undefined) onWrite();
      return row;
    };
    const iterate = (...args: unknown[]) => {
      onWrite();
      return (stmt.iterate as (...a: unknown[]) => unknown)(...args);
    };
    return {
      get reader() {
        return stmt.reader;
      },
      readonly: false,
      source: stmt.source,
      run,
      all,
      get,
      iterate,
    } as unknown as SQLite.Statement;
  };
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'exec') {
        return (source: string) => {
          onWrite();
          return unlessBusy(() => exec(source));
        };
      }
      if (prop !== 'prepare') {
        const value = Reflect.get(target, prop);
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return (source: string) => {
        let stmt = cache.get(source);
        if (stmt) {
          cache.delete(source);
        } else {
          stmt = counted(prepare(source));
          if (cache.size >= max) cache.delete(cache.keys().next().value!);
        }
        cache.set(source, stmt);
        return stmt;
      };
    },
  });
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
    let writes = 0;
    const handle = countingHandle(sqlite, () => {
      writes++;
      checkpointer?.wrote();
    });
    const kysely = new Kysely<Database>({ dialect: new WriteLockingSqliteDialect({ database: handle }) });
    const cleanups: (() => void)[] = [];
    return {
      kysely,
      dialect: 'sqlite',
      sqlite: handle,
      writes: () => writes,
      poolStats: () => undefined,
      health: new DatabaseHealth(),
      withoutStatementTimeout: (work) => work(kysely),
      prepareStatements: () => {},
      copyFrom: undefined,
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
  const { pool, raw } = openPgPool(
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
