// The statements that record a batch of delivery outcomes, set-based: one insert for every attempt
// of the batch, one update per store for the delivery rows (each row matched by store and id, so
// on the partitioned layout each statement reads one partition) where the worker's lease is still
// there, which ends the lease (on PostgreSQL in the same statement, on SQLite by one delete for the
// batch in the same transaction), one update per store that ends the dead streaks of the
// subscriptions that delivered. Only a dead delivery, which is rare, costs statements of its own.
// SQLite takes the rows as one JSON array, PostgreSQL as arrays (unnest).
import { type Kysely, sql } from 'kysely';
import { defineQuery, type PreparedQuery } from '../prepared-query.ts';
import type { DeliveryOutcome } from '../ports/rows.ts';
import type { Database } from '../schema.ts';
import { endpointHourParams, endpointHourQuery } from './endpoint-hours.ts';
import { disabledNoticeWrites, noticeQueries } from './disabled-notice.ts';
import { type Dialect, listParam, rawQuery } from './raw-query.ts';

/** One statement of the outcome writes: a prepared query and its parameters. */
export interface Statement {
  query: PreparedQuery<Record<string, unknown>>;
  params: Record<string, unknown>;
  /** It returns rows (a read, or RETURNING), read by the step that follows; else its count of changed rows is. */
  reads?: boolean;
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

type Row = Record<string, unknown>;

// On PostgreSQL each set-based statement also names its rows as `id = any(array)`: the planner
// estimates that from the array's length, whereas it cannot see how many rows an unnest() join
// brings. Without it, on a table that grew faster than its statistics were refreshed (a backlog
// committed at once), it chose to read every pending row once per row of the batch (seconds for a
// batch of 500, so outcomes fell behind the sends and the claims' leases ran out).
// SQLite: the unary `+` keeps the store and status terms from choosing an index. Without
// statistics the planner otherwise walks every pending row of the store through a partial index
// on (store_id, …) and matches each with the batch, instead of looking the batch's ids up by
// primary key: a store with a large backlog then spent seconds on every batch of outcomes.
function setQueries(k: Kysely<Database>, dialect: Dialect) {
  const q = (build: (p: (name: string) => string) => ReturnType<typeof sql<Row>>) =>
    defineQuery<Row>((p) =>
      rawQuery(
        k,
        build((name) => p(name)),
      ),
    );
  if (dialect === 'sqlite') {
    return {
      attempts: q(
        (p) => sql`insert into webhook_attempts (store_id, delivery_id, attempted_at, status_code, latency_ms, response_body, error)
          select value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6 from json_each(${p('rows')})`,
      ),
      deliveries: q(
        (p) => sql`with v (v_id, v_status, v_attempts, v_last_status, v_error, v_next) as (
            select value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5 from json_each(${p('rows')})
          )
          update webhook_deliveries set status = v_status, attempts = coalesce(v_attempts, attempts),
            last_status = case when v_status = 'cancelled' then last_status else v_last_status end,
            last_error = v_error, next_attempt_at = coalesce(v_next, next_attempt_at), updated_at = ${p('now')}
          from v
          where +webhook_deliveries.store_id = ${p('store')} and webhook_deliveries.id = v_id and +status = 'pending'
            and exists (select 1 from webhook_delivery_leases l where l.delivery_id = v_id and l.worker = ${p('worker')})
          returning webhook_deliveries.id`,
      ),
      // The batch's leases of this worker, after the updates that read them (PostgreSQL deletes them
      // in its update statement). A lease whose delivery ended meanwhile (cancelled) goes as well.
      release: q(
        (p) => sql`delete from webhook_delivery_leases
          where delivery_id in (select value from json_each(${p('ids')})) and worker = ${p('worker')}`,
      ),
      healthy: q(
        (p) => sql`update webhook_subscriptions set dead_streak = 0
          where store_id = ${p('store')} and id in (select value from json_each(${p('subscriptions')})) and dead_streak > 0`,
      ),
    };
  }
  return {
    attempts: q((p) => sql<Row>`${postgresAttemptsInsert(p, 'c')}`),
    deliveries: q(
      (p) => sql`with recorded as (${postgresDeliveriesUpdate(p, 'c')} returning d.id), ${postgresLeaseRelease(p, 'c')}
        select id from recorded`,
    ),
    release: undefined,
    healthy: q(
      (p) => sql`update webhook_subscriptions set dead_streak = 0
        where store_id = ${p('store')} and id = any(${p('subscriptions')}::bigint[]) and dead_streak > 0`,
    ),
  };
}

/** PostgreSQL's insert of a batch's attempts, its columns as arrays named `${prefix}0`… */
export function postgresAttemptsInsert(p: (name: string) => string, prefix: string) {
  const c = (i: number, type: string) => sql`${p(`${prefix}${i}`)}::${sql.raw(type)}[]`;
  return sql`insert into webhook_attempts (store_id, delivery_id, attempted_at, status_code, latency_ms, response_body, error)
    select * from unnest(${c(0, 'bigint')}, ${c(1, 'bigint')}, ${c(2, 'bigint')}, ${c(3, 'int')}, ${c(4, 'int')},
      ${c(5, 'text')}, ${c(6, 'text')})`;
}

/**
 * PostgreSQL's update of one store's delivery rows (RETURNING left to the caller), their new states
 * as arrays named `${prefix}0`…, with `now`, `store`, `worker` and the batch's id range `lo`…`hi`
 * (idRange): only the rows whose lease `worker` still holds. Where the planner walks the store's
 * pending rows instead of looking the ids up (statistics older than a backlog), the range turns most
 * of them away at the cost of two comparisons, before the list's (a generic plan compares each row
 * with every id of the list; the claim columns once did that job, the lease now lives elsewhere).
 */
export function postgresDeliveriesUpdate(p: (name: string) => string, prefix: string) {
  const c = (i: number, type: string) => sql`${p(`${prefix}${i}`)}::${sql.raw(type)}[]`;
  return sql`update webhook_deliveries as d set status = v.status, attempts = coalesce(v.attempts, d.attempts),
      last_status = case when v.status = 'cancelled' then d.last_status else v.last_status end,
      last_error = v.error, next_attempt_at = coalesce(v.next, d.next_attempt_at), updated_at = ${p('now')}
    from unnest(${c(0, 'bigint')}, ${c(1, 'text')}, ${c(2, 'int')}, ${c(3, 'int')}, ${c(4, 'text')}, ${c(5, 'bigint')})
      as v (id, status, attempts, last_status, error, next)
    where d.store_id = ${p('store')} and d.id between ${p('lo')}::bigint and ${p('hi')}::bigint and d.id = any(${c(0, 'bigint')})
      and d.id = v.id and d.status = 'pending' and exists (select 1 from webhook_delivery_leases l
        where l.store_id = ${p('store')} and l.delivery_id = d.id and l.worker = ${p('worker')})`;
}

/**
 * PostgreSQL's CTE `released` (for a WITH clause that has the update as `recorded`): the worker's
 * leases on the batch's deliveries (named in `${prefix}0`), deleted once the update is done (its
 * count, always true, gates the delete), whether or not the update changed the row (a delivery
 * cancelled while held). Delivery row first, lease second is the order a claim takes them in: a
 * claim taking over a lapsed lease locks the row, then writes the lease, so deleting the lease
 * before updating the row could leave each waiting for the other.
 */
export function postgresLeaseRelease(p: (name: string) => string, prefix: string) {
  return sql`released as (
      delete from webhook_delivery_leases
      where store_id = ${p('store')} and delivery_id = any(${p(`${prefix}0`)}::bigint[]) and worker = ${p('worker')}
        and (select count(*) from recorded) >= 0
    )`;
}

/** The statements of a dead delivery: the subscription disabled, its dead streak grown. */
function deadQueries(k: Kysely<Database>) {
  const disable = (p: (name: string) => string) => sql`update webhook_subscriptions set disabled_at = ${p('now')},
      disabled_reason = ${p('reason')}, updated_at = ${p('now')}, version = version + 1
    where store_id = ${p('store')} and id = ${p('subscription')} and disabled_at is null`;
  return {
    disable: defineQuery<Row>((p) => rawQuery(k, disable(p))),
    disableAtStreak: defineQuery<Row>((p) => rawQuery(k, sql`${disable(p)} and dead_streak >= ${p('streak')}`)),
    deadStreak: defineQuery<Row>((p) =>
      rawQuery(
        k,
        sql`update webhook_subscriptions set dead_streak = dead_streak + 1 where store_id = ${p('store')} and id = ${p('subscription')}`,
      ),
    ),
  };
}

/** Every statement the outcome writes run, compiled once for one database. */
export function outcomeQueries(k: Kysely<Database>, dialect: Dialect) {
  return { ...setQueries(k, dialect), ...deadQueries(k), ...noticeQueries(k, dialect), hours: endpointHourQuery(k, dialect) };
}

export type OutcomeQueries = ReturnType<typeof outcomeQueries>;

/**
 * A set of rows as parameters: one JSON array of rows named `rows` (SQLite), or one array per
 * column named c0, c1… (PostgreSQL, for unnest(); another prefix than c may be given).
 */
export function rowsParams(dialect: Dialect, rows: unknown[][], columns: number, prefix = 'c'): Record<string, unknown> {
  if (dialect === 'sqlite') return { rows: JSON.stringify(rows) };
  return Object.fromEntries(Array.from({ length: columns }, (_, c) => [`${prefix}${c}`, rows.map((r) => r[c])]));
}

/** The lowest and highest delivery id of a batch, as `lo` and `hi` (see postgresDeliveriesUpdate). */
export function idRange(batch: readonly DeliveryOutcome[]): { lo: number; hi: number } {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const o of batch) {
    lo = Math.min(lo, o.id);
    hi = Math.max(hi, o.id);
  }
  return { lo, hi };
}

