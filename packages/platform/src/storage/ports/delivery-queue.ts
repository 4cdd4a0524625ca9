// The worker's port on the delivery table, apart from the repositories the services use.
import type { ClaimedDelivery, DeliveryOutcome } from './rows.ts';

/** The worker's side of the delivery table: claims under a lease and batched outcome writes. */
export interface DeliveryQueue {
  /** Frees every claim at once (a single-process database whose previous worker died). */
  releaseAllClaims(): Promise<void>;
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
