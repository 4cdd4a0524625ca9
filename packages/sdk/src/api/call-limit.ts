// Client-side view of the leaky bucket the platform rate-limits API calls with: every response says
// `X-Service-Api-Call-Limit: used/max`; the bucket leaks `leakPerSecond`. Before a request the
// client estimates how full the bucket is now and waits when the request would overflow it, so a
// busy job slows down instead of collecting 429s.
import type { Sleep } from './retry-policy.ts';

/** Settings of the call-limit throttle. */
export interface CallLimitOptions {
  /** How fast the platform's bucket drains, requests per second (default 2). */
  leakPerSecond?: number;
  /** Slots to leave free for other clients of the same app (default 1). */
  reserve?: number;
}

interface Bucket {
  used: number;
  max: number;
  at: number;
}

/** Tracks the bucket of each shop from response headers and paces requests. */
export class CallLimitThrottle {
  readonly #buckets = new Map<string, Bucket>();
  readonly #leak: number;
  readonly #reserve: number;
  readonly #now: () => number;

  constructor(options: CallLimitOptions, now: () => number) {
    this.#leak = options.leakPerSecond ?? 2;
    this.#reserve = options.reserve ?? 1;
    this.#now = now;
  }

  #level(bucket: Bucket, now: number): number {
    return Math.max(0, bucket.used - ((now - bucket.at) / 1000) * this.#leak);
  }

  /** Milliseconds to wait before sending one more request to `shop` (0 when there is room). */
  delayMs(shop: string): number {
    const bucket = this.#buckets.get(shop);
    if (!bucket) return 0;
    const now = this.#now();
    const level = this.#level(bucket, now);
    const room = bucket.max - this.#reserve;
    const excess = level + 1 - room;
    // Count this request as in the bucket straight away, so concurrent callers space themselves out.
    bucket.used = level + 1;
    bucket.at = now;
    return excess > 0 ? Math.ceil((excess / this.#leak) * 1000) : 0;
  }

  /** Waits as long as {@link delayMs} says. */
  async wait(shop: string, sleep: Sleep, signal?: AbortSignal): Promise<number> {
    const ms = this.delayMs(shop);
    if (ms > 0) await sleep(ms, signal);
    return ms;
  }

  /** Records the `used/max` header of a response. */
  observe(shop: string, header: string | null): void {
    if (!header) return;
    const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(header);
    if (!match) return;
    this.#buckets.set(shop, { used: Number(match[1]), max: Number(match[2]), at: this.#now() });
  }
}
