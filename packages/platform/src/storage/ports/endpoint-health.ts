// The port on endpoint health: the hourly rollup of attempts per owner and endpoint (written with
// the outcomes, see repositories/endpoint-hours.ts), the circuit breakers' states as the workers
// change them, the next attempt due per subscription address, and the pruning of old figures.
import type { Selectable } from 'kysely';
import type { AttemptOutcomeKind } from '../../domain/endpoint-health.ts';
import type { Database } from '../schema.ts';

export type EndpointOwnerKind = 'app' | 'private';

/** Whose attempt it was and where it went: what an outcome adds to the rollup. */
export interface EndpointKey {
  ownerKind: EndpointOwnerKind;
  ownerId: number;
  /** Scheme, host and port of the address. */
  origin: string;
}

/** One endpoint's hour: attempts by outcome and the histogram of answers' latencies. */
export interface EndpointHourRow {
  origin: string;
  /** Start of the UTC hour, ms. */
  hour: number;
  counts: Record<AttemptOutcomeKind, number>;
  /** Counts per bucket of `LATENCY_BOUNDS`. */
  latency: number[];
}

export type StoredBreakerState = 'closed' | 'open' | 'half-open';

/** A change of an owner's breaker at an endpoint in one store. */
export interface BreakerChangeRecord extends EndpointKey {
  storeId: number;
  state: StoredBreakerState;
  /** Failures in a row when it opened (0 otherwise). */
  failures: number;
  /** End of the cool-down while open; null otherwise. */
  reopenAt: number | null;
  changedAt: number;
}

type Breakers = Selectable<Database['webhook_endpoint_breakers']>;

/** A breaker as stored, with its store's name; `state` holds only the states a breaker has. */
export interface BreakerRow extends Pick<Breakers, 'origin' | 'store_id' | 'failures' | 'reopen_at' | 'changed_at'> {
  store_name: Selectable<Database['stores']>['name'];
  state: StoredBreakerState;
}

export interface EndpointHealthRepository {
  /** Hours of an app's endpoints from `since` on, oldest first. */
  hours(appId: number, since: number): Promise<EndpointHourRow[]>;
  /** The breakers of an app recorded in any store (at most `limit`, latest change first). */
  breakers(appId: number, limit: number): Promise<BreakerRow[]>;
  /**
   * Per address of the app's subscriptions, and its privacy address: the earliest next attempt of
   * a pending delivery (null when none is pending).
   */
  nextAttempts(appId: number): Promise<{ address: string; next_attempt_at: number | null }[]>;
  /**
   * Writes breaker changes, each over the row of its owner, store and endpoint unless that row
   * holds a later change already (workers' writes may land out of order).
   */
  recordBreakerChanges(changes: readonly BreakerChangeRecord[]): Promise<void>;
  /** Deletes rollup hours before `before` and breaker rows unchanged since; returns the rows deleted. */
  prune(before: number): Promise<number>;
}
