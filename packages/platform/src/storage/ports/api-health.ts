// The port on API health: calls to deprecated versions counted per caller, the marks that a caller
// was told of a sunset, and the operator's brown-out windows. Usage rows are added to, never
// overwritten, so nodes flushing at the same moment add up.
import type { Selectable } from 'kysely';
import type { ApiCallerKind } from '../../domain/api-health.ts';
import type { Database } from '../schema.ts';

type Usage = Selectable<Database['api_version_usage']>;

/** Calls one node counted since its last flush, for one caller, store, version and route. */
export interface ApiUsageDelta {
  callerKind: ApiCallerKind;
  callerId: number;
  storeId: number;
  version: string;
  route: string;
  calls: number;
  firstSeenAt: number;
  lastSeenAt: number;
}

/** Usage summed over a caller's stores. */
export interface ApiUsageRow extends Pick<Usage, 'caller_id' | 'version' | 'route' | 'calls' | 'first_seen_at' | 'last_seen_at'> {
  caller_kind: ApiCallerKind;
}

/** A caller of a version and one store it called from, with its latest call there. */
export interface RecentCaller extends Pick<Usage, 'caller_id' | 'store_id' | 'last_seen_at'> {
  caller_kind: ApiCallerKind;
}

export type BrownoutRow = Pick<Selectable<Database['api_version_brownouts']>, 'id' | 'version' | 'starts_at' | 'ends_at' | 'created_at'>;

export interface ApiHealthRepository {
  /** Adds each delta to its row (calls summed, first and last seen widened); one statement per batch. */
  addUsage(deltas: readonly ApiUsageDelta[]): Promise<void>;
  /** The usage of these callers of one kind, summed over their stores; every caller when `callerIds` is undefined. */
  usage(callerKind: ApiCallerKind | undefined, callerIds?: readonly number[]): Promise<ApiUsageRow[]>;
  /** Callers of `version` whose latest call (per store) is at or after `since`, and who were not yet told of it. */
  callersToNotify(version: string, since: number): Promise<RecentCaller[]>;
  /** Marks a caller told of `version`; false when it already was (nothing changed). */
  markNotified(input: { callerKind: ApiCallerKind; callerId: number; version: string; storeId: number; now: number }): Promise<boolean>;
  /** When each version's notice went to this caller. */
  notices(callerKind: ApiCallerKind, callerId: number): Promise<{ version: string; notified_at: number }[]>;
  /** Every brown-out window, by version then start. */
  brownouts(): Promise<BrownoutRow[]>;
  insertBrownout(input: { version: string; startsAt: number; endsAt: number; now: number }): Promise<BrownoutRow>;
  /** false when there was none with that id. */
  deleteBrownout(id: number): Promise<boolean>;
}
