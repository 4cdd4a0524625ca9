// Leaky bucket per (store, app): X-Service-Api-Call-Limit on every response, 429 with Retry-After,
// in memory and shared through Redis by several platform instances.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BucketState, take } from '../src/domain/leaky-bucket.ts';
import { createPlatform } from '../src/platform.ts';
import { api, createFixture, createTestPlatform, privateToken, type Fixture, type TestPlatform } from './harness.ts';

describe('leaky bucket math', () => {
  it('fills one drop a request, leaks per second, refuses the 41st in a burst', () => {
    let state: BucketState | undefined;
    for (let i = 1; i <= 40; i++) {
      const d = take(state, 1000, 40, 2);
      expect(d).toMatchObject({ allowed: true, used: i });
      state = d.state;
    }
    const refused = take(state, 1000, 40, 2);
    expect(refused).toMatchObject({ allowed: false, used: 40, retryAfterSeconds: 1 });
    const later = take(refused.state, 1500, 40, 2);
    expect(later).toMatchObject({ allowed: true, used: 40 });
    expect(take(later.state, 1500 + 20_000, 40, 2)).toMatchObject({ allowed: true, used: 1 });
  });
  it('Retry-After grows with the overflow for slow buckets', () => {
    const full = { level: 10, updatedAt: 0 };
    expect(take(full, 0, 10, 0.5).retryAfterSeconds).toBe(2);
  });
});

describe('rate limit over HTTP (memory)', () => {
  let t: TestPlatform;
  let f: Fixture;
  let token: string;
  beforeAll(async () => {
    t = await createTestPlatform('sqlite', { rateLimit: { bucket: 5, perSecond: 1 } });
    f = await createFixture(t);
    token = await privateToken(t, f.storeName, 'read_products');
  });
  afterAll(async () => t.close());

  it('counts used/bucket and answers 429 TooManyRequests with Retry-After in seconds', async () => {
    for (let i = 1; i <= 5; i++) {
      const res = await api(t, f, token, 'GET', '/openapi/2026-01/products');
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-service-api-call-limit']).toBe(`${i}/5`);
    }
    const limited = await api(t, f, token, 'GET', '/openapi/2026-01/products');
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('1');
    expect(limited.headers['x-service-api-call-limit']).toBe('5/5');
    expect(limited.json()).toMatchObject({ code: 'TooManyRequests', request_id: limited.headers['x-request-id'] });
    t.clock.advance(1000);
    expect((await api(t, f, token, 'GET', '/openapi/2026-01/products')).statusCode).toBe(200);
  });

  it('buckets are per app: another app of the same store is not limited', async () => {
    const another = await privateToken(t, f.storeName, 'read_products');
    const res = await api(t, f, another, 'GET', '/openapi/2026-01/products');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-service-api-call-limit']).toBe('1/5');
  });

  it('a refused request changes nothing', async () => {
    const writer = await privateToken(t, f.storeName, 'write_products');
    for (let i = 0; i < 5; i++) await api(t, f, writer, 'GET', '/openapi/2026-01/products');
    const res = await api(t, f, writer, 'POST', '/openapi/2026-01/products', { title: 'too fast' });
    expect(res.statusCode).toBe(429);
    const rows = await t.db.kysely.selectFrom('products').select('id').where('title', '=', 'too fast').execute();
    expect(rows).toHaveLength(0);
  });
});

describe.skipIf(!process.env.TEST_REDIS_URL)('rate limit shared through Redis', () => {
  it('two platform instances on one database share one bucket', async () => {
    const t = await createTestPlatform('sqlite', { rateLimit: { bucket: 4, perSecond: 1 }, redisUrl: process.env.TEST_REDIS_URL });
    const secondPlatform = await createPlatform({ ...t.config }, { db: t.db, clock: t.clock.fn, migrate: false });
    const second = secondPlatform.http;
    try {
      // Each test run gets its own store name, so its Redis keys are fresh.
      const f = await createFixture(t, { storeName: `redis-${randomBytes(4).toString('hex')}` });
      const token = await privateToken(t, f.storeName, 'read_products');
      const seen: string[] = [];
      for (const [i, app] of [t.app, second, t.app, second].entries()) {
        const res = await app.inject({ method: 'GET', url: '/openapi/2026-01/products', headers: { host: f.host, 'access-token': token } });
        expect(res.statusCode, `request ${i}`).toBe(200);
        seen.push(res.headers['x-service-api-call-limit'] as string);
      }
      expect(seen).toEqual(['1/4', '2/4', '3/4', '4/4']);
      const limited = await second.inject({
        method: 'GET',
        url: '/openapi/2026-01/products',
        headers: { host: f.host, 'access-token': token },
      });
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['retry-after']).toBe('1');
    } finally {
      await second.close();
      await t.close();
    }
  });
});
