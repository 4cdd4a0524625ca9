// Idempotency keys: reservations, their recorded responses, and the compare-and-set steps that let
// exactly one request hold a key at a time. Each method is one statement, the same on both
// databases; on PostgreSQL a guarded update that meets a row another transaction is changing waits
// for it and then checks its conditions again on what that transaction committed.
import type { IdempotencyRepository } from '../ports/idempotency-keys.ts';
import type { IdempotencyKeyId, IdempotencyKeyRow, NewReservation, StoredResponse } from '../ports/rows.ts';
import type { Executor } from './executor.ts';
import { fleetWide } from '../fleet-wide.ts';

export class SqlIdempotencyRepository implements IdempotencyRepository {
  constructor(private readonly x: Executor) {}

  private row(r: NewReservation) {
    return {
      store_id: r.storeId,
      owner: r.owner,
      idem_key: r.key,
      fingerprint: r.fingerprint,
      token: r.token,
      created_at: r.now,
      locked_until: r.lockedUntil,
      status_code: null,
      response_body: null,
      response_headers: null,
      request_id: r.requestId,
      resource: r.resource ?? null,
    };
  }

  async reserve(r: NewReservation): Promise<boolean> {
    const res = await this.x.k
      .insertInto('idempotency_keys')
      .values(this.row(r))
      .onConflict((oc) => oc.columns(['store_id', 'owner', 'idem_key']).doNothing())
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async find(id: IdempotencyKeyId): Promise<IdempotencyKeyRow | undefined> {
    const r = await this.x.k
      .selectFrom('idempotency_keys')
      .select(['fingerprint', 'token', 'created_at', 'locked_until', 'request_id', 'status_code', 'response_body', 'response_headers'])
      .where('store_id', '=', id.storeId)
      .where('owner', '=', id.owner)
      .where('idem_key', '=', id.key)
      .executeTakeFirst();
    if (!r) return undefined;
    return {
      fingerprint: r.fingerprint,
      token: r.token,
      created_at: Number(r.created_at),
      locked_until: Number(r.locked_until),
      request_id: r.request_id,
      response:
        r.status_code === null
          ? null
          : {
              status: Number(r.status_code),
              body: r.response_body ?? '',
              headers: JSON.parse(r.response_headers ?? '{}') as Record<string, string>,
            },
    };
  }

  async replace(r: NewReservation, seenToken: string, expiredAt: number): Promise<boolean> {
    const { store_id: _s, owner: _o, idem_key: _k, ...values } = this.row(r);
    const res = await this.x.k
      .updateTable('idempotency_keys')
      .set(values)
      .where('store_id', '=', r.storeId)
      .where('owner', '=', r.owner)
      .where('idem_key', '=', r.key)
      .where('token', '=', seenToken)
      .where((eb) => eb.or([eb.and([eb('status_code', 'is', null), eb('locked_until', '<=', r.now)]), eb('created_at', '<=', expiredAt)]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async complete(id: IdempotencyKeyId, token: string, response: StoredResponse): Promise<boolean> {
    const res = await this.x.k
      .updateTable('idempotency_keys')
      .set({ status_code: response.status, response_body: response.body, response_headers: JSON.stringify(response.headers) })
      .where('store_id', '=', id.storeId)
      .where('owner', '=', id.owner)
      .where('idem_key', '=', id.key)
      .where('token', '=', token)
      .where('status_code', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async release(id: IdempotencyKeyId, token: string): Promise<void> {
    await this.x.k
      .deleteFrom('idempotency_keys')
      .where('store_id', '=', id.storeId)
      .where('owner', '=', id.owner)
      .where('idem_key', '=', id.key)
      .where('token', '=', token)
      .where('status_code', 'is', null)
      .execute();
  }

  async prune(cutoff: number): Promise<number> {
    const res = await this.x.k
      .deleteFrom('idempotency_keys')
      .where('created_at', '<', cutoff)
      .modifyEnd(fleetWide('idempotency-prune'))
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
