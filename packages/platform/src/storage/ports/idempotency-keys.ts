// The port on idempotency keys of Admin API writes: reservations, stored responses and their pruning.
import type { IdempotencyKeyId, IdempotencyKeyRow, NewReservation, StoredResponse } from './rows.ts';

/**
 * Idempotency keys of Admin API writes. Every change is one statement guarded by the reservation's
 * token, so concurrent requests, and processes on other nodes, agree on who holds a key.
 */
export interface IdempotencyRepository {
  /** Inserts the reservation unless the key already has a row, whatever its state; true when inserted. */
  reserve(reservation: NewReservation): Promise<boolean>;
  find(id: IdempotencyKeyId): Promise<IdempotencyKeyRow | undefined>;
  /**
   * Replaces the key's row with a new reservation, only while it still carries `seenToken` and is
   * either abandoned (no response and `locked_until` at or before `now`) or created at or before
   * `expiredAt`. True when replaced.
   */
  replace(reservation: NewReservation, seenToken: string, expiredAt: number): Promise<boolean>;
  /** Stores the response of the reservation holding `token` while it runs; false when the key is no longer its own. */
  complete(id: IdempotencyKeyId, token: string, response: StoredResponse): Promise<boolean>;
  /** Deletes the reservation holding `token` while it runs (no response stored), freeing the key. */
  release(id: IdempotencyKeyId, token: string): Promise<void>;
  /** Deletes every key created before `cutoff`; returns how many. */
  prune(cutoff: number): Promise<number>;
}
