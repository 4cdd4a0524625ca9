// Login protection (issue 5): failed logins are counted per account and per address in the
// database (shared by every node); too many in a window lock that key for a while. A locked key is
// refused before the password is checked, so a lock also stops the password hashing work.
import { sql } from 'kysely';
import type { Db } from '../storage/db.ts';
import type { Clock } from './clock.ts';

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
    private readonly db: Db,
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
    const rows = await this.db.kysely.selectFrom('login_attempts').select(['locked_until']).where('key', 'in', LoginThrottle.keys(k)).execute();
    return Math.max(0, ...rows.map((r) => (r.locked_until === null ? 0 : Number(r.locked_until) - now)));
  }

  /** Counts a failure against both keys; returns the wait now in force (0 when not locked). */
  async recordFailure(k: LoginKeys): Promise<number> {
    const [account, address] = LoginThrottle.keys(k);
    const waits = await Promise.all([this.bump(account, this.accountPolicy), this.bump(address, this.addressPolicy)]);
    return Math.max(...waits);
  }

  /** A successful login clears the account's count (the address keeps its own). */
  async recordSuccess(k: LoginKeys): Promise<void> {
    await this.db.kysely.deleteFrom('login_attempts').where('key', '=', LoginThrottle.keys(k)[0]).execute();
  }

  private async bump(key: string, policy: ThrottlePolicy): Promise<number> {
    const now = this.clock();
    const windowStart = now - policy.windowMs;
    // One atomic upsert: a failure after the window (or after a lock ended) starts a new count.
    const stale = sql<boolean>`(login_attempts.window_started_at <= ${windowStart} or (login_attempts.locked_until is not null and login_attempts.locked_until <= ${now}))`;
    const row = await this.db.kysely
      .insertInto('login_attempts')
      .values({ key, failures: 1, window_started_at: now, locked_until: null })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          failures: sql`case when ${stale} then 1 else login_attempts.failures + 1 end`,
          window_started_at: sql`case when ${stale} then ${now} else login_attempts.window_started_at end`,
          locked_until: sql`case when ${stale} then null else login_attempts.locked_until end`,
        }),
      )
      .returning(['failures', 'locked_until'])
      .executeTakeFirstOrThrow();
    if (row.locked_until !== null && Number(row.locked_until) > now) return Number(row.locked_until) - now;
    if (now - this.prunedAt > 60_000) {
      this.prunedAt = now;
      await this.prune();
    }
    if (Number(row.failures) < policy.maxFailures) return 0;
    await this.db.kysely.updateTable('login_attempts').set({ locked_until: now + policy.lockMs }).where('key', '=', key).execute();
    return policy.lockMs;
  }

  /** Drops counts whose window and lock are both over (called now and then; keeps the table small). */
  async prune(): Promise<void> {
    const now = this.clock();
    const oldest = now - Math.max(this.accountPolicy.windowMs, this.addressPolicy.windowMs);
    await this.db.kysely
      .deleteFrom('login_attempts')
      .where('window_started_at', '<', oldest)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
      .execute();
  }
}

/** "Too many failed attempts; try again in N minutes" (N rounded up, at least 1). */
export function lockMessage(waitMs: number): string {
  const minutes = Math.max(1, Math.ceil(waitMs / 60_000));
  return `Too many failed attempts; try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
}
