// What the worker does around its circuit breakers (one per owner at each endpoint): one log line
// and a metric per change of state, and the deliveries of an open breaker handed back to the
// database, due again when the breaker reopens, without an attempt counted (they were not sent).
// The breakers live in the worker process: each worker learns on its own that an owner's endpoint
// is down, so with several workers it gets at most one probe per worker per cool-down.
import type { Clock } from '../domain/clock.ts';
import type { DeliveryMetrics } from '../services/metrics.ts';
import type { DeliveryQueue } from '../storage/ports.ts';
import type { BreakerChange, BreakerState } from './circuit-breaker.ts';
import type { DatabaseOutage } from './database-outage.ts';
import type { Endpoint } from './origin-dispatcher.ts';
import { errorFields, type WorkerLogger } from './worker-logger.ts';

export interface EndpointBreakersOptions {
  queue: DeliveryQueue;
  worker: string;
  clock: Clock;
  logger: WorkerLogger;
  outage: DatabaseOutage;
  metrics?: DeliveryMetrics | undefined;
  /** Called with the ids handed back once their write has ended, written or not (a failed write leaves them to their lease). */
  onHandedBack: (ids: number[]) => void;
}

export class EndpointBreakers {
  private readonly states = new Map<string, BreakerState>();
  /** Ids to hand back, by the time they are due again; written together within a tick. */
  private waiting = new Map<number, number[]>();
  private flushing: Promise<void> | undefined;

  constructor(private readonly options: EndpointBreakersOptions) {}

  /** Nothing waiting to be handed back, nothing being written. */
  get idle(): boolean {
    return this.waiting.size === 0 && !this.flushing;
  }

  /**
   * Logs the change (the endpoint by its origin only: no path, query or credentials; the owner by
   * its store and app ids) and counts it.
   */
  changed(endpoint: Endpoint, change: BreakerChange): void {
    const { logger, metrics, clock } = this.options;
    const key = `${endpoint.origin} ${endpoint.owner}`;
    if (change.to === 'closed') this.states.delete(key);
    else this.states.set(key, change.to);
    metrics?.breakerChanged?.(change.to, this.states.size);
    const fields = { endpoint: endpoint.origin, owner: endpoint.owner };
    if (change.to === 'open') {
      logger.warn(
        { ...fields, from: change.from, failures: change.failures, reopen_in_ms: Math.max(0, (change.reopenAt ?? 0) - clock()) },
        'webhook endpoint circuit opened: its deliveries wait without being sent',
      );
    } else if (change.to === 'half-open') {
      logger.info(fields, 'webhook endpoint circuit half-open: sending one probe delivery');
    } else {
      logger.info({ ...fields, from: change.from }, 'webhook endpoint circuit closed: deliveries resume');
    }
  }

  /** A breaker the dispatcher no longer remembers (too many of them): no longer counted as open. */
  forgotten(endpoint: Endpoint): void {
    if (this.states.delete(`${endpoint.origin} ${endpoint.owner}`)) this.options.metrics?.breakersNotClosed?.(this.states.size);
  }

  /** Frees the claims of `ids` and makes them due at `until`. */
  handBack(ids: number[], until: number): void {
    if (ids.length === 0) return;
    this.options.metrics?.deliveriesDeferred?.(ids.length);
    const same = this.waiting.get(until);
    if (same) same.push(...ids);
    else this.waiting.set(until, ids);
    this.flushing ??= this.flush();
  }

  private async flush(): Promise<void> {
    const { queue, worker, clock, logger, outage, onHandedBack } = this.options;
    try {
      // A claim's jobs are enqueued in one turn of the event loop: hand them back in one write.
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (this.waiting.size > 0) {
        const batches = this.waiting;
        this.waiting = new Map();
        for (const [until, ids] of batches) {
          try {
            await queue.deferClaims({ worker, ids, until, now: clock() });
          } catch (err) {
            // Not thrown: the rows stay claimed until their lease ends, then are claimed again
            // (and handed back again while the endpoint is still open).
            if (!outage.failed(err))
              logger.error({ err: errorFields(err), deliveries: ids.length }, 'webhook worker: could not hand back deliveries');
          }
          onHandedBack(ids);
        }
      }
    } finally {
      this.flushing = undefined;
      onHandedBack([]);
    }
  }
}
