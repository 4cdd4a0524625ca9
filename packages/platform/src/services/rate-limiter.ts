// Leaky buckets: in memory on one node, in Redis when several nodes share them. The Admin API's
// bucket per (store, app) is the limiter's own size; the token endpoint's limits pass theirs with
// each call, so one connection to Redis serves every limit. When Redis is away the platform keeps
// serving: each node counts in its own memory until Redis answers again, so the limits hold per
// node (looser across the cluster) instead of every call failing.
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { giveBack, leak, take, type BucketDecision, type BucketLimit, type BucketState } from '../domain/leaky-bucket.ts';
import type { Clock } from '../domain/clock.ts';

/** `shared`: buckets live in Redis for every node; `local`: this node counts on its own. */
export type RateLimiterState = 'shared' | 'local';

export interface RateLimiter {
  /**
   * Counts one call in the bucket `key`, of the limiter's own size unless `limit` says otherwise;
   * in memory the answer comes at once (no promise), from Redis it is awaited.
   */
  take(key: string, limit?: BucketLimit): BucketDecision | Promise<BucketDecision>;
  /** Takes back one call counted by `take` (with the same `limit`); nothing when the bucket is empty. */
  giveBack(key: string, limit?: BucketLimit): void | Promise<void>;
  readonly bucket: number;
  /** Drops leaked per second. */
  readonly perSecond: number;
  /** Where the buckets are right now. */
  state(): RateLimiterState;
  /** How many times this node has fallen back from shared buckets to its own. */
  readonly fallbacks: number;
  close(): Promise<void>;
}

export class MemoryRateLimiter implements RateLimiter {
  readonly fallbacks = 0;
  private readonly buckets = new Map<string, BucketState & { perSecond: number }>();
  private sweptAt = 0;

  constructor(
    readonly bucket: number,
    readonly perSecond: number,
    private readonly clock: Clock,
  ) {}

  take(key: string, limit: BucketLimit = this): BucketDecision {
    const now = this.clock();
    const decision = take(this.buckets.get(key), now, limit.bucket, limit.perSecond);
    this.buckets.set(key, { ...decision.state, perSecond: limit.perSecond });
    this.sweep(now);
    return decision;
  }

  giveBack(key: string, limit: BucketLimit = this): void {
    const state = this.buckets.get(key);
    if (state) this.buckets.set(key, { ...giveBack(state, this.clock(), limit.perSecond), perSecond: limit.perSecond });
  }

  /** Drops buckets that have drained completely, so idle apps cost no memory. */
  private sweep(now: number): void {
    if (now - this.sweptAt < 60_000) return;
    this.sweptAt = now;
    for (const [key, state] of this.buckets) if (leak(state, now, state.perSecond) === 0) this.buckets.delete(key);
  }

  state(): RateLimiterState {
    return 'local';
  }

  async close(): Promise<void> {}
}

// One atomic step in Redis: leak, try to add a drop, store, expire when drained.
const SCRIPT = `
local level = tonumber(redis.call('HGET', KEYS[1], 'l') or '0')
local updated = tonumber(redis.call('HGET', KEYS[1], 't') or ARGV[1])
local now = tonumber(ARGV[1])
local bucket = tonumber(ARGV[2])
local rate = tonumber(ARGV[3])
local elapsed = now - updated
if elapsed < 0 then elapsed = 0 end
level = level - (elapsed / 1000) * rate
if level < 0 then level = 0 end
local allowed = 0
if level + 1 <= bucket then
  level = level + 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'l', tostring(level), 't', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((bucket / rate) * 1000) + 1000)
return {allowed, tostring(level)}
`;

