// The webhook worker's side of the delivery table: claims under a lease, the load of what a
// claimed delivery needs, and batched outcome writes.
//
// PostgreSQL: several workers claim with FOR UPDATE SKIP LOCKED, so no two hold the same row.
// SQLite: one process; while no transaction is open on the shared connection, the claim and the
// outcome writes run synchronously on it (nothing can interleave with synchronous statements, so
// they never see or join an uncommitted change) and without waiting for a sync to disk (see
// durability.ts). Inside an open transaction they wait their turn through Kysely instead.
//
// Every statement has one SQL text, whatever the batch (lists go in as one JSON array on SQLite,
// as arrays on PostgreSQL), so it is compiled once and prepared once; a batch costs a fixed number
// of statements, not a few per delivery (see delivery-outcomes.ts).
import { CompiledQuery, type Kysely } from 'kysely';
import type { Durability } from '../durability.ts';
import type { ClaimedDelivery, DeliveryOutcome, DeliveryQueue } from '../ports.ts';
import type { Database } from '../schema.ts';
import type { Db } from '../database.ts';
import { fleetWide } from '../fleet-wide.ts';
import { BACKLOG_SQL, type BacklogParams, backlogParams } from './delivery-backlog.ts';
import {
  assemble,
  CLAIM_SQL,
  type ClaimParams,
  type ClaimedRow,
  claimParams,
  type EventRow,
  loadParams,
  type OwnerRow,
} from './delivery-claim.ts';
import { outcomeWrites, type Statement, type StatementResult, type WriteContext } from './delivery-outcomes.ts';

export class SqlDeliveryQueue implements DeliveryQueue {
  readonly singleProcess: boolean;

  constructor(
    private readonly db: Db,
    private readonly durability: Durability,
  ) {
    this.singleProcess = db.dialect === 'sqlite';
  }

  private get k(): Kysely<Database> {
    return this.db.kysely;
  }

  /** The raw SQLite handle when synchronous statements are safe right now. */
  private get idleSqlite() {
    const sqlite = this.db.sqlite;
    return sqlite && !sqlite.inTransaction ? sqlite : undefined;
  }

  async releaseAllClaims(): Promise<void> {
    await this.k
      .updateTable('webhook_deliveries')
      .set({ claimed_by: null, claimed_until: null })
      .where('status', '=', 'pending')
      .where('claimed_until', 'is not', null)
      .modifyEnd(fleetWide('webhook-claims-release'))
      .execute();
  }

