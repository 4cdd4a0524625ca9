// The platform's Prometheus metrics. Counters are bumped where the thing happens (the HTTP hooks,
// the token route, the Admin API's rate limit, the delivery worker); gauges of state kept
// elsewhere (the outbox backlog, the connection pool, the dependencies) are read at scrape time,
// so they are never stale and cost nothing between scrapes.
//
// Each platform has its own registry: a process can run several platforms (the tests do), and one
// platform's counts must not show up in another's scrape. Process metrics (CPU, memory, event
// loop, GC) describe the process, not a platform, so they live once per process and are appended
// to every scrape.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Clock } from '../domain/clock.ts';
import type { StorageStats } from '../storage/ports/storage-stats.ts';
import type { RateLimiter } from './rate-limiter.ts';
import type { Readiness } from './readiness.ts';

/**
 * How a webhook attempt ended: delivered, failed with a retry scheduled, failed for good, or
 * broke off without an outcome (a fault of the worker, not of the receiver).
 */
export type AttemptResult = 'delivered' | 'retry' | 'dead' | 'error';

/** What the delivery worker reports; the worker knows nothing more of metrics. */
export interface DeliveryMetrics {
  attemptStarted(): void;
  attemptFinished(result: AttemptResult): void;
  /**
   * A circuit breaker (one owner's deliveries to one endpoint) changed state; `notClosed` breakers
   * of this process are now open or half-open.
   */
  breakerChanged?(to: 'open' | 'half-open' | 'closed', notClosed: number): void;
  /** Breakers open or half-open now, after some were forgotten without a change of state. */
  breakersNotClosed?(notClosed: number): void;
  /** Deliveries handed back or put off unsent because their owner's breaker at their endpoint is open. */
  deliveriesDeferred?(count: number): void;
}

/**
 * Which limit refused a request: the Admin API's bucket, the login throttle, a token-endpoint
 * bucket (per client in a store, per store), or token introspection's (per resource server).
 */
export type Limiter = 'admin_api' | 'login' | 'token_client' | 'token_store' | 'introspection';

/** How a token introspection request ended: an answer (active or not), or its refusal. */
export type IntrospectionOutcome = 'active' | 'inactive' | 'invalid_client' | 'invalid_request' | 'rate_limited' | 'error';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const GRANT_TYPES = new Set(['authorization_code', 'refresh_token']);

let processRegistry: Registry | undefined;

function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export interface MetricsSources {
  readiness: Readiness;
  storage: StorageStats;
  clock: Clock;
  /**
   * The limiter of the Admin API and the token endpoint, whose fallbacks from shared (Redis) to local buckets are counted; none when
   * off.
   */
  rateLimiter?: Pick<RateLimiter, 'fallbacks'> | undefined;
}

