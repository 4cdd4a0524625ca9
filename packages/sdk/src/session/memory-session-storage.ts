// The default session storage: a Map in this process. Fine for development and a single process;
// use the SQLite, PostgreSQL or Redis adapter when sessions must survive a restart or be shared.
import type { Session, SessionStorage } from './session.ts';

/**
 * Session storage in process memory (the default of `createApp`). Sessions are copied in and out,
 * so callers cannot change a stored session by mutating an object.
 *
 * @example
 * ```ts
 * const app = createApp({ ...config, sessionStorage: memorySessionStorage() });
 * ```
 */
export function memorySessionStorage(): SessionStorage {
  const sessions = new Map<string, Session>();
  return {
    async get(shop) {
      const s = sessions.get(shop);
      return s ? { ...s } : undefined;
    },
    async set(session) {
      sessions.set(session.shop, { ...session });
    },
    async delete(shop) {
      sessions.delete(shop);
    },
    async compareAndSet(shop, expectedRefreshToken, next) {
      const current = sessions.get(shop);
      if (!current || (current.refreshToken ?? null) !== expectedRefreshToken) return false;
      sessions.set(shop, { ...next, shop });
      return true;
    },
  };
}
