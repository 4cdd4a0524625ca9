// /metrics on SQLite and PostgreSQL: after real traffic (token grants good and bad, Admin API calls
// up to a 429, a locked login, a webhook delivered by the platform's own worker) the Prometheus
// text names each counter with the right labels (route patterns, never URLs), the outbox and pool
// gauges read storage at scrape time, the dependency gauges follow readiness; a token protects it
// (401 without or with a wrong one), production keeps it closed without one, and no token or
// secret of the flow appears in a scrape or in the logs.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Config, loadConfig } from '../src/config.ts';
import { createPlatform, type Platform } from '../src/platform.ts';
import { PlatformMetrics } from '../src/services/metrics.ts';
import { Readiness } from '../src/services/readiness.ts';
import type { DeliveryQueue } from '../src/storage/ports/delivery-queue.ts';
import { DatabaseOutage } from '../src/webhooks/database-outage.ts';
import { EndpointBreakers } from '../src/webhooks/endpoint-breakers.ts';
import {
  api,
  consent,
  createFixture,
  createTestPlatform,
  DIALECTS,
  type Dialect,
  exchange,
  type Fixture,
  csrfFrom,
  freshPostgresUrl,
  Jar,
  refreshRequest,
  TestClock,
  type TestPlatform,
  tokenRequest,
} from './harness.ts';
import { get, post } from './web-pages.ts';
import { Receiver, until } from './webhook-receiver.ts';

const V = '/openapi/2026-01';
const METRICS_TOKEN = 'mt_'.padEnd(40, 'q7');

