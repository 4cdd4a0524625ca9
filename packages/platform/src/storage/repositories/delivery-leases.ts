// The statements that move a worker's leases (webhook_delivery_leases) without recording an
// attempt: all of them ended at start-up (one process), one worker's ended as it stops, some handed
// back (due again when an endpoint's breaker reopens) and some renewed by its heartbeat. A list of
// ids is one parameter (a JSON array on SQLite, an array on PostgreSQL), so each text is fixed
// whatever the number of rows and is prepared once.
//
// Ending or renewing a lease writes the lease alone. A hand-back also moves the delivery's due time,
// so it writes the delivery row as well, only where the worker still holds the lease, then deletes
// the lease: on PostgreSQL in one statement (its count of moved rows as its answer), delivery rows
// before leases as a claim takes them (so the two never wait for each other in a cycle); on SQLite
// in two statements the queue runs in one transaction (`deferRelease` after `defer`).
import { type Kysely, sql } from 'kysely';
import { fleetWide } from '../fleet-wide.ts';
import { defineQuery } from '../prepared-query.ts';
import type { Database } from '../schema.ts';
import { type Dialect, rawQuery } from './raw-query.ts';

type Ref = (name: string) => string;

export function leaseQueries(k: Kysely<Database>, dialect: Dialect) {
  const ids = (p: Ref, column: string) =>
    dialect === 'sqlite'
      ? sql`${sql.ref(column)} in (select value from json_each(${p('ids')}))`
      : sql`${sql.ref(column)} = any(${p('ids')}::bigint[])`;
  const q = (build: (p: Ref) => ReturnType<typeof sql>) =>
    defineQuery((p) =>
      rawQuery(
        k,
        build((name) => p(name)),
      ),
    );
  const sqlite = dialect === 'sqlite';
  // SQLite: the rows moved (the queue deletes the leases next, in the same transaction).
  const defer = q(
    (p) => sql`update webhook_deliveries set next_attempt_at = ${p('until')}, updated_at = ${p('now')}
      where id in (select delivery_id from webhook_delivery_leases where ${ids(p, 'delivery_id')} and worker = ${p('worker')})
        and status = 'pending' ${fleetWide('webhook-claims-defer')}`,
  );
  // PostgreSQL: the rows moved, then the leases deleted, answering how many rows moved.
  const deferMoved = defineQuery<{ n: number }>((p) =>
    rawQuery(
      k,
      sql<{ n: number }>`with moved as (
          update webhook_deliveries d set next_attempt_at = ${p('until')}, updated_at = ${p('now')}
          where ${ids(p, 'id')} and status = 'pending' and exists (select 1 from webhook_delivery_leases l
            where l.delivery_id = d.id and l.store_id = d.store_id and l.worker = ${p('worker')})
          returning id
        ),
        released as (
          delete from webhook_delivery_leases
          where ${ids(p, 'delivery_id')} and worker = ${p('worker')} and (select count(*) from moved) >= 0
        )
        select count(*)::int as n from moved ${fleetWide('webhook-claims-defer')}`,
    ),
  );
  return {
    releaseAll: q(() => sql`delete from webhook_delivery_leases ${fleetWide('webhook-claims-release')}`),
    release: q((p) => sql`delete from webhook_delivery_leases where worker = ${p('worker')} ${fleetWide('webhook-claims-release')}`),
    defer: sqlite ? defer : undefined,
    deferMoved: sqlite ? undefined : deferMoved,
    /** SQLite: the leases a hand-back ended, deleted after its update (PostgreSQL deletes them in it). */
    deferRelease: sqlite
      ? q(
          (p) => sql`delete from webhook_delivery_leases where ${ids(p, 'delivery_id')} and worker = ${p('worker')}
              ${fleetWide('webhook-claims-defer')}`,
        )
      : undefined,
    renew: q(
      (p) => sql`update webhook_delivery_leases set leased_until = ${p('leaseUntil')}
        where ${ids(p, 'delivery_id')} and worker = ${p('worker')} ${fleetWide('webhook-claims-renew')}`,
    ),
  };
}