  async releaseClaims(worker: string): Promise<number> {
    const res = await this.k
      .updateTable('webhook_deliveries')
      .set({ claimed_by: null, claimed_until: null })
      .where('claimed_by', '=', worker)
      .where('status', '=', 'pending')
      .modifyEnd(fleetWide('webhook-claims-release'))
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  async deferClaims(input: { worker: string; ids: readonly number[]; until: number; now: number }): Promise<number> {
    let deferred = 0;
    // In slices, far below either database's limit on bound parameters.
    for (let i = 0; i < input.ids.length; i += 500) {
      const query = this.k
        .updateTable('webhook_deliveries')
        .set({ claimed_by: null, claimed_until: null, next_attempt_at: input.until, updated_at: input.now })
        .where('id', 'in', input.ids.slice(i, i + 500))
        .where('claimed_by', '=', input.worker)
        .where('status', '=', 'pending')
        .modifyEnd(fleetWide('webhook-claims-defer'));
      const sqlite = this.idleSqlite;
      if (sqlite) {
        // Worker bookkeeping, like a claim: a hand-back lost in a crash only leaves the rows to be
        // claimed (and handed back) again, so it does not wait for a sync.
        const { sql: text, parameters } = query.compile();
        deferred += this.durability.relaxed(() => sqlite.prepare(text).run(...parameters).changes);
      } else deferred += Number((await query.executeTakeFirst()).numUpdatedRows);
    }
    return deferred;
  }

  async deferBacklog(input: BacklogParams): Promise<number> {
    if (input.subscriptionIds.length === 0 || input.limit <= 0) return 0;
    const dialect = this.db.dialect;
    const params = backlogParams(dialect, input);
    const sqlite = this.idleSqlite;
    // Worker bookkeeping, like a hand-back: lost in a crash, the rows are only claimed (and put off)
    // again, so it does not wait for a sync.
    if (sqlite) return this.durability.relaxed(() => sqlite.prepare(BACKLOG_SQL.sqlite).run(...params).changes);
    const res = await this.k.executeQuery(CompiledQuery.raw(BACKLOG_SQL.postgres, params));
    return Number(res.numAffectedRows ?? 0);
  }

  async renewClaims(input: { worker: string; ids: readonly number[]; leaseUntil: number }): Promise<number> {
    if (input.ids.length === 0) return 0;
    let renewed = 0;
    // In slices, so a full buffer stays far below either database's limit on bound parameters.
    for (let i = 0; i < input.ids.length; i += 500) {
      const res = await this.k
        .updateTable('webhook_deliveries')
        .set({ claimed_until: input.leaseUntil })
        .where('id', 'in', input.ids.slice(i, i + 500))
        .where('claimed_by', '=', input.worker)
        .where('status', '=', 'pending')
        .modifyEnd(fleetWide('webhook-claims-renew'))
        .executeTakeFirst();
      renewed += Number(res.numUpdatedRows);
    }
    return renewed;
  }

  async claim(input: ClaimParams): Promise<ClaimedDelivery[]> {
    const dialect = this.db.dialect;
    const sql = CLAIM_SQL[dialect];
    const params = claimParams(dialect, input);
    const sqlite = this.idleSqlite;
    if (sqlite) {
      const claimed = this.durability.relaxed(() => sqlite.prepare(sql.claim).all(...params) as ClaimedRow[]);
      if (claimed.length === 0) return [];
      const load = loadParams(dialect, claimed);
      return assemble(
        claimed,
        sqlite.prepare(sql.events).all(...load.events) as EventRow[],
        sqlite.prepare(sql.owners).all(...load.owners) as OwnerRow[],
      );
    }
    const claimed = (await this.k.executeQuery<ClaimedRow>(CompiledQuery.raw(sql.claim, params))).rows;
    if (claimed.length === 0) return [];
    const load = loadParams(dialect, claimed);
    const events = await this.k.executeQuery<EventRow>(CompiledQuery.raw(sql.events, load.events));
    const owners = await this.k.executeQuery<OwnerRow>(CompiledQuery.raw(sql.owners, load.owners));
    return assemble(claimed, events.rows, owners.rows);
  }

  async recordOutcomes(outcomes: readonly DeliveryOutcome[], ctx: WriteContext): Promise<void> {
    if (outcomes.length === 0) return;
    const sqlite = this.idleSqlite;
    if (sqlite) {
      // One synchronous transaction: one commit for the whole batch.
      this.durability.relaxed(() =>
        sqlite.transaction(() => {
          const steps = outcomeWrites('sqlite', outcomes, ctx);
          let step = steps.next(NOTHING);
          while (!step.done) {
            const stmt = sqlite.prepare(step.value.sql);
            let result: StatementResult = NOTHING;
            if (stmt.reader) {
              const rows = stmt.all(...step.value.params) as Record<string, unknown>[];
              result = { ids: rows.map((r) => Number(r.id)), changes: 0, rows };
            } else result = { ids: [], changes: stmt.run(...step.value.params).changes, rows: [] };
            step = steps.next(result);
          }
        })(),
      );
      return;
    }
    await this.k.transaction().execute(async (trx) => {
      const steps = outcomeWrites(this.db.dialect, outcomes, ctx);
      let step = steps.next(NOTHING);
      while (!step.done) step = steps.next(await runStatement(trx, step.value));
    });
  }
}

const NOTHING: StatementResult = { ids: [], changes: 0, rows: [] };

async function runStatement(k: Kysely<Database>, s: Statement): Promise<StatementResult> {
  const res = await k.executeQuery<Record<string, unknown>>(CompiledQuery.raw(s.sql, s.params));
  return { ids: res.rows.map((r) => Number(r.id)), changes: Number(res.numAffectedRows ?? 0), rows: res.rows };
}
