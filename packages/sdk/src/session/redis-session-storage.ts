// `@storegate/app/session/redis`: sessions in Redis hashes through ioredis (a peer dependency the
// app passes in; this module never imports it), and a refresh lock for several processes.
import { randomFloat, cryptoRandomBytes } from '../crypto/random.ts';
import { bytesToBase64Url } from '../crypto/encoding.ts';
import { TokenRefreshError } from '../errors.ts';
import { deserializeSession, serializeSession, sessionIdOf, type SessionStorage } from './session.ts';
import type { RefreshLock } from '../oauth/refresh-lock.ts';

/** The part of an ioredis client this module uses. */
export interface RedisClient {
  hget(key: string, field: string): Promise<string | null>;
  hset(key: string, ...fieldsAndValues: string[]): Promise<number>;
  del(...keys: string[]): Promise<number>;
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>;
  set(key: string, value: string, px: 'PX', ms: number, nx: 'NX'): Promise<'OK' | null>;
}

/** Options of {@link redisSessionStorage}. */
export interface RedisSessionStorageOptions {
  /** Key prefix (default `storegate:session:`); one hash per session id (the shop hostname for a shop's offline session). */
  prefix?: string;
}

// `rt` holds the refresh token ('' when none) so that compare-and-set is one atomic script.
const CAS_SCRIPT = `
local current = redis.call('HGET', KEYS[1], 'rt')
if current == false or current ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'data', ARGV[2], 'rt', ARGV[3])
return 1`;

/**
 * Session storage in Redis: one hash per shop under `prefix`, created on first write.
 *
 * @example
 * ```ts
 * import Redis from 'ioredis';
 * import { redisSessionStorage } from '@storegate/app/session/redis';
 *
 * const app = createApp({ ...config, sessionStorage: redisSessionStorage(new Redis(process.env.REDIS_URL!)) });
 * ```
 */
export function redisSessionStorage(redis: RedisClient, options: RedisSessionStorageOptions = {}): SessionStorage {
  const prefix = options.prefix ?? 'storegate:session:';
  const key = (id: string) => prefix + id;
  return {
    async get(id) {
      const data = await redis.hget(key(id), 'data');
      return data === null ? undefined : deserializeSession(data);
    },
    async set(session) {
      const id = sessionIdOf(session);
      const s = { ...session, id, updatedAt: Math.floor(Date.now() / 1000) };
      await redis.hset(key(id), 'data', serializeSession(s), 'rt', s.refreshToken ?? '');
    },
    async delete(id) {
      await redis.del(key(id));
    },
    async compareAndSet(id, expectedRefreshToken, next) {
      const s = { ...next, id, updatedAt: Math.floor(Date.now() / 1000) };
      const done = await redis.eval(CAS_SCRIPT, 1, key(id), expectedRefreshToken ?? '', serializeSession(s), s.refreshToken ?? '');
      return Number(done) === 1;
    },
  };
}

/** Options of {@link redisRefreshLock}. */
export interface RedisRefreshLockOptions {
  /** Key prefix (default `storegate:refresh-lock:`). */
  prefix?: string;
  /** Lock lifetime in ms, so a crashed holder cannot block forever (default 30000). */
  ttlMs?: number;
  /** Give up waiting after this many ms (default 30000). */
  waitMs?: number;
}

const RELEASE_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * A refresh lock shared by every process that uses the same Redis, for `createApp({ refreshLock })`:
 * only one process refreshes a shop's token at a time; the others then read the new pair.
 *
 * @example
 * ```ts
 * const redis = new Redis(process.env.REDIS_URL!);
 * const app = createApp({ ...config, sessionStorage: redisSessionStorage(redis), refreshLock: redisRefreshLock(redis) });
 * ```
 */
export function redisRefreshLock(redis: RedisClient, options: RedisRefreshLockOptions = {}): RefreshLock {
  const prefix = options.prefix ?? 'storegate:refresh-lock:';
  const ttlMs = options.ttlMs ?? 30_000;
  const waitMs = options.waitMs ?? 30_000;
  return {
    async acquire(shop) {
      const key = prefix + shop;
      const token = bytesToBase64Url(cryptoRandomBytes(16));
      const deadline = Date.now() + waitMs;
      for (;;) {
        if ((await redis.set(key, token, 'PX', ttlMs, 'NX')) === 'OK') break;
        if (Date.now() > deadline) throw new TokenRefreshError(`timed out after ${waitMs} ms waiting for the refresh lock of ${shop}`);
        await new Promise((resolve) => setTimeout(resolve, 25 + randomFloat(cryptoRandomBytes) * 50));
      }
      return async () => {
        await redis.eval(RELEASE_SCRIPT, 1, key, token);
      };
    },
  };
}
