// The statements that record a batch of delivery outcomes, set-based: one insert for every attempt
// of the batch, one update per store for the delivery rows (each row matched by store and id, so
// on the partitioned layout each statement reads one partition), one update per store that ends
// the dead streaks of the subscriptions that delivered. Only a dead delivery, which is rare, costs
// statements of its own. SQLite takes the rows as one JSON array, PostgreSQL as arrays (unnest).
import type { DeliveryOutcome } from '../ports.ts';
import { endpointHourStatement } from './endpoint-hours.ts';
import { disabledNoticeWrites } from './disabled-notice.ts';

export interface Statement {
  sql: string;
  params: unknown[];
}

/** What a statement did: the rows and ids it returned (reads, updates with RETURNING) and how many rows it changed. */
export interface StatementResult {
  ids: number[];
  changes: number;
  rows: Record<string, unknown>[];
}

export interface WriteContext {
  worker: string;
  now: number;
  disableAfterDead: number;
}

type Dialect = 'sqlite' | 'postgres';

// On PostgreSQL each set-based statement also names its rows as `id = any(array)`: the planner
// estimates that from the array's length, whereas it cannot see how many rows an unnest() join
// brings. Without it, on a table that grew faster than its statistics were refreshed (a backlog
// committed at once), it chose to read every pending row once per row of the batch (seconds for a
// batch of 500, so outcomes fell behind the sends and the claims' leases ran out).
const SQL = {
  // SQLite: the unary `+` keeps the store and status terms from choosing an index. Without
  // statistics the planner otherwise walks every pending row of the store through a partial index
  // on (store_id, …) and matches each with the batch, instead of looking the batch's ids up by
  // primary key: a store with a large backlog then spent seconds on every batch of outcomes.
  sqlite: {
    attempts: `insert into webhook_attempts (store_id, delivery_id, attempted_at, status_code, latency_ms, response_body, error)
      select value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6 from json_each(?)`,
    deliveries: `with v (v_id, v_status, v_attempts, v_last_status, v_error, v_next) as (
        select value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5 from json_each(?)
      )
      update webhook_deliveries set status = v_status, attempts = coalesce(v_attempts, attempts),
        last_status = case when v_status = 'cancelled' then last_status else v_last_status end,
        last_error = v_error, next_attempt_at = coalesce(v_next, next_attempt_at),
        claimed_by = null, claimed_until = null, updated_at = ?
      from v
      where +webhook_deliveries.store_id = ? and webhook_deliveries.id = v_id and claimed_by = ? and +status = 'pending'
      returning webhook_deliveries.id`,
    healthy: `update webhook_subscriptions set dead_streak = 0
      where store_id = ? and id in (select value from json_each(?)) and dead_streak > 0`,
  },
  postgres: {
    attempts: `insert into webhook_attempts (store_id, delivery_id, attempted_at, status_code, latency_ms, response_body, error)
      select * from unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::int[], $5::int[], $6::text[], $7::text[])`,
    deliveries: `update webhook_deliveries as d set status = v.status, attempts = coalesce(v.attempts, d.attempts),
        last_status = case when v.status = 'cancelled' then d.last_status else v.last_status end,
        last_error = v.error, next_attempt_at = coalesce(v.next, d.next_attempt_at),
        claimed_by = null, claimed_until = null, updated_at = $7
      from unnest($1::bigint[], $2::text[], $3::int[], $4::int[], $5::text[], $6::bigint[]) as v (id, status, attempts, last_status, error, next)
      where d.store_id = $8 and d.id = any($1::bigint[]) and d.id = v.id and d.claimed_by = $9 and d.status = 'pending'
      returning d.id`,
    healthy: `update webhook_subscriptions set dead_streak = 0 where store_id = $1 and id = any($2::bigint[]) and dead_streak > 0`,
  },
} as const;

/** Columns of a set of rows: one array per column (PostgreSQL), or one JSON array of rows (SQLite). */
function rowsParam(dialect: Dialect, rows: unknown[][], columns: number): unknown[] {
  if (dialect === 'sqlite') return [JSON.stringify(rows)];
  return Array.from({ length: columns }, (_, c) => rows.map((r) => r[c]));
}

/** One delivery row's new state: id, status, attempts, last status, last error, next attempt. */
function deliveryRow(o: DeliveryOutcome): unknown[] {
  if (o.cancelled !== undefined) return [o.id, 'cancelled', null, null, o.cancelled, null];
  const a = o.attempt;
  const attempts = o.attempts + 1;
  if (o.next.status === 'delivered') return [o.id, 'delivered', attempts, a.status, null, null];
  const error = a.error ?? (a.status !== null ? `HTTP ${a.status}` : null);
  if (o.next.status === 'pending') return [o.id, 'pending', attempts, a.status, error, o.next.nextAttemptAt];
  return [o.id, 'dead', attempts, a.status, error, null];
}

