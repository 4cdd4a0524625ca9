// The worker's port on the delivery table, apart from the repositories the services use.
import type { ClaimedDelivery, DeliveryOutcome } from './rows.ts';

/** The worker's side of the delivery table: claims under a lease and batched outcome writes. */
export interface DeliveryQueue {
  /** Frees every claim at once (a single-process database whose previous worker died). */
  releaseAllClaims(): Promise<void>;
  /**
   * Ends every lease `worker` still holds (a worker that stops hands its deliveries on at once
   * instead of letting them wait for their lease to lapse); returns how many.
   */
  releaseClaims(worker: string): Promise<number>;
  /**
   * Frees the given pending deliveries `worker` still holds and makes them due at `until`, without
   * counting an attempt (they were not sent: their owner's circuit breaker at their endpoint is
   * open); returns how many.
   */
  deferClaims(input: { worker: string; ids: readonly number[]; until: number; now: number }): Promise<number>;
  /**
   * Puts off an owner's backlog at an endpoint whose circuit breaker is open: at most `limit` of the
   * pending deliveries of `subscriptionIds` in store `storeId` that fall due before `until` and
   * that no worker holds (no claim, or one whose lease ended before `now`) are made due at `until`,
   * without counting an attempt; returns how many (fewer than `limit`: it found no more). A
   * subscription enabled again after `breakerMadeAt` is left out: the breaker no longer holds it,
   * however late the deferral runs.
   */
  deferBacklog(input: {
    storeId: number;
    subscriptionIds: readonly number[];
    breakerMadeAt: number;
    until: number;
    now: number;
    limit: number;
  }): Promise<number>;
  /**
   * Moves the lease of the given deliveries to `leaseUntil` where `worker` still holds them (the
   * heartbeat of a worker still sending them); returns how many it renewed.
   */
  renewClaims(input: { worker: string; ids: readonly number[]; leaseUntil: number }): Promise<number>;
  /** Whether claims may be released at start-up (only one process can hold them). */
  readonly singleProcess: boolean;
  /**
   * Claims up to `limit` due deliveries for `worker` until `leaseUntil`, leaving out the given
   * subscriptions, and loads what sending them needs, oldest first.
   */
  claim(input: {
    worker: string;
    now: number;
    leaseUntil: number;
    limit: number;
    excludeSubscriptions: readonly number[];
  }): Promise<ClaimedDelivery[]>;
  /**
   * Records a batch of outcomes in one transaction. Delivery rows change only while `worker`
   * still holds them; subscription health (dead streaks, disabling) follows.
   */
  recordOutcomes(outcomes: readonly DeliveryOutcome[], ctx: { worker: string; now: number; disableAfterDead: number }): Promise<void>;
}
