// `@storegate/app/session/postgres`: sessions in a PostgreSQL table through a pg `Pool` (a peer
// dependency the app passes in; this module never imports it).
import { SessionStorageError, TokenRefreshError } from '../errors.ts';
import type { RefreshLock } from '../oauth/refresh-lock.ts';
import { deserializeSession, isSafeIdentifier, serializeSession, sessionIdOf, type Session, type SessionStorage } from './session.ts';

/** The part of a pg `Pool` (or `Client`) this adapter uses. */
export interface PostgresQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>>; rowCount: number | null }>;
}

/** Options of {@link postgresSessionStorage}. */
export interface PostgresSessionStorageOptions {
  /** Table name (default `storegate_sessions`), created on first use. */
  table?: string;
}

/**
 * Session storage in PostgreSQL. Pass a pg `Pool`; the table is created on first use. Its `shop`
 * column holds the session id (the shop hostname for a shop's offline session, so tables written
 * by earlier versions are read as they are).
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { postgresSessionStorage } from '@storegate/app/session/postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const app = createApp({ ...config, sessionStorage: postgresSessionStorage(pool) });
 * ```
 */
export function postgresSessionStorage(pool: PostgresQueryable, options: PostgresSessionStorageOptions = {}): SessionStorage {
  const table = options.table ?? 'storegate_sessions';
  if (!isSafeIdentifier(table)) throw new SessionStorageError(`invalid table name "${table}"`);
  let created: Promise<void> | undefined;
  const ready = (): Promise<void> => {
    created ??= pool
      .query(
        `CREATE TABLE IF NOT EXISTS ${table} (shop TEXT PRIMARY KEY, data TEXT NOT NULL, refresh_token TEXT, updated_at BIGINT NOT NULL)`,
      )
      .then(
        () => undefined,
        (error: { code?: string }) => {
          // Two processes creating the table at once: the loser sees a duplicate type/table; the table exists.
          if (error?.code === '23505' || error?.code === '42P07') return;
          created = undefined;
          throw new SessionStorageError(`could not create table ${table}`, { cause: error });
        },
      );
    return created;
  };
  const stamp = (session: Session, id: string): Session => ({ ...session, id, updatedAt: Math.floor(Date.now() / 1000) });
  return {
    async get(id) {
      await ready();
      const { rows } = await pool.query(`SELECT data FROM ${table} WHERE shop = $1`, [id]);
      const row = rows[0];
      return row ? deserializeSession(row['data'] as string) : undefined;
    },
    async set(session) {
      await ready();
      const s = stamp(session, sessionIdOf(session));
      await pool.query(
        `INSERT INTO ${table} (shop, data, refresh_token, updated_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (shop) DO UPDATE SET data = EXCLUDED.data, refresh_token = EXCLUDED.refresh_token, updated_at = EXCLUDED.updated_at`,
        [s.id, serializeSession(s), s.refreshToken ?? null, s.updatedAt],
      );
    },
    async delete(id) {
      await ready();
      await pool.query(`DELETE FROM ${table} WHERE shop = $1`, [id]);
    },
    async compareAndSet(id, expectedRefreshToken, next) {
      await ready();
      const s = stamp(next, id);
      const result = await pool.query(
        `UPDATE ${table} SET data = $1, refresh_token = $2, updated_at = $3 WHERE shop = $4 AND refresh_token IS NOT DISTINCT FROM $5`,
        [serializeSession(s), s.refreshToken ?? null, s.updatedAt, id, expectedRefreshToken],
      );
      return result.rowCount === 1;
    },
  };
}

/** The part of a pg `Pool` the refresh lock uses: a dedicated connection per lock. */
export interface PostgresPool {
  connect(): Promise<PostgresQueryable & { release(error?: Error | boolean): void }>;
}

/** Options of {@link postgresRefreshLock}. */
export interface PostgresRefreshLockOptions {
  /** Namespace of the advisory-lock keys (default `storegate:refresh-lock:`). */
  prefix?: string;
  /** Give up waiting after this many ms (default 30000). */
  waitMs?: number;
}

/**
 * A refresh lock shared by every process using the same PostgreSQL, for `createApp({ refreshLock })`,
 * built on session-level advisory locks (held on one pooled connection until released; a crashed
 * holder's connection closes and frees it).
 *
 * @example
 * ```ts
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const app = createApp({ ...config, sessionStorage: postgresSessionStorage(pool), refreshLock: postgresRefreshLock(pool) });
 * ```
 */
export function postgresRefreshLock(pool: PostgresPool, options: PostgresRefreshLockOptions = {}): RefreshLock {
  const prefix = options.prefix ?? 'storegate:refresh-lock:';
  const waitMs = options.waitMs ?? 30_000;
  return {
    async acquire(shop) {
      const key = prefix + shop;
      const client = await pool.connect();
      const deadline = Date.now() + waitMs;
      try {
        for (;;) {
          const { rows } = await client.query('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked', [key]);
          if (rows[0]?.['locked'] === true) break;
          if (Date.now() > deadline) throw new TokenRefreshError(`timed out after ${waitMs} ms waiting for the refresh lock of ${shop}`);
          await new Promise((resolve) => setTimeout(resolve, 25 + Math.random() * 50));
        }
      } catch (error) {
        client.release();
        throw error;
      }
      return async () => {
        try {
          await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]);
          client.release();
        } catch (error) {
          // Drop the connection rather than return it to the pool still holding the lock.
          client.release(true);
          throw error;
        }
      };
    },
  };
}