/** One sample of the exposition: its labels and value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format (the subset prom-client writes: no timestamps, escaped label values). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, '$1');
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** The value of the one sample of `name` whose labels include `labels`; undefined when there is none. */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)}: ${found.length} samples`);
  return found[0]?.value;
}

/** A platform with its own delivery worker, as `storegate serve` builds it, in the harness's shape. */
async function servingPlatform(dialect: Dialect, overrides: Partial<Config>): Promise<TestPlatform & { platform: Platform }> {
  const pgSchema = dialect === 'postgres' ? await freshPostgresUrl() : undefined;
  const config: Config = {
    ...loadConfig({ database: pgSchema ? pgSchema.url : ':memory:', masterKey: randomBytes(32).toString('hex'), logLevel: 'info' }),
    ...overrides,
  };
  const clock = new TestClock(Date.now() - 1000);
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const platform = await createPlatform(config, {
    clock: clock.fn,
    logStream,
    poolSize: 5,
    // Real time for the worker: the frozen clock would never let a retry come due.
    worker: { clock: Date.now, pollMs: 25, random: () => 0.5, pruneEveryMs: 0 },
  });
  await platform.http.ready();
  return {
    app: platform.http,
    services: { ...platform.services, box: platform.box },
    platform,
    db: platform.db,
    config,
    clock,
    logs,
    async close() {
      await platform.close();
      await pgSchema?.drop();
    },
  };
}

describe.each(DIALECTS)('/metrics on %s', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  let rx: Receiver;
  const secrets: string[] = [];

  const scrape = (headers: Record<string, string> = { authorization: `Bearer ${METRICS_TOKEN}` }, host = '10.0.0.5:8080') =>
    t.app.inject({ method: 'GET', url: '/metrics', headers: { host, ...headers } });
  const samples = async () => {
    const res = await scrape();
    expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
    return parseExposition(res.body);
  };

  beforeAll(async () => {
    t = await servingPlatform(dialect, {
      rateLimit: { bucket: 3, perSecond: 1 },
      metrics: { kind: 'token', token: METRICS_TOKEN },
      webhooks: { timeoutMs: 2000, retrySchedule: [60_000], disableAfterDead: 5 },
    });
    rx = await Receiver.start();
    f = await createFixture(t, { scopes: 'read_products write_products' });
    secrets.push(METRICS_TOKEN, f.clientSecret, f.password, t.config.masterKey.toString('hex'));
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });

  it('401 without a token, with a wrong one or another scheme; the right one on any Host gets the text format', async () => {
    for (const headers of [
      {},
      { authorization: `Bearer ${METRICS_TOKEN}x` },
      { authorization: 'Bearer ' },
      { authorization: `Basic ${Buffer.from(`x:${METRICS_TOKEN}`).toString('base64')}` },
      { authorization: METRICS_TOKEN },
      { 'access-token': METRICS_TOKEN },
    ] as Record<string, string>[]) {
      const res = await scrape(headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(res.json()).toMatchObject({ code: 'Unauthorized', message: 'Metrics need Authorization: Bearer <the --metrics-token>' });
      expect(res.body).not.toContain('storegate_');
    }
    for (const host of ['10.0.0.5:8080', '[fd00::5]:9100', 'localhost:8080', f.host]) {
      const res = await scrape({ authorization: `bearer ${METRICS_TOKEN}` }, host);
      expect(res.statusCode, host).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(res.body).toContain('# TYPE storegate_http_requests_total counter');
      expect(res.body).toContain('process_cpu_user_seconds_total');
    }
    expect(t.logs.join('\n')).not.toContain(METRICS_TOKEN);
  });

  it('counts requests by route pattern and status, token grants by type and outcome, rate-limit rejections, webhook attempts; reads the outbox, pool and dependencies', async () => {
    // Token grants: a code and a refresh issued; a wrong secret, an unknown code, an unknown grant type refused.
    const redirect = await consent(t, f, { scope: 'read_products write_products' });
    const code = redirect.searchParams.get('code')!;
    const pair = await exchange(t, f, code);
    const next = (await refreshRequest(t, f, pair.refresh_token)).json();
    secrets.push(code, pair.access_token, pair.refresh_token, next.access_token, next.refresh_token);
    const base = { client_id: f.clientId, client_secret: f.clientSecret, redirect_uri: f.redirectUri };
    expect(
      (await tokenRequest(t, f, { ...base, client_secret: 'wrong', grant_type: 'refresh_token', refresh_token: next.refresh_token }))
        .statusCode,
    ).toBe(401);
    expect((await tokenRequest(t, f, { ...base, grant_type: 'authorization_code', code: 'sg_ac_unknown' })).statusCode).toBe(400);
    expect((await tokenRequest(t, f, { ...base, grant_type: 'password' })).statusCode).toBe(400);
    const token = next.access_token as string;

    // A subscription, then a product created: one webhook the platform's worker delivers.
    const sub = await api(t, f, token, 'POST', `${V}/webhooks`, { address: rx.url('/metrics-hook'), topic: 'products/create' });
    expect(sub.statusCode, sub.body).toBe(201);
    const created = await api(t, f, token, 'POST', `${V}/products`, { title: 'Counted mug', price: '4.5' });
    expect(created.statusCode, created.body).toBe(201);
    // The bucket holds 3 calls (the frozen clock leaks none): the fourth is a 429.
    const id = created.json().data.id;
    expect((await api(t, f, token, 'GET', `${V}/products/${id}`)).statusCode).toBe(200);
    expect((await api(t, f, token, 'GET', `${V}/products/${id}`)).statusCode).toBe(429);
    await t.app.inject({ method: 'GET', url: '/no-such-page-4711', headers: { host: f.host } });

    // Before the worker runs, the delivery waits in the outbox; the frozen clock says for how long.
    t.clock.advance(30_000);
    let s = await samples();
    expect(value(s, 'storegate_webhook_outbox_pending')).toBe(1);
    expect(value(s, 'storegate_webhook_outbox_due')).toBe(1);
    expect(value(s, 'storegate_webhook_outbox_oldest_due_age_seconds')).toBe(30);

    await t.platform.worker!.start();
    await until(() => rx.on('/metrics-hook').length === 1, 10_000, 'the webhook');
    await t.platform.worker!.whenIdle();
    s = await samples();

    expect(value(s, 'storegate_token_grants_total', { grant_type: 'authorization_code', outcome: 'issued' })).toBe(1);
    expect(value(s, 'storegate_token_grants_total', { grant_type: 'refresh_token', outcome: 'issued' })).toBe(1);
    expect(value(s, 'storegate_token_grants_total', { grant_type: 'refresh_token', outcome: 'invalid_client' })).toBe(1);
    expect(value(s, 'storegate_token_grants_total', { grant_type: 'authorization_code', outcome: 'invalid_grant' })).toBe(1);
    expect(value(s, 'storegate_token_grants_total', { grant_type: 'unsupported', outcome: 'unsupported_grant_type' })).toBe(1);

    expect(value(s, 'storegate_http_requests_total', { method: 'POST', route: '/admin/oauth/token', status: '200' })).toBe(2);
    expect(value(s, 'storegate_http_requests_total', { method: 'POST', route: '/admin/oauth/token', status: '401' })).toBe(1);
    expect(value(s, 'storegate_http_requests_total', { method: 'POST', route: '/admin/oauth/token', status: '400' })).toBe(2);
    expect(value(s, 'storegate_http_requests_total', { method: 'POST', route: '/openapi/:version/products', status: '201' })).toBe(1);
    expect(value(s, 'storegate_http_requests_total', { method: 'GET', route: '/openapi/:version/products/:id', status: '200' })).toBe(1);
    expect(value(s, 'storegate_http_requests_total', { method: 'GET', route: '/openapi/:version/products/:id', status: '429' })).toBe(1);
    expect(value(s, 'storegate_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(value(s, 'storegate_http_request_duration_seconds_count', { method: 'POST', route: '/admin/oauth/token' })).toBe(5);
    expect(value(s, 'storegate_http_request_duration_seconds_bucket', { method: 'POST', route: '/admin/oauth/token', le: '+Inf' })).toBe(5);
    // Route patterns only: no URL, id or version of a request becomes a label.
    const routes = new Set(s.filter((x) => x.name === 'storegate_http_requests_total').map((x) => x.labels.route));
    for (const route of routes) expect(route === 'unmatched' || route!.startsWith('/'), route).toBe(true);
    for (const raw of ['no-such-page-4711', '2026-01', `/products/${id}`]) expect([...routes].join(' ')).not.toContain(raw);

    expect(value(s, 'storegate_rate_limit_rejections_total', { limiter: 'admin_api' })).toBe(1);
    expect(value(s, 'storegate_webhook_attempts_total', { outcome: 'delivered' })).toBe(1);
    expect(value(s, 'storegate_webhook_attempts_in_flight')).toBe(0);
    expect(value(s, 'storegate_webhook_outbox_pending')).toBe(0);
    expect(value(s, 'storegate_webhook_outbox_due')).toBe(0);
    expect(value(s, 'storegate_webhook_outbox_oldest_due_age_seconds')).toBe(0);

    expect(value(s, 'storegate_dependency_up', { dependency: 'database' })).toBe(1);
    expect(value(s, 'storegate_dependency_degraded', { dependency: 'database' })).toBe(0);
    expect(value(s, 'storegate_ready')).toBe(1);
    expect(value(s, 'storegate_draining')).toBe(0);
    if (dialect === 'postgres') {
      expect(value(s, 'storegate_db_pool_max')).toBe(5);
      expect(value(s, 'storegate_db_pool_waiting')).toBe(0);
      expect(value(s, 'storegate_db_pool_connections', { state: 'in_use' })).toBeGreaterThanOrEqual(0);
      expect(value(s, 'storegate_db_pool_connections', { state: 'idle' })).toBeGreaterThanOrEqual(1);
    } else {
      expect(s.some((x) => x.name.startsWith('storegate_db_pool_'))).toBe(false);
    }
  });

  it('a locked login counts as a login rejection', async () => {
    const before = value(await samples(), 'storegate_rate_limit_rejections_total', { limiter: 'login' }) ?? 0;
    const attempt = async () => {
      const jar = new Jar();
      const page = await get(t, f.host, '/admin/login', jar);
      return post(t, f.host, '/admin/login', jar, { _csrf: csrfFrom(page.body), email: f.email, password: 'wrong password' });
    };
    // Five wrong passwords lock the account; the sixth attempt is refused unchecked.
    for (let i = 0; i < 5; i++) await attempt();
    expect(value(await samples(), 'storegate_rate_limit_rejections_total', { limiter: 'login' }) ?? 0).toBe(before);
    expect((await attempt()).headers.location).toContain('locked=');
    expect(value(await samples(), 'storegate_rate_limit_rejections_total', { limiter: 'login' })).toBe(before + 1);
  });

  it('no token, code, secret, password or key of the flow appears in a scrape or in the logs', async () => {
    const body = (await scrape()).body;
    const logs = t.logs.join('\n');
    expect(secrets.length).toBeGreaterThan(8);
    for (const secret of secrets) {
      expect(body).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
  });
});

describe('/metrics access by configuration', () => {
  const KEY = 'ab'.repeat(32);
  const production = { database: ':memory:', masterKey: KEY, mode: 'production', storeDomain: 'shops.example' };

  it('--metrics-token and --metrics-public are validated with clear errors; the token is never echoed', () => {
    expect(loadConfig({ database: ':memory:', masterKey: KEY }).metrics).toEqual({ kind: 'open' });
    expect(loadConfig(production).metrics).toEqual({ kind: 'closed' });
    expect(loadConfig({ ...production, metricsPublic: 'true' }).metrics).toEqual({ kind: 'open' });
    expect(loadConfig({ ...production, metricsPublic: true }).metrics).toEqual({ kind: 'open' });
    expect(loadConfig({ ...production, metricsToken: METRICS_TOKEN }).metrics).toEqual({ kind: 'token', token: METRICS_TOKEN });
    for (const bad of ['short', 'has spaces in it, quite long', 'x'.repeat(513), 'ünïcødé-ünïcødé-ünïcødé']) {
      let message = '';
      try {
        loadConfig({ ...production, metricsToken: bad });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/^--metrics-token: expected 16 to 512 characters/);
      expect(message).not.toContain(bad);
    }
    expect(() => loadConfig({ ...production, metricsToken: METRICS_TOKEN, metricsPublic: 'true' })).toThrow(
      /^--metrics-public: cannot be combined with --metrics-token/,
    );
    expect(() => loadConfig({ ...production, metricsPublic: 'maybe' })).toThrow(/^--metrics-public: expected true or false, got "maybe"/);
  });

  it('production without a token or --metrics-public: 403 naming the flags; development: open', async () => {
    const closed = await createTestPlatform('sqlite', { metrics: { kind: 'closed' } });
    const open = await createTestPlatform('sqlite');
    try {
      const refused = await closed.app.inject({ method: 'GET', url: '/metrics', headers: { host: '10.0.0.5' } });
      expect(refused.statusCode).toBe(403);
      expect(refused.json().message).toBe('Metrics are off in production mode: start with --metrics-token <token> or --metrics-public');
      const served = await open.app.inject({ method: 'GET', url: '/metrics', headers: { host: '10.0.0.5' } });
      expect(served.statusCode).toBe(200);
      expect(served.body).toContain('storegate_ready 1');
    } finally {
      await closed.close();
      await open.close();
    }
  });

  it('each platform counts its own requests (a registry per platform, not the global one)', async () => {
    const a = await createTestPlatform('sqlite');
    const b = await createTestPlatform('sqlite');
    try {
      for (let i = 0; i < 3; i++) await a.app.inject({ method: 'GET', url: '/healthz', headers: { host: 'localhost' } });
      const count = async (p: TestPlatform) =>
        value(
          parseExposition((await p.app.inject({ method: 'GET', url: '/metrics', headers: { host: 'localhost' } })).body),
          'storegate_http_requests_total',
          { route: '/healthz', status: '200' },
        );
      expect(await count(a)).toBe(3);
      expect(await count(b)).toBeUndefined();
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('PlatformMetrics reads dependencies and storage at scrape time', () => {
  it('Redis degraded, the database down, fallbacks counted once each, the backlog unknown while storage fails', async () => {
    const readiness = new Readiness();
    let database: 'up' | 'down' = 'up';
    let redis: 'up' | 'degraded' = 'up';
    readiness.register('database', { required: true, status: () => database });
    readiness.register('redis', { required: false, status: () => redis });
    const limiter = { fallbacks: 0 };
    let failing = false;
    const storage = {
      outboxBacklog: async () => {
        if (failing) throw new Error('connection refused');
        return { pending: 4, due: 2, oldestDueAt: 1_000 };
      },
      pool: () => ({ max: 10, inUse: 3, idle: 2, waiting: 1 }),
    };
    const metrics = new PlatformMetrics({ readiness, storage, clock: () => 61_000, rateLimiter: limiter });
    const read = async () => parseExposition((await metrics.scrape()).body);

    let s = await read();
    expect(value(s, 'storegate_dependency_up', { dependency: 'redis' })).toBe(1);
    expect(value(s, 'storegate_dependency_degraded', { dependency: 'redis' })).toBe(0);
    expect(value(s, 'storegate_rate_limit_fallbacks_total')).toBe(0);
    expect(value(s, 'storegate_webhook_outbox_pending')).toBe(4);
    expect(value(s, 'storegate_webhook_outbox_due')).toBe(2);
    expect(value(s, 'storegate_webhook_outbox_oldest_due_age_seconds')).toBe(60);
    expect(value(s, 'storegate_db_pool_connections', { state: 'in_use' })).toBe(3);
    expect(value(s, 'storegate_db_pool_connections', { state: 'idle' })).toBe(2);
    expect(value(s, 'storegate_db_pool_waiting')).toBe(1);
    expect(value(s, 'storegate_db_pool_max')).toBe(10);

    // Redis goes away: the node serves on local buckets, still ready.
    redis = 'degraded';
    limiter.fallbacks = 1;
    s = await read();
    expect(value(s, 'storegate_dependency_up', { dependency: 'redis' })).toBe(0);
    expect(value(s, 'storegate_dependency_degraded', { dependency: 'redis' })).toBe(1);
    expect(value(s, 'storegate_rate_limit_fallbacks_total')).toBe(1);
    expect(value(s, 'storegate_ready')).toBe(1);
    // A second scrape does not count the same fallback again; a second fallback adds one.
    expect(value(await read(), 'storegate_rate_limit_fallbacks_total')).toBe(1);
    redis = 'up';
    limiter.fallbacks = 2;
    s = await read();
    expect(value(s, 'storegate_rate_limit_fallbacks_total')).toBe(2);
    expect(value(s, 'storegate_dependency_up', { dependency: 'redis' })).toBe(1);

    // The database goes away: not ready, and the backlog is unknown rather than a stale figure.
    database = 'down';
    failing = true;
    s = await read();
    expect(value(s, 'storegate_ready')).toBe(0);
    expect(value(s, 'storegate_dependency_up', { dependency: 'database' })).toBe(0);
    expect(value(s, 'storegate_dependency_degraded', { dependency: 'database' })).toBe(0);
    expect(value(s, 'storegate_webhook_outbox_pending')).toBeNaN();
    expect(value(s, 'storegate_webhook_outbox_oldest_due_age_seconds')).toBeNaN();

    // Draining shows at once.
    readiness.startDraining();
    expect(value(await read(), 'storegate_draining')).toBe(1);
  });

  it('webhook attempts by outcome and in flight', async () => {
    const metrics = new PlatformMetrics({
      readiness: new Readiness(),
      storage: { outboxBacklog: async () => ({ pending: 0, due: 0, oldestDueAt: null }), pool: () => undefined },
      clock: () => 0,
    });
    metrics.attemptStarted();
    metrics.attemptStarted();
    metrics.attemptStarted();
    metrics.attemptFinished('retry');
    let s = parseExposition((await metrics.scrape()).body);
    expect(value(s, 'storegate_webhook_attempts_in_flight')).toBe(2);
    expect(value(s, 'storegate_webhook_attempts_total', { outcome: 'retry' })).toBe(1);
    metrics.attemptFinished('dead');
    metrics.attemptFinished('error');
    s = parseExposition((await metrics.scrape()).body);
    expect(value(s, 'storegate_webhook_attempts_in_flight')).toBe(0);
    expect(value(s, 'storegate_webhook_attempts_total', { outcome: 'dead' })).toBe(1);
    expect(value(s, 'storegate_webhook_attempts_total', { outcome: 'error' })).toBe(1);
    expect(value(s, 'storegate_webhook_attempts_total', { outcome: 'delivered' })).toBeUndefined();
  });

  it('endpoint breakers: endpoints open, transitions by state entered, deliveries handed back; one log line per change', async () => {
    const metrics = new PlatformMetrics({
      readiness: new Readiness(),
      storage: { outboxBacklog: async () => ({ pending: 0, due: 0, oldestDueAt: null }), pool: () => undefined },
      clock: () => 0,
    });
    const deferred: { ids: readonly number[]; until: number }[] = [];
    const queue = {
      deferClaims: async (input: { ids: readonly number[]; until: number }) => {
        deferred.push(input);
        return input.ids.length;
      },
    };
    const lines: string[] = [];
    const log = (obj: object, msg: string) => void lines.push(`${msg} ${JSON.stringify(obj)}`);
    const logger = { info: log, warn: log, error: log };
    let settled: number[] = [];
    const breakers = new EndpointBreakers({
      queue: queue as unknown as DeliveryQueue,
      worker: 'w',
      clock: () => 1000,
      logger,
      outage: new DatabaseOutage(logger, () => 0),
      metrics,
      onHandedBack: (ids) => (settled = [...settled, ...ids]),
    });
    const a = { origin: 'https://a.test', owner: '1/app/2' };
    breakers.changed(a, { from: 'closed', to: 'open', failures: 10, reopenAt: 11_000 });
    breakers.changed({ origin: 'https://b.test', owner: '3/private/4' }, { from: 'closed', to: 'open', failures: 10, reopenAt: 11_000 });
    breakers.handBack([1, 2], 11_000);
    breakers.handBack([3], 11_000);
    expect(breakers.idle).toBe(false);
    let s = parseExposition((await metrics.scrape()).body);
    expect(value(s, 'storegate_webhook_endpoints_open')).toBe(2);
    expect(value(s, 'storegate_webhook_deliveries_deferred_total')).toBe(3);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    // Handed back together, in one write, then no longer the worker's to renew.
    expect(deferred).toEqual([{ worker: 'w', ids: [1, 2, 3], until: 11_000, now: 1000 }]);
    expect(settled).toEqual([1, 2, 3]);
    expect(breakers.idle).toBe(true);
    breakers.changed(a, { from: 'open', to: 'half-open', failures: 10 });
    breakers.changed(a, { from: 'half-open', to: 'closed', failures: 0 });
    s = parseExposition((await metrics.scrape()).body);
    expect(value(s, 'storegate_webhook_endpoints_open')).toBe(1);
    expect(value(s, 'storegate_webhook_breaker_transitions_total', { to: 'open' })).toBe(2);
    expect(value(s, 'storegate_webhook_breaker_transitions_total', { to: 'half-open' })).toBe(1);
    expect(value(s, 'storegate_webhook_breaker_transitions_total', { to: 'closed' })).toBe(1);
    expect(lines).toEqual([
      'webhook endpoint circuit opened: its deliveries wait without being sent {"endpoint":"https://a.test","owner":"1/app/2","from":"closed","failures":10,"reopen_in_ms":10000}',
      'webhook endpoint circuit opened: its deliveries wait without being sent {"endpoint":"https://b.test","owner":"3/private/4","from":"closed","failures":10,"reopen_in_ms":10000}',
      'webhook endpoint circuit half-open: sending one probe delivery {"endpoint":"https://a.test","owner":"1/app/2"}',
      'webhook endpoint circuit closed: deliveries resume {"endpoint":"https://a.test","owner":"1/app/2","from":"half-open"}',
    ]);
    // A breaker the dispatcher forgot (too many kept) is no longer counted as open, and is no transition.
    breakers.forgotten({ origin: 'https://b.test', owner: '3/private/4' });
    s = parseExposition((await metrics.scrape()).body);
    expect(value(s, 'storegate_webhook_endpoints_open')).toBe(0);
    expect(value(s, 'storegate_webhook_breaker_transitions_total', { to: 'closed' })).toBe(1);
  });
});
