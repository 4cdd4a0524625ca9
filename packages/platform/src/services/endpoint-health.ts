// Endpoint health of one app, as the partner dashboard and `storegate webhooks health` show it: per
// endpoint (an origin: scheme, host and port), attempts per hour by outcome, the latency
// percentiles of its answers per hour and over the window, the state of the app's circuit breakers
// there (one per store that installed the app, as the workers last wrote them), and when the next
// pending delivery to it is due. Read from the hourly rollup the workers add to, never from the
// attempts themselves, so the cost follows the app's endpoints and hours, not its traffic.
import type { Clock } from '../domain/clock.ts';
import {
  type AttemptOutcomeKind,
  endpointOrigin,
  HOUR_MS,
  hourOf,
  LATENCY_BOUNDS,
  latencyQuantile,
  OUTCOME_KINDS,
} from '../domain/endpoint-health.ts';
import { BadRequestError } from '../domain/errors.ts';
import type { BreakerRow, EndpointHealthRepository, EndpointHourRow, StoredBreakerState } from '../storage/ports/endpoint-health.ts';

/** Hours a page or command may ask for: the last 7 days at most. */
export const MAX_HEALTH_HOURS = 168;
/** How long the rollup and the breakers' rows are kept: a day more than the longest window. */
export const HEALTH_RETENTION_MS = 8 * 24 * HOUR_MS;
/** Breaker rows read per app at most (the latest changes first). */
const MAX_BREAKERS = 500;

export type OutcomeCounts = Record<AttemptOutcomeKind, number> & { attempts: number };

export interface HourFigures extends OutcomeCounts {
  /** Start of the UTC hour, ISO 8601. */
  hour: string;
  /** Estimated latency percentiles of the hour's answers (the upper bound of their bucket), or null without answers. */
  p50_ms: number | null;
  p99_ms: number | null;
}

export interface BreakerFigures {
  store_id: number;
  store_name: string;
  state: StoredBreakerState;
  failures: number;
  /** While open: when its cool-down ends and the next delivery goes out as a probe. */
  reopen_at: string | null;
  changed_at: string;
}

export interface EndpointFigures {
  /** The origin every address of the endpoint shares. */
  endpoint: string;
  totals: OutcomeCounts;
  p50_ms: number | null;
  p99_ms: number | null;
  /**
   * The app's breakers at the endpoint: the worst state over its stores (open, then half-open,
   * then closed), until when the latest open one stays open, and the stores where it is not closed.
   */
  breaker: { state: StoredBreakerState; reopen_at: string | null; changed_at: string | null; stores: BreakerFigures[] };
  /** The earliest next attempt of a pending delivery to the endpoint, or null when none is pending. */
  next_attempt_at: string | null;
  hourly: HourFigures[];
}

export interface AppEndpointHealth {
  hours: number;
  /** Start of the first hour shown, and now. */
  since: string;
  until: string;
  endpoints: EndpointFigures[];
}

const iso = (ms: number) => new Date(ms).toISOString();
const RANK: Record<StoredBreakerState, number> = { closed: 0, 'half-open': 1, open: 2 };

function emptyCounts(): OutcomeCounts {
  return { delivered: 0, failed: 0, no_answer: 0, not_sent: 0, attempts: 0 };
}

function add(counts: OutcomeCounts, row: EndpointHourRow): void {
  for (const k of OUTCOME_KINDS) {
    counts[k] += row.counts[k];
    counts.attempts += row.counts[k];
  }
}

/** `hours` as asked: an integer from 1 to `MAX_HEALTH_HOURS`. */
export function checkHealthHours(hours: number): number {
  if (!Number.isInteger(hours) || hours < 1 || hours > MAX_HEALTH_HOURS)
    throw new BadRequestError(`hours must be an integer from 1 to ${MAX_HEALTH_HOURS}`);
  return hours;
}

export class EndpointHealth {
  constructor(
    private readonly repo: EndpointHealthRepository,
    private readonly clock: Clock,
  ) {}

