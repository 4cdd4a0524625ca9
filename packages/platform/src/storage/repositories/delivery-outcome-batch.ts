// A batch of outcomes recorded by one statement on PostgreSQL, in the common case: the batch's
// deliveries belong to one store and none of them died. Its attempts are inserted, its delivery
// rows updated and their leases deleted (where the worker still holds them), the dead streaks of
// the subscriptions that delivered ended and the hourly endpoint rollup added to, each in a WITH
// clause of one statement:
// one round trip and one implicit transaction instead of a BEGIN, four statements and a COMMIT,
// during which a pooled connection was held and the rows' locks taken. The answer is the same as
// the statements of delivery-outcomes.ts (which still record every other batch): the streaks end
// for the subscriptions whose delivered rows this worker changed, read from the update's RETURNING.
import { type Kysely, sql } from 'kysely';
import { defineQuery } from '../prepared-query.ts';
import type { DeliveryOutcome } from '../ports/rows.ts';
import type { Database } from '../schema.ts';
import {
  attemptRows,
  deliveryRow,
  idRange,
  postgresAttemptsInsert,
  postgresDeliveriesUpdate,
  postgresLeaseRelease,
  rowsParams,
  type Statement,
  type WriteContext,
} from './delivery-outcomes.ts';
import { endpointHourRows, postgresHourParams, postgresHourUpsert } from './endpoint-hours.ts';
import { rawQuery } from './raw-query.ts';

export function outcomeBatchQuery(k: Kysely<Database>) {
  return defineQuery<Record<string, unknown>>((p) =>
    rawQuery(
      k,
      sql`with attempted as (${postgresAttemptsInsert(p, 'a')}),
        recorded as (${postgresDeliveriesUpdate(p, 'c')} returning d.id, d.subscription_id, d.status),
        ${postgresLeaseRelease(p, 'c')},
        healthy as (
          update webhook_subscriptions set dead_streak = 0
          where store_id = ${p('store')} and id in (select subscription_id from recorded where status = 'delivered') and dead_streak > 0
        ),
        counted as (${postgresHourUpsert(p, 'h')})
        select id from recorded`,
    ),
  );
}

/** The one statement that records `batch`, or undefined when it needs the statements of delivery-outcomes.ts. */
export function outcomeBatch(
  query: ReturnType<typeof outcomeBatchQuery>,
  batch: readonly DeliveryOutcome[],
  ctx: WriteContext,
): Statement | undefined {
  const store = batch[0]?.storeId;
  if (store === undefined || batch.some((o) => o.storeId !== store || (o.cancelled === undefined && o.next.status === 'dead')))
    return undefined;
  return {
    query,
    params: {
      ...rowsParams('postgres', attemptRows(batch), 7, 'a'),
      ...rowsParams('postgres', batch.map(deliveryRow), 6),
      ...idRange(batch),
      ...postgresHourParams(endpointHourRows(batch), 'h'),
      now: ctx.now,
      store,
      worker: ctx.worker,
    },
    reads: true,
  };
}
