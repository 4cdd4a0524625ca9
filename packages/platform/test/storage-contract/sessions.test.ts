// The storage contract for the small ports around signing in: sessions, login throttles and one-time reveals (a secret
// shown once, to one session).
// Every target (storage-targets.ts) gets a database of its own for this file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Storage } from '../../src/storage/ports/storage.ts';
import { storageTargets } from '../storage-targets.ts';
import { NOW, MINUTE, HOUR, DAY, tag, world, contractDatabase } from './support.ts';

describe.each(storageTargets('contract-sessions'))('storage contract: $name', (target) => {
  const db = contractDatabase(target);
  let s: Storage;

  beforeAll(async () => {
    s = await db.open();
  });

  afterAll(() => db.close());

  describe('sessions', () => {
    it('insert, find, delete', async () => {
      const w = await world(s);
      const merchantHash = tag('session-hash');
      const partnerHash = tag('session-hash');
      await s.sessions.insertSession({
        idHash: merchantHash,
        kind: 'merchant',
        subjectId: w.merchantId,
        storeId: w.store.id,
        expiresAt: NOW + HOUR,
        now: NOW,
      });
      await s.sessions.insertSession({
        idHash: partnerHash,
        kind: 'partner',
        subjectId: w.partnerId,
        storeId: null,
        expiresAt: NOW + DAY,
        now: NOW,
      });
      expect(await s.sessions.findSession(merchantHash)).toEqual({
        kind: 'merchant',
        subject_id: w.merchantId,
        store_id: w.store.id,
        expires_at: NOW + HOUR,
      });
      expect(await s.sessions.findSession(partnerHash)).toEqual({
        kind: 'partner',
        subject_id: w.partnerId,
        store_id: null,
        expires_at: NOW + DAY,
      });
      expect(await s.sessions.findSession('session-hash-unknown')).toBeUndefined();
      await s.sessions.deleteSession(merchantHash);
      expect(await s.sessions.findSession(merchantHash)).toBeUndefined();
      expect(await s.sessions.findSession(partnerHash)).toBeDefined();
      await expect(s.sessions.deleteSession(merchantHash)).resolves.toBeUndefined();
    });
  });

  describe('throttles', () => {
    const WINDOW = 15 * MINUTE;
    /** Generous limit: these tests are about counting, not locking. */
    const LOOSE = { max: 1000, lockUntil: NOW + DAY };
    const count = (key: string, now: number, limit = LOOSE) => s.throttles.countAttempt(key, now, now - WINDOW, limit);

    it('counts attempts up; concurrent attempts on one key each get their own number', async () => {
      const key = tag('acct');
      expect(await count(key, NOW)).toEqual({ attempts: 1, windowStartedAt: NOW, lockedUntil: null });
      expect(await count(key, NOW + 1)).toEqual({ attempts: 2, windowStartedAt: NOW, lockedUntil: null });

      const hot = tag('addr');
      const results = await Promise.all(Array.from({ length: 10 }, () => count(hot, NOW)));
      expect(results.map((r) => r.attempts).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(await count(hot, NOW)).toEqual({ attempts: 11, windowStartedAt: NOW, lockedUntil: null });
    });

    it('the attempt that goes over the limit locks the key in the same step; a burst locks exactly once', async () => {
      const key = tag('limit');
      const limit = { max: 3, lockUntil: NOW + 15 * MINUTE };
      for (const n of [1, 2, 3]) expect(await count(key, NOW, limit)).toEqual({ attempts: n, windowStartedAt: NOW, lockedUntil: null });
      expect(await count(key, NOW + 1, { max: 3, lockUntil: NOW + 1 + 15 * MINUTE })).toEqual({
        attempts: 4,
        windowStartedAt: NOW,
        lockedUntil: NOW + 1 + 15 * MINUTE,
      });
      // Later attempts keep the lock they found (it is not pushed back).
      expect(await count(key, NOW + 2, { max: 3, lockUntil: NOW + 2 + 15 * MINUTE })).toEqual({
        attempts: 5,
        windowStartedAt: NOW,
        lockedUntil: NOW + 1 + 15 * MINUTE,
      });

      const hot = tag('burst');
      const burst = await Promise.all(Array.from({ length: 25 }, () => count(hot, NOW, { max: 5, lockUntil: NOW + 15 * MINUTE })));
      const sorted = [...burst].sort((a, b) => a.attempts - b.attempts);
      expect(sorted.map((r) => r.attempts)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
      // Exactly the first five were under the limit; every later one saw the lock.
      expect(sorted.filter((r) => r.lockedUntil === null).map((r) => r.attempts)).toEqual([1, 2, 3, 4, 5]);
      expect(sorted.slice(5).every((r) => r.lockedUntil === NOW + 15 * MINUTE)).toBe(true);
      expect(await s.throttles.lockedUntil([hot])).toEqual([NOW + 15 * MINUTE]);

      // A limit of 0 locks on the first attempt.
      expect(await count(tag('zero'), NOW, { max: 0, lockUntil: NOW + MINUTE })).toEqual({
        attempts: 1,
        windowStartedAt: NOW,
        lockedUntil: NOW + MINUTE,
      });
    });

    it('a count whose window started at or before the window start begins again at 1', async () => {
      const key = tag('window');
      await count(key, NOW);
      await count(key, NOW + MINUTE);
      // The window began at NOW; a window starting at NOW + 1 no longer includes it.
      expect(await count(key, NOW + WINDOW + 1)).toEqual({ attempts: 1, windowStartedAt: NOW + WINDOW + 1, lockedUntil: null });
      expect(await count(key, NOW + WINDOW + 2)).toEqual({ attempts: 2, windowStartedAt: NOW + WINDOW + 1, lockedUntil: null });
    });

    it('lock, lockedUntil, a lock that ended restarts the count', async () => {
      const key = tag('lock');
      const other = tag('other');
      await count(key, NOW);
      await count(other, NOW);
      await s.throttles.lock(key, NOW + 5 * MINUTE);
      expect(await s.throttles.lockedUntil([key])).toEqual([NOW + 5 * MINUTE]);
      expect(await s.throttles.lockedUntil([other])).toEqual([null]);
      expect(await s.throttles.lockedUntil([tag('unknown')])).toEqual([]);
      expect((await s.throttles.lockedUntil([key, other, tag('unknown')])).sort()).toEqual([NOW + 5 * MINUTE, null].sort());

      // Still locked: the attempt is counted and the lock stays.
      expect(await count(key, NOW + MINUTE)).toEqual({ attempts: 2, windowStartedAt: NOW, lockedUntil: NOW + 5 * MINUTE });
      // The lock has ended: a fresh count, no lock.
      expect(await count(key, NOW + 6 * MINUTE)).toEqual({ attempts: 1, windowStartedAt: NOW + 6 * MINUTE, lockedUntil: null });
      expect(await s.throttles.lockedUntil([key])).toEqual([null]);
    });

    it('clearIfUnchanged drops a count no attempt has moved on from, and keeps one that has', async () => {
      const key = tag('clear');
      await count(key, NOW);
      const mine = await count(key, NOW + 1);
      await s.throttles.clearIfUnchanged(key, mine);
      expect(await s.throttles.lockedUntil([key])).toEqual([]);
      expect(await count(key, NOW + 2)).toEqual({ attempts: 1, windowStartedAt: NOW + 2, lockedUntil: null });

      // Another attempt came after mine: the count stays.
      const busy = tag('busy');
      const first = await count(busy, NOW);
      await count(busy, NOW);
      await s.throttles.clearIfUnchanged(busy, first);
      expect(await count(busy, NOW)).toEqual({ attempts: 3, windowStartedAt: NOW, lockedUntil: null });
      // The same number in another window is not the same count.
      await s.throttles.clearIfUnchanged(busy, { attempts: 3, windowStartedAt: NOW - 1 });
      expect(await count(busy, NOW)).toEqual({ attempts: 4, windowStartedAt: NOW, lockedUntil: null });
      await s.throttles.clearIfUnchanged(tag('unknown'), { attempts: 1, windowStartedAt: NOW });
    });

    it('uncount takes one attempt off its own window only, never below 0, and keeps a lock', async () => {
      const key = tag('uncount');
      await count(key, NOW);
      const second = await count(key, NOW);
      await s.throttles.uncount(key, second.windowStartedAt);
      expect(await count(key, NOW)).toEqual({ attempts: 2, windowStartedAt: NOW, lockedUntil: null });
      await s.throttles.uncount(key, NOW - 1);
      expect(await count(key, NOW)).toEqual({ attempts: 3, windowStartedAt: NOW, lockedUntil: null });

      const once = tag('uncount-once');
      await count(once, NOW);
      await s.throttles.uncount(once, NOW);
      await s.throttles.uncount(once, NOW);
      expect(await count(once, NOW)).toEqual({ attempts: 1, windowStartedAt: NOW, lockedUntil: null });

      const locked = tag('uncount-locked');
      await count(locked, NOW);
      await s.throttles.lock(locked, NOW + MINUTE);
      await s.throttles.uncount(locked, NOW);
      expect(await s.throttles.lockedUntil([locked])).toEqual([NOW + MINUTE]);
      await s.throttles.uncount(tag('unknown'), NOW);
    });

    it('lockedUntil of no keys is empty', async () => {
      expect(await s.throttles.lockedUntil([])).toEqual([]);
    });

    it('prune drops counts whose window is old and whose lock (if any) has ended', async () => {
      // Times far before the other throttle tests, so pruning here only touches these keys.
      const t0 = NOW - 10 * DAY;
      const oldUnlocked = tag('old');
      const oldLockEnded = tag('old-lock-ended');
      const oldStillLocked = tag('old-locked');
      const recent = tag('recent');
      for (const key of [oldUnlocked, oldLockEnded, oldStillLocked]) await s.throttles.countAttempt(key, t0, t0 - WINDOW, LOOSE);
      await s.throttles.lock(oldLockEnded, t0 + MINUTE);
      await s.throttles.lock(oldStillLocked, t0 + 2 * DAY);
      await s.throttles.countAttempt(recent, t0 + DAY, t0 + DAY - WINDOW, LOOSE);

      await s.throttles.prune(t0 + DAY - WINDOW, t0 + DAY);
      expect(await s.throttles.lockedUntil([oldUnlocked])).toEqual([]);
      expect(await s.throttles.lockedUntil([oldLockEnded])).toEqual([]);
      expect(await s.throttles.lockedUntil([oldStillLocked])).toEqual([t0 + 2 * DAY]);
      expect(await s.throttles.lockedUntil([recent])).toEqual([null]);
    });
  });

  describe('reveals', () => {
    it('put, then take once; another session gets nothing', async () => {
      const id = tag('reveal-hash');
      await s.reveals.put({ idHash: id, sessionHash: 'session-hash-a', payloadEnc: 'sealed-1', expiresAt: NOW + MINUTE, now: NOW });
      expect(await s.reveals.take(id, 'session-hash-b')).toBeUndefined();
      expect(await s.reveals.take(tag('reveal-hash'), 'session-hash-a')).toBeUndefined();
      expect(await s.reveals.take(id, 'session-hash-a')).toEqual({ payload_enc: 'sealed-1', expires_at: NOW + MINUTE });
      expect(await s.reveals.take(id, 'session-hash-a')).toBeUndefined();
    });

    it('concurrent takes of one reveal: exactly one gets it', async () => {
      const id = tag('reveal-hash');
      await s.reveals.put({ idHash: id, sessionHash: 'session-hash-a', payloadEnc: 'sealed-2', expiresAt: NOW + MINUTE, now: NOW });
      const taken = await Promise.all(Array.from({ length: 5 }, () => s.reveals.take(id, 'session-hash-a')));
      expect(taken.filter((t) => t !== undefined)).toEqual([{ payload_enc: 'sealed-2', expires_at: NOW + MINUTE }]);
    });
  });

  db.routingTest();
});
