import { describe, expect, it } from 'vitest';
import { coalescedFlush } from '../src/storage/coalesced-flush.ts';

describe('coalescedFlush', () => {
  it('runs at most one flush at a time; callers during a flush share the next one, which starts after their call', async () => {
    const log: string[] = [];
    let n = 0;
    const releases: (() => void)[] = [];
    const flush = coalescedFlush(
      () =>
        new Promise<void>((resolve) => {
          const id = ++n;
          log.push(`start ${id}`);
          releases.push(() => {
            log.push(`end ${id}`);
            resolve();
          });
        }),
    );
    const first = flush();
    const during = [flush(), flush(), flush()];
    expect(n).toBe(1);
    releases.shift()!();
    await first;
    await new Promise((r) => setImmediate(r));
    expect(n).toBe(2);
    let settled = false;
    void Promise.all(during).then(() => (settled = true));
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    releases.shift()!();
    await Promise.all(during);
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2']);
    // Idle again: the next caller starts a flush of its own at once.
    const later = flush();
    expect(n).toBe(3);
    releases.shift()!();
    await later;
  });

  it('a failed flush rejects its callers; the next flush still runs', async () => {
    let calls = 0;
    const flush = coalescedFlush(async () => {
      calls++;
      if (calls === 1) throw new Error('disk');
    });
    await expect(flush()).rejects.toThrow('disk');
    await expect(flush()).resolves.toBeUndefined();
    expect(calls).toBe(2);
  });
});
