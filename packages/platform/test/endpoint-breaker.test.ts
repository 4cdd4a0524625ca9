// The circuit breaker (pure, on a test clock) and the dispatcher that keeps one per owner at each
// endpoint with the per-endpoint and per-owner caps, driven by sends the test settles by hand: no
// timers, no sleeps.
import { describe, expect, it } from 'vitest';
import { type BreakerChange, CircuitBreaker, type EndpointVerdict, verdictOf } from '../src/webhooks/circuit-breaker.ts';
import { type Backlog, type Endpoint, OriginDispatcher } from '../src/webhooks/origin-dispatcher.ts';

const SETTINGS = { failures: 3, coolDownMs: 1000, maxCoolDownMs: 5000 };

function clock(start = 1_000_000) {
  const c = { now: start, fn: () => c.now };
  return c;
}

describe('circuit breaker', () => {
  it('opens after K failures in a row; a success in between starts the count again', () => {
    const c = clock();
    const b = new CircuitBreaker(SETTINGS, c.fn);
    expect(b.record('failure', false)).toBeUndefined();
    expect(b.record('failure', false)).toBeUndefined();
    expect(b.record('success', false)).toBeUndefined();
    expect(b.record('failure', false)).toBeUndefined();
    expect(b.record('failure', false)).toBeUndefined();
    expect(b.gate()).toBe('send');
    expect(b.record('failure', false)).toEqual({ from: 'closed', to: 'open', failures: 3, reopenAt: c.now + 1000 });
    expect(b.state).toBe('open');
    expect(b.gate()).toBe('wait');
  });

  it('neutral results (never reached the endpoint) neither count nor reset', () => {
    const b = new CircuitBreaker(SETTINGS, clock().fn);
    b.record('failure', false);
    b.record('failure', false);
    b.record('neutral', false);
    expect(b.record('failure', false)?.to).toBe('open');
  });

  it('after the cool-down one probe: others hold; success closes, failure reopens for longer, up to the cap', () => {
    const c = clock();
    const b = new CircuitBreaker(SETTINGS, c.fn);
    for (let i = 0; i < 3; i++) b.record('failure', false);
    c.now += 999;
    expect(b.gate()).toBe('wait');
    c.now += 1;
    expect(b.gate()).toBe('probe');
    expect(b.startProbe()).toEqual({ from: 'open', to: 'half-open', failures: 3 });
    expect(b.gate()).toBe('hold');
    // A late answer of an attempt sent before the opening says nothing: only the probe counts.
    expect(b.record('success', false)).toBeUndefined();
    expect(b.state).toBe('half-open');
    const reopened = b.record('failure', true);
    expect(reopened).toMatchObject({ from: 'half-open', to: 'open', reopenAt: c.now + 2000 });
    const cooldowns: number[] = [];
    for (let i = 0; i < 4; i++) {
      c.now = b.reopenAt;
      b.startProbe();
      cooldowns.push(b.record('failure', true)!.reopenAt! - c.now);
    }
    expect(cooldowns).toEqual([4000, 5000, 5000, 5000]);
    c.now = b.reopenAt;
    b.startProbe();
    expect(b.record('success', true)).toEqual({ from: 'half-open', to: 'closed', failures: 0 });
    expect(b.idle).toBe(true);
    // Closed again: the next opening starts from the first cool-down.
    for (let i = 0; i < 3; i++) b.record('failure', false);
    expect(b.reopenAt - c.now).toBe(1000);
  });

  it('a probe that never reached the endpoint lets the next delivery probe', () => {
    const c = clock();
    const b = new CircuitBreaker(SETTINGS, c.fn);
    for (let i = 0; i < 3; i++) b.record('failure', false);
    c.now = b.reopenAt;
    b.startProbe();
    expect(b.record('neutral', true)).toBeUndefined();
    expect(b.gate()).toBe('probe');
  });

  it('what counts as a failure of the endpoint', () => {
    expect(verdictOf({ status: null, error: 'timed out after 5000 ms' })).toBe('failure');
    expect(verdictOf({ status: null, error: 'connection refused' })).toBe('failure');
    expect(verdictOf({ status: 503, error: null })).toBe('failure');
    expect(verdictOf({ status: 429, error: null })).toBe('failure');
    expect(verdictOf({ status: 408, error: null })).toBe('failure');
    expect(verdictOf({ status: 200, error: null })).toBe('success');
    expect(verdictOf({ status: 404, error: null })).toBe('success');
    expect(verdictOf({ status: 302, error: null })).toBe('success');
    expect(verdictOf({ status: null, error: 'refused: the address resolves to a non-public address' })).toBe('neutral');
  });
});

