// StorageStats on Kysely: one aggregate over the pending deliveries (the partial index of pending
// rows keeps it off the delivered history) and the pool's own counters.
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import { fleetWide } from '../fleet-wide.ts';
import type { OutboxBacklog, PoolStats, StorageStats } from '../ports/storage-stats.ts';

export class SqlStorageStats implements StorageStats {
  constructor(private readonly db: Db) {}

  async outboxBacklog(now: number): Promise<OutboxBacklog> {
    const row = await this.db.kysely
      .selectFrom('webhook_deliveries')
      .where('status', '=', 'pending')
      .select((eb) => [
        eb.fn.countAll<number | string>().as('pending'),
        sql<number | string | null>`sum(case when next_attempt_at <= ${now} then 1 else 0 end)`.as('due'),
        sql<number | string | null>`min(case when next_attempt_at <= ${now} then next_attempt_at end)`.as('oldest'),
      ])
      .modifyEnd(fleetWide('outbox-backlog'))
      .executeTakeFirstOrThrow();
    return { pending: Number(row.pending), due: Number(row.due ?? 0), oldestDueAt: row.oldest === null ? null : Number(row.oldest) };
  }

  pool(): PoolStats | undefined {
    return this.db.poolStats();
  }
}
