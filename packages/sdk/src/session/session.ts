// A shop's session (its token pair) and the storage interface every adapter implements.

/** What the app keeps per shop after the install. */
export interface Session {
  /** The shop hostname, e.g. `demo.localhost`. The storage key. */
  shop: string;
  accessToken: string;
  /** Absent for private-app tokens, which do not expire. */
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
}

/**
 * Where sessions live. Every method may be async. `compareAndSet` writes `next` only when the
 * stored session's refresh token still equals `expectedRefreshToken` (the refresh token rotates on
 * every refresh, so it is the session's version) and says whether it did; the token manager uses
 * it so that two processes refreshing the same shop never overwrite a newer pair with an older one.
 *
 * Adapters: the built-in {@link memorySessionStorage}, and `@storegate/app/session/sqlite`,
 * `/session/postgres`, `/session/redis`.
 */
export interface SessionStorage {
  get(shop: string): Promise<Session | undefined>;
  set(session: Session): Promise<void>;
  delete(shop: string): Promise<void>;
  compareAndSet(shop: string, expectedRefreshToken: string | null, next: Session): Promise<boolean>;
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
  return JSON.stringify(session);
}

/**
 * Parses what {@link serializeSession} wrote.
 *
 * @example
 * ```ts
 * const session = deserializeSession(await redis.get(key));
 * ```
 */
export function deserializeSession(text: string): Session {
  return JSON.parse(text) as Session;
}

/** Table and key names an adapter accepts (they are put into SQL text, so no quoting games). */
export function isSafeIdentifier(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name);
}