interface TestJob {
  id: number;
  origin: string;
  owner: string;
  storeId: number;
  subscriptionId: number;
}

/** A dispatcher whose sends stay open until the test settles them. */
function harness(options: { perOrigin: number; maxInFlight: number; perOwner?: number; maxBreakers?: number }) {
  const c = clock();
  const open = new Map<number, (v: EndpointVerdict) => void>();
  const sent: TestJob[] = [];
  const handedBack: { ids: number[]; until: number }[] = [];
  const backlogs: { backlog: Backlog; until: number }[] = [];
  const changes: { origin: string; owner: string; change: BreakerChange }[] = [];
  const forgotten: Endpoint[] = [];
  const d = new OriginDispatcher<TestJob>({
    perOwner: options.perOrigin,
    ...options,
    breaker: SETTINGS,
    clock: c.fn,
    send: (job) =>
      new Promise<EndpointVerdict>((resolve) => {
        sent.push(job);
        open.set(job.id, resolve);
      }),
    handBack: (jobs, until) => handedBack.push({ ids: jobs.map((j) => j.id), until }),
    deferBacklog: (backlog, until) => backlogs.push({ backlog, until }),
    onBreakerChange: (endpoint, change) => changes.push({ ...endpoint, change }),
    onBreakerForgotten: (endpoint) => forgotten.push(endpoint),
    onJobDone: () => {},
  });
  let next = 1;
  return {
    c,
    d,
    sent,
    handedBack,
    backlogs,
    changes,
    forgotten,
    /** `n` jobs of one subscription; the owner's store is its position in the alphabet. */
    enqueue(origin: string, subscriptionId: number, n = 1, owner = 'A'): number[] {
      const ids: number[] = [];
      for (let i = 0; i < n; i++) {
        const id = next++;
        ids.push(id);
        d.enqueue({ id, origin, owner, storeId: owner.charCodeAt(0) - 64, subscriptionId });
      }
      return ids;
    },
    /** Settles a send and lets the dispatcher's continuation run. */
    async settle(id: number, verdict: EndpointVerdict): Promise<void> {
      const resolve = open.get(id);
      if (!resolve) throw new Error(`job ${id} is not in flight`);
      open.delete(id);
      resolve(verdict);
      for (let i = 0; i < 5; i++) await Promise.resolve();
    },
    inFlight: () => [...open.keys()],
  };
}

const HANG = 'http://127.0.0.1:1001';
const OK = 'http://127.0.0.1:1002';

