// Sends jobs with bounded concurrency, overall and per endpoint, each endpoint with its own queue
// and its own circuit breaker. An endpoint is an origin (scheme, host, port): that is what holds
// connections and fails as a whole when a server hangs, whatever the paths. A slow or dead receiver
// therefore holds at most its cap of the requests in flight while every other receiver keeps
// going; once its queue is long its subscriptions are left out of the next claims so it cannot fill
// the memory buffer either; and once it has failed often enough in a row its breaker opens: its
// jobs are handed back to wait in the database (holding no slot and no buffer) until a single
// probe finds it answering again. While the probe is out the others wait in its queue, which holds
// no slot.
import type { Clock } from '../domain/clock.ts';
import { type BreakerChange, type BreakerSettings, CircuitBreaker, type EndpointVerdict } from './circuit-breaker.ts';

/** What the dispatcher needs to know about a job: where it goes and whose it is. */
export interface Routable {
  origin: string;
  subscriptionId: number;
}

interface OriginQueue<J> {
  inflight: number;
  queue: J[];
  /** Subscriptions with jobs here, to leave out of claims while the origin is saturated. */
  subscriptions: Set<number>;
}

/** An endpoint that has failed lately. */
interface Troubled {
  breaker: CircuitBreaker;
}

export interface DispatcherOptions<J> {
  /** Requests in flight per origin. */
  perOrigin: number;
  /** Requests in flight over all origins. */
  maxInFlight: number;
  /** Sends one job; the job counts as buffered until this settles. Says what the attempt showed of the endpoint. */
  send: (job: J) => Promise<EndpointVerdict>;
  /** Called after each job has settled and its slot was handed on. */
  onJobDone: () => void;
  /** When each endpoint's breaker opens and how long it stays open. */
  breaker: BreakerSettings;
  clock: Clock;
  /**
   * Takes jobs of an endpoint whose breaker is open out of the dispatcher: the caller makes them
   * due again at `until` (they no longer count as buffered).
   */
  handBack: (jobs: J[], until: number) => void;
  /** Each change of an endpoint breaker's state. */
  onBreakerChange?: (origin: string, change: BreakerChange) => void;
}

export class OriginDispatcher<J extends Routable> {
  /** Jobs held in memory (queued or in flight) over all origins before claiming stops. */
  readonly capacity: number;
  /** Jobs held in memory for one origin before its subscriptions are left out of claims. */
  private readonly perOriginBuffer: number;
  private readonly origins = new Map<string, OriginQueue<J>>();
  private readonly troubled = new Map<string, Troubled>();
  private inflight = 0;
  private held = 0;

  constructor(private readonly options: DispatcherOptions<J>) {
    if (!(Number.isInteger(options.perOrigin) && options.perOrigin >= 1 && options.perOrigin <= options.maxInFlight))
      throw new RangeError(
        `requests in flight per endpoint: expected an integer from 1 to ${options.maxInFlight}, got ${options.perOrigin}`,
      );
    this.capacity = options.maxInFlight * 4;
    this.perOriginBuffer = options.perOrigin * 8;
  }

  /** Jobs queued or in flight. */
  get buffered(): number {
    return this.held;
  }

  /** How many more jobs fit in the buffer. */
  get room(): number {
    return this.capacity - this.held;
  }

  /**
   * Subscriptions whose origin already holds its full buffer: the next claim leaves them out. An
   * endpoint whose breaker is open is not left out: what a claim brings for it goes straight back
   * with a later due time, so its backlog leaves the due range at the cost of one write per
   * delivery, where leaving it out would have every claim step over a backlog that keeps growing.
   */
  saturatedSubscriptions(): number[] {
    return [...this.origins.values()]
      .filter((o) => o.queue.length + o.inflight >= this.perOriginBuffer)
      .flatMap((o) => [...o.subscriptions]);
  }

  /** Jobs sent and not settled yet. */
  get inFlight(): number {
    return this.inflight;
  }

  /** Jobs of one origin sent and not settled yet. */
  inFlightTo(origin: string): number {
    return this.origins.get(origin)?.inflight ?? 0;
  }

  /** The breaker state of each endpoint that is not closed. */
  openEndpoints(): Map<string, 'open' | 'half-open'> {
    const open = new Map<string, 'open' | 'half-open'>();
    for (const [origin, t] of this.troubled) if (t.breaker.state !== 'closed') open.set(origin, t.breaker.state);
    return open;
  }

  /** Takes every job not yet sent out of the queues (a stopping worker hands them back). */
  dropQueued(): J[] {
    const dropped: J[] = [];
    for (const [origin, q] of this.origins) {
      dropped.push(...q.queue.splice(0));
      if (q.inflight === 0) this.origins.delete(origin);
    }
    this.held -= dropped.length;
    return dropped;
  }

  enqueue(job: J): void {
    let q = this.origins.get(job.origin);
    if (!q) this.origins.set(job.origin, (q = { inflight: 0, queue: [], subscriptions: new Set() }));
    q.subscriptions.add(job.subscriptionId);
    q.queue.push(job);
    this.held++;
    this.pump(job.origin, q);
  }

  private pump(origin: string, q: OriginQueue<J>): void {
    const troubled = this.troubled.get(origin);
    while (q.queue.length > 0) {
      const gate = troubled?.breaker.gate() ?? 'send';
      if (gate === 'hold') return;
      if (gate === 'wait') {
        const jobs = q.queue.splice(0);
        this.held -= jobs.length;
        this.forgetIfDone(origin, q);
        this.options.handBack(jobs, troubled!.breaker.reopenAt);
        return;
      }
      if (q.inflight >= this.options.perOrigin || this.inflight >= this.options.maxInFlight) return;
      const job = q.queue.shift()!;
      if (gate === 'probe') this.options.onBreakerChange?.(origin, troubled!.breaker.startProbe());
      this.start(origin, q, job, gate === 'probe');
    }
  }

  private start(origin: string, q: OriginQueue<J>, job: J, probe: boolean): void {
    q.inflight++;
    this.inflight++;
    void this.options
      .send(job)
      .catch((): EndpointVerdict => 'neutral')
      .then((verdict) => {
        q.inflight--;
        this.inflight--;
        this.held--;
        this.judge(origin, verdict, probe);
        this.pump(origin, q);
        // A free global slot may unblock another origin's queue.
        if (this.inflight < this.options.maxInFlight)
          for (const [o, other] of this.origins) if (other.queue.length > 0) this.pump(o, other);
        this.forgetIfDone(origin, q);
        this.options.onJobDone();
      });
  }

  /** Hands an attempt's verdict to the endpoint's breaker (made at its first failure). */
  private judge(origin: string, verdict: EndpointVerdict, probe: boolean): void {
    let troubled = this.troubled.get(origin);
    if (!troubled) {
      if (verdict !== 'failure') return;
      troubled = { breaker: new CircuitBreaker(this.options.breaker, this.options.clock) };
      this.troubled.set(origin, troubled);
    }
    const change = troubled.breaker.record(verdict, probe);
    if (change) this.options.onBreakerChange?.(origin, change);
    if (troubled.breaker.idle) this.troubled.delete(origin);
  }

  private forgetIfDone(origin: string, q: OriginQueue<J>): void {
    if (q.inflight === 0 && q.queue.length === 0 && this.origins.get(origin) === q) this.origins.delete(origin);
  }
}
