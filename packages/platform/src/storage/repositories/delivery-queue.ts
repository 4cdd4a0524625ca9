// The webhook worker's side of the delivery table: claims under a lease, the load of what a
// claimed delivery needs, and batched outcome writes.
//
// PostgreSQL: several workers claim with FOR UPDATE SKIP LOCKED, so no two hold the same row.
// SQLite: one process; while no transaction is open on the shared connection, the claim and the
// outcome writes run synchronously on it (nothing can interleave with synchronous statements, so
// they never see or join an uncommitted change) and without waiting for a sync to disk (see
// durability.ts). Inside an open transaction they wait their turn through Kysely instead.
//
// Every statement is a prepared query (defineQuery), compiled once per database and, on PostgreSQL,
// a named statement parsed once per connection. Each has one SQL text whatever the batch (lists go
// in as one JSON array on SQLite, as arrays on PostgreSQL), and a batch costs a fixed number of
// statements, not a few per delivery (see delivery-outcomes.ts).
import type { Durability } from '../durability.ts';
import type { ClaimedDelivery, DeliveryOutcome, DeliveryQueue } from '../ports.ts';
import type { Db } from '../database.ts';
import { type QueryRunner, queryRunner } from '../prepared-query.ts';
import { type BacklogParams, backlogParams, backlogQuery } from './delivery-backlog.ts';
import { assemble, type ClaimParams, claimParams, claimQueries, loadParams } from './delivery-claim.ts';
import { leaseQueries } from './delivery-leases.ts';
import { outcomeBatch, outcomeBatchQuery } from './delivery-outcome-batch.ts';
import { outcomeQueries, outcomeWrites, type Statement, type StatementResult, type WriteContext } from './delivery-outcomes.ts';
import { listParam } from './raw-query.ts';

/** Every statement of the delivery queue, compiled once for one database. */
export function deliveryQueries(db: Pick<Db, 'kysely' | 'dialect'>) {
  return {
    ...claimQueries(db.kysely, db.dialect),
    ...leaseQueries(db.kysely, db.dialect),
    backlog: backlogQuery(db.kysely, db.dialect),
    outcomes: outcomeQueries(db.kysely, db.dialect),
    // PostgreSQL's one-statement batch; SQLite records a batch in one synchronous transaction instead.
    outcomeBatch: db.dialect === 'postgres' ? outcomeBatchQuery(db.kysely) : undefined,
  };
}

export class SqlDeliveryQueue implements DeliveryQueue {
  readonly singleProcess: boolean;
  private readonly q: ReturnType<typeof deliveryQueries>;
  /** Statements that wait their turn inside an open transaction, synchronous on SQLite otherwise. */
  private readonly queued: QueryRunner;
  /**
   * The same for the worker's bookkeeping (claims, hand-backs, backlog deferrals): lost in a
   * crash, they only leave rows to be claimed (and handed back) again, so on SQLite they do not
   * wait for a sync to disk.
   */
  private readonly bookkeeping: QueryRunner;

  constructor(
    private readonly db: Db,
    private readonly durability: Durability,
  ) {
    this.singleProcess = db.dialect === 'sqlite';
    this.q = deliveryQueries(db);
    this.queued = queryRunner(db, { scope: 'when-idle' });
    this.bookkeeping = queryRunner(db, { scope: 'when-idle', around: (work) => durability.relaxed(work) });
    const { outcomes, outcomeBatch, ...rest } = this.q;
    const all = [...Object.values(rest), ...Object.values(outcomes), ...(outcomeBatch ? [outcomeBatch] : [])];
    db.prepareStatements(all.map((q) => q.compiled.sql));
  }

  async releaseAllClaims(): Promise<void> {
    await this.queued.run(this.q.releaseAll, {});
  }

  async releaseClaims(worker: string): Promise<number> {
    return this.queued.run(this.q.release, { worker });
  }