describe('dispatcher: per-endpoint cap and breaker', () => {
  it('a hanging endpoint never holds more than its cap of slots; the healthy one gets every delivery through', async () => {
    const h = harness({ perOrigin: 3, maxInFlight: 8 });
    h.enqueue(HANG, 1, 20);
    expect(h.d.inFlightTo(HANG)).toBe(3);
    const healthy = h.enqueue(OK, 2, 40);
    // The hanging endpoint's sends never settle; the healthy ones are answered one by one.
    const delivered = new Set<number>();
    while (delivered.size < healthy.length) {
      const id = h.inFlight().find((i) => healthy.includes(i));
      expect(id, 'a healthy delivery in flight').toBeDefined();
      await h.settle(id!, 'success');
      delivered.add(id!);
      expect(h.d.inFlightTo(HANG)).toBeLessThanOrEqual(3);
      expect(h.d.inFlightTo(OK)).toBeLessThanOrEqual(3);
    }
    expect(h.d.inFlightTo(HANG)).toBe(3);
    expect(h.sent.filter((j) => j.origin === HANG)).toHaveLength(3);
    expect(h.d.buffered).toBe(20);
    // Its full queue keeps its subscription out of the next claims.
    h.enqueue(HANG, 1, 4);
    expect(h.d.saturatedSubscriptions()).toEqual([1]);
  });

  it('open after K failures: queued jobs and whatever else comes for it handed back until the reopen time, no sends', async () => {
    const h = harness({ perOrigin: 3, maxInFlight: 8 });
    const ids = h.enqueue(HANG, 7, 10);
    await h.settle(ids[0]!, 'failure');
    await h.settle(ids[1]!, 'failure');
    expect(h.handedBack).toHaveLength(0);
    await h.settle(ids[2]!, 'failure');
    const reopenAt = h.c.now + SETTINGS.coolDownMs;
    expect(h.changes).toEqual([{ origin: HANG, owner: 'A', change: { from: 'closed', to: 'open', failures: 3, reopenAt } }]);
    // Two more were sent as the first two failures freed their slots; the third opened the breaker
    // and the other five went back at once.
    expect(h.sent).toHaveLength(5);
    expect(h.handedBack).toEqual([{ ids: ids.slice(5), until: reopenAt }]);
    // Its subscriptions are claimed as usual: what comes goes back at once, so its backlog leaves
    // the due range instead of piling up in front of every claim.
    expect(h.d.saturatedSubscriptions()).toEqual([]);
    // Whatever else arrives for it while open goes back too, without a send.
    h.enqueue(HANG, 8, 2);
    expect(h.sent).toHaveLength(5);
    expect(h.handedBack.slice(1)).toEqual([
      { ids: [11], until: reopenAt },
      { ids: [12], until: reopenAt },
    ]);
    expect(h.d.buffered).toBe(2);
    // Attempts sent before the opening end as they will; they change nothing.
    for (const id of ids.slice(3, 5)) await h.settle(id, 'success');
    expect(h.changes).toHaveLength(1);
    expect(h.d.buffered).toBe(0);
    expect(h.d.inFlight).toBe(0);
  });

  it('after the cool-down exactly one probe; the rest wait in memory without a slot; its success closes and lets them go', async () => {
    const h = harness({ perOrigin: 3, maxInFlight: 8 });
    const first = h.enqueue(HANG, 7, 3);
    for (const id of first) await h.settle(id, 'failure');
    h.c.now += SETTINGS.coolDownMs;
    expect(h.d.saturatedSubscriptions()).toEqual([]);
    const due = h.enqueue(HANG, 7, 5);
    expect(h.sent.slice(3).map((j) => j.id)).toEqual([due[0]]);
    expect(h.d.inFlightTo(HANG)).toBe(1);
    expect(h.changes.at(-1)?.change).toEqual({ from: 'open', to: 'half-open', failures: 3 });
    // While the probe is out nothing more is sent; the others wait in its queue, without a slot,
    // until the queue is full and its subscriptions are left out of claims.
    h.enqueue(HANG, 7, 18);
    expect(h.d.inFlightTo(HANG)).toBe(1);
    expect(h.handedBack).toHaveLength(0);
    expect(h.d.saturatedSubscriptions()).toEqual([]);
    h.enqueue(HANG, 7, 1);
    expect(h.d.saturatedSubscriptions()).toEqual([7]);
    expect(h.d.inFlight).toBe(1);
    await h.settle(due[0]!, 'success');
    expect(h.changes.at(-1)?.change).toEqual({ from: 'half-open', to: 'closed', failures: 0 });
    expect(h.d.inFlightTo(HANG)).toBe(3);
    expect(h.d.saturatedSubscriptions()).toEqual([]);
  });

  it('a failed probe reopens for twice as long and hands back what waited on it', async () => {
    const h = harness({ perOrigin: 3, maxInFlight: 8 });
    for (const id of h.enqueue(HANG, 7, 3)) await h.settle(id, 'failure');
    h.c.now += SETTINGS.coolDownMs;
    const due = h.enqueue(HANG, 7, 4);
    await h.settle(due[0]!, 'failure');
    expect(h.changes.at(-1)?.change).toEqual({ from: 'half-open', to: 'open', failures: 4, reopenAt: h.c.now + 2000 });
    expect(h.handedBack).toEqual([{ ids: due.slice(1), until: h.c.now + 2000 }]);
    expect(h.sent).toHaveLength(4);
    expect(h.d.buffered).toBe(0);
  });
});

