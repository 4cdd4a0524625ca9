// Writes outcomes in batches (group commit): the first outcome of a batch waits a few milliseconds
// (or until enough have joined it) for others, and whatever finishes while a batch is being written
// goes in the next. A write costs a commit whatever its size, so at thousands of attempts a second
// this is what keeps recording from costing more than the attempts; an idle worker's outcome is
// written within that short wait.
import type { Clock } from '../domain/clock.ts';
import type { Config } from '../config.ts';
import type { DeliveryQueue } from '../storage/ports/delivery-queue.ts';
import type { DeliveryOutcome } from '../storage/ports/rows.ts';
import type { DatabaseOutage } from './database-outage.ts';
import { errorFields, type WorkerLogger } from './worker-logger.ts';

/** Outcomes per transaction: keeps one write (and the locks it holds) short. */
const MAX_BATCH = 500;
/** How long the first outcome of a batch waits for others to join it, at most. */
export const GATHER_MS = 20;
/** Outcomes that, once waiting, are written without waiting out the rest of `GATHER_MS`. */
const ENOUGH = 250;

export interface RecorderOptions {
  queue: DeliveryQueue;
  /** The claiming worker: storage changes only rows this worker still holds. */
  worker: string;
  config: Pick<Config, 'webhooks'>;
  clock: Clock;
  logger: WorkerLogger;
  /** The worker's outage tracker: a write lost to a database outage is not logged on its own. */
  outage?: DatabaseOutage;
  /** Called whenever a round of writing ends (nothing more is being written). */
  onSettled: () => void;
  /** Called after each batch with its delivery ids, written or not (a failed write leaves the rows to their lease). */
  onWritten?: (ids: number[]) => void;
}

export class OutcomeRecorder {
  private waiting: DeliveryOutcome[] = [];
  private flushing: Promise<void> | undefined;
  /** Ends the current wait for more outcomes early. */
  private gathered: (() => void) | undefined;

  constructor(private readonly options: RecorderOptions) {}

  /** Nothing waiting and nothing being written. */
  get idle(): boolean {
    return this.waiting.length === 0 && !this.flushing;
  }

  record(...outcomes: DeliveryOutcome[]): void {
    this.waiting.push(...outcomes);
    if (!this.flushing) this.flushing = this.flush();
    else if (this.waiting.length >= ENOUGH) this.gathered?.();
  }

  private async flush(): Promise<void> {
    try {
      if (this.waiting.length < ENOUGH) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => this.gathered?.(), GATHER_MS);
          this.gathered = () => {
            clearTimeout(timer);
            this.gathered = undefined;
            resolve();
          };
        });
      }
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, MAX_BATCH);
        try {
          await this.write(batch);
        } catch (err) {
          // Not thrown: the rows stay claimed until their lease ends, then go out again (at
          // least once), which is safe because receivers de-duplicate by webhook id.
          if (!this.options.outage?.failed(err))
            this.options.logger.error({ err: errorFields(err), deliveries: batch.length }, 'webhook worker: could not record outcomes');
        }
        this.options.onWritten?.(batch.map((o) => o.id));
      }
    } finally {
      this.flushing = undefined;
      this.options.onSettled();
    }
  }

  private async write(batch: DeliveryOutcome[]): Promise<void> {
    const { queue, worker, config, clock, logger } = this.options;
    await queue.recordOutcomes(batch, { worker, now: clock(), disableAfterDead: config.webhooks.disableAfterDead });
    // Logged only once written, so the log never reports a death that did not happen.
    for (const o of batch) {
      if (o.cancelled === undefined && o.next.status === 'dead') {
        logger.warn({ delivery_id: o.id, subscription_id: o.subscriptionId, disabled: o.next.disable ?? null }, 'webhook delivery is dead');
      }
    }
  }
}