// Takes one drop back out of a bucket that still exists, leaking it first.
const GIVE_BACK_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local level = tonumber(redis.call('HGET', KEYS[1], 'l') or '0')
local updated = tonumber(redis.call('HGET', KEYS[1], 't') or ARGV[1])
local now = tonumber(ARGV[1])
local bucket = tonumber(ARGV[2])
local rate = tonumber(ARGV[3])
local elapsed = now - updated
if elapsed < 0 then elapsed = 0 end
level = level - (elapsed / 1000) * rate - 1
if level < 0 then level = 0 end
redis.call('HSET', KEYS[1], 'l', tostring(level), 't', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((bucket / rate) * 1000) + 1000)
return 1
`;

/** Called once per change between shared and local buckets, with what caused it. */
export type RateLimiterListener = (state: RateLimiterState, reason: string) => void;

/** A failed Redis command ends its wait after this; the request then takes a local bucket. */
const COMMAND_TIMEOUT_MS = 500;
/** Longest wait between two reconnection attempts while Redis is away. */
const LONGEST_RECONNECT_WAIT_MS = 2_000;
/** After a failure on an open connection (a timeout), how long before a request tries Redis again. */
const RETRY_SHARED_AFTER_MS = 1_000;

// ioredis is loaded by the first RedisRateLimiter: a node without --redis never holds it.
const require = createRequire(import.meta.url);

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis;
  private readonly local: MemoryRateLimiter;
  private current: RateLimiterState = 'local';
  private retrySharedAt = 0;
  private fallbackCount = 0;
  private connectedOnce = false;
  private closed = false;
  private readonly listeners = new Set<RateLimiterListener>();

  constructor(
    url: string,
    readonly bucket: number,
    readonly perSecond: number,
    private readonly clock: Clock,
    private readonly prefix = 'storegate:rl:',
  ) {
    this.local = new MemoryRateLimiter(bucket, perSecond, clock);
    const ioredis = require('ioredis') as typeof import('ioredis');
    this.redis = new ioredis.Redis(url, {
      lazyConnect: false,
      // Fail at once while disconnected (the request takes a local bucket) instead of queueing.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: 2_000,
      // Reconnect for as long as the process lives, never waiting more than two seconds between tries.
      retryStrategy: (times) => Math.min(times * 200, LONGEST_RECONNECT_WAIT_MS),
    });
    // With a listener, ioredis does not print each failed reconnection to stderr; the changes of
    // state below are what the log gets.
    this.redis.on('error', () => {});
    this.redis.on('ready', () => {
      this.connectedOnce = true;
      this.retrySharedAt = 0;
      this.set('shared', 'Redis answered again');
    });
    this.redis.on('close', () => {
      if (this.connectedOnce) this.set('local', 'connection to Redis lost');
    });
    this.redis.defineCommand('sgLeakyTake', { numberOfKeys: 1, lua: SCRIPT });
    this.redis.defineCommand('sgLeakyGiveBack', { numberOfKeys: 1, lua: GIVE_BACK_SCRIPT });
  }

  get fallbacks(): number {
    return this.fallbackCount;
  }

  state(): RateLimiterState {
    return this.current;
  }

  /** Calls `listener` on every change between shared and local buckets. */
  onChange(listener: RateLimiterListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Resolves true once connected to Redis, or false when `timeoutMs` passes first. */
  connected(timeoutMs: number): Promise<boolean> {
    if (this.redis.status === 'ready') return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.redis.off('ready', onReady);
        resolve(ok);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.redis.once('ready', onReady);
    });
  }

  async take(key: string, limit: BucketLimit = this): Promise<BucketDecision> {
    if (!this.tryShared()) return this.local.take(key, limit);
    try {
      const decision = await this.takeShared(key, limit);
      this.set('shared', 'Redis answered again');
      return decision;
    } catch (err) {
      this.failedShared(err);
      return this.local.take(key, limit);
    }
  }

  async giveBack(key: string, limit: BucketLimit = this): Promise<void> {
    if (!this.tryShared()) return this.local.giveBack(key, limit);
    try {
      await (this.redis as unknown as { sgLeakyGiveBack(k: string, ...a: (string | number)[]): Promise<number> }).sgLeakyGiveBack(
        this.prefix + key,
        this.clock(),
        limit.bucket,
        limit.perSecond,
      );
    } catch (err) {
      // The drop stays counted in Redis until it leaks: a little strict for a moment, never loose.
      this.failedShared(err);
    }
  }

  private tryShared(): boolean {
    return this.current === 'shared' || (this.redis.status === 'ready' && Date.now() >= this.retrySharedAt);
  }

  private failedShared(err: unknown): void {
    this.retrySharedAt = Date.now() + RETRY_SHARED_AFTER_MS;
    this.set('local', err instanceof Error ? err.message : String(err));
  }

  private async takeShared(key: string, limit: BucketLimit): Promise<BucketDecision> {
    const now = this.clock();
    const [allowed, levelText] = await (
      this.redis as unknown as { sgLeakyTake(k: string, ...a: (string | number)[]): Promise<[number, string]> }
    ).sgLeakyTake(this.prefix + key, now, limit.bucket, limit.perSecond);
    const level = Number(levelText);
    if (allowed === 1)
      return { allowed: true, state: { level, updatedAt: now }, used: Math.min(limit.bucket, Math.ceil(level)), retryAfterSeconds: 0 };
    return {
      allowed: false,
      state: { level, updatedAt: now },
      used: Math.ceil(level),
      retryAfterSeconds: Math.max(1, Math.ceil((level + 1 - limit.bucket) / limit.perSecond)),
    };
  }

  private set(state: RateLimiterState, reason: string): void {
    if (this.current === state) return;
    this.current = state;
    if (state === 'local') this.fallbackCount++;
    for (const fn of this.listeners) fn(state, reason);
  }

  async close(): Promise<void> {
    // The Admin API and the token endpoint may hold the same limiter: the second close is a no-op.
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    await this.redis.quit().catch(() => {});
    this.redis.disconnect();
  }
}
