// Keeps a worker's claims alive while it still holds them. A claim is a lease: another worker may
// take the row once it runs out. The heartbeat moves the lease forward every third of its length
// for each delivery this worker has claimed and not yet settled (queued behind a slow receiver, in
// flight, or being recorded), so a long attempt never loses its claim, while the claims of a
// worker that died run out one lease after its last beat.
import type { Clock } from '../domain/clock.ts';
import type { DeliveryQueue } from '../storage/ports/delivery-queue.ts';
import type { DatabaseOutage } from './database-outage.ts';
import { errorFields, type WorkerLogger } from './worker-logger.ts';

export interface HeartbeatOptions {
  queue: DeliveryQueue;
  worker: string;
  leaseMs: number;
  clock: Clock;
  logger: WorkerLogger;
  /** The worker's outage tracker: a renewal lost to a database outage is not logged on its own. */
  outage?: DatabaseOutage;
}

export class ClaimHeartbeat {
  private readonly held = new Set<number>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private beating: Promise<number> | undefined;

  constructor(private readonly options: HeartbeatOptions) {}

  /** Deliveries claimed and not settled yet. */
  get holding(): number {
    return this.held.size;
  }

  /** When the lease of a claim made now ends. */
  leaseUntil(): number {
    return this.options.clock() + this.options.leaseMs;
  }

  holds(id: number): boolean {
    return this.held.has(id);
  }

  hold(ids: Iterable<number>): void {
    for (const id of ids) this.held.add(id);
  }

  /** Recorded (or handed back): no longer this worker's to renew. */
  settle(ids: Iterable<number>): void {
    for (const id of ids) this.held.delete(id);
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.beat(), Math.max(50, Math.floor(this.options.leaseMs / 3)));
    // The worker's own loop keeps the process alive; the heartbeat must not keep it from exiting.
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.held.clear();
  }

  /** Renews the lease of every delivery held now; returns how many rows were renewed. */
  beat(): Promise<number> {
    // One renewal at a time: a slow database must not pile them up.
    this.beating ??= this.renew().finally(() => {
      this.beating = undefined;
    });
    return this.beating;
  }

  private async renew(): Promise<number> {
    if (this.held.size === 0) return 0;
    const { queue, worker, logger } = this.options;
    try {
      return await queue.renewClaims({ worker, ids: [...this.held], leaseUntil: this.leaseUntil() });
    } catch (err) {
      // The next beat tries again; a lease is three beats long.
      if (!this.options.outage?.failed(err))
        logger.error({ err: errorFields(err), deliveries: this.held.size }, 'webhook worker: could not renew claims');
      return 0;
    }
  }
}
