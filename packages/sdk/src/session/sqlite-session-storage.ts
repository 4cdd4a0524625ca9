// `@storegate/app/session/sqlite`: sessions in a SQLite table through better-sqlite3 (a peer
// dependency the app passes in; this module never imports it).
import { SessionStorageError } from '../errors.ts';
import { deserializeSession, isSafeIdentifier, serializeSession, type Session, type SessionStorage } from './session.ts';

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
          `INSERT INTO ${table} (shop, data, refresh_token, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (shop) DO UPDATE SET data = excluded.data, refresh_token = excluded.refresh_token, updated_at = excluded.updated_at`,
        ),
        del: db.prepare(`DELETE FROM ${table} WHERE shop = ?`),
        cas: db.prepare(`UPDATE ${table} SET data = ?, refresh_token = ?, updated_at = ? WHERE shop = ? AND refresh_token IS ?`),
      };
    }
    return statements;
  };
  const stamp = (session: Session): Session => ({ ...session, updatedAt: Math.floor(Date.now() / 1000) });
  return {
    async get(shop) {
      const row = ready().get.get(shop) as { data: string } | undefined;
      return row ? deserializeSession(row.data) : undefined;
    },
    async set(session) {
      const s = stamp(session);
      ready().upsert.run(s.shop, serializeSession(s), s.refreshToken ?? null, s.updatedAt);
    },
    async delete(shop) {
      ready().del.run(shop);
    },
    async compareAndSet(shop, expectedRefreshToken, next) {
      const s = stamp({ ...next, shop });
      return ready().cas.run(serializeSession(s), s.refreshToken ?? null, s.updatedAt, shop, expectedRefreshToken).changes === 1;
    },
  };
}
