// The pure parts of endpoint health: how an attempt is counted (outcome, latency bucket, hour), the
// percentiles read back from a histogram, and the SVG charts drawn from the figures.
import { describe, expect, it } from 'vitest';
import {
  HOUR_MS,
  hourOf,
  LATENCY_BOUNDS,
  latencyBucket,
  latencyCounted,
  endpointOrigin,
  latencyQuantile,
  outcomeKind,
} from '../src/domain/endpoint-health.ts';
import { attemptsChart, type ChartHour, latencyChart, msLabel, niceMax } from '../src/http/views/endpoint-charts.ts';
import { endpointHourRows } from '../src/storage/repositories/endpoint-hours.ts';

const START = Date.UTC(2026, 10, 20, 0, 0, 0);

function hours(n: number, fill: (i: number) => Partial<ChartHour> = () => ({})): ChartHour[] {
  return Array.from({ length: n }, (_, i) => {
    const h = { delivered: 0, failed: 0, no_answer: 0, not_sent: 0, p50_ms: null, p99_ms: null, ...fill(i) };
    return { hour: new Date(START + i * HOUR_MS).toISOString(), attempts: h.delivered + h.failed + h.no_answer + h.not_sent, ...h };
  });
}

describe('endpoint health figures', () => {
  it('counts an attempt by what the endpoint did', () => {
    expect(outcomeKind({ status: 200, error: null })).toBe('delivered');
    expect(outcomeKind({ status: 204, error: null })).toBe('delivered');
    expect(outcomeKind({ status: 302, error: null })).toBe('failed');
    expect(outcomeKind({ status: 410, error: null })).toBe('failed');
    expect(outcomeKind({ status: 503, error: null })).toBe('failed');
    expect(outcomeKind({ status: null, error: 'timed out after 5000 ms' })).toBe('no_answer');
    expect(outcomeKind({ status: null, error: 'connection refused' })).toBe('no_answer');
    expect(outcomeKind({ status: null, error: 'refused: the address resolves to a non-public address' })).toBe('not_sent');
    expect(latencyCounted('delivered') && latencyCounted('failed')).toBe(true);
    expect(latencyCounted('no_answer') || latencyCounted('not_sent')).toBe(false);
  });

  it('puts a latency in the first bucket whose bound it does not exceed; hours are UTC hours', () => {
    expect(latencyBucket(0)).toBe(0);
    expect(latencyBucket(25)).toBe(0);
    expect(latencyBucket(26)).toBe(1);
    expect(latencyBucket(800)).toBe(5);
    expect(latencyBucket(801)).toBe(6);
    expect(latencyBucket(999_999)).toBe(LATENCY_BOUNDS.length - 1);
    expect(hourOf(START + 59 * 60_000)).toBe(START);
    expect(hourOf(START + HOUR_MS)).toBe(START + HOUR_MS);
  });

  it('names an endpoint by its origin only: no user, password, path or query', () => {
    expect(endpointOrigin('https://user:pw@hooks.test:8443/a/b?token=t#f')).toBe('https://hooks.test:8443');
    expect(endpointOrigin('not a url?token=t')).toBe('an address that does not parse');
  });

  it('estimates a percentile as the bound of the bucket holding it (never low, at most twice the truth)', () => {
    const buckets = LATENCY_BOUNDS.map(() => 0);
    expect(latencyQuantile(buckets, 0.5)).toBeNull();
    buckets[2] = 98; // 98 answers in (50, 100] ms
    buckets[7] = 2; // 2 in (1600, 3200] ms
    expect(latencyQuantile(buckets, 0.5)).toBe(100);
    expect(latencyQuantile(buckets, 0.98)).toBe(100);
    expect(latencyQuantile(buckets, 0.99)).toBe(3200);
    expect(latencyQuantile([1], 0.99)).toBe(25);
  });

  it('sums a batch into one rollup row per owner, endpoint and hour, in key order', () => {
    const attempt = (id: number, origin: string, at: number, status: number | null, latencyMs: number) => ({
      id,
      storeId: 1,
      subscriptionId: 1,
      attempts: 0,
      attempt: { attemptedAt: at, status, latencyMs, responseBody: null, error: status === null ? 'timed out' : null },
      endpoint: { ownerKind: 'app' as const, ownerId: 7, origin },
      next: { status: 'delivered' as const },
    });
    const rows = endpointHourRows([
      attempt(1, 'https://b.test', START + 10, 200, 30),
      attempt(2, 'https://a.test', START + 20, 500, 10),
      attempt(3, 'https://b.test', START + 30, null, 5000),
      attempt(4, 'https://b.test', START + HOUR_MS, 200, 30),
      { id: 5, storeId: 1, subscriptionId: 1, attempts: 0, cancelled: 'gone' },
    ]);
    const zeros = LATENCY_BOUNDS.map(() => 0);
    const withBucket = (i: number) => zeros.map((z, j) => (j === i ? 1 : z));
    expect(rows).toEqual([
      ['app', 7, 'https://a.test', START, 0, 1, 0, 0, ...withBucket(0)],
      ['app', 7, 'https://b.test', START, 1, 0, 1, 0, ...withBucket(1)],
      ['app', 7, 'https://b.test', START + HOUR_MS, 1, 0, 0, 0, ...withBucket(1)],
    ]);
  });
});

