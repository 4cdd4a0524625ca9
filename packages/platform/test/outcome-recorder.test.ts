// The outcome recorder's group commit: outcomes finishing close together share one write, a write
// that fails leaves its rows to their lease, and a recorder with enough outcomes waiting writes
// them without waiting out its gathering window.
import { describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.ts';
import type { DeliveryQueue } from '../src/storage/ports/delivery-queue.ts';
import type { DeliveryOutcome } from '../src/storage/ports/rows.ts';
import { OutcomeRecorder } from '../src/webhooks/outcome-recorder.ts';
import { silentLogger } from '../src/webhooks/worker-logger.ts';

const config = loadConfig({ database: ':memory:', masterKey: 'a'.repeat(64) });

function outcome(id: number): DeliveryOutcome {
  return {
    id,
    storeId: 1,
    subscriptionId: 1,
    attempts: 0,
    attempt: { attemptedAt: 0, status: 200, latencyMs: 1, responseBody: null, error: null },
    next: { status: 'delivered' },
  };
}

function recorder(write: (batch: readonly DeliveryOutcome[]) => Promise<void>) {
  const batches: number[][] = [];
  const written: number[][] = [];
  let settled = 0;
  const queue = {
    recordOutcomes: async (batch: readonly DeliveryOutcome[]) => {
      batches.push(batch.map((o) => o.id));
      await write(batch);
    },
  } as unknown as DeliveryQueue;
  const r = new OutcomeRecorder({
    queue,
    worker: 'w',
    config,
    clock: () => 0,
    logger: silentLogger,
    onSettled: () => settled++,
    onWritten: (ids) => written.push(ids),
  });
  return { r, batches, written, settled: () => settled };
}

const idle = async (r: OutcomeRecorder) => {
  while (!r.idle) await new Promise((resolve) => setTimeout(resolve, 1));
};

describe('OutcomeRecorder', () => {
  it('outcomes recorded a few milliseconds apart share one write', async () => {
    const { r, batches, written, settled } = recorder(async () => {});
    r.record(outcome(1));
    await new Promise((resolve) => setTimeout(resolve, 2));
    r.record(outcome(2), outcome(3));
    expect(r.idle).toBe(false);
    await idle(r);
    expect(batches).toEqual([[1, 2, 3]]);
    expect(written).toEqual([[1, 2, 3]]);
    expect(settled()).toBe(1);
  });

  it('writes at once when enough outcomes are waiting, and what arrives during a write goes in the next', async () => {
    let release: (() => void) | undefined;
    const { r, batches } = recorder((batch) =>
      batch.length > 100 ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve(),
    );
    // Timers stand still: a write that waited for the gathering window would never start.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      r.record(outcome(0));
      for (let i = 1; i < 300; i++) r.record(outcome(i));
      for (let turn = 0; turn < 100 && !release; turn++) await new Promise((resolve) => setImmediate(resolve));
      expect(release).toBeDefined();
    } finally {
      vi.useRealTimers();
    }
    r.record(outcome(300));
    release!();
    await idle(r);
    expect(batches).toEqual([Array.from({ length: 300 }, (_, i) => i), [300]]);
  });

  it('a failed write is not retried: its rows are handed on as written (their lease sends them again)', async () => {
    const { r, batches, written } = recorder(async () => {
      throw new Error('database went away');
    });
    r.record(outcome(7));
    await idle(r);
    expect(batches).toEqual([[7]]);
    expect(written).toEqual([[7]]);
  });
});
