// Counting calls to deprecated Admin API versions without a database write per request: each node
// adds them up in memory, keyed by caller, store, version and route pattern, and writes what it
// holds as one batched upsert every `usageFlushMs` (or sooner once it holds many keys), and once
// more when it shuts down. The upsert adds to the stored counts, so nodes flushing at the same
// time all count. A failed write keeps the counts for the next flush.
import type { ApiCallerKind } from '../domain/api-health.ts';
import type { Clock } from '../domain/clock.ts';
import type { ApiHealthRepository, ApiUsageDelta } from '../storage/ports/api-health.ts';

/** Keys held before a flush starts without waiting for the timer: bounds the node's memory. */
const MAX_PENDING_KEYS = 1_000;

export class ApiUsageCounter {
  private pending = new Map<string, ApiUsageDelta>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly repo: Pick<ApiHealthRepository, 'addUsage'>,
    private readonly clock: Clock,
    private readonly flushEveryMs: number,
  ) {}

  /** One call, counted in memory: no promise, no I/O. */
  record(callerKind: ApiCallerKind, callerId: number, storeId: number, version: string, route: string): void {
    const key = `${callerKind}:${callerId}:${storeId}:${version}:${route}`;
    const now = this.clock();
    const held = this.pending.get(key);
    if (held) {
      held.calls += 1;
      held.lastSeenAt = Math.max(held.lastSeenAt, now);
      return;
    }
    this.pending.set(key, { callerKind, callerId, storeId, version, route, calls: 1, firstSeenAt: now, lastSeenAt: now });
    if (this.pending.size >= MAX_PENDING_KEYS) void this.flush().catch(() => {});
  }

  /** Keys counted and not yet written (tests and metrics). */
  get pendingKeys(): number {
    return this.pending.size;
  }

  /** Writes everything counted so far; one flush at a time. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing.catch(() => {});
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.repo.addUsage([...batch.values()]).then(
      () => {
        this.flushing = undefined;
      },
      (err: unknown) => {
        this.flushing = undefined;
        this.restore(batch);
        throw err;
      },
    );
    await this.flushing;
  }

  /** Flushes every `flushEveryMs` until `stop`; the timer never keeps the process alive. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush().catch(() => {}), this.flushEveryMs);
    this.timer.unref();
  }

  /** Stops the timer and writes what is left (a graceful shutdown, before the database closes). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private restore(batch: Map<string, ApiUsageDelta>): void {
    for (const [key, d] of batch) {
      const held = this.pending.get(key);
      if (!held) this.pending.set(key, d);
      else {
        held.calls += d.calls;
        held.firstSeenAt = Math.min(held.firstSeenAt, d.firstSeenAt);
        held.lastSeenAt = Math.max(held.lastSeenAt, d.lastSeenAt);
      }
    }
  }
}
