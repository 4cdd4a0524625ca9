// The statement that puts off one owner's backlog at an endpoint whose circuit breaker is open:
// the pending deliveries of the given subscriptions in one store that fall due before the breaker
// reopens and that no worker holds are made due when it reopens, without an attempt counted.
// Moving them out of the due range at once is what keeps them out of every claim until then: left
// due, each claim would bring a batch of them only for the worker to hand it back, while the other
// owners' newer deliveries waited behind them.
//
// It names its store (a privacy delivery's subscription id is its app's id negated, the same in
// every store the app is installed in, and the app's other stores are other owners) and reads the
// backlog through webhook_deliveries_backlog (store_id, subscription_id, next_attempt_at), pending
// rows only, so it touches the rows it moves and no others; at most `limit` of them per statement,
// which bounds how long one write holds SQLite or the rows' locks. A delivery is held while its
// lease (webhook_delivery_leases) has not lapsed. On PostgreSQL rows a claim has locked are skipped
// (the claim owns them). One SQL text per dialect whatever the number of subscriptions (a JSON
// array on SQLite, an array on PostgreSQL).
import { type Kysely, sql } from 'kysely';
import { defineQuery } from '../prepared-query.ts';
import type { Database } from '../schema.ts';
import { type Dialect, listParam, rawQuery } from './raw-query.ts';

export interface BacklogParams {
  storeId: number;
  subscriptionIds: readonly number[];
  /** When the breaker was made: a subscription enabled again since is no longer held by it. */
  breakerMadeAt: number;
  /** When the breaker reopens: what falls due before then is made due then. */
  until: number;
  now: number;
  limit: number;
}

export function backlogQuery(k: Kysely<Database>, dialect: Dialect) {
  if (dialect === 'sqlite') {
    // The moved rows' lapsed leases are deleted by `backlogReleaseQuery`, in the same transaction.
    return defineQuery((p) =>
      rawQuery(
        k,
        sql`update webhook_deliveries set next_attempt_at = ${p('until')}, updated_at = ${p('now')}
          where id in (
            select d.id from webhook_deliveries d
            where d.store_id = ${p('store')} and d.subscription_id in (select value from json_each(${p('subscriptions')}))
              and d.status = 'pending' and d.next_attempt_at < ${p('until')} and not exists (${liveLease(p('store'), p('now'))})
              and not exists (${enabledSince(p('store'), p('madeAt'))})
            limit ${p('limit')}
          )
          returning id`,
      ),
    );
  }
  // The rows are picked once, in a materialized CTE: as an `id in (…)` subquery the planner may scan
  // it again for every row of the outer side, and a limit without an order can then pick other rows
  // on each pass and move more than `limit`. They are then named as `id = any(array)`, which the
  // planner answers from the primary key; joined to the CTE it may hash the whole table instead.
  // A lapsed lease on a moved row is deleted with it (its holder's late outcome must not count),
  // after the row is locked: the order a claim takes them in.
  return defineQuery((p) =>
    rawQuery(
      k,
      sql`with picked as materialized (
          select d.id from webhook_deliveries d
          where d.store_id = ${p('store')} and d.subscription_id = any(${p('subscriptions')}::bigint[]) and d.status = 'pending'
            and d.next_attempt_at < ${p('until')} and not exists (${liveLease(p('store'), p('now'))})
            and not exists (${enabledSince(p('store'), p('madeAt'))})
          limit ${p('limit')}
          for update of d skip locked
        ),
        freed as (
          delete from webhook_delivery_leases
          where store_id = ${p('store')} and delivery_id = any(array(select id from picked)) and leased_until < ${p('now')}
        )
        update webhook_deliveries set next_attempt_at = ${p('until')}, updated_at = ${p('now')}
        where store_id = ${p('store')} and id = any(array(select id from picked))`,
    ),
  );
}

/** SQLite: the lapsed leases of the deliveries a deferral moved (`ids`), deleted after it. */
export function backlogReleaseQuery(k: Kysely<Database>) {
  return defineQuery((p) =>
    rawQuery(
      k,
      sql`delete from webhook_delivery_leases
        where delivery_id in (select value from json_each(${p('ids')})) and leased_until < ${p('now')}`,
    ),
  );
}

/** A worker holds the delivery: a lease that has not lapsed at `now`. */
function liveLease(store: unknown, now: unknown) {
  return sql`select 1 from webhook_delivery_leases l
    where l.store_id = ${store} and l.delivery_id = d.id and l.leased_until >= ${now}`;
}

/**
 * The delivery's subscription was enabled again after the breaker was made. The dispatcher forgets
 * such a breaker when the subscription's next job reaches it; a deferral asked for before the
 * enabling but written after it must not put that subscription's deliveries off either.
 */
function enabledSince(store: unknown, madeAt: unknown) {
  return sql`select 1 from webhook_subscriptions s
    where s.store_id = ${store} and s.id = d.subscription_id and s.enabled_at > ${madeAt}`;
}

export function backlogParams(dialect: Dialect, b: BacklogParams): Record<string, unknown> {
  const { storeId: store, until, now, limit, breakerMadeAt: madeAt } = b;
  return { store, subscriptions: listParam(dialect, b.subscriptionIds), madeAt, until, now, limit };
}
