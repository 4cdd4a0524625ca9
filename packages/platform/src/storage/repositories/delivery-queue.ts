// The webhook worker's side of the delivery table: claims under a lease, the load of what a
// claimed delivery needs, and batched outcome writes. A lease is a row of webhook_delivery_leases,
// so holding a delivery never writes the delivery row: only its outcome (or a hand-back) does.
//
// PostgreSQL: several workers claim with FOR UPDATE SKIP LOCKED and the lease's key, so no two
// hold the same row.
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
import type { DeliveryQueue } from '../ports/delivery-queue.ts';
import type { ClaimedDelivery, DeliveryOutcome } from '../ports/rows.ts';
import type { Db } from '../database.ts';
import { type QueryRunner, queryRunner } from '../prepared-query.ts';
import { type BacklogParams, backlogParams, backlogQuery, backlogReleaseQuery } from './delivery-backlog.ts';
import {
  assemble,
  type ClaimedRow,
  type ClaimParams,
  type ClaimQueryParams,
  claimParams,
  claimQueries,
  loadParams,
} from './delivery-claim.ts';
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
    backlogRelease: db.dialect === 'sqlite' ? backlogReleaseQuery(db.kysely) : undefined,
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
    const all = [...Object.values(rest), ...Object.values(outcomes), outcomeBatch];
    db.prepareStatements(all.flatMap((q) => (q ? [q.compiled.sql] : [])));
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
    const { defer, deferMoved, deferRelease } = this.q;
    if (deferMoved) return Number((await this.bookkeeping.first(deferMoved, params))?.n ?? 0);
    if (!defer || !deferRelease) return 0;
    // SQLite: the delivery rows moved, then the leases deleted, in one transaction.
    const steps = function* (): Steps<number> {
      const moved = yield { query: defer as Statement['query'], params };
      yield { query: deferRelease as Statement['query'], params };
      return moved.changes;
    };
    return this.inTransaction(steps());
  }

  async deferBacklog(input: BacklogParams): Promise<number> {
    if (input.subscriptionIds.length === 0 || input.limit <= 0) return 0;
    const params = backlogParams(this.db.dialect, input);
    const { backlog, backlogRelease } = this.q;
    if (!backlogRelease) return this.bookkeeping.run(backlog, params);
    // SQLite: the rows moved, then the lapsed leases on them deleted, in one transaction.
    const steps = function* (): Steps<number> {
      const moved = yield { query: backlog as Statement['query'], params, reads: true };
      if (moved.ids.length > 0)
        yield { query: backlogRelease as Statement['query'], params: { ids: JSON.stringify(moved.ids), now: input.now } };
      return moved.ids.length;
    };
    return this.inTransaction(steps());
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
    const { take, taken } = this.q;
    if (sync && reads && take && taken) {
      // In one synchronous stretch: nothing changes the claimed rows between the claim and their load.
      const ids = sync.allSync(take, params).map((r) => r.id);
      if (ids.length === 0) return [];
      const claimed = reads.allSync(taken, { ids: JSON.stringify(ids) });
      const load = loadParams(dialect, claimed);
      return assemble(claimed, reads.allSync(this.q.events, load.events), reads.allSync(this.q.owners, load.owners));
    }
    const claimed = await this.claimed(params);
    if (claimed.length === 0) return [];
    const load = loadParams(dialect, claimed);
    const events = await this.queued.all(this.q.events, load.events);
    const owners = await this.queued.all(this.q.owners, load.owners);
    return assemble(claimed, events, owners);
  }

  /** The claim's delivery rows: one statement on PostgreSQL; on SQLite the leases taken, then the rows read. */
  private async claimed(params: ClaimQueryParams): Promise<ClaimedRow[]> {
    const { claim, take, taken } = this.q;
    if (claim) return this.queued.all(claim, params);
    if (!take || !taken) return [];
    const ids = (await this.queued.all(take, params)).map((r) => r.id);
    return ids.length === 0 ? [] : this.queued.all(taken, { ids: JSON.stringify(ids) });
  }

  async recordOutcomes(outcomes: readonly DeliveryOutcome[], ctx: WriteContext): Promise<void> {
    if (outcomes.length === 0) return;
    // PostgreSQL, most batches: one statement (see delivery-outcome-batch.ts).
    const one = this.q.outcomeBatch && outcomeBatch(this.q.outcomeBatch, outcomes, ctx);
    if (one) {
      await this.queued.all(one.query, one.params);
      return;
    }
    // Every other batch, and every batch on SQLite: the statements of delivery-outcomes.ts in one
    // transaction (on SQLite synchronous when it may: one commit for the whole batch).
    await this.inTransaction(outcomeWrites(this.q.outcomes, this.db.dialect, outcomes, ctx));
  }

  /**
   * Runs the statements of `steps` in one transaction, each given what the previous one did: on
   * SQLite synchronously while no transaction is open (without waiting for a sync to disk), else
   * through a Kysely transaction.
   */
  private async inTransaction<T>(steps: Steps<T>): Promise<T> {
    const sqlite = this.db.sqlite;
    const sync = this.queued.sync();
    if (sqlite && sync) {
      return this.durability.relaxed(() =>
        sqlite.transaction(() => {
          let step = steps.next(NOTHING);
          while (!step.done) step = steps.next(resultOf(step.value, sync.allSync.bind(sync), sync.runSync.bind(sync)));
          return step.value;
        })(),
      );
    }
    return this.db.kysely.transaction().execute(async (trx) => {
      const runner = queryRunner(this.db, { scope: trx });
      let step = steps.next(NOTHING);
      while (!step.done) {
        const s = step.value;
        step = steps.next(
          s.reads ? rowsResult(await runner.all(s.query, s.params)) : { ...NOTHING, changes: await runner.run(s.query, s.params) },
        );
      }
      return step.value;
    });
  }
}

/** Statements run one after another, each given what the previous one did; the last returns T. */
type Steps<T> = Generator<Statement, T, StatementResult>;

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
