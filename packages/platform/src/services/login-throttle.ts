// Login protection: failed logins are counted per account and per address in the
// database (shared by every node); too many in a window lock that key for a while. A locked key is
// refused before the password is checked, so a lock also stops the password hashing work.
import type { ThrottleRepository } from '../storage/ports.ts';
import type { Clock } from '../domain/clock.ts';

export interface ThrottlePolicy {
  /** Failures within `windowMs` that lock a key. */
  maxFailures: number;
  windowMs: number;
  lockMs: number;
}

/** An account: 5 failures in 15 minutes lock it for 15 minutes. */
export const ACCOUNT_POLICY: ThrottlePolicy = { maxFailures: 5, windowMs: 15 * 60_000, lockMs: 15 * 60_000 };
/** An address may try several accounts (a shared office), but not endlessly. */
export const ADDRESS_POLICY: ThrottlePolicy = { maxFailures: 20, windowMs: 15 * 60_000, lockMs: 15 * 60_000 };

export interface LoginKeys {
  /** e.g. `merchant:shop1:owner@example.test` or `partner:dev@example.test` */
  account: string;
  /** The client address (req.ip). */
  address: string;
}

export class LoginThrottle {
  private prunedAt = 0;

  constructor(
    private readonly throttles: ThrottleRepository,
    private readonly clock: Clock,
    private readonly accountPolicy: ThrottlePolicy = ACCOUNT_POLICY,
    private readonly addressPolicy: ThrottlePolicy = ADDRESS_POLICY,
  ) {}

  private static keys(k: LoginKeys): [string, string] {
    return [`acct:${k.account.toLowerCase().slice(0, 400)}`, `addr:${k.address.slice(0, 100)}`];
  }

  /** Milliseconds until the account or the address may try again; 0 when neither is locked. */
  async lockedFor(k: LoginKeys): Promise<number> {
    const now = this.clock();
    const locks = await this.throttles.lockedUntil(LoginThrottle.keys(k));
    return Math.max(0, ...locks.map((until) => (until === null ? 0 : until - now)));
  }

  /** Counts a failure against both keys; returns the wait now in force (0 when not locked). */
  async recordFailure(k: LoginKeys): Promise<number> {
    const [account, address] = LoginThrottle.keys(k);
    const waits = await Promise.all([this.bump(account, this.accountPolicy), this.bump(address, this.addressPolicy)]);
    return Math.max(...waits);
  }

  /** A successful login clears the account's count (the address keeps its own). */
  async recordSuccess(k: LoginKeys): Promise<void> {
    await this.throttles.clear(LoginThrottle.keys(k)[0]);
  }

  private async bump(key: string, policy: ThrottlePolicy): Promise<number> {
    const now = this.clock();
    const windowStart = now - policy.windowMs;
    const row = await this.throttles.countFailure(key, now, windowStart);
    if (row.lockedUntil !== null && row.lockedUntil > now) return row.lockedUntil - now;
    if (now - this.prunedAt > 60_000) {
      this.prunedAt = now;
      await this.prune();
    }
    if (row.failures < policy.maxFailures) return 0;
    await this.throttles.lock(key, now + policy.lockMs);
    return policy.lockMs;
  }

  /** Drops counts whose window and lock are both over (called now and then; keeps the table small). */
  async prune(): Promise<void> {
    const now = this.clock();
    const oldest = now - Math.max(this.accountPolicy.windowMs, this.addressPolicy.windowMs);
    await this.throttles.prune(oldest, now);
  }
}

/** "Too many failed attempts; try again in N minutes" (N rounded up, at least 1). */
export function lockMessage(waitMs: number): string {
  const minutes = Math.max(1, Math.ceil(waitMs / 60_000));
  return `Too many failed attempts; try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
}
