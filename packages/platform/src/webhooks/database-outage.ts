// What the delivery worker does while the database is away: one warning when the outage starts,
// one line when it ends, and waits that grow (up to a few seconds) between attempts in between,
// instead of an error line per poll.
import type { Clock } from '../domain/clock.ts';
import { DatabaseUnavailableError } from '../domain/errors.ts';
import type { WorkerLogger } from './worker-logger.ts';

const FIRST_WAIT_MS = 250;
const LONGEST_WAIT_MS = 5_000;

export class DatabaseOutage {
  private since: number | undefined;
  private wait = 0;

  constructor(
    private readonly logger: WorkerLogger,
    private readonly clock: Clock,
  ) {}

  /** Whether the worker is waiting for the database to come back. */
  get active(): boolean {
    return this.since !== undefined;
  }

  /** How long to wait before the next attempt while the outage lasts. */
  get waitMs(): number {
    return this.wait;
  }

  /** True when `err` means the database is unavailable (logged only when the outage starts). */
  failed(err: unknown): boolean {
    if (!(err instanceof DatabaseUnavailableError)) return false;
    if (this.since === undefined) {
      this.since = this.clock();
      this.logger.warn({ fault: err.fault }, 'webhook worker: the database is unavailable; retrying until it is back');
    }
    this.wait = Math.min(LONGEST_WAIT_MS, this.wait === 0 ? FIRST_WAIT_MS : this.wait * 2);
    return true;
  }

  /** The database answered: ends an outage (and says so once). */
  succeeded(): void {
    if (this.since === undefined) return;
    this.logger.info({ down_ms: Math.max(0, this.clock() - this.since) }, 'webhook worker: the database is back');
    this.since = undefined;
    this.wait = 0;
  }
}