describe('endpoint charts', () => {
  it('rounds the attempts axis up to 1, 2 or 5 × 10^k; labels latencies in ms or s', () => {
    expect([0, 1, 3, 7, 12, 20, 101].map(niceMax)).toEqual([1, 1, 5, 10, 20, 20, 200]);
    expect([25, 800, 1600, 60000].map(msLabel)).toEqual(['25 ms', '800 ms', '1.6 s', '60 s']);
  });

  it('draws attempts per hour stacked by outcome, as one described image with a legend', () => {
    const data = hours(48, (i) => (i === 3 ? { delivered: 8, failed: 2 } : i === 30 ? { no_answer: 4, not_sent: 1 } : {}));
    const svg = attemptsChart('a', 'https://hooks.test', data).value;
    expect(svg).toContain('role="img" aria-labelledby="a-title a-desc" viewBox="0 0 320 180" width="100%"');
    expect(svg).toContain('<title id="a-title">Attempts per hour to https://hooks.test, by outcome</title>');
    expect(svg).toContain(
      '<desc id="a-desc">15 attempts in 48 hours: 8 delivered, 2 failed answers, 4 with no answer, 1 not sent. The busiest hour, Nov 20 03:00 UTC, had 10 attempts.</desc>',
    );
    // Four segments over two hours; the busiest hour's bar reaches the top of the axis (10).
    expect(svg.match(/<rect class="bar-/g)).toHaveLength(4);
    expect(svg).toContain('<title>Nov 20 03:00 UTC: 8 delivered, 2 failed answers</title>');
    expect(svg).toMatch(/<rect class="bar-failed" [^>]*y="18" /);
    expect(svg).toContain('text-anchor="end">10</text>');
    // Days on the x axis: the midnights of the window.
    expect(svg).toContain('text-anchor="middle">Nov 20</text>');
    expect(svg).toContain('text-anchor="middle">Nov 21</text>');
    for (const label of ['Delivered (2xx)', 'Failed answer', 'No answer', 'Not sent']) expect(svg).toContain(`${label}</li>`);
  });

  it('escapes what it is given and has an empty state', () => {
    const empty = attemptsChart('a', 'https://x.test/<b>', hours(24)).value;
    expect(empty).toBe('<p class="muted">No attempts to https://x.test/&lt;b&gt; in this window.</p>');
    expect(latencyChart('l', 'https://x.test', hours(24), { p50_ms: null, p99_ms: null }).value).toContain('no latency to show');
  });

  it('draws p50 and p99 as two lines on a log scale, broken where an hour has no answers', () => {
    const data = hours(6, (i) => (i === 2 ? {} : { delivered: 1, p50_ms: 100, p99_ms: i === 4 ? 3200 : 400 }));
    const svg = latencyChart('l', 'https://hooks.test', data, { p50_ms: 100, p99_ms: 3200 }).value;
    expect(svg).toContain(
      '<desc id="l-desc">Over the window, p50 at most 100 ms and p99 at most 3.2 s. The slowest hour, Nov 20 04:00 UTC, had p99 at most 3.2 s.</desc>',
    );
    // Hours 0–1 and 3–5: two segments per line, and a dot per hour with a value.
    expect(svg.match(/<polyline /g)).toHaveLength(4);
    expect(svg.match(/<circle /g)).toHaveLength(10);
    expect(svg).toContain('stroke-dasharray="4 2"');
    expect(svg).toContain('p50 (solid)</li>');
    expect(svg).toContain('text-anchor="end">25.6 s</text>');
  });
});
