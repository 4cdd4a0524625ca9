// Sends jobs with bounded concurrency, overall and per origin (scheme, host, port), each origin
// with its own queue. A slow or dead receiver therefore holds at most its share of the requests in
// flight while every other receiver keeps going, and once its queue is long its subscriptions are
// left out of the next claims so it cannot fill the memory buffer either.

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

export interface DispatcherOptions<J> {
  /** Requests in flight per origin. */
  perOrigin: number;
  /** Requests in flight over all origins. */
  maxInFlight: number;
  /** Sends one job; the job counts as buffered until this settles. */
  send: (job: J) => Promise<void>;
  /** Called after each job has settled and its slot was handed on. */
  onJobDone: () => void;
}

export class OriginDispatcher<J extends Routable> {
  /** Jobs held in memory (queued or in flight) over all origins before claiming stops. */
  readonly capacity: number;
  /** Jobs held in memory for one origin before its subscriptions are left out of claims. */
  private readonly perOriginBuffer: number;
  private readonly origins = new Map<string, OriginQueue<J>>();
  private inflight = 0;
  private held = 0;

  constructor(private readonly options: DispatcherOptions<J>) {
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

  /** Subscriptions whose origin already holds its full buffer: the next claim leaves them out. */
  saturatedSubscriptions(): number[] {
    return [...this.origins.values()]
      .filter((o) => o.queue.length + o.inflight >= this.perOriginBuffer)
      .flatMap((o) => [...o.subscriptions]);
  }

  /** Jobs sent and not settled yet. */
  get inFlight(): number {
    return this.inflight;
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
    this.pump(q);
  }

  private pump(q: OriginQueue<J>): void {
    while (q.inflight < this.options.perOrigin && this.inflight < this.options.maxInFlight) {
      const job = q.queue.shift();
      if (job === undefined) return;
      q.inflight++;
      this.inflight++;
      void this.options.send(job).finally(() => {
        q.inflight--;
        this.inflight--;
        this.held--;
        this.pump(q);
        // A free global slot may unblock another origin's queue.
        if (this.inflight < this.options.maxInFlight)
          for (const other of this.origins.values()) if (other.queue.length > 0) this.pump(other);
        if (q.inflight === 0 && q.queue.length === 0) this.origins.delete(job.origin);
        this.options.onJobDone();
      });
    }
  }
}
