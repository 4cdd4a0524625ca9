// The cross-process lock around a token refresh. It lives in its own module because three sides
// need it and none of them should depend on another for it: the app config accepts one, the token
// manager takes it, and the PostgreSQL and Redis adapters implement it.

/**
 * A lock shared by several processes, taken around a refresh: `acquire` resolves once the caller
 * holds the lock for `shop` and returns the function that releases it.
 *
 * @example
 * ```ts
 * const lock: RefreshLock = redisRefreshLock(redis);
 * const release = await lock.acquire('demo.localhost');
 * try {
 *   // refresh and store the new token pair
 * } finally {
 *   await release();
 * }
 * ```
 */
export interface RefreshLock {
  acquire(shop: string): Promise<() => void | Promise<void>>;
}
