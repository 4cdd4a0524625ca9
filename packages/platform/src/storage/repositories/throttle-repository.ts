// Login-attempt counts per key (an account or an address), shared by every node through the
// database. The `failures` column holds every attempt of the window, counted before its password
// is checked.
import { sql } from 'kysely';
import type { AttemptCount, ThrottleRepository } from '../ports/throttles.ts';
import type { Executor } from './executor.ts';

export class SqlThrottleRepository implements ThrottleRepository {
  constructor(private readonly x: Executor) {}

  async lockedUntil(keys: readonly string[]): Promise<(number | null)[]> {
    // `in ()` is an error on PostgreSQL.
    if (keys.length === 0) return [];
    const rows = await this.x.k
      .selectFrom('login_attempts')
      .select(['locked_until'])
      .where('key', 'in', [...keys])
      .execute();
    return rows.map((r) => (r.locked_until === null ? null : Number(r.locked_until)));
  }

  async countAttempt(key: string, now: number, windowStart: number, limit: { max: number; lockUntil: number }): Promise<AttemptCount> {
    // One upsert: the row lock (PostgreSQL) or the single writer (SQLite) orders concurrent
    // attempts, and each reads back the count and lock its own increment produced.
    const stale = sql<boolean>`(login_attempts.window_started_at <= ${windowStart}
      or (login_attempts.locked_until is not null and login_attempts.locked_until <= ${now}))`;
    const firstLock = 1 > limit.max ? limit.lockUntil : null;
    const row = await this.x.k
      .insertInto('login_attempts')
      .values({ key, failures: 1, window_started_at: now, locked_until: firstLock })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          failures: sql`case when ${stale} then 1 else login_attempts.failures + 1 end`,
          window_started_at: sql`case when ${stale} then ${now} else login_attempts.window_started_at end`,
          locked_until: sql`case
            when ${stale} then ${firstLock}
            when login_attempts.locked_until is not null then login_attempts.locked_until
            when login_attempts.failures + 1 > ${limit.max} then ${limit.lockUntil}
            else null end`,
        }),
      )
      .returning(['failures', 'window_started_at', 'locked_until'])
      .executeTakeFirstOrThrow();
    return {
      attempts: Number(row.failures),
      windowStartedAt: Number(row.window_started_at),
      lockedUntil: row.locked_until === null ? null : Number(row.locked_until),
    };
  }

  async lock(key: string, until: number): Promise<void> {
    await this.x.k.updateTable('login_attempts').set({ locked_until: until }).where('key', '=', key).execute();
  }

  async clearIfUnchanged(key: string, seen: Pick<AttemptCount, 'attempts' | 'windowStartedAt'>): Promise<void> {
    await this.x.k
      .deleteFrom('login_attempts')
      .where('key', '=', key)
      .where('failures', '=', seen.attempts)
      .where('window_started_at', '=', seen.windowStartedAt)
      .execute();
  }

  async uncount(key: string, windowStartedAt: number): Promise<void> {
    await this.x.k
      .updateTable('login_attempts')
      .set({ failures: sql`login_attempts.failures - 1` })
      .where('key', '=', key)
      .where('window_started_at', '=', windowStartedAt)
      .where('failures', '>', 0)
      .execute();
  }

  async prune(oldest: number, now: number): Promise<void> {
    await this.x.k
      .deleteFrom('login_attempts')
      .where('window_started_at', '<', oldest)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
      .execute();
  }
}
