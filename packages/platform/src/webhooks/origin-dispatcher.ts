// Sends jobs with bounded concurrency overall, per endpoint and per owner within an endpoint, and
// judges failures per owner within an endpoint.
//
// An endpoint is an origin (scheme, host and port): that is what holds connections and fails as a
// whole when a server hangs, whatever the paths, so the cap that protects a receiver is per origin.
// One origin often serves many tenants, though (a hosted app platform, a shared ingestion service),
// and each tenant's paths can fail on their own. So within an origin every owner (one app or
// private app in one store) has its own lane: its own queue, its own cap of requests in flight and
// its own circuit breaker. Free slots of the origin go to the lanes in turn (the lane that sent last
// goes to the back), so a backlog or a hanging path of one owner holds at most that owner's cap of
// the origin's slots and never keeps another owner's deliveries waiting behind it; and only the
// failing owner's breaker opens, its jobs handed back to wait in the database (holding no slot and
// no buffer) until a probe of its own finds it answering again. While its probe is out its other
// jobs wait in its queue, which holds no slot. When the breaker opens, and whenever a claim brings
// one of the owner's jobs while it is open, the owner's whole backlog at the origin is put off in
// the database too (the deliveries of its subscriptions seen there that fall due before the
// reopening), so claims stop bringing its jobs at all instead of spending their batches on them.
//
// There is no breaker of the origin as a whole, fed by the failures of several owners: the owners
// of one origin are different tenants, and a receiver that fails some of them may well serve the
// others, so two tenants' failures would freeze a third. A receiver that is down for everyone is
// still protected: it never sees more than the origin's cap of requests at once, and each owner's
// breaker opens after its own run of failures, so what it sees from then on is one probe per owner
// per cool-down.
import type { Clock } from '../domain/clock.ts';
import { type BreakerChange, type BreakerSettings, CircuitBreaker, type EndpointVerdict } from './circuit-breaker.ts';

/** What the dispatcher needs to know about a job: where it goes and whose it is. */
export interface Routable {
  origin: string;
  /** Whose delivery it is: one app or private app in one store. Failures are judged per origin and owner. */
  owner: string;
  /** The owner's store. */
  storeId: number;
  subscriptionId: number;
  /** Sent by a replay: a failure counts only as a probe's answer (a replay never opens a breaker). */
  replay?: boolean;
  /** When the job's subscription was last enabled again: a breaker of its owner made before then is forgotten. */
  enabledAt?: number | null;
}

/** What a breaker guards: one owner's deliveries to one origin. */
export interface Endpoint {
  origin: string;
  owner: string;
}

/**
 * What an open breaker puts off in the database: its owner's deliveries to its origin, named by the
 * owner's store and the subscriptions whose jobs came to that origin (a privacy delivery's is its
 * app's id negated).
 */
export interface Backlog extends Endpoint {
  storeId: number;
  subscriptions: readonly number[];
  /** When the breaker was made: a subscription enabled again after then is not its backlog. */
  madeAt: number;
}

/** A breaker, with what its owner's backlog is made of. */
interface Watch {
  breaker: CircuitBreaker;
  madeAt: number;
  storeId: number;
  /** Subscriptions of the owner seen at the origin since the breaker was made (at most `MAX_WATCHED`). */
  subscriptions: Set<number>;
}

/**
 * Subscriptions remembered per breaker: more than an owner may have (100 in a store, and its
 * privacy deliveries). Past it, a newcomer's deliveries are still handed back as claims bring them.
 */
const MAX_WATCHED = 128;

/** One owner's jobs for one origin. */
interface Lane<J> {
  owner: string;
  /** The key of its breaker. */
  key: string;
  storeId: number;
  inflight: number;
  queue: J[];
  /** Subscriptions with jobs here, to leave out of claims while the lane or its origin is full. */
  subscriptions: Set<number>;
}

interface OriginQueue<J> {
  inflight: number;
  /** Jobs queued or in flight over its lanes. */
  held: number;
  /** By owner, in the order they get the origin's next free slot. */
  lanes: Map<string, Lane<J>>;
}