  /** The app's endpoints over the last `hours` hours (the current hour included), by endpoint. */
  async forApp(appId: number, hours = MAX_HEALTH_HOURS): Promise<AppEndpointHealth> {
    checkHealthHours(hours);
    const now = this.clock();
    const first = hourOf(now) - (hours - 1) * HOUR_MS;
    const [rows, breakers, next] = await Promise.all([
      this.repo.hours(appId, first),
      this.repo.breakers(appId, MAX_BREAKERS),
      this.repo.nextAttempts(appId),
    ]);
    const origins = new Set<string>([...rows.map((r) => r.origin), ...breakers.map((b) => b.origin)]);
    const nextByOrigin = new Map<string, number | null>();
    for (const n of next) {
      const origin = endpointOrigin(n.address);
      origins.add(origin);
      const known = nextByOrigin.get(origin) ?? null;
      nextByOrigin.set(origin, n.next_attempt_at === null ? known : Math.min(known ?? Number.POSITIVE_INFINITY, n.next_attempt_at));
    }
    const endpoints = [...origins].sort().map((origin) =>
      this.endpoint(
        origin,
        rows.filter((r) => r.origin === origin),
        breakers.filter((b) => b.origin === origin),
        nextByOrigin.get(origin) ?? null,
        first,
        hours,
      ),
    );
    return { hours, since: iso(first), until: iso(now), endpoints };
  }

  /** Deletes figures past the retention; returns the rows deleted. */
  prune(): Promise<number> {
    return this.repo.prune(hourOf(this.clock()) - HEALTH_RETENTION_MS);
  }

  private endpoint(
    origin: string,
    rows: EndpointHourRow[],
    breakers: BreakerRow[],
    next: number | null,
    first: number,
    hours: number,
  ): EndpointFigures {
    const byHour = new Map(rows.map((r) => [r.hour, r]));
    const totals = emptyCounts();
    const latency = LATENCY_BOUNDS.map(() => 0);
    const hourly: HourFigures[] = [];
    for (let i = 0; i < hours; i++) {
      const hour = first + i * HOUR_MS;
      const row = byHour.get(hour);
      const counts = emptyCounts();
      if (row) {
        add(counts, row);
        add(totals, row);
        row.latency.forEach((n, b) => {
          latency[b] = (latency[b] ?? 0) + n;
        });
      }
      hourly.push({
        hour: iso(hour),
        ...counts,
        p50_ms: row ? latencyQuantile(row.latency, 0.5) : null,
        p99_ms: row ? latencyQuantile(row.latency, 0.99) : null,
      });
    }
    return {
      endpoint: origin,
      totals,
      p50_ms: latencyQuantile(latency, 0.5),
      p99_ms: latencyQuantile(latency, 0.99),
      breaker: breakerSummary(breakers),
      next_attempt_at: next === null ? null : iso(next),
      hourly,
    };
  }
}

function breakerSummary(rows: BreakerRow[]): EndpointFigures['breaker'] {
  let state: StoredBreakerState = 'closed';
  let reopen: number | null = null;
  for (const r of rows) {
    if (RANK[r.state] > RANK[state]) state = r.state;
    if (r.state === 'open' && r.reopen_at !== null) reopen = Math.max(reopen ?? 0, r.reopen_at);
  }
  const changed = rows.length === 0 ? null : Math.max(...rows.map((r) => r.changed_at));
  return {
    state,
    reopen_at: reopen === null ? null : iso(reopen),
    changed_at: changed === null ? null : iso(changed),
    stores: rows
      .filter((r) => r.state !== 'closed')
      .map((r) => ({
        store_id: r.store_id,
        store_name: r.store_name,
        state: r.state,
        failures: r.failures,
        reopen_at: r.reopen_at === null ? null : iso(r.reopen_at),
        changed_at: iso(r.changed_at),
      })),
  };
}
