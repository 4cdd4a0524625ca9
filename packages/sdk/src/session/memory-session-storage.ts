// The default session storage: a Map in this process. Fine for development and a single process;
// use the SQLite, PostgreSQL or Redis adapter when sessions must survive a restart or be shared.
import { sessionIdOf, type Session, type SessionStorage } from './session.ts';

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
    async get(id) {
      const s = sessions.get(id);
      return s ? { ...s } : undefined;
    },
    async set(session) {
      const id = sessionIdOf(session);
      sessions.set(id, { ...session, id });
    },
    async delete(id) {
      sessions.delete(id);
    },
    async compareAndSet(id, expectedRefreshToken, next) {
      const current = sessions.get(id);
      if (!current || (current.refreshToken ?? null) !== expectedRefreshToken) return false;
      sessions.set(id, { ...next, id });
      return true;
    },
  };
}