  async deferClaims(input: { worker: string; ids: readonly number[]; until: number; now: number }): Promise<number> {
    if (input.ids.length === 0) return 0;
    const params = { ids: listParam(this.db.dialect, input.ids), worker: input.worker, until: input.until, now: input.now };
    return this.bookkeeping.run(this.q.defer, params);
  }

  async deferBacklog(input: BacklogParams): Promise<number> {
    if (input.subscriptionIds.length === 0 || input.limit <= 0) return 0;
    const params = backlogParams(this.db.dialect, input);
    return this.bookkeeping.run(this.q.backlog, params);
  }

  async renewClaims(input: { worker: string; ids: readonly number[]; leaseUntil: number }): Promise<number> {
    if (input.ids.length === 0) return 0;
    return this.queued.run(this.q.renew, {
      ids: listParam(this.db.dialect, input.ids),
      worker: input.worker,
      leaseUntil: input.leaseUntil,
    });
  }

  async claim(input: ClaimParams): Promise<ClaimedDelivery[]> {
    const dialect = this.db.dialect;
    const params = claimParams(dialect, input);
    const sync = this.bookkeeping.sync();
    const reads = this.queued.sync();
    if (sync && reads) {
      // In one synchronous stretch: nothing changes the claimed rows between the claim and their load.
      const claimed = sync.allSync(this.q.claim, params);
      if (claimed.length === 0) return [];
      const load = loadParams(dialect, claimed);
      return assemble(claimed, reads.allSync(this.q.events, load.events), reads.allSync(this.q.owners, load.owners));
    }
    const claimed = await this.queued.all(this.q.claim, params);
    if (claimed.length === 0) return [];
    const load = loadParams(dialect, claimed);
    const events = await this.queued.all(this.q.events, load.events);
    const owners = await this.queued.all(this.q.owners, load.owners);
    return assemble(claimed, events, owners);
  }

  async recordOutcomes(outcomes: readonly DeliveryOutcome[], ctx: WriteContext): Promise<void> {
    if (outcomes.length === 0) return;
    const sqlite = this.db.sqlite;
    const sync = this.queued.sync();
    if (sqlite && sync) {
      // One synchronous transaction: one commit for the whole batch.
      this.durability.relaxed(() =>
        sqlite.transaction(() => {
          const steps = outcomeWrites(this.q.outcomes, 'sqlite', outcomes, ctx);
          let step = steps.next(NOTHING);
          while (!step.done) step = steps.next(resultOf(step.value, sync.allSync.bind(sync), sync.runSync.bind(sync)));
        })(),
      );
      return;
    }
    // PostgreSQL, most batches: one statement (see delivery-outcome-batch.ts).
    const one = this.q.outcomeBatch && outcomeBatch(this.q.outcomeBatch, outcomes, ctx);
    if (one) {
      await this.queued.all(one.query, one.params);
      return;
    }
    await this.db.kysely.transaction().execute(async (trx) => {
      const runner = queryRunner(this.db, { scope: trx });
      const steps = outcomeWrites(this.q.outcomes, this.db.dialect, outcomes, ctx);
      let step = steps.next(NOTHING);
      while (!step.done) {
        const s = step.value;
        step = steps.next(
          s.reads ? rowsResult(await runner.all(s.query, s.params)) : { ...NOTHING, changes: await runner.run(s.query, s.params) },
        );
      }
    });
  }
}

const NOTHING: StatementResult = { ids: [], changes: 0, rows: [] };

function rowsResult(rows: Record<string, unknown>[]): StatementResult {
  return { ids: rows.map((r) => Number(r.id)), changes: rows.length, rows };
}

function resultOf(
  s: Statement,
  all: (q: Statement['query'], params: Statement['params']) => Record<string, unknown>[],
  run: (q: Statement['query'], params: Statement['params']) => number,
): StatementResult {
  return s.reads ? rowsResult(all(s.query, s.params)) : { ...NOTHING, changes: run(s.query, s.params) };
}
