// The webhook worker's side line: bulk exports, one at a time per worker process, each under a
// lease (the operation's claimed_by / claimed_until) that a timer renews while it runs, so two
// workers never run the same export and a crashed worker's export is taken over once its lease
// runs out. The export itself is services/bulk-export-run.ts.
import { randomBytes } from 'node:crypto';
import { BulkAttemptError } from '../domain/errors.ts';
import type { BulkExportRun, RunOutcome } from '../services/bulk-export-run.ts';
import type { DatabaseOutage } from './database-outage.ts';
import { errorFields, type WorkerLogger } from './worker-logger.ts';

export interface BulkExportRunnerOptions {
  run: BulkExportRun;
  /** How long a lease lasts unless renewed (renewed every third of it). */
  leaseMs: number;
  /** How often to look for a waiting export when none ran (default 1 s). */
  pollMs?: number;
  logger: WorkerLogger;
}

export class BulkExportRunner {
  readonly id = `bx_${randomBytes(6).toString('hex')}`;
  private running = false;
  private loop: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private outage: DatabaseOutage | undefined;

  constructor(private readonly options: BulkExportRunnerOptions) {}

  /** With the worker's outage tracker, a database outage is logged once for the worker, not per attempt. */
  start(outage?: DatabaseOutage): void {
    if (this.running) return;
    this.outage = outage;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops between chunks; the export's lease then runs out and another worker continues it. */
  async stop(): Promise<void> {
    this.running = false;
    this.wakeUp?.();
    await this.loop;
  }

  /** Claims and runs one waiting export now (tests, and the loop). */
  runOnce(stopping: () => boolean = () => false): Promise<RunOutcome> {
    return this.options.run.runNext(this.id, this.options.leaseMs, stopping);
  }

  private async run(): Promise<void> {
    while (this.running) {
      let outcome: RunOutcome = 'none';
      try {
        outcome = await this.runOnce(() => !this.running);
        this.outage?.succeeded();
        if (outcome === 'failed') this.options.logger.warn({ worker: this.id }, 'bulk export failed');
      } catch (err) {
        const cause = err instanceof BulkAttemptError ? err.cause : err;
        const final = err instanceof BulkAttemptError && err.final;
        if (this.outage?.failed(cause)) {
          await this.sleep(this.outage.waitMs);
          continue;
        }
        this.options.logger.error(
          { err: errorFields(cause) },
          final ? 'bulk export: last attempt failed; marked failed' : 'bulk export: run failed; its lease runs out and it is tried again',
        );
      }
      if (outcome === 'none' || outcome === 'lost') await this.sleep(this.options.pollMs ?? 1000);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
