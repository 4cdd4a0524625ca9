// What the worker does around its circuit breakers (one per owner at each endpoint): one log line
// and a metric per change of state, and the deliveries of an open breaker handed back to the
// database, due again when the breaker reopens, without an attempt counted (they were not sent).
// The rest of the owner's backlog at the endpoint, which the worker never claimed, is put off in
// the database as well, in statements of a bounded size, before the claims handed back are written.
// The breakers live in the worker process: each worker learns on its own that an owner's endpoint
// is down, so with several workers it gets at most one probe per worker per cool-down.
import type { Clock } from '../domain/clock.ts';
import type { DeliveryMetrics } from '../services/metrics.ts';
import type { DeliveryQueue } from '../storage/ports/delivery-queue.ts';
import type { BreakerChange, BreakerState } from './circuit-breaker.ts';
import type { DatabaseOutage } from './database-outage.ts';
import type { Backlog, Endpoint } from './origin-dispatcher.ts';
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

/** Deliveries of a backlog put off by one statement at most. */
const BACKLOG_SLICE = 1_000;
/**
 * Statements per ask at most: what is left of a larger backlog is put off at the next ask (each
 * claim that brings one of its deliveries asks again), so no claim waits behind one owner for long.
 */
const BACKLOG_SLICES = 10;

export class EndpointBreakers {
  private readonly states = new Map<string, BreakerState>();
  /** Ids to hand back, by the time they are due again; written together within a tick. */
  private waiting = new Map<number, number[]>();
  /** Backlogs to put off, by breaker: the latest ask of each. */
  private backlogs = new Map<string, { backlog: Backlog; until: number }>();
  private flushing: Promise<void> | undefined;

  constructor(private readonly options: EndpointBreakersOptions) {}

  /** Nothing waiting to be handed back or put off, nothing being written. */
  get idle(): boolean {
    return this.waiting.size === 0 && this.backlogs.size === 0 && !this.flushing;
  }

  /**
   * Resolves once what was asked so far has been written (or has failed): a claim waits for it, so
   * it never brings deliveries that are about to be put off.
   */
  written(): Promise<void> {
    return this.flushing ?? Promise.resolve();
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

  /**
   * Makes the deliveries of an open breaker's owner at its endpoint that fall due before `until`,
   * and that no worker holds, due at `until`. Asks for the same breaker made within a tick are
   * written once, with the latest subscriptions and time.
   */
  deferBacklog(backlog: Backlog, until: number): void {
    if (backlog.subscriptions.length === 0) return;
    this.backlogs.set(`${backlog.origin} ${backlog.owner}`, { backlog, until });
    this.flushing ??= this.flush();
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
      while (this.waiting.size > 0 || this.backlogs.size > 0) {
        const backlogs = this.backlogs;
        this.backlogs = new Map();
        for (const { backlog, until } of backlogs.values()) await this.putOff(backlog, until);
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

  private async putOff(backlog: Backlog, until: number): Promise<void> {
    const { queue, clock, logger, outage, metrics } = this.options;
    const { storeId, madeAt } = backlog;
    const input = { storeId, subscriptionIds: backlog.subscriptions, breakerMadeAt: madeAt, until, limit: BACKLOG_SLICE };
    try {
      for (let slice = 0; slice < BACKLOG_SLICES; slice++) {
        const deferred = await queue.deferBacklog({ ...input, now: clock() });
        if (deferred > 0) metrics?.deliveriesDeferred?.(deferred);
        if (deferred < BACKLOG_SLICE) return;
      }
    } catch (err) {
      // Not thrown: the backlog stays due, and what a claim brings of it is handed back as before.
      if (!outage.failed(err))
        logger.error(
          { err: errorFields(err), endpoint: backlog.origin, owner: backlog.owner },
          'webhook worker: could not put off a backlog',
        );
    }
  }
}
