// A circuit breaker for one receiving endpoint: pure state, time read from an injected clock.
// Closed, it lets every delivery through and counts failures in a row; after enough of them it
// opens for a cool-down, during which deliveries are not sent at all (the dispatcher hands them
// back to wait in the database instead of holding worker slots). When the cool-down is over the
// next delivery goes out alone as a probe (half-open): its success closes the breaker, its
// failure opens it again for a longer cool-down, up to a cap. Only the probe's answer counts while
// the breaker is not closed: attempts that started before it opened may still end either way.
import type { Clock } from '../domain/clock.ts';

export type BreakerState = 'closed' | 'open' | 'half-open';

/**
 * What an attempt says about its endpoint: it answered (success), it did not or it is overloaded
 * (failure), or nothing (neutral: the attempt never reached it).
 */
export type EndpointVerdict = 'success' | 'failure' | 'neutral';

export interface BreakerSettings {
  /** Failures in a row that open the breaker. */
  failures: number;
  /** The first cool-down; each opening in a row without a success doubles it. */
  coolDownMs: number;
  /** The longest cool-down. */
  maxCoolDownMs: number;
}

export const DEFAULT_BREAKER: BreakerSettings = Object.freeze({ failures: 10, coolDownMs: 10_000, maxCoolDownMs: 300_000 });

/**
 * What the dispatcher may do with a delivery for the endpoint now: send it (closed), send it as
 * the probe (cool-down over), keep it queued while the probe is out, or hand it back until
 * `reopenAt`.
 */
export type Gate = 'send' | 'probe' | 'hold' | 'wait';

export interface BreakerChange {
  from: BreakerState;
  to: BreakerState;
  /** Failures in a row when it opened. */
  failures: number;
  /** When it opened: the end of its cool-down. */
  reopenAt?: number;
}

/**
 * Whether an attempt's result says the endpoint is down or overloaded. An answer of the receiver
 * is a success for the breaker even when it is a 4xx (the delivery is retried or dies by its own
 * schedule; the endpoint answered quickly and holds no slot), except 408 and 429, which say it
 * is overloaded. No answer (timeout, refused or reset connection) and 5xx are failures. A send
 * refused before any connection (an address that is not allowed) says nothing about the endpoint.
 */
export function verdictOf(attempt: { status: number | null; error: string | null }): EndpointVerdict {
  if (attempt.status === null) return attempt.error?.startsWith('refused') ? 'neutral' : 'failure';
  if (attempt.status >= 500 || attempt.status === 408 || attempt.status === 429) return 'failure';
  return 'success';
}

export class CircuitBreaker {
  private current: BreakerState = 'closed';
  private streak = 0;
  /** Openings in a row without a success in between: the cool-down grows with them. */
  private openings = 0;
  private until = 0;

  constructor(
    private readonly settings: BreakerSettings,
    private readonly clock: Clock,
  ) {}

  get state(): BreakerState {
    return this.current;
  }

  /** End of the current cool-down (meaningful while open). */
  get reopenAt(): number {
    return this.until;
  }

  /** Closed with no failure counted: nothing to remember about the endpoint. */
  get idle(): boolean {
    return this.current === 'closed' && this.streak === 0;
  }

  gate(): Gate {
    if (this.current === 'closed') return 'send';
    if (this.current === 'half-open') return 'hold';
    return this.clock() >= this.until ? 'probe' : 'wait';
  }

  /** The probe goes out: half-open until its result comes back. Only when `gate()` says 'probe'. */
  startProbe(): BreakerChange {
    this.current = 'half-open';
    return { from: 'open', to: 'half-open', failures: this.streak };
  }

  /** A probe that was never sent (a stopping worker took it back): the next delivery probes instead. */
  abandonProbe(): void {
    if (this.current === 'half-open') this.current = 'open';
  }

  /**
   * The result of an attempt; `probe` says whether it was the probe. Returns the change of state
   * it caused, if any.
   */
  record(verdict: EndpointVerdict, probe: boolean): BreakerChange | undefined {
    if (this.current !== 'closed' && !probe) return undefined;
    if (verdict === 'neutral') {
      // The probe never reached the endpoint: the next delivery probes in its place.
      this.abandonProbe();
      return undefined;
    }
    if (verdict === 'success') {
      const from = this.current;
      this.streak = 0;
      this.openings = 0;
      this.current = 'closed';
      return from === 'closed' ? undefined : { from, to: 'closed', failures: 0 };
    }
    this.streak++;
    if (this.current === 'closed' && this.streak < this.settings.failures) return undefined;
    const from = this.current;
    this.openings++;
    const coolDown = Math.min(this.settings.maxCoolDownMs, this.settings.coolDownMs * 2 ** Math.min(this.openings - 1, 30));
    this.until = this.clock() + coolDown;
    this.current = 'open';
    return { from, to: 'open', failures: this.streak, reopenAt: this.until };
  }
}