/** One delivery row's new state: id, status, attempts, last status, last error, next attempt. */
export function deliveryRow(o: DeliveryOutcome): unknown[] {
  if (o.cancelled !== undefined) return [o.id, 'cancelled', null, null, o.cancelled, null];
  const a = o.attempt;
  const attempts = o.attempts + 1;
  if (o.next.status === 'delivered') return [o.id, 'delivered', attempts, a.status, null, null];
  const error = a.error ?? (a.status !== null ? `HTTP ${a.status}` : null);
  if (o.next.status === 'pending') return [o.id, 'pending', attempts, a.status, error, o.next.nextAttemptAt];
  return [o.id, 'dead', attempts, a.status, error, null];
}

/** The attempt rows of a batch (a cancellation made no attempt). */
export function attemptRows(batch: readonly DeliveryOutcome[]): unknown[][] {
  return batch.flatMap((o) =>
    o.cancelled !== undefined
      ? []
      : [[o.storeId, o.id, o.attempt.attemptedAt, o.attempt.status, o.attempt.latencyMs, o.attempt.responseBody, o.attempt.error]],
  );
}

/**
 * The statements that record `batch`, in order; each `yield` receives what the statement did.
 * Delivery rows change only where `ctx.worker` still holds them, and subscription health moves
 * only for rows that changed.
 */
