// The few statements that read or write the rows of many stores on purpose. On a database split by
// store_id each of them goes to every part (under Citus: every shard), which is right for them and
// wrong for anything else, so they are named here, with the reason, and marked in their SQL: the
// routing check of the partitioned layout lets a marked statement through only if its name is in
// this list, and refuses every other statement that reads more than one partition of a store table.
import { type RawBuilder, sql } from 'kysely';

export const FLEET_WIDE = {
  'webhook-claim-load':
    'the worker loads what the deliveries it has just claimed need (signing secrets, installation, subscription); claimed deliveries belong to many stores, and each row is joined within its own store',
  'idempotency-prune': 'a periodic job deletes idempotency keys past their lifetime by age, whichever store they belong to',
  'app-installations':
    "applying an app's configuration file walks the stores the app is installed in: one app, every store, bounded by its installations",
  'operator-directory':
    "the operator's CLI lists stores, apps, private apps and installations of the whole platform, with counts per store or app; run by hand",
  'master-key-check':
    'a node starting up checks its master key against any one sealed secret, of whichever store holds one; once per start',
  'master-key-reseal':
    're-sealing every secret under a new master key walks every private app of every store in id order; an operator runs it once per key change',
} as const;

export type FleetWideName = keyof typeof FLEET_WIDE;

/** A comment naming a fleet-wide statement, appended to its SQL. */
export function fleetWide(name: FleetWideName): RawBuilder<unknown> {
  return sql.raw(`/* fleet-wide: ${name} */`);
}

/** The fleet-wide name a statement is marked with, if any. */
export function fleetWideName(statement: string): string | undefined {
  return /\/\* fleet-wide: ([a-z-]+) \*\//.exec(statement)?.[1];
}
