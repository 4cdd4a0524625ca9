// Leaky buckets per (store, app): in memory on one node, in Redis when several nodes share them.
// When Redis is away the Admin API keeps serving: each node counts in its own memory until Redis
// answers again, so the limit holds per node (looser across the cluster) instead of every call
// failing.
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { take, type BucketDecision, type BucketState } from '../domain/leaky-bucket.ts';
import type { Clock } from '../domain/clock.ts';

/** `shared`: buckets live in Redis for every node; `local`: this node counts on its own. */
export type RateLimiterState = 'shared' | 'local';

export interface RateLimiter {
  /** Counts one call; in memory the answer comes at once (no promise), from Redis it is awaited. */
  take(key: string): BucketDecision | Promise<BucketDecision>;
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
  private readonly buckets = new Map<string, BucketState>();
  private sweptAt = 0;

  constructor(
    readonly bucket: number,
    readonly perSecond: number,
    private readonly clock: Clock,
  ) {}

  take(key: string): BucketDecision {
    const now = this.clock();
    const decision = take(this.buckets.get(key), now, this.bucket, this.perSecond);
    this.buckets.set(key, decision.state);
    this.sweep(now);
    return decision;
  }

  /** Drops buckets that have drained completely, so idle apps cost no memory. */
  private sweep(now: number): void {
    if (now - this.sweptAt < 60_000) return;
    this.sweptAt = now;
    const drainMs = (this.bucket / this.perSecond) * 1000;
    for (const [key, state] of this.buckets) if (now - state.updatedAt > drainMs) this.buckets.delete(key);
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

  async take(key: string): Promise<BucketDecision> {
    const tryShared = this.current === 'shared' || (this.redis.status === 'ready' && Date.now() >= this.retrySharedAt);
    if (!tryShared) return this.local.take(key);
    try {
      const decision = await this.takeShared(key);
      this.set('shared', 'Redis answered again');
      return decision;
    } catch (err) {
      this.retrySharedAt = Date.now() + RETRY_SHARED_AFTER_MS;
      this.set('local', err instanceof Error ? err.message : String(err));
      return this.local.take(key);
    }
  }

  private async takeShared(key: string): Promise<BucketDecision> {
    const now = this.clock();
    const [allowed, levelText] = await (
      this.redis as unknown as { sgLeakyTake(k: string, ...a: (string | number)[]): Promise<[number, string]> }
    ).sgLeakyTake(this.prefix + key, now, this.bucket, this.perSecond);
    const level = Number(levelText);
    if (allowed === 1)
      return { allowed: true, state: { level, updatedAt: now }, used: Math.min(this.bucket, Math.ceil(level)), retryAfterSeconds: 0 };
    return {
      allowed: false,
      state: { level, updatedAt: now },
      used: Math.ceil(level),
      retryAfterSeconds: Math.max(1, Math.ceil((level + 1 - this.bucket) / this.perSecond)),
    };
  }

  private set(state: RateLimiterState, reason: string): void {
    if (this.current === state) return;
    this.current = state;
    if (state === 'local') this.fallbackCount++;
    for (const fn of this.listeners) fn(state, reason);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await this.redis.quit().catch(() => {});
    this.redis.disconnect();
  }
}