export interface DispatcherOptions<J> {
  /** Requests in flight per origin: what protects the receiver, whoever the deliveries belong to. */
  perOrigin: number;
  /** Requests in flight per owner within one origin (at most `perOrigin`). */
  perOwner: number;
  /** Requests in flight over all origins. */
  maxInFlight: number;
  /** Sends one job; the job counts as buffered until this settles. Says what the attempt showed of the endpoint. */
  send: (job: J) => Promise<EndpointVerdict>;
  /** Called after each job has settled and its slot was handed on. */
  onJobDone: () => void;
  /** When each breaker opens and how long it stays open. */
  breaker: BreakerSettings;
  clock: Clock;
  /**
   * Takes jobs of an owner whose breaker is open out of the dispatcher: the caller makes them due
   * again at `until` (they no longer count as buffered).
   */
  handBack: (jobs: J[], until: number) => void;
  /**
   * An owner's breaker is open: the caller makes the owner's deliveries to the origin that fall due
   * before `until` (and that no worker holds) due at `until`. Asked when the breaker opens and again
   * each time a job of the owner arrives while it is open (it may come from a subscription not seen
   * before, or have been written since).
   */
  deferBacklog?: (backlog: Backlog, until: number) => void;
  /** Each change of a breaker's state. */
  onBreakerChange?: (endpoint: Endpoint, change: BreakerChange) => void;
  /** A breaker that was not closed forgotten to keep their number bounded (see `maxBreakers`). */
  onBreakerForgotten?: (endpoint: Endpoint) => void;
  /** Breakers remembered at most (default 10,000). */
  maxBreakers?: number;
}

const breakerKey = (origin: string, owner: string) => `${origin} ${owner}`;

function endpointOf(key: string): Endpoint {
  const space = key.indexOf(' ');
  return { origin: key.slice(0, space), owner: key.slice(space + 1) };
}

export class OriginDispatcher<J extends Routable> {
  /** Jobs held in memory (queued or in flight) over all origins before claiming stops. */
  readonly capacity: number;
  /** Jobs held in memory for one origin before its subscriptions are left out of claims. */
  private readonly perOriginBuffer: number;
  /** Jobs held in memory for one owner within an origin before its subscriptions are left out of claims. */
  private readonly perOwnerBuffer: number;
  private readonly maxBreakers: number;
  private readonly origins = new Map<string, OriginQueue<J>>();
  /**
   * Breakers of the (origin, owner) pairs that have failed lately, oldest first. One that is closed
   * with no failure counted is dropped: it has nothing to remember.
   */
  private readonly breakers = new Map<string, Watch>();
  private inflight = 0;
  private held = 0;

