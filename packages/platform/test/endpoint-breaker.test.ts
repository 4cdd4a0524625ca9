// The circuit breaker of an endpoint (pure, on a test clock) and the dispatcher that applies it
// with the per-endpoint cap, driven by sends the test settles by hand: no timers, no sleeps.
import { describe, expect, it } from 'vitest';
import { type BreakerChange, CircuitBreaker, type EndpointVerdict, verdictOf } from '../src/webhooks/circuit-breaker.ts';
import { OriginDispatcher } from '../src/webhooks/origin-dispatcher.ts';

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
  subscriptionId: number;
}

/** A dispatcher whose sends stay open until the test settles them. */
function harness(options: { perOrigin: number; maxInFlight: number }) {
  const c = clock();
  const open = new Map<number, (v: EndpointVerdict) => void>();
  const sent: TestJob[] = [];
  const handedBack: { ids: number[]; until: number }[] = [];
  const changes: { origin: string; change: BreakerChange }[] = [];
  const d = new OriginDispatcher<TestJob>({
    ...options,
    breaker: SETTINGS,
    clock: c.fn,
    send: (job) =>
      new Promise<EndpointVerdict>((resolve) => {
        sent.push(job);
        open.set(job.id, resolve);
      }),
    handBack: (jobs, until) => handedBack.push({ ids: jobs.map((j) => j.id), until }),
    onBreakerChange: (origin, change) => changes.push({ origin, change }),
    onJobDone: () => {},
  });
  let next = 1;
  return {
    c,
    d,
    sent,
    handedBack,
    changes,
    enqueue(origin: string, subscriptionId: number, n = 1): number[] {
      const ids: number[] = [];
      for (let i = 0; i < n; i++) {
        const id = next++;
        ids.push(id);
        d.enqueue({ id, origin, subscriptionId });
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
    expect(h.changes).toEqual([{ origin: HANG, change: { from: 'closed', to: 'open', failures: 3, reopenAt } }]);
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
