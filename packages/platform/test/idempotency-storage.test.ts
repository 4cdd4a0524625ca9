// The contract of IdempotencyRepository on SQLite and PostgreSQL, through the Storage port only:
// one reservation per (store, owner, key), compare-and-set takeovers of abandoned or expired keys,
// responses stored only by the reservation that holds the key (also inside a transaction that then
// rolls back), release, pruning.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdempotencyKeyId, NewReservation, StoredResponse } from '../src/storage/ports/rows.ts';
import type { Storage } from '../src/storage/ports/storage.ts';
import { openStorage } from '../src/storage/sql-storage.ts';
import { DIALECTS, freshPostgresUrl } from './harness.ts';

const NOW = Date.UTC(2026, 10, 24);
const LEASE = 60_000;
const DAY = 86_400_000;
const ANSWER: StoredResponse = { status: 201, body: '{"data":{"id":"1"}}', headers: { 'content-type': 'application/json; charset=utf-8' } };

let seq = 0;

describe.each(DIALECTS)('IdempotencyRepository on %s', (dialect) => {
  let s: Storage;
  let drop: (() => Promise<void>) | undefined;
  let storeId: number;
  let otherStoreId: number;

  const id = (key = `k-${++seq}`, owner = 'app:1', store = storeId): IdempotencyKeyId => ({ storeId: store, owner, key });
  const reservation = (at: IdempotencyKeyId, token: string, now = NOW, fingerprint = 'fp-1'): NewReservation => ({
    ...at,
    fingerprint,
    token,
    requestId: `req-${token}`,
    now,
    lockedUntil: now + LEASE,
  });

  beforeAll(async () => {
    if (dialect === 'postgres') {
      const schema = await freshPostgresUrl();
      drop = () => schema.drop();
      s = openStorage({ dialect: 'postgres', url: schema.url }, { poolSize: 10 });
    } else {
      s = openStorage({ dialect: 'sqlite', path: ':memory:' });
    }
    await s.migrate();
    const merchant = await s.accounts.insertMerchant({ email: 'idem@merchant.test', passwordHash: 'h', now: NOW });
    storeId = (await s.accounts.insertStore({ name: 'idem-store', ownerMerchantId: merchant.id, now: NOW })).id;
    otherStoreId = (await s.accounts.insertStore({ name: 'idem-other', ownerMerchantId: merchant.id, now: NOW })).id;
  });
  afterAll(async () => {
    await s.close();
    await drop?.();
  });

  it('reserves a key once per store and owner; find reads the reservation back', async () => {
    const key = id();
    expect(await s.idempotency.reserve(reservation(key, 't1'))).toBe(true);
    expect(await s.idempotency.reserve(reservation(key, 't2', NOW + 1, 'fp-2'))).toBe(false);
    expect(await s.idempotency.find(key)).toEqual({
      fingerprint: 'fp-1',
      token: 't1',
      created_at: NOW,
      locked_until: NOW + LEASE,
      request_id: 'req-t1',
      response: null,
    });
    expect(await s.idempotency.reserve(reservation({ ...key, owner: 'private:1' }, 't3'))).toBe(true);
    expect(await s.idempotency.reserve(reservation({ ...key, storeId: otherStoreId }, 't4'))).toBe(true);
    expect(await s.idempotency.find(id())).toBeUndefined();
  });

  it('simultaneous reservations of one key: exactly one wins', async () => {
    const key = id();
    const wins = await Promise.all(Array.from({ length: 8 }, (_, i) => s.idempotency.reserve(reservation(key, `race-${i}`))));
    expect(wins.filter(Boolean)).toHaveLength(1);
    expect((await s.idempotency.find(key))!.token).toBe(`race-${wins.indexOf(true)}`);
  });

  it('stores a response only for the token holding the key, only once', async () => {
    const key = id();
    await s.idempotency.reserve(reservation(key, 'holder'));
    expect(await s.idempotency.complete(key, 'intruder', ANSWER)).toBe(false);
    expect(await s.idempotency.complete(key, 'holder', ANSWER)).toBe(true);
    expect(await s.idempotency.complete(key, 'holder', { ...ANSWER, status: 500 })).toBe(false);
    expect((await s.idempotency.find(key))!.response).toEqual(ANSWER);
  });

  it('a response stored inside a transaction that rolls back is gone with it', async () => {
    const key = id();
    await s.idempotency.reserve(reservation(key, 'tx'));
    await expect(
      s.transaction(async (tx) => {
        expect(await tx.idempotency.complete(key, 'tx', ANSWER)).toBe(true);
        throw new Error('write failed');
      }),
    ).rejects.toThrow('write failed');
    expect((await s.idempotency.find(key))!.response).toBeNull();
    await s.transaction(async (tx) => {
      expect(await tx.idempotency.complete(key, 'tx', ANSWER)).toBe(true);
    });
    expect((await s.idempotency.find(key))!.response).toEqual(ANSWER);
  });

  it('replaces a reservation only when abandoned or expired, and only the version that was read', async () => {
    const running = id();
    await s.idempotency.reserve(reservation(running, 'r1'));
    const expiredAt = (now: number) => now - DAY;
    // Still within its lease: not replaced.
    expect(await s.idempotency.replace(reservation(running, 'r2', NOW + LEASE - 1), 'r1', expiredAt(NOW + LEASE - 1))).toBe(false);
    // Lease over: replaced, once; a second taker that read the old token loses.
    expect(await s.idempotency.replace(reservation(running, 'r2', NOW + LEASE), 'r1', expiredAt(NOW + LEASE))).toBe(true);
    expect(await s.idempotency.replace(reservation(running, 'r3', NOW + LEASE), 'r1', expiredAt(NOW + LEASE))).toBe(false);
    expect(await s.idempotency.find(running)).toMatchObject({ token: 'r2', created_at: NOW + LEASE, response: null });
    // The old holder can no longer store its answer.
    expect(await s.idempotency.complete(running, 'r1', ANSWER)).toBe(false);

    const done = id();
    await s.idempotency.reserve(reservation(done, 'd1'));
    await s.idempotency.complete(done, 'd1', ANSWER);
    // Answered: its lease does not matter, only its age.
    const later = NOW + DAY - 1;
    expect(await s.idempotency.replace(reservation(done, 'd2', later, 'fp-9'), 'd1', expiredAt(later))).toBe(false);
    expect(await s.idempotency.replace(reservation(done, 'd2', NOW + DAY, 'fp-9'), 'd1', expiredAt(NOW + DAY))).toBe(true);
    expect(await s.idempotency.find(done)).toMatchObject({ token: 'd2', fingerprint: 'fp-9', response: null });
  });

  it('release frees a running reservation of its own token only; never an answered one', async () => {
    const key = id();
    await s.idempotency.reserve(reservation(key, 'mine'));
    await s.idempotency.release(key, 'not-mine');
    expect(await s.idempotency.find(key)).toBeDefined();
    await s.idempotency.release(key, 'mine');
    expect(await s.idempotency.find(key)).toBeUndefined();
    const answered = id();
    await s.idempotency.reserve(reservation(answered, 'a'));
    await s.idempotency.complete(answered, 'a', ANSWER);
    await s.idempotency.release(answered, 'a');
    expect((await s.idempotency.find(answered))!.response).toEqual(ANSWER);
  });

  it('prune deletes keys created before the cutoff, whatever their state', async () => {
    const base = NOW + 100 * DAY;
    const old = id();
    const oldRunning = id();
    const fresh = id();
    await s.idempotency.reserve(reservation(old, 'o', base - 2));
    await s.idempotency.complete(old, 'o', ANSWER);
    await s.idempotency.reserve(reservation(oldRunning, 'or', base - 1));
    await s.idempotency.reserve(reservation(fresh, 'f', base));
    // Everything else in this database was created long before `base`.
    expect(await s.idempotency.prune(base)).toBeGreaterThanOrEqual(2);
    expect(await s.idempotency.find(old)).toBeUndefined();
    expect(await s.idempotency.find(oldRunning)).toBeUndefined();
    expect(await s.idempotency.find(fresh)).toBeDefined();
  });
});
