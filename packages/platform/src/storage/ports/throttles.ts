// The port on login throttling: attempts counted per key (an account, an address) in a window, and locks.

/** One key's count of login attempts in its window, as left by the attempt just recorded. */
export interface AttemptCount {
  /** Attempts in the window so far, the one just recorded included. */
  attempts: number;
  windowStartedAt: number;
  lockedUntil: number | null;
}

export interface ThrottleRepository {
  /** `locked_until` of each key that has a row. */
  lockedUntil(keys: readonly string[]): Promise<(number | null)[]>;
  /**
   * Records an attempt for `key` in one atomic step, before anything about it is known: a count
   * whose window started at or before `windowStart`, or whose lock has ended, starts again at 1;
   * an attempt that takes the count over `max` while no lock is in force locks the key until
   * `lockUntil` in the same step. Concurrent attempts therefore each get their own number.
   */
  countAttempt(key: string, now: number, windowStart: number, limit: { max: number; lockUntil: number }): Promise<AttemptCount>;
  lock(key: string, until: number): Promise<void>;
  /**
   * Drops the count only if it is still exactly `seen` (same window, no attempt recorded since);
   * a count that has moved on is left alone.
   */
  clearIfUnchanged(key: string, seen: Pick<AttemptCount, 'attempts' | 'windowStartedAt'>): Promise<void>;
  /** Takes one attempt off the count of the window that started at `windowStartedAt` (never below 0). */
  uncount(key: string, windowStartedAt: number): Promise<void>;
  /** Drops counts whose window started before `oldest` and whose lock (if any) has ended. */
  prune(oldest: number, now: number): Promise<void>;
}
