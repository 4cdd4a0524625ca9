// Writes each change of a circuit breaker's state to the database, so that every node (and the
// partner dashboard) sees what the workers' breakers are doing, whichever worker holds them. A
// write happens only on a change of state; the changes of one tick go together in one statement.
// A write that fails is not retried: the next change of that breaker writes its state again, and
// the delivery figures never depend on it.
import type { Clock } from '../domain/clock.ts';
import type { BreakerChangeRecord, EndpointHealthRepository } from '../storage/ports/endpoint-health.ts';
import type { BreakerChange } from './circuit-breaker.ts';
import type { DatabaseOutage } from './database-outage.ts';
import { breakerRecord } from './endpoint-key.ts';
import type { Endpoint } from './origin-dispatcher.ts';
import { errorFields, type WorkerLogger } from './worker-logger.ts';

export type BreakerLog = Pick<EndpointHealthRepository, 'recordBreakerChanges'>;

export class BreakerLedger {
  private waiting: BreakerChangeRecord[] = [];
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly options: {
      log: BreakerLog;
      clock: Clock;
      logger: WorkerLogger;
      outage: DatabaseOutage;
      /** Called whenever a round of writing ends. */
      onSettled: () => void;
    },
  ) {}

  get idle(): boolean {
    return this.waiting.length === 0 && !this.flushing;
  }

  changed(endpoint: Endpoint, change: BreakerChange): void {
    const record = breakerRecord(endpoint, change, this.options.clock());
    if (!record) return;
    this.waiting.push(record);
    this.flushing ??= this.flush();
  }

  private async flush(): Promise<void> {
    const { log, logger, outage, onSettled } = this.options;
    try {
      // Changes made in the same turn of the event loop (a claim's worth) go in one write.
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0);
        try {
          await log.recordBreakerChanges(batch);
        } catch (err) {
          if (!outage.failed(err))
            logger.error({ err: errorFields(err), changes: batch.length }, 'webhook worker: could not record breaker states');
        }
      }
    } finally {
      this.flushing = undefined;
      onSettled();
    }
  }
}
