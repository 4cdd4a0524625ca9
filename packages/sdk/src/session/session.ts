// A session (a shop's token pair, or one merchant's online token) and the storage interface every
// adapter implements.

/** The merchant an online token acts for. */
export interface AssociatedUser {
  /** The merchant's id in the store (a decimal string). */
  id: string;
  email: string;
}

/**
 * What the app keeps after an install or a token exchange. The offline session of a shop (the app's
 * own token pair, for background work and webhooks) is stored under the shop hostname; an online
 * session (one merchant's token, see `online`) under `online_{shop}_{userId}`, apart from it.
 */
export interface Session {
  /**
   * The storage key: {@link offlineSessionId} or {@link onlineSessionId}. Sessions the SDK returns
   * always carry it; when absent (sessions stored by earlier versions), the session is the shop's
   * offline session.
   */
  id?: string | undefined;
  /** The shop hostname, e.g. `demo.localhost`. */
  shop: string;
  accessToken: string;
  /** Absent for private-app tokens, which do not expire, and for online tokens, which are never refreshed. */
  refreshToken?: string | null | undefined;
  /** When `accessToken` expires, in unix seconds; absent when it does not. */
  expiresAt?: number | null | undefined;
  /** Granted scopes, space-separated. */
  scope: string;
  storeId?: string | undefined;
  storeName?: string | undefined;
  /** Set when a refresh answered `invalid_grant`: the merchant must authorize again. */
  reauthorizationRequired?: boolean | undefined;
  /** Unix seconds of the last write. */
  updatedAt?: number | undefined;
  /**
   * True for an online token: bound to one merchant (`associatedUser`), valid until `expiresAt` or
   * the merchant's logout, never refreshed. Absent or false for the shop's offline token.
   */
  online?: boolean | undefined;
  /** The merchant an online token acts for. */
  associatedUser?: AssociatedUser | undefined;
  /** The scopes the online token holds for that merchant, space-separated. */
  associatedUserScope?: string | undefined;
}

/**
 * The storage key of a shop's offline session: the shop hostname itself (so sessions stored before
 * online sessions existed are found under the same key).
 *
 * @example
 * ```ts
 * const session = await app.sessions.get(offlineSessionId('demo.localhost')); // key 'demo.localhost'
 * ```
 */
export function offlineSessionId(shop: string): string {
  return shop;
}

/**
 * The storage key of a merchant's online session in a shop: `online_{shop}_{userId}`. A shop
 * hostname never holds `_`, so this key can never be a shop's offline key.
 *
 * @example
 * ```ts
 * onlineSessionId('demo.localhost', '1'); // 'online_demo.localhost_1'
 * ```
 */
export function onlineSessionId(shop: string, userId: string): string {
  return `online_${shop}_${userId}`;
}

/**
 * The storage key of a session: its `id`, or the offline key of its shop when it has none.
 *
 * @example
 * ```ts
 * await db.put(sessionIdOf(session), serializeSession(session));
 * ```
 */
export function sessionIdOf(session: Session): string {
  if (typeof session.id === 'string' && session.id !== '') return session.id;
  return session.online && session.associatedUser ? onlineSessionId(session.shop, session.associatedUser.id) : session.shop;
}

/**
 * Where sessions live, by session id ({@link sessionIdOf}: the shop hostname for a shop's offline
 * session, `online_{shop}_{userId}` for a merchant's online one); `set` stores under the session's
 * own id. Every method may be async. `compareAndSet` writes `next` only when the stored session's
 * refresh token still equals `expectedRefreshToken` (the refresh token rotates on every refresh, so
 * it is the session's version) and says whether it did; the token manager uses it so that two
 * processes refreshing the same shop never overwrite a newer pair with an older one.
 *
 * Adapters: the built-in {@link memorySessionStorage}, and `@storegate/app/session/sqlite`,
 * `/session/postgres`, `/session/redis`.
 */
export interface SessionStorage {
  get(id: string): Promise<Session | undefined>;
  set(session: Session): Promise<void>;
  delete(id: string): Promise<void>;
  compareAndSet(id: string, expectedRefreshToken: string | null, next: Session): Promise<boolean>;
}

/**
 * The serialised form adapters store (JSON of the session).
 *
 * @example
 * ```ts
 * await redis.set(key, serializeSession(session));
 * ```
 */
export function serializeSession(session: Session): string {
  return JSON.stringify({ ...session, id: sessionIdOf(session) });
}

/**
 * Parses what {@link serializeSession} wrote; a session written before sessions had an `id` gets
 * its offline id.
 *
 * @example
 * ```ts
 * const session = deserializeSession(await redis.get(key));
 * ```
 */
export function deserializeSession(text: string): Session {
  const session = JSON.parse(text) as Session;
  return { ...session, id: sessionIdOf(session) };
}

/** Table and key names an adapter accepts (they are put into SQL text, so no quoting games). */
export function isSafeIdentifier(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name);
}
