// `@storegate/app/session/sqlite`: sessions in a SQLite table through better-sqlite3 (a peer
// dependency the app passes in; this module never imports it).
import { SessionStorageError } from '../errors.ts';
import { deserializeSession, isSafeIdentifier, serializeSession, sessionIdOf, type Session, type SessionStorage } from './session.ts';

/** The part of a better-sqlite3 `Database` this adapter uses. */
export interface SqliteDatabase {
  exec(sql: string): unknown;
  prepare(sql: string): {
    get(...params: unknown[]): unknown;
    run(...params: unknown[]): { changes: number };
  };
}

/** Options of {@link sqliteSessionStorage}. */
export interface SqliteSessionStorageOptions {
  /** Table name (default `storegate_sessions`), created on first use. */
  table?: string;
}

/**
 * Session storage in SQLite. Pass a better-sqlite3 `Database`; the table is created on first use.
 * Its `shop` column holds the session id (the shop hostname for a shop's offline session, so
 * tables written by earlier versions are read as they are).
 *
 * @example
 * ```ts
 * import Database from 'better-sqlite3';
 * import { sqliteSessionStorage } from '@storegate/app/session/sqlite';
 *
 * const app = createApp({ ...config, sessionStorage: sqliteSessionStorage(new Database('app.db')) });
 * ```
 */
export function sqliteSessionStorage(db: SqliteDatabase, options: SqliteSessionStorageOptions = {}): SessionStorage {
  const table = options.table ?? 'storegate_sessions';
  if (!isSafeIdentifier(table)) throw new SessionStorageError(`invalid table name "${table}"`);
  let statements:
    | {
        get: ReturnType<SqliteDatabase['prepare']>;
        upsert: ReturnType<SqliteDatabase['prepare']>;
        del: ReturnType<SqliteDatabase['prepare']>;
        cas: ReturnType<SqliteDatabase['prepare']>;
      }
    | undefined;
  const ready = () => {
    if (!statements) {
      db.exec(
        `CREATE TABLE IF NOT EXISTS ${table} (shop TEXT PRIMARY KEY, data TEXT NOT NULL, refresh_token TEXT, updated_at INTEGER NOT NULL)`,
      );
      statements = {
        get: db.prepare(`SELECT data FROM ${table} WHERE shop = ?`),
        upsert: db.prepare(
          `INSERT INTO ${table} (shop, data, refresh_token, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (shop) DO UPDATE SET data = ` +
            `excluded.data, refresh_token = excluded.refresh_token, updated_at = excluded.updated_at`,
        ),
        del: db.prepare(`DELETE FROM ${table} WHERE shop = ?`),
        cas: db.prepare(`UPDATE ${table} SET data = ?, refresh_token = ?, updated_at = ? WHERE shop = ? AND refresh_token IS ?`),
      };
    }
    return statements;
  };
  const stamp = (session: Session, id: string): Session => ({ ...session, id, updatedAt: Math.floor(Date.now() / 1000) });
  return {
    async get(id) {
      const row = ready().get.get(id) as { data: string } | undefined;
      return row ? deserializeSession(row.data) : undefined;
    },
    async set(session) {
      const s = stamp(session, sessionIdOf(session));
      ready().upsert.run(s.id, serializeSession(s), s.refreshToken ?? null, s.updatedAt);
    },
    async delete(id) {
      ready().del.run(id);
    },
    async compareAndSet(id, expectedRefreshToken, next) {
      const s = stamp(next, id);
      return ready().cas.run(serializeSession(s), s.refreshToken ?? null, s.updatedAt, id, expectedRefreshToken).changes === 1;
    },
  };
}