/**
 * The statements that record `batch`, in order; each `yield` receives what the statement did.
 * Delivery rows change only where `ctx.worker` still holds them, and subscription health moves
 * only for rows that changed.
 */
export function* outcomeWrites(
  dialect: Dialect,
  batch: readonly DeliveryOutcome[],
  ctx: WriteContext,
): Generator<Statement, void, StatementResult> {
  const sql = SQL[dialect];
  const attempts = batch.flatMap((o) =>
    o.cancelled !== undefined
      ? []
      : [[o.storeId, o.id, o.attempt.attemptedAt, o.attempt.status, o.attempt.latencyMs, o.attempt.responseBody, o.attempt.error]],
  );
  if (attempts.length > 0) yield { sql: sql.attempts, params: rowsParam(dialect, attempts, 7) };

  const byStore = new Map<number, DeliveryOutcome[]>();
  for (const o of batch) {
    const list = byStore.get(o.storeId);
    if (list) list.push(o);
    else byStore.set(o.storeId, [o]);
  }
  const changed = new Set<number>();
  for (const [store, outcomes] of byStore) {
    const params = [...rowsParam(dialect, outcomes.map(deliveryRow), 6), ctx.now, store, ctx.worker];
    const result = yield { sql: sql.deliveries, params };
    for (const id of result.ids) changed.add(id);
  }

  // Subscription health, in the batch's order: a success earlier in the batch ends the streak
  // before a later failure counts.
  const healthy = new Map<string, { store: number; subscription: number }>();
  const key = (o: DeliveryOutcome) => `${o.storeId}:${o.subscriptionId}`;
  for (const o of batch) {
    if (o.cancelled !== undefined || !changed.has(o.id)) continue;
    if (o.next.status === 'delivered') healthy.set(key(o), { store: o.storeId, subscription: o.subscriptionId });
    else if (o.next.status === 'dead') {
      if (healthy.delete(key(o))) yield healthyStatement(dialect, o.storeId, [o.subscriptionId]);
      yield* deadStatements(dialect, o, ctx, o.next.disable);
    }
  }
  const healthyByStore = new Map<number, number[]>();
  for (const h of healthy.values()) {
    const list = healthyByStore.get(h.store);
    if (list) list.push(h.subscription);
    else healthyByStore.set(h.store, [h.subscription]);
  }
  for (const [store, subscriptions] of healthyByStore) yield healthyStatement(dialect, store, subscriptions);
  // Last: the rollup rows are shared by every worker, so their locks are held for the shortest time.
  const hours = endpointHourStatement(dialect, batch);
  if (hours) yield hours;
}

function healthyStatement(dialect: Dialect, store: number, subscriptions: number[]): Statement {
  return {
    sql: SQL[dialect].healthy,
    params: [store, dialect === 'sqlite' ? JSON.stringify(subscriptions) : subscriptions],
  };
}

/**
 * A dead delivery: the subscription is disabled at once (`disable`), or its dead streak grows and may
 * disable it (not for a replay's delivery: a backlog replayed into a recovering endpoint must not
 * disable it again). A subscription disabled here is announced to its app in the same transaction.
 */
function* deadStatements(
  dialect: Dialect,
  o: DeliveryOutcome,
  ctx: WriteContext,
  disable: string | undefined,
): Generator<Statement, void, StatementResult> {
  const p = dialect === 'sqlite' ? (_: number) => '?' : (n: number) => `$${n}`;
  const disableSql = `update webhook_subscriptions set disabled_at = ${p(1)}, disabled_reason = ${p(2)}, updated_at = ${p(1)},
    version = version + 1 where store_id = ${p(3)} and id = ${p(4)} and disabled_at is null`;
  const announce = (reason: string) =>
    disabledNoticeWrites(dialect, { storeId: o.storeId, subscriptionId: o.subscriptionId, reason, now: ctx.now });
  if (disable) {
    const done = yield {
      sql: disableSql,
      params:
        dialect === 'sqlite' ? [ctx.now, disable, ctx.now, o.storeId, o.subscriptionId] : [ctx.now, disable, o.storeId, o.subscriptionId],
    };
    if (done.changes > 0) yield* announce(disable);
    return;
  }
  if (o.cancelled === undefined && o.replay) return;
  yield {
    sql: `update webhook_subscriptions set dead_streak = dead_streak + 1 where store_id = ${p(1)} and id = ${p(2)}`,
    params: [o.storeId, o.subscriptionId],
  };
  const reason = `${ctx.disableAfterDead} deliveries in a row failed every retry`;
  const done = yield {
    sql: `${disableSql} and dead_streak >= ${p(5)}`,
    params:
      dialect === 'sqlite'
        ? [ctx.now, reason, ctx.now, o.storeId, o.subscriptionId, ctx.disableAfterDead]
        : [ctx.now, reason, o.storeId, o.subscriptionId, ctx.disableAfterDead],
  };
  if (done.changes > 0) yield* announce(reason);
}
