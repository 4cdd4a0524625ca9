// The Admin API's rate limit per store and app, as a leaky bucket: each request adds one drop; the
// bucket leaks `perSecond` drops a second; a request that would overflow it is refused. Pure:
// state in, state out.

/** How deep a bucket is and how fast it leaks. */
export interface BucketLimit {
  bucket: number;
  /** Drops leaked per second. */
  perSecond: number;
}

export interface BucketState {
  level: number;
  updatedAt: number;
}

export interface BucketDecision {
  allowed: boolean;
  state: BucketState;
  /** Drops in the bucket after this request, rounded up, as X-Service-Api-Call-Limit shows it. */
  used: number;
  /** Seconds until one drop fits again (only when refused). */
  retryAfterSeconds: number;
}

export function leak(state: BucketState | undefined, now: number, perSecond: number): number {
  if (!state) return 0;
  return Math.max(0, state.level - (Math.max(0, now - state.updatedAt) / 1000) * perSecond);
}

export function take(state: BucketState | undefined, now: number, bucket: number, perSecond: number): BucketDecision {
  const level = leak(state, now, perSecond);
  if (level + 1 > bucket) {
    return {
      allowed: false,
      state: { level, updatedAt: now },
      used: Math.ceil(level),
      retryAfterSeconds: Math.max(1, Math.ceil((level + 1 - bucket) / perSecond)),
    };
  }
  const next = level + 1;
  return { allowed: true, state: { level: next, updatedAt: now }, used: Math.min(bucket, Math.ceil(next)), retryAfterSeconds: 0 };
}

/**
 * Takes one drop back out of the bucket: for a request that was counted and then turned out to
 * have done nothing (refused before any work by another limit, or by a check that must not cost
 * the caller its budget).
 */
export function giveBack(state: BucketState | undefined, now: number, perSecond: number): BucketState {
  return { level: Math.max(0, leak(state, now, perSecond) - 1), updatedAt: now };
}
