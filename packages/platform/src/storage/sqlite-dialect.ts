// Kysely's SQLite dialect with one change: a transaction begins with BEGIN IMMEDIATE, taking the
// write lock at once (waiting up to the busy timeout when another process holds it). Kysely's plain
// BEGIN takes it only at the first write, and when another process has committed since this
// transaction's first read, SQLite cannot upgrade the stale read and fails at once with
// SQLITE_BUSY, without waiting: two commands writing to one file at the same moment then failed
// instead of taking turns. Every storage transaction here exists to write, so nothing is lost.
import { CompiledQuery, type DatabaseConnection, type Driver, SqliteDialect, type SqliteDialectConfig, SqliteDriver } from 'kysely';

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

export class WriteLockingSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }
}
