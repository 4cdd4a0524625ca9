// Leaky buckets per (store, app): in memory on one node, in Redis when several nodes share them.
import { Redis } from 'ioredis';
import { take, type BucketDecision, type BucketState } from '../domain/leaky-bucket.ts';
import type { Clock } from '../domain/clock.ts';

export interface RateLimiter {
  take(key: string): Promise<BucketDecision>;
  readonly bucket: number;
  /** Drops leaked per second. */
  readonly perSecond: number;
  close(): Promise<void>;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, BucketState>();
  private sweptAt = 0;

  constructor(
    readonly bucket: number,
    readonly perSecond: number,
    private readonly clock: Clock,
  ) {}

  async take(key: string): Promise<BucketDecision> {
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

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis;

  constructor(
    url: string,
    readonly bucket: number,
    readonly perSecond: number,
    private readonly clock: Clock,
    private readonly prefix = 'storegate:rl:',
  ) {
    this.redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
    this.redis.defineCommand('sgLeakyTake', { numberOfKeys: 1, lua: SCRIPT });
  }

  async take(key: string): Promise<BucketDecision> {
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

  async close(): Promise<void> {
    await this.redis.quit().catch(() => {});
  }
}