export class PlatformMetrics implements DeliveryMetrics {
  private readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'storegate_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'storegate_http_request_duration_seconds',
    help: 'Time from receiving a request to sending its response, by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  private readonly grants = new Counter({
    name: 'storegate_token_grants_total',
    help: 'Token endpoint requests by grant type and outcome (issued, rate_limited, or the OAuth error code)',
    labelNames: ['grant_type', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly introspections = new Counter({
    name: 'storegate_token_introspections_total',
    help: 'Token introspection requests by outcome: active, inactive, invalid_client, invalid_request, rate_limited or error',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly rejections = new Counter({
    name: 'storegate_rate_limit_rejections_total',
    help:
      'Requests refused by a limit: admin_api (429 of the leaky bucket), login (locked account or address), token_client or ' +
      'token_store (429 of the token endpoint, per client in a store or per store), introspection (429 per resource server)',
    labelNames: ['limiter'] as const,
    registers: [this.registry],
  });
  private readonly fallbacks = new Counter({
    name: 'storegate_rate_limit_fallbacks_total',
    help: 'Times this node fell back from the shared (Redis) rate-limit buckets to its own',
    registers: [this.registry],
  });
  private fallbacksSeen = 0;
  private readonly attempts = new Counter({
    name: 'storegate_webhook_attempts_total',
    help:
      'Webhook delivery attempts made by this process, by outcome: delivered, retry (failed, retried later), dead (failed, no retry ' +
      'left) or error (no outcome)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly inFlight = new Gauge({
    name: 'storegate_webhook_attempts_in_flight',
    help: 'Webhook delivery attempts this process is sending now',
    registers: [this.registry],
  });
  private readonly endpointsOpen = new Gauge({
    name: 'storegate_webhook_endpoints_open',
    help: 'Circuit breakers of this process (one per owner at each webhook endpoint origin) open or half-open (probing)',
    registers: [this.registry],
  });
  private readonly breakerTransitions = new Counter({
    name: 'storegate_webhook_breaker_transitions_total',
    help:
      'Changes of state of the webhook circuit breakers (owner at an endpoint) in this process, by the state entered: open, ' +
      'half-open, closed',
    labelNames: ['to'] as const,
    registers: [this.registry],
  });
  private readonly deferred = new Counter({
    name: 'storegate_webhook_deliveries_deferred_total',
    help:
      "Webhook deliveries handed back or put off unsent (no attempt counted) because their owner's circuit breaker at their " +
      'endpoint was open',
    registers: [this.registry],
  });
  private readonly filtered = new Counter({
    name: 'storegate_webhook_deliveries_filtered_total',
    help:
      "Webhook deliveries not written because the subscription's filter did not match the change, by topic (counted as the change " +
      'is written)',
    labelNames: ['topic'] as const,
    registers: [this.registry],
  });
  private readonly pending = new Gauge({
    name: 'storegate_webhook_outbox_pending',
    help: 'Webhook deliveries not yet delivered, dead or cancelled (retries scheduled later included)',
    registers: [this.registry],
  });
  private readonly due = new Gauge({
    name: 'storegate_webhook_outbox_due',
    help: 'Pending webhook deliveries whose time has come (in flight included)',
    registers: [this.registry],
  });
  private readonly oldestDue = new Gauge({
    name: 'storegate_webhook_outbox_oldest_due_age_seconds',
    help: 'How long the longest-waiting due webhook delivery has been due; 0 when none is',
    registers: [this.registry],
  });
  private readonly poolConnections: Gauge<'state'>;
  private readonly poolWaiting: Gauge;
  private readonly poolMax: Gauge;
  private readonly dependencyUp = new Gauge({
    name: 'storegate_dependency_up',
    help: 'Whether a dependency answers as it should (1) or not (0)',
    labelNames: ['dependency'] as const,
    registers: [this.registry],
  });
  private readonly dependencyDegraded = new Gauge({
    name: 'storegate_dependency_degraded',
    help: 'Whether the node serves without a dependency, in a reduced way (1), e.g. a local rate-limit bucket while Redis is away',
    labelNames: ['dependency'] as const,
    registers: [this.registry],
  });
  private readonly ready = new Gauge({
    name: 'storegate_ready',
    help: 'Whether this node takes traffic (what /readyz answers): 1 ready, 0 not',
    registers: [this.registry],
  });
  private readonly draining = new Gauge({
    name: 'storegate_draining',
    help: 'Whether this node is shutting down and draining (1) or not (0)',
    registers: [this.registry],
  });

  constructor(private readonly sources: MetricsSources) {
    // SQLite has no pool: its gauges are left out of the exposition rather than shown as zeros.
    const registers = sources.storage.pool() ? [this.registry] : [];
    this.poolConnections = new Gauge({
      name: 'storegate_db_pool_connections',
      help: 'PostgreSQL pool connections of this process by state (in_use, idle); absent on SQLite',
      labelNames: ['state'] as const,
      registers,
    });
    this.poolWaiting = new Gauge({
      name: 'storegate_db_pool_waiting',
      help: 'Queries waiting for a PostgreSQL pool connection; absent on SQLite',
      registers,
    });
    this.poolMax = new Gauge({
      name: 'storegate_db_pool_max',
      help: 'Connections the PostgreSQL pool may open; absent on SQLite',
      registers,
    });
  }

  /** One answered request; `route` is the route's pattern (undefined when no route matched). */
  observeRequest(method: string, route: string | undefined, status: number, seconds: number): void {
    const m = METHODS.has(method) ? method : 'other';
    const r = route ?? 'unmatched';
    this.requests.inc({ method: m, route: r, status: String(status) });
    this.latency.observe({ method: m, route: r }, seconds);
  }

  /** One token request: `issued`, `rate_limited`, or the OAuth error code it was refused with. */
  tokenGrant(grantType: string | undefined, outcome: string): void {
    const type = grantType === undefined || grantType === '' ? 'none' : GRANT_TYPES.has(grantType) ? grantType : 'unsupported';
    this.grants.inc({ grant_type: type, outcome });
  }

  /** One token introspection request and how it ended. */
  introspection(outcome: IntrospectionOutcome): void {
    this.introspections.inc({ outcome });
  }

  rateLimited(limiter: Limiter): void {
    this.rejections.inc({ limiter });
  }

  attemptStarted(): void {
    this.inFlight.inc();
  }

  attemptFinished(result: AttemptResult): void {
    this.inFlight.dec();
    this.attempts.inc({ outcome: result });
  }

  breakerChanged(to: 'open' | 'half-open' | 'closed', notClosed: number): void {
    this.breakerTransitions.inc({ to });
    this.endpointsOpen.set(notClosed);
  }

  breakersNotClosed(notClosed: number): void {
    this.endpointsOpen.set(notClosed);
  }

  deliveriesDeferred(count: number): void {
    this.deferred.inc(count);
  }

  /** Deliveries of one event that subscriptions' filters left out. */
  deliveriesFiltered(topic: string, count: number): void {
    this.filtered.inc({ topic }, count);
  }

  /** The Prometheus text exposition of this platform and of the process. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    await Promise.all([this.readDependencies(), this.readBacklog()]);
    this.readPool();
    this.readFallbacks();
    const body = (await this.registry.metrics()) + (await processMetrics().metrics());
    return { contentType: this.registry.contentType, body };
  }

  private async readDependencies(): Promise<void> {
    const report = await this.sources.readiness.report();
    this.ready.set(report.ready ? 1 : 0);
    this.draining.set(report.draining ? 1 : 0);
    this.dependencyUp.reset();
    this.dependencyDegraded.reset();
    for (const [dependency, status] of Object.entries(report.dependencies)) {
      this.dependencyUp.set({ dependency }, status === 'up' ? 1 : 0);
      this.dependencyDegraded.set({ dependency }, status === 'degraded' ? 1 : 0);
    }
  }

  private async readBacklog(): Promise<void> {
    try {
      const now = this.sources.clock();
      const backlog = await this.sources.storage.outboxBacklog(now);
      this.pending.set(backlog.pending);
      this.due.set(backlog.due);
      this.oldestDue.set(backlog.oldestDueAt === null ? 0 : Math.max(0, now - backlog.oldestDueAt) / 1000);
    } catch {
      // The database is away (storegate_dependency_up says so): NaN, "unknown", beats a stale figure.
      for (const gauge of [this.pending, this.due, this.oldestDue]) gauge.set(Number.NaN);
    }
  }

  private readFallbacks(): void {
    const total = this.sources.rateLimiter?.fallbacks ?? 0;
    if (total > this.fallbacksSeen) this.fallbacks.inc(total - this.fallbacksSeen);
    this.fallbacksSeen = Math.max(total, this.fallbacksSeen);
  }

  private readPool(): void {
    const pool = this.sources.storage.pool();
    if (!pool) return;
    this.poolConnections.set({ state: 'in_use' }, pool.inUse);
    this.poolConnections.set({ state: 'idle' }, pool.idle);
    this.poolWaiting.set(pool.waiting);
    this.poolMax.set(pool.max);
  }
}
