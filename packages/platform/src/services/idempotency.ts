// Idempotent Admin API writes. A request with an Idempotency-Key first reserves the key (one row per
// store, caller and key); the write then stores its response in that row inside its own
// transaction, so either both the write and its answer commit or neither does, and a retry can
// never perform the write a second time. Answers the handler produced without writing anything
// (validation, not found) are stored after the fact; a server error frees the key.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../domain/clock.ts';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from '../domain/errors.ts';
import { IDEMPOTENCY_WINDOW_MS, RESERVATION_LEASE_MS } from '../domain/idempotency.ts';
import type { IdempotencyRepository } from '../storage/ports/idempotency-keys.ts';
import type { Repositories } from '../storage/ports/repositories.ts';
import type { IdempotencyKeyId, StoredResponse } from '../storage/ports/rows.ts';

export type { StoredResponse };

/** A key held by one running request. */
export interface Reservation {
  id: IdempotencyKeyId;
  token: string;
}

/** What a request with a key does: run (it holds the key now) or answer with the first response. */
export type Admission = { kind: 'run'; reservation: Reservation } | { kind: 'replay'; response: StoredResponse; requestId: string };

/** A step a service runs inside its write transaction, after the write, with the write's result. */
export type WriteStep<T> = (tx: Repositories, result: T) => Promise<void>;

export class IdempotentRequests {
  constructor(
    private readonly keys: IdempotencyRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * Reserves `id` for a request with `fingerprint` writing `resource`, or returns the response
   * stored for the same request. Throws IdempotencyKeyReusedError (another request used the key)
   * or IdempotencyKeyInUseError (the first request is still running).
   */
  async admit(id: IdempotencyKeyId, fingerprint: string, requestId: string, resource?: string): Promise<Admission> {
    // A few rounds at most: each one either decides, or lost a race that changed the row and reads
    // it again.
    for (let round = 0; round < 3; round++) {
      const now = this.clock();
      const reservation = { ...id, resource, fingerprint, token: randomUUID(), requestId, now, lockedUntil: now + RESERVATION_LEASE_MS };
      if (await this.keys.reserve(reservation)) return { kind: 'run', reservation: { id, token: reservation.token } };
      const row = await this.keys.find(id);
      if (!row) continue;
      const expiredAt = now - IDEMPOTENCY_WINDOW_MS;
      // An expired key, or one whose request died before answering, is free for this request;
      // the window is checked here, not left to pruning.
      if (row.created_at <= expiredAt || (row.response === null && row.locked_until <= now)) {
        if (await this.keys.replace(reservation, row.token, expiredAt))
          return { kind: 'run', reservation: { id, token: reservation.token } };
        continue;
      }
      if (row.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError();
      if (row.response === null) throw new IdempotencyKeyInUseError();
      return { kind: 'replay', response: row.response, requestId: row.request_id };
    }
    throw new IdempotencyKeyInUseError();
  }

  /**
   * The step that stores `render(result)` as the reservation's response inside the write's
   * transaction. When the key is no longer this reservation's (it ran past its lease and a retry
   * took the key over), the step throws and the write rolls back: the retry performs it instead.
   */
  recordIn<T>(reservation: Reservation, render: (result: T) => StoredResponse): WriteStep<T> {
    return async (tx, result) => {
      if (!(await tx.idempotency.complete(reservation.id, reservation.token, render(result)))) throw new IdempotencyKeyInUseError();
    };
  }

  /** Stores a response that needed no write of its own (a refusal by the handler). */
  async record(reservation: Reservation, response: StoredResponse): Promise<void> {
    await this.keys.complete(reservation.id, reservation.token, response);
  }

  /** Frees the key after a server error: the request may be sent again with the same key. */
  release(reservation: Reservation): Promise<void> {
    return this.keys.release(reservation.id, reservation.token);
  }

  /** Deletes keys older than the window. */
  prune(): Promise<number> {
    return this.keys.prune(this.clock() - IDEMPOTENCY_WINDOW_MS);
  }
}
