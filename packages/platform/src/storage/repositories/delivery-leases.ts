// The statements that move a worker's leases on delivery rows without recording an attempt: all
// claims freed at start-up (one process), one worker's freed as it stops, deferred (handed back
// until an endpoint's breaker reopens) and renewed by its heartbeat. A list of ids is one
// parameter (a JSON array on SQLite, an array on PostgreSQL), so each text is fixed whatever the
// number of rows and is prepared once.
import { type Kysely, sql } from 'kysely';
import { fleetWide } from '../fleet-wide.ts';
import { defineQuery } from '../prepared-query.ts';
import type { Database } from '../schema.ts';
import { type Dialect, rawQuery } from './raw-query.ts';

export function leaseQueries(k: Kysely<Database>, dialect: Dialect) {
  const ids = (p: (name: string) => string) =>
    dialect === 'sqlite' ? sql`id in (select value from json_each(${p('ids')}))` : sql`id = any(${p('ids')}::bigint[])`;
  const q = (build: (p: (name: string) => string) => ReturnType<typeof sql>) =>
    defineQuery((p) =>
      rawQuery(
        k,
        build((name) => p(name)),
      ),
    );
  return {
    releaseAll: q(
      () => sql`update webhook_deliveries set claimed_by = null, claimed_until = null
        where status = 'pending' and claimed_until is not null ${fleetWide('webhook-claims-release')}`,
    ),
    release: q(
      (p) => sql`update webhook_deliveries set claimed_by = null, claimed_until = null
        where claimed_by = ${p('worker')} and status = 'pending' ${fleetWide('webhook-claims-release')}`,
    ),
    defer: q(
      (p) => sql`update webhook_deliveries set claimed_by = null, claimed_until = null, next_attempt_at = ${p('until')},
          updated_at = ${p('now')}
        where ${ids(p)} and claimed_by = ${p('worker')} and status = 'pending' ${fleetWide('webhook-claims-defer')}`,
    ),
    renew: q(
      (p) => sql`update webhook_deliveries set claimed_until = ${p('leaseUntil')}
        where ${ids(p)} and claimed_by = ${p('worker')} and status = 'pending' ${fleetWide('webhook-claims-renew')}`,
    ),
  };
}