  constructor(private readonly options: DispatcherOptions<J>) {
    if (!(Number.isInteger(options.perOrigin) && options.perOrigin >= 1 && options.perOrigin <= options.maxInFlight))
      throw new RangeError(
        `requests in flight per endpoint: expected an integer from 1 to ${options.maxInFlight}, got ${options.perOrigin}`,
      );
    if (!(Number.isInteger(options.perOwner) && options.perOwner >= 1 && options.perOwner <= options.perOrigin))
      throw new RangeError(
        `requests in flight per owner of an endpoint: expected an integer from 1 to ${options.perOrigin}, got ${options.perOwner}`,
      );
    this.capacity = options.maxInFlight * 4;
    this.perOriginBuffer = options.perOrigin * 8;
    this.perOwnerBuffer = options.perOwner * 8;
    this.maxBreakers = options.maxBreakers ?? 10_000;
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
   * Subscriptions whose lane, or whose origin as a whole, already holds its full buffer: the next
   * claim leaves them out. An owner new to a full origin is not left out (it has no subscription
   * here yet), so it gets its turn. An owner whose breaker is open is not left out either: its
   * backlog was put off in the database when the breaker opened, so a claim meets only what fell
   * due since (a new write, a subscription not seen before), and that goes straight back with its
   * backlog put off again; leaving it out instead would have every claim step over a backlog that
   * keeps growing.
   */
  saturatedSubscriptions(): number[] {
    const out: number[] = [];
    for (const o of this.origins.values()) {
      const full = o.held >= this.perOriginBuffer;
      for (const lane of o.lanes.values())
        if (full || lane.queue.length + lane.inflight >= this.perOwnerBuffer) out.push(...lane.subscriptions);
    }
    return out;
  }

  /** Jobs sent and not settled yet. */
  get inFlight(): number {
    return this.inflight;
  }

  /** Jobs of one origin sent and not settled yet (of one owner there, when given). */
  inFlightTo(origin: string, owner?: string): number {
    const o = this.origins.get(origin);
    if (owner === undefined) return o?.inflight ?? 0;
    return o?.lanes.get(owner)?.inflight ?? 0;
  }

  /** The state of each breaker that is not closed. */
  openEndpoints(): (Endpoint & { state: 'open' | 'half-open' })[] {
    const open: (Endpoint & { state: 'open' | 'half-open' })[] = [];
    for (const [key, { breaker: b }] of this.breakers) if (b.state !== 'closed') open.push({ ...endpointOf(key), state: b.state });
    return open;
  }

  /** Takes every job not yet sent out of the queues (a stopping worker hands them back). */
  dropQueued(): J[] {
    const dropped: J[] = [];
    for (const [origin, o] of this.origins) {
      for (const lane of o.lanes.values()) {
        o.held -= lane.queue.length;
        dropped.push(...lane.queue.splice(0));
        this.forgetIfDone(origin, o, lane);
      }
    }
    this.held -= dropped.length;
    return dropped;
  }

  enqueue(job: J): void {
    let o = this.origins.get(job.origin);
    if (!o) this.origins.set(job.origin, (o = { inflight: 0, held: 0, lanes: new Map() }));
    let lane = o.lanes.get(job.owner);
    if (!lane) {
      lane = {
        owner: job.owner,
        key: breakerKey(job.origin, job.owner),
        storeId: job.storeId,
        inflight: 0,
        queue: [],
        subscriptions: new Set(),
      };
      o.lanes.set(job.owner, lane);
    }
    const watch = this.startsOver(lane.key, job) ? undefined : this.breakers.get(lane.key);
    if (watch) watchSubscription(watch, job.subscriptionId);
    if (watch?.breaker.gate() === 'wait') {
      // Its owner's breaker is open: back to the database at once, holding nothing here, and with it
      // whatever else of the owner has fallen due since its backlog was last put off.
      this.forgetIfDone(job.origin, o, lane);
      this.options.handBack([job], watch.breaker.reopenAt);
      this.deferBacklog(job.origin, lane.owner, watch);
      return;
    }
    lane.subscriptions.add(job.subscriptionId);
    lane.queue.push(job);
    o.held++;
    this.held++;
    this.pump(job.origin, o);
  }

  /** Starts jobs of the origin's lanes in turn while the origin and the worker have free slots. */
  private pump(origin: string, o: OriginQueue<J>): void {
    while (o.inflight < this.options.perOrigin && this.inflight < this.options.maxInFlight) {
      const lane = this.nextLane(origin, o);
      if (!lane) return;
      const job = lane.queue.shift()!;
      // To the back of the turn: every other lane with something to send goes before it again.
      o.lanes.delete(lane.owner);
      o.lanes.set(lane.owner, lane);
      const breaker = this.breakers.get(lane.key)?.breaker;
      const probe = breaker?.gate() === 'probe';
      if (probe) this.options.onBreakerChange?.({ origin, owner: lane.owner }, breaker!.startProbe());
      this.start(origin, o, lane, job, probe);
    }
  }

  /** The first lane in turn that may send now: something queued, below its cap, its breaker letting it. */
  private nextLane(origin: string, o: OriginQueue<J>): Lane<J> | undefined {
    let emptied: Lane<J>[] | undefined;
    let next: Lane<J> | undefined;
    for (const lane of o.lanes.values()) {
      if (lane.queue.length === 0 || lane.inflight >= this.options.perOwner) continue;
      const watch = this.breakers.get(lane.key);
      const gate = watch?.breaker.gate() ?? 'send';
      if (gate === 'hold') continue;
      if (gate === 'wait') {
        // Not expected (a lane's queue goes back when its breaker opens), but never sent.
        this.handBackLane(o, lane, watch!.breaker.reopenAt);
        this.deferBacklog(origin, lane.owner, watch!);
        (emptied ??= []).push(lane);
        continue;
      }
      next = lane;
      break;
    }
    // Lanes emptied by a hand-back are dropped once the turn is over.
    for (const lane of emptied ?? []) this.forgetIfDone(origin, o, lane);
    return next;
  }

  private start(origin: string, o: OriginQueue<J>, lane: Lane<J>, job: J, probe: boolean): void {
    o.inflight++;
    lane.inflight++;
    this.inflight++;
    void this.options
      .send(job)
      .catch((): EndpointVerdict => 'neutral')
      .then((result) => {
        const verdict = job.replay && !probe && result === 'failure' ? 'neutral' : result;
        o.inflight--;
        lane.inflight--;
        this.inflight--;
        o.held--;
        this.held--;
        this.judge(origin, o, lane, verdict, probe);
        this.pump(origin, o);
        // A free global slot may unblock another origin's queue.
        if (this.inflight < this.options.maxInFlight)
          for (const [other, q] of this.origins) if (q !== o && q.held > q.inflight) this.pump(other, q);
        this.forgetIfDone(origin, o, lane);
        this.options.onJobDone();
      });
  }

  /** Hands an attempt's verdict to its owner's breaker at the origin (made at its first failure). */
  private judge(origin: string, o: OriginQueue<J>, lane: Lane<J>, verdict: EndpointVerdict, probe: boolean): void {
    let watch = this.breakers.get(lane.key);
    if (!watch) {
      if (verdict !== 'failure') return;
      const breaker = new CircuitBreaker(this.options.breaker, this.options.clock);
      watch = { breaker, madeAt: this.options.clock(), storeId: lane.storeId, subscriptions: new Set() };
      for (const id of lane.subscriptions) watchSubscription(watch, id);
      this.remember(lane.key, watch);
    }
    const { breaker } = watch;
    const change = breaker.record(verdict, probe);
    if (change) {
      this.options.onBreakerChange?.({ origin, owner: lane.owner }, change);
      // Opened: what waits in this owner's queue goes back now, without a send, and so does the
      // rest of its backlog at this origin, still in the database.
      if (change.to === 'open') {
        this.handBackLane(o, lane, breaker.reopenAt);
        this.deferBacklog(origin, lane.owner, watch);
      }
    }
    if (breaker.idle) this.breakers.delete(lane.key);
  }

  private deferBacklog(origin: string, owner: string, watch: Watch): void {
    const { storeId, madeAt } = watch;
    this.options.deferBacklog?.({ origin, owner, storeId, madeAt, subscriptions: [...watch.subscriptions] }, watch.breaker.reopenAt);
  }

  /** Forgets (closes) the owner's breaker at the origin if the job's subscription was enabled again since it was made. */
  private startsOver(key: string, job: J): boolean {
    const watch = this.breakers.get(key);
    if (!watch || job.enabledAt === undefined || job.enabledAt === null || job.enabledAt <= watch.madeAt) return false;
    this.breakers.delete(key);
    const from = watch.breaker.state;
    if (from !== 'closed') this.options.onBreakerChange?.(endpointOf(key), { from, to: 'closed', failures: 0 });
    return true;
  }

  private handBackLane(o: OriginQueue<J>, lane: Lane<J>, until: number): void {
    if (lane.queue.length === 0) return;
    const jobs = lane.queue.splice(0);
    o.held -= jobs.length;
    this.held -= jobs.length;
    this.options.handBack(jobs, until);
  }

  /**
   * Keeps a new breaker, first forgetting the oldest ones with nothing in memory when there are
   * too many. A forgotten breaker costs only a few attempts more: its owner's next delivery goes
   * out as if the endpoint were healthy, and a run of failures opens it again.
   */
  private remember(key: string, watch: Watch): void {
    if (this.breakers.size >= this.maxBreakers) {
      for (const [old, { breaker: b }] of this.breakers) {
        if (this.breakers.size < this.maxBreakers) break;
        const endpoint = endpointOf(old);
        if (this.origins.get(endpoint.origin)?.lanes.has(endpoint.owner) || b.state === 'half-open') continue;
        this.breakers.delete(old);
        if (b.state !== 'closed') this.options.onBreakerForgotten?.(endpoint);
      }
    }
    this.breakers.set(key, watch);
  }

  private forgetIfDone(origin: string, o: OriginQueue<J>, lane: Lane<J>): void {
    if (lane.inflight === 0 && lane.queue.length === 0 && o.lanes.get(lane.owner) === lane) o.lanes.delete(lane.owner);
    if (o.lanes.size === 0 && this.origins.get(origin) === o) this.origins.delete(origin);
  }
}

function watchSubscription(watch: Watch, subscriptionId: number): void {
  if (watch.subscriptions.size < MAX_WATCHED) watch.subscriptions.add(subscriptionId);
}
