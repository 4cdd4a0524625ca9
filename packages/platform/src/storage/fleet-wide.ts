// The few statements that read or write the rows of many stores on purpose. On a database split by
// store_id each of them goes to every part (under Citus: every shard), which is right for them and
// wrong for anything else, so they are named here, with the reason, and marked in their SQL: the
// routing check of the partitioned layout lets a marked statement through only if its name is in
// this list, and refuses every other statement that reads more than one partition of a store table.
import { type RawBuilder, sql } from 'kysely';

export const FLEET_WIDE = {
  'webhook-claim-load':
    'the worker loads what the deliveries it has just claimed need (signing secrets, installation, subscription); claimed deliveries ' +
    'belong to many stores, and each row is joined within its own store',
  'idempotency-prune': 'a periodic job deletes idempotency keys past their lifetime by age, whichever store they belong to',
  'credential-prune':
    'the maintenance round deletes codes, tokens and token families past their last use, in batches, whichever store they belong to; ' +
    'each row is joined within its own store',
  'app-installations':
    "copying an app's app-level webhook subscriptions into the stores it is installed in walks those stores in batches: one app, every " +
    'store, bounded by its installations',
  'app-subscription-copies':
    'an app-level webhook subscription has a copy in every store that installed the app: removing it walks those stores in batches, and ' +
    "the partner's list counts them",
  'operator-directory':
    "the operator's CLI lists stores, apps, private apps and installations of the whole platform, with counts per store or app; " +
    'run by hand',
  'master-key-check':
    'a node starting up checks its master key against any one sealed secret, of whichever store holds one; once per start',
  'master-key-reseal':
    're-sealing every secret under a new master key walks every private app of every store in id order; an operator runs it once per ' +
    'key change',
  'webhook-claim':
    'the worker claims the due deliveries of every store in the order they fall due (next_attempt_at), so no store waits behind ' +
    'another; under Citus a claim reads every shard',
  'webhook-claims-release':
    'a worker shutting down (or a node starting) releases the claims it holds, which belong to whichever stores its deliveries came from',
  'webhook-claims-renew': "a worker's heartbeat renews the lease on the deliveries it holds, of many stores, by id",
  'webhook-claims-defer':
    "a worker hands back, by id, the deliveries it holds whose owner's circuit breaker at their endpoint is open (a breaker per app or " +
    'private app in one store, at each origin), due again when it reopens; one hand-back holds the deliveries of several owners, so of ' +
    'many stores',
  'webhook-prune':
    'a periodic job deletes webhook attempts, finished deliveries and their events past the log retention by age, whichever store they ' +
    'belong to',
  'outbox-backlog': "the metrics endpoint counts the pending deliveries of the whole platform and the oldest one's age",
  'operator-delivery-log':
    "the operator's delivery log (`storegate webhooks deliveries`, --follow) lists the newest deliveries of every store, or of one app " +
    'across its stores; run by hand',
  'operator-redeliver': 'the operator redelivers one delivery named by its id alone, whichever store it belongs to; run by hand',
  'delivery-attempts-by-id':
    'the delivery logs (operator and partner) show the attempts of deliveries they have just listed across stores, by delivery id',
  'partner-delivery-log': "a partner's dashboard lists its app's deliveries across every store that installed it, newest first",
  'partner-subscription':
    "a partner acting on one of its app's subscriptions (enable, replay) names it by its id alone, in whichever store that installed " +
    'the app it is; at most one row',
  'operator-subscription':
    'the operator enables or replays one subscription named by its id alone, whichever store it belongs to; run by hand',
  'partner-disabled-subscriptions':
    "a partner's dashboard lists its apps' disabled subscriptions across every store that installed them, newest first, at most 50",
  'partner-endpoint-health':
    "a partner's endpoint health page finds the next attempt of each of its app's subscriptions, in every store that installed it: one " +
    'probe of the pending-delivery index per subscription',
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
