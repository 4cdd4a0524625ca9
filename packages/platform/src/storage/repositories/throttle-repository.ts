// Failed-login counts per key (an account or an address), shared by every node through the database.
import { sql } from 'kysely';
import type { ThrottleRepository } from '../ports.ts';
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

  async countFailure(key: string, now: number, windowStart: number): Promise<{ failures: number; lockedUntil: number | null }> {
    // One upsert, so concurrent failures never lose a count.
    const stale = sql<boolean>`(login_attempts.window_started_at <= ${windowStart} or (login_attempts.locked_until is not null and login_attempts.locked_until <= ${now}))`;
    const row = await this.x.k
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
    return { failures: Number(row.failures), lockedUntil: row.locked_until === null ? null : Number(row.locked_until) };
  }

  async lock(key: string, until: number): Promise<void> {
    await this.x.k.updateTable('login_attempts').set({ locked_until: until }).where('key', '=', key).execute();
  }

  async clear(key: string): Promise<void> {
    await this.x.k.deleteFrom('login_attempts').where('key', '=', key).execute();
  }

  async prune(oldest: number, now: number): Promise<void> {
    await this.x.k
      .deleteFrom('login_attempts')
      .where('window_started_at', '<', oldest)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
      .execute();
  }
}