export function* outcomeWrites(
  q: OutcomeQueries,
  dialect: Dialect,
  batch: readonly DeliveryOutcome[],
  ctx: WriteContext,
): Generator<Statement, void, StatementResult> {
  const attempts = attemptRows(batch);
  if (attempts.length > 0) yield { query: q.attempts, params: rowsParams(dialect, attempts, 7) };

  const byStore = new Map<number, DeliveryOutcome[]>();
  for (const o of batch) {
    const list = byStore.get(o.storeId);
    if (list) list.push(o);
    else byStore.set(o.storeId, [o]);
  }
  const changed = new Set<number>();
  for (const [store, outcomes] of byStore) {
    const params = { ...rowsParams(dialect, outcomes.map(deliveryRow), 6), ...idRange(outcomes), now: ctx.now, store, worker: ctx.worker };
    const result = yield { query: q.deliveries, params, reads: true };
    for (const id of result.ids) changed.add(id);
  }
  if (q.release)
    yield {
      query: q.release,
      params: {
        ids: listParam(
          dialect,
          batch.map((o) => o.id),
        ),
        worker: ctx.worker,
      },
    };

  // Subscription health, in the batch's order: a success earlier in the batch ends the streak
  // before a later failure counts.
  const healthy = new Map<string, { store: number; subscription: number }>();
  const key = (o: DeliveryOutcome) => `${o.storeId}:${o.subscriptionId}`;
  const healthyStatement = (store: number, subscriptions: number[]): Statement => ({
    query: q.healthy,
    params: { store, subscriptions: listParam(dialect, subscriptions) },
  });
  for (const o of batch) {
    if (o.cancelled !== undefined || !changed.has(o.id)) continue;
    if (o.next.status === 'delivered') healthy.set(key(o), { store: o.storeId, subscription: o.subscriptionId });
    else if (o.next.status === 'dead') {
      if (healthy.delete(key(o))) yield healthyStatement(o.storeId, [o.subscriptionId]);
      yield* deadStatements(q, dialect, o, ctx, o.next.disable);
    }
  }
  const healthyByStore = new Map<number, number[]>();
  for (const h of healthy.values()) {
    const list = healthyByStore.get(h.store);
    if (list) list.push(h.subscription);
    else healthyByStore.set(h.store, [h.subscription]);
  }
  for (const [store, subscriptions] of healthyByStore) yield healthyStatement(store, subscriptions);
  // Last: the rollup rows are shared by every worker, so their locks are held for the shortest time.
  const hours = endpointHourParams(dialect, batch);
  if (hours) yield { query: q.hours, params: hours };
}

/**
 * A dead delivery: the subscription is disabled at once (`disable`), or its dead streak grows and may
 * disable it (not for a replay's delivery: a backlog replayed into a recovering endpoint must not
 * disable it again). A subscription disabled here is announced to its app in the same transaction.
 */
function* deadStatements(
  q: OutcomeQueries,
  dialect: Dialect,
  o: DeliveryOutcome,
  ctx: WriteContext,
  disable: string | undefined,
): Generator<Statement, void, StatementResult> {
  const target = { store: o.storeId, subscription: o.subscriptionId, now: ctx.now };
  const announce = (reason: string) =>
    disabledNoticeWrites(q, dialect, { storeId: o.storeId, subscriptionId: o.subscriptionId, reason, now: ctx.now });
  if (disable) {
    const done = yield { query: q.disable, params: { ...target, reason: disable } };
    if (done.changes > 0) yield* announce(disable);
    return;
  }
  if (o.cancelled === undefined && o.replay) return;
  yield { query: q.deadStreak, params: target };
  const reason = `${ctx.disableAfterDead} deliveries in a row failed every retry`;
  const done = yield { query: q.disableAtStreak, params: { ...target, reason, streak: ctx.disableAfterDead } };
  if (done.changes > 0) yield* announce(reason);
}
