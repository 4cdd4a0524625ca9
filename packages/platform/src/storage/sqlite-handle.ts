// The one SQLite connection of a process, as every part of the platform (Kysely included) uses it:
// - Kysely's SQLite driver prepares each query anew, and preparing costs as much as running a
//   small query; queries come from a fixed set of shapes, so prepared statements are kept
//   (bounded, least recently used first out). Safe because statements run synchronously to
//   completion (nothing here iterates a statement lazily and then runs another on it).
// - Every execution of a writing statement (`!readonly`, which includes INSERT … RETURNING) that
//   changed a row, and every `exec`, is counted, so caches can tell the data may have changed.
// - A write that found the lock held by another process past busy_timeout (SQLITE_BUSY) becomes
//   DatabaseUnavailableError: the same request succeeds once that process lets go. Readers never
//   wait for a lock in WAL mode, so only writes are translated.
import type SQLite from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { DatabaseUnavailableError } from '../domain/errors.ts';
import { databaseFault } from './database-faults.ts';

function unlessBusy<T>(call: () => T): T {
  try {
    return call();
  } catch (err) {
    if (databaseFault(err) === 'busy') throw new DatabaseUnavailableError('busy');
    throw err;
  }
}

/**
 * One cached statement. Parameters come either spread (`run(a, b)`) or as one array, as Kysely
 * passes them (`run([a, b])`); better-sqlite3 binds both alike.
 */
export class HandleStatement implements SqliteStatement {
  readonly reader: boolean;
  readonly readonly: boolean;

  constructor(
    private readonly stmt: SQLite.Statement,
    private readonly wrote: () => void,
  ) {
    this.reader = stmt.reader;
    this.readonly = stmt.readonly;
  }

  get source(): string {
    return this.stmt.source;
  }

  // Counted after the statement ran, and only when it changed something (an idle poll such as an
  // UPDATE that matched no row does not empty caches).
  run(...params: unknown[]): SQLite.RunResult {
    if (this.readonly) return this.stmt.run(...params);
    const result = unlessBusy(() => this.stmt.run(...params));
    if (result.changes > 0) this.wrote();
    return result;
  }

  all(...params: unknown[]): unknown[] {
    if (this.readonly) return this.stmt.all(...params);
    const rows = unlessBusy(() => this.stmt.all(...params));
    if (rows.length > 0) this.wrote();
    return rows;
  }

  get(...params: unknown[]): unknown {
    if (this.readonly) return this.stmt.get(...params);
    const row = unlessBusy(() => this.stmt.get(...params));
    if (row !== undefined) this.wrote();
    return row;
  }

  iterate(...params: unknown[]): IterableIterator<unknown> {
    if (!this.readonly) this.wrote();
    return this.stmt.iterate(...params);
  }
}

export class SqliteHandle implements SqliteDatabase {
  private readonly cache = new Map<string, HandleStatement>();
  private count = 0;

  /**
   * @param onWrite called after each counted write (the WAL checkpointer listens)
   * @param max statements kept prepared at most
   */
  constructor(
    private readonly db: SQLite.Database,
    private readonly onWrite: () => void = () => {},
    private readonly max = 500,
  ) {}

  /** Writing statements run on this connection that changed something, and `exec` calls. */
  get writes(): number {
    return this.count;
  }

  get name(): string {
    return this.db.name;
  }

  get memory(): boolean {
    return this.db.memory;
  }

  /** Whether a transaction is open on the connection (then a statement run now would join it). */
  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  private readonly wrote = () => {
    this.count++;
    this.onWrite();
  };

  prepare(source: string): HandleStatement {
    let stmt = this.cache.get(source);
    if (stmt) {
      this.cache.delete(source);
    } else {
      stmt = new HandleStatement(this.db.prepare(source), this.wrote);
      if (this.cache.size >= this.max) this.cache.delete(this.cache.keys().next().value!);
    }
    this.cache.set(source, stmt);
    return stmt;
  }

  exec(source: string): void {
    this.wrote();
    unlessBusy(() => this.db.exec(source));
  }

  /** better-sqlite3's synchronous transaction around `fn`; the statements inside count as above. */
  transaction<F extends (...args: never[]) => unknown>(fn: F): SQLite.Transaction<F> {
    return this.db.transaction(fn);
  }

  pragma(source: string, options?: SQLite.PragmaOptions): unknown {
    return this.db.pragma(source, options);
  }

  close(): void {
    this.db.close();
  }
}
