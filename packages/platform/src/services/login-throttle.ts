// Login protection: attempts are counted per account and per address in the database (shared by
// every node), each one recorded atomically BEFORE its password is checked, so a burst of parallel
// guesses cannot slip past the count; an attempt over the limit is refused unchecked and locks the
// key for a while. A refused attempt costs no password hashing either.
import type { AttemptCount, ThrottleRepository } from '../storage/ports/throttles.ts';
import type { Clock } from '../domain/clock.ts';

export interface ThrottlePolicy {
  /** Attempts within `windowMs` whose password is checked; the last of them, if wrong, locks the key. */
  maxFailures: number;
  windowMs: number;
  lockMs: number;
}

/** An account: 5 failed attempts in 15 minutes lock it for 15 minutes. */
export const ACCOUNT_POLICY: ThrottlePolicy = { maxFailures: 5, windowMs: 15 * 60_000, lockMs: 15 * 60_000 };
/** An address may try several accounts (a shared office), but not endlessly. */
export const ADDRESS_POLICY: ThrottlePolicy = { maxFailures: 20, windowMs: 15 * 60_000, lockMs: 15 * 60_000 };

export interface LoginKeys {
  /** e.g. `merchant:shop1:owner@example.test` or `partner:dev@example.test` */
  account: string;
  /** The client address (req.ip). */
  address: string;
}

/** An attempt as recorded by `begin`: its number on each key, for `failed` or `succeeded`. */
export interface LoginAttempt {
  accountKey: string;
  addressKey: string;
  account: AttemptCount;
  address: AttemptCount;
  /** Milliseconds the attempt must wait; 0 when its password may be checked. */
  wait: number;
}

/** The account a merchant logs in as: per store, so a lock in one store leaves the others open. */
export function merchantAccount(storeId: number, email: string): string {
  return `merchant:${storeId}:${email}`;
}

/** Where an account's attempts are counted. */
export function accountKey(account: string): string {
  return `acct:${account.toLowerCase().slice(0, 400)}`;
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
    return [accountKey(k.account), `addr:${k.address.slice(0, 100)}`];
  }

  /** Milliseconds until the account or the address may try again; 0 when neither is locked. */
  async lockedFor(k: LoginKeys): Promise<number> {
    const now = this.clock();
    const locks = await this.throttles.lockedUntil(LoginThrottle.keys(k));
    return Math.max(0, ...locks.map((until) => (until === null ? 0 : until - now)));
  }

  /**
   * Records an attempt against the account and the address before its password is checked. The
   * attempt may go on only when `wait` is 0; otherwise a key is locked (possibly by this very
   * attempt, for going over the limit) and `wait` is how long it stays so.
   */
  async begin(k: LoginKeys): Promise<LoginAttempt> {
    const now = this.clock();
    const [accountKey, addressKey] = LoginThrottle.keys(k);
    const count = (key: string, policy: ThrottlePolicy) =>
      this.throttles.countAttempt(key, now, now - policy.windowMs, { max: policy.maxFailures, lockUntil: now + policy.lockMs });
    const [account, address] = await Promise.all([count(accountKey, this.accountPolicy), count(addressKey, this.addressPolicy)]);
    if (now - this.prunedAt > 60_000) {
      this.prunedAt = now;
      await this.prune();
    }
    const wait = Math.max(0, ...[account, address].map((c) => (c.lockedUntil === null ? 0 : c.lockedUntil - now)));
    return { accountKey, addressKey, account, address, wait };
  }

  /** A wrong password: a key whose last checked attempt this was locks now. Returns the wait in force (0 when none). */
  async failed(a: LoginAttempt): Promise<number> {
    const now = this.clock();
    const lockIfLast = async (key: string, count: AttemptCount, policy: ThrottlePolicy) => {
      if (count.attempts < policy.maxFailures) return 0;
      await this.throttles.lock(key, now + policy.lockMs);
      return policy.lockMs;
    };
    const waits = await Promise.all([
      lockIfLast(a.accountKey, a.account, this.accountPolicy),
      lockIfLast(a.addressKey, a.address, this.addressPolicy),
    ]);
    return Math.max(...waits);
  }

  /**
   * The right password: the account's count is cleared, unless more attempts have been recorded
   * since this one (a burst in progress keeps its count, so it gets no fresh guesses); the address
   * takes this attempt back, since only failures should weigh against a shared address.
   */
  async succeeded(a: LoginAttempt): Promise<void> {
    await Promise.all([
      this.throttles.clearIfUnchanged(a.accountKey, a.account),
      this.throttles.uncount(a.addressKey, a.address.windowStartedAt),
    ]);
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