const SHARED = 'http://127.0.0.1:1003';

describe('dispatcher: owners sharing an endpoint', () => {
  it("one owner's failures open its own breaker: another owner's deliveries to the same origin go out at once, before and after", async () => {
    const h = harness({ perOrigin: 4, perOwner: 2, maxInFlight: 8 });
    // X: one write fanned out to several subscriptions of a failing path.
    const x = h.enqueue(SHARED, 1, 6, 'X');
    for (const id of x.slice(0, 3)) await h.settle(id, 'failure');
    const reopenAt = h.c.now + SETTINGS.coolDownMs;
    expect(h.changes).toEqual([{ origin: SHARED, owner: 'X', change: { from: 'closed', to: 'open', failures: 3, reopenAt } }]);
    // Two more went out as the first failures freed X's slots; the third failure opened it.
    expect(h.handedBack).toEqual([{ ids: x.slice(4), until: reopenAt }]);
    // Y, another store's app on a healthy path of the same origin: sent at once, the clock unmoved.
    const y = h.enqueue(SHARED, 2, 3, 'Y');
    expect(h.inFlight()).toEqual(expect.arrayContaining(y.slice(0, 2)));
    expect(h.d.inFlightTo(SHARED, 'Y')).toBe(2);
    for (const id of y) {
      expect(h.inFlight()).toContain(id);
      await h.settle(id, 'success');
    }
    expect(h.sent.filter((j) => j.owner === 'Y').map((j) => j.id)).toEqual(y);
    // X's next deliveries go back unsent; Y's keep going, and nothing of Y was handed back.
    const x2 = h.enqueue(SHARED, 1, 1, 'X');
    const y2 = h.enqueue(SHARED, 2, 1, 'Y');
    expect(h.handedBack.at(-1)).toEqual({ ids: x2, until: reopenAt });
    expect(h.inFlight()).toContain(y2[0]);
    expect(h.handedBack.flatMap((b) => b.ids).some((id) => y.includes(id) || y2.includes(id))).toBe(false);
    expect(h.changes.every((c) => c.owner === 'X')).toBe(true);
    expect(h.d.openEndpoints()).toEqual([{ origin: SHARED, owner: 'X', state: 'open' }]);
    // Y's successes do not close X's breaker: only X's own probe does, after its cool-down.
    h.c.now = reopenAt;
    const probe = h.enqueue(SHARED, 1, 2, 'X');
    expect(h.changes.at(-1)).toEqual({ origin: SHARED, owner: 'X', change: { from: 'open', to: 'half-open', failures: 3 } });
    expect(h.inFlight()).toContain(probe[0]);
    expect(h.inFlight()).not.toContain(probe[1]);
    // While X's probe is out, Y still sends up to its own cap.
    const y3 = h.enqueue(SHARED, 2, 2, 'Y');
    expect(h.d.inFlightTo(SHARED, 'Y')).toBe(2);
    expect(h.inFlight()).toEqual(expect.arrayContaining([y2[0]!, y3[0]!]));
  });

  it('a hanging owner holds at most its own cap; the other owners share the rest; the origin never has more than its cap', async () => {
    const h = harness({ perOrigin: 4, perOwner: 2, maxInFlight: 16 });
    // X's sends never settle.
    h.enqueue(SHARED, 1, 20, 'X');
    expect(h.d.inFlightTo(SHARED, 'X')).toBe(2);
    const others = ['Y', 'Z', 'W'].flatMap((owner, i) => h.enqueue(SHARED, 10 + i, 10, owner));
    const delivered = new Set<number>();
    while (delivered.size < others.length) {
      expect(h.d.inFlightTo(SHARED)).toBeLessThanOrEqual(4);
      for (const owner of ['X', 'Y', 'Z', 'W']) expect(h.d.inFlightTo(SHARED, owner)).toBeLessThanOrEqual(2);
      const id = h.inFlight().find((i) => others.includes(i));
      expect(id, "another owner's delivery in flight").toBeDefined();
      await h.settle(id!, 'success');
      delivered.add(id!);
    }
    expect(h.d.inFlightTo(SHARED, 'X')).toBe(2);
    expect(h.sent.filter((j) => j.owner === 'X')).toHaveLength(2);
    // X's full lane keeps its subscription out of the next claims; the others' are still claimed.
    h.enqueue(SHARED, 1, 2, 'X');
    expect(h.d.saturatedSubscriptions()).toEqual([1]);
  });

  it("free slots of an origin go to its owners in turn: one owner's backlog never keeps another's waiting behind it", async () => {
    const h = harness({ perOrigin: 2, perOwner: 2, maxInFlight: 8 });
    h.enqueue(SHARED, 1, 6, 'A');
    h.enqueue(SHARED, 2, 3, 'B');
    h.enqueue(SHARED, 3, 3, 'C');
    // Settle the oldest in flight, one at a time: each freed slot goes to the next owner in turn
    // (B and C joined the turn behind A, which was already in it).
    while (h.inFlight().length > 0) await h.settle(h.inFlight()[0]!, 'success');
    expect(h.sent.map((j) => j.owner).join('')).toBe('AAABCABCABCA');
  });

  it('probes rotate across owners: each open breaker sends its own one probe, in turn with the others', async () => {
    const h = harness({ perOrigin: 1, perOwner: 1, maxInFlight: 8 });
    for (const owner of ['X', 'Z']) for (const id of h.enqueue(SHARED, owner === 'X' ? 1 : 2, 3, owner)) await h.settle(id, 'failure');
    expect(h.d.openEndpoints().map((e) => e.owner)).toEqual(['X', 'Z']);
    h.c.now += SETTINGS.coolDownMs;
    const x = h.enqueue(SHARED, 1, 2, 'X');
    const z = h.enqueue(SHARED, 2, 2, 'Z');
    // The origin's one slot: X's probe; Z's waits its turn, not behind X's other delivery.
    expect(h.inFlight()).toEqual([x[0]]);
    await h.settle(x[0]!, 'failure');
    expect(h.inFlight()).toEqual([z[0]]);
    expect(h.handedBack.at(-1)).toEqual({ ids: [x[1]], until: h.c.now + 2000 });
    await h.settle(z[0]!, 'success');
    expect(h.inFlight()).toEqual([z[1]]);
    expect(h.changes.filter((c) => c.change.to === 'half-open').map((c) => c.owner)).toEqual(['X', 'Z']);
    expect(h.d.openEndpoints()).toEqual([{ origin: SHARED, owner: 'X', state: 'open' }]);
  });

  it("an opening puts off the owner's backlog at that origin, in its store; every job that comes while open asks again; never for another owner", async () => {
    const h = harness({ perOrigin: 4, perOwner: 2, maxInFlight: 8 });
    const OTHER = 'http://127.0.0.1:1004';
    // X (store 24) sends to two subscriptions at the shared origin and one elsewhere; Y (store 25)
    // to a healthy path of the same origin.
    const x = [...h.enqueue(SHARED, 1, 2, 'X'), ...h.enqueue(SHARED, 2, 2, 'X')];
    h.enqueue(OTHER, 3, 1, 'X');
    const y = h.enqueue(SHARED, 5, 2, 'Y');
    for (const id of y) await h.settle(id, 'success');
    // X's breaker is made at its first failure: a subscription enabled again after then is not held by it.
    const madeAt = h.c.now;
    for (const id of [x[0]!, x[1]!]) await h.settle(id, 'failure');
    expect(h.backlogs).toEqual([]);
    await h.settle(x[2]!, 'failure');
    const reopenAt = h.c.now + SETTINGS.coolDownMs;
    // One ask, when it opens: X's subscriptions seen at that origin, in X's store, until it reopens.
    expect(h.backlogs).toEqual([{ backlog: { origin: SHARED, owner: 'X', storeId: 24, madeAt, subscriptions: [1, 2] }, until: reopenAt }]);
    // A job of X arriving while open (a subscription not seen before) goes back and asks again, with it.
    const late = h.enqueue(SHARED, 4, 1, 'X');
    expect(h.handedBack.at(-1)).toEqual({ ids: late, until: reopenAt });
    expect(h.backlogs.at(-1)).toEqual({
      backlog: { origin: SHARED, owner: 'X', storeId: 24, madeAt, subscriptions: [1, 2, 4] },
      until: reopenAt,
    });
    // Y's jobs and X's at the other origin ask nothing.
    const asked = h.backlogs.length;
    for (const id of h.enqueue(SHARED, 5, 2, 'Y')) if (h.inFlight().includes(id)) await h.settle(id, 'success');
    await h.settle(h.inFlight().find((id) => h.sent.find((j) => j.id === id)?.origin === OTHER)!, 'success');
    expect(h.backlogs).toHaveLength(asked);
    // After the cool-down the probe fails: the backlog is put off again, until the longer reopening.
    await h.settle(x[3]!, 'success');
    h.c.now = reopenAt;
    const [probe] = h.enqueue(SHARED, 1, 1, 'X');
    await h.settle(probe!, 'failure');
    expect(h.backlogs.at(-1)).toEqual({
      backlog: { origin: SHARED, owner: 'X', storeId: 24, madeAt, subscriptions: [1, 2, 4] },
      until: h.c.now + 2 * SETTINGS.coolDownMs,
    });
    expect(h.backlogs.every((b) => b.backlog.owner === 'X' && b.backlog.origin === SHARED)).toBe(true);
  });

  it('breakers kept are bounded: the oldest with nothing in memory are forgotten', async () => {
    const h = harness({ perOrigin: 3, perOwner: 1, maxInFlight: 8, maxBreakers: 3 });
    for (let i = 0; i < 5; i++) for (const id of h.enqueue(SHARED, i, 3, `O${i}`)) await h.settle(id, 'failure');
    expect(h.d.openEndpoints().map((e) => e.owner)).toEqual(['O2', 'O3', 'O4']);
    expect(h.forgotten).toEqual([
      { origin: SHARED, owner: 'O0' },
      { origin: SHARED, owner: 'O1' },
    ]);
    // A forgotten owner's next delivery goes out as to a healthy endpoint.
    const again = h.enqueue(SHARED, 0, 1, 'O0');
    expect(h.inFlight()).toEqual(again);
  });

  it('the per-owner cap is an integer from 1 to the per-endpoint cap', () => {
    const base = { perOrigin: 4, maxInFlight: 8, breaker: SETTINGS, clock: clock().fn, send: async () => 'success' as const };
    const rest = { onJobDone: () => {}, handBack: () => {} };
    for (const perOwner of [0, 5, 1.5])
      expect(() => new OriginDispatcher<TestJob>({ ...base, ...rest, perOwner })).toThrow(
        `requests in flight per owner of an endpoint: expected an integer from 1 to 4, got ${perOwner}`,
      );
  });
});
