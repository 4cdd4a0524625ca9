import { describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { createAdminClient } from '../src/api/create-admin-client.ts';
import type { AppConfig } from '../src/config/app-config.ts';
import { memorySessionStorage } from '../src/session/memory-session-storage.ts';
import { fakeFetch, fixedRandom, frozenClock, json, recordingSleep, type FakeHandler } from './support/fake-fetch.ts';

const SHOP = 'demo.localhost';
const NOW = 1_700_000_000;

async function setup(handler: FakeHandler, extra: Partial<AppConfig> = {}) {
  const clock = frozenClock(NOW * 1000);
  const { sleep, delays } = recordingSleep();
  const fake = fakeFetch(handler);
  const sessionStorage = memorySessionStorage();
  await sessionStorage.set({ shop: SHOP, accessToken: 'sg_at_1', refreshToken: 'sg_rt_1', expiresAt: NOW + 3600, scope: 'read_products' });
  const app = createApp({
    clientId: 'cid',
    clientSecret: 'secret',
    scopes: 'read_products',
    redirectUri: 'https://app.example/cb',
    fetch: fake.fetch,
    clock,
    sleep,
    randomBytes: fixedRandom(),
    sessionStorage,
    ...extra,
  });
  return { client: app.client(SHOP), fake, delays, clock, sessionStorage };
}

const api = (calls: { path: string }[]) => calls.filter((c) => c.path.startsWith('/openapi/'));

describe('requests', () => {
  it('sends Access-Token and Content-Type to the pinned version path', async () => {
    const { client, fake } = await setup(async () => json({ data: { id: '1' } }));
    expect(await client.get('products/1', { query: { fields: ['id', 'title'] } })).toEqual({ data: { id: '1' } });
    const call = fake.calls[0]!;
    expect(call.url).toBe('http://demo.localhost:8080/openapi/2026-01/products/1?fields=id&fields=title');
    expect(call.headers.get('access-token')).toBe('sg_at_1');
    expect(call.headers.get('content-type')).toBe('application/json');
    await client.post('products', { title: 'Hat' });
    expect([fake.calls[1]!.method, fake.calls[1]!.body]).toEqual(['POST', '{"title":"Hat"}']);
    await client.put('products/1', { title: 'Cap' });
    await client.delete('products/1');
    expect(fake.calls.map((c) => c.method)).toEqual(['GET', 'POST', 'PUT', 'DELETE']);
  });

  it('request() returns status, headers and request id', async () => {
    const { client } = await setup(async () => json({ ok: true }, 201, { 'x-request-id': 'r-1' }));
    expect(await client.request('POST', 'webhooks', { body: {} })).toMatchObject({ status: 201, data: { ok: true }, requestId: 'r-1' });
  });
});

describe('typed errors', () => {
  const cases: Array<[number, string, string, Record<string, unknown>]> = [
    [401, 'AuthError', 'UNAUTHORIZED', {}],
    [403, 'ScopeError', 'FORBIDDEN', {}],
    [404, 'NotFoundError', 'NOT_FOUND', {}],
    [422, 'ValidationError', 'VALIDATION_FAILED', { errors: { title: ['is required'], price: ['must be positive'] } }],
    [429, 'RateLimitError', 'RATE_LIMITED', { retryAfter: 3 }],
    [500, 'ServerError', 'SERVER_ERROR', {}],
    [400, 'ApiError', 'HTTP_ERROR', {}],
  ];
  for (const [status, name, code, extra] of cases) {
    it(`${status} → ${name} with status and request id`, async () => {
      const body = {
        code: 'Whatever',
        message: 'said the platform',
        request_id: 'body-req',
        errors: { title: ['is required'], price: 'must be positive' },
      };
      const { client } = await setup(
        async (call) =>
          call.path === '/admin/oauth/token'
            ? json({ access_token: 'sg_at_2', refresh_token: 'sg_rt_2', expires_at: NOW + 3600 })
            : json(body, status, status === 429 ? { 'retry-after': '3' } : {}),
        { retry: { maxRetries: 0 } },
      );
      const error = await client.post('products', {}).catch((e: unknown) => e);
      expect(error).toMatchObject({ name, code, status, requestId: 'body-req', platformCode: 'Whatever', ...extra });
      expect((error as Error).message).toContain('said the platform');
    });
  }
  it('prefers the X-Request-Id header, and reads OAuth-style bodies', async () => {
    const { client } = await setup(async () =>
      json({ error: 'invalid_token', error_description: 'expired' }, 403, { 'x-request-id': 'hdr-req' }),
    );
    await expect(client.get('products')).rejects.toMatchObject({
      requestId: 'hdr-req',
      platformCode: 'invalid_token',
      message: expect.stringContaining('expired'),
    });
  });
  it('NetworkError (status 0) when nothing answers', async () => {
    const { client } = await setup(
      async () => {
        throw new TypeError('fetch failed');
      },
      { retry: { maxRetries: 0 } },
    );
    await expect(client.get('products')).rejects.toMatchObject({ name: 'NetworkError', code: 'NETWORK_ERROR', status: 0 });
  });
});

describe('retries', () => {
  it('429 with Retry-After in seconds waits that many seconds, for POST too', async () => {
    let n = 0;
    const { client, delays, fake } = await setup(async () =>
      ++n === 1 ? json({ code: 'TooManyRequests' }, 429, { 'retry-after': '2' }) : json({ ok: 1 }),
    );
    await client.post('products', { a: 1 });
    expect(delays).toEqual([2000]);
    expect(fake.calls).toHaveLength(2);
  });
  it('Retry-After as an HTTP date is measured against the clock', async () => {
    let n = 0;
    const date = new Date((NOW + 5) * 1000).toUTCString();
    const { client, delays } = await setup(async () => (++n === 1 ? json({}, 429, { 'retry-after': date }) : json({})));
    await client.get('products');
    expect(delays).toEqual([5000]);
  });
  it('429 without Retry-After backs off exponentially with jitter; gives up after maxRetries', async () => {
    const { client, delays, fake } = await setup(async () => json({}, 429), { retry: { maxRetries: 3, baseDelayMs: 100 } });
    await expect(client.get('products')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    expect(fake.calls).toHaveLength(4);
    expect(delays).toEqual([50, 100, 200]);
  });
  it('a Retry-After beyond maxRetryAfterSeconds is thrown at once', async () => {
    const { client, fake } = await setup(async () => json({}, 429, { 'retry-after': '3600' }));
    await expect(client.get('products')).rejects.toMatchObject({ code: 'RATE_LIMITED', retryAfter: 3600 });
    expect(fake.calls).toHaveLength(1);
  });
  it('502/503/504 and network errors are retried for idempotent methods, and for writes only with an Idempotency-Key', async () => {
    for (const status of [502, 503, 504]) {
      let n = 0;
      const get = await setup(async () => (++n === 1 ? new Response('x', { status }) : json({ ok: 1 })));
      await expect(get.client.get('products')).resolves.toEqual({ ok: 1 });
      const post = await setup(async () => new Response('x', { status }));
      await expect(post.client.post('products', {}, { idempotencyKey: false })).rejects.toMatchObject({ code: 'SERVER_ERROR', status });
      expect(api(post.fake.calls)).toHaveLength(1);
    }
    let n = 0;
    const flaky = await setup(async () => {
      if (++n === 1) throw new TypeError('socket hang up');
      return json({ ok: 1 });
    });
    await expect(flaky.client.delete('products/1')).resolves.toEqual({ ok: 1 });
    const post = await setup(async () => {
      throw new TypeError('socket hang up');
    });
    await expect(post.client.post('products', {}, { idempotencyKey: false })).rejects.toMatchObject({ code: 'NETWORK_ERROR' });
    expect(post.fake.calls).toHaveLength(1);
  });
  it('retries can be turned off per request', async () => {
    const { client, fake } = await setup(async () => new Response('x', { status: 503 }));
    await expect(client.get('products', { maxRetries: 0 })).rejects.toMatchObject({ code: 'SERVER_ERROR' });
    expect(fake.calls).toHaveLength(1);
  });
});

describe('401, timeout, abort, call limit', () => {
  it('on 401 refreshes once and retries once', async () => {
    const { client, fake, sessionStorage } = await setup(async (call) => {
      if (call.path === '/admin/oauth/token') return json({ access_token: 'sg_at_2', refresh_token: 'sg_rt_2', expires_at: NOW + 3600 });
      return call.headers.get('access-token') === 'sg_at_2' ? json({ ok: 1 }) : json({ code: 'Unauthorized' }, 401);
    });
    await expect(client.get('products')).resolves.toEqual({ ok: 1 });
    expect(fake.calls.map((c) => c.path)).toEqual(['/openapi/2026-01/products', '/admin/oauth/token', '/openapi/2026-01/products']);
    expect(await sessionStorage.get(SHOP)).toMatchObject({ accessToken: 'sg_at_2', refreshToken: 'sg_rt_2' });
  });
  it('a second 401 after the refresh is an AuthError', async () => {
    const { client, fake } = await setup(async (call) =>
      call.path === '/admin/oauth/token'
        ? json({ access_token: 'sg_at_2', refresh_token: 'sg_rt_2', expires_at: NOW + 3600 })
        : json({ code: 'Unauthorized', request_id: 'r401' }, 401),
    );
    await expect(client.get('products')).rejects.toMatchObject({ name: 'AuthError', status: 401, requestId: 'r401' });
    expect(fake.calls).toHaveLength(3);
  });
  it('per-request timeout → TimeoutError (retried for GET, then thrown)', async () => {
    const { client, fake } = await setup(() => new Promise<Response>(() => {}), { retry: { maxRetries: 1 } });
    await expect(client.get('products', { timeoutMs: 20 })).rejects.toMatchObject({
      name: 'TimeoutError',
      code: 'REQUEST_TIMEOUT',
      timeoutMs: 20,
    });
    expect(fake.calls).toHaveLength(2);
  });
  it("the caller's AbortSignal ends the request and is never retried", async () => {
    const { client, fake } = await setup(() => new Promise<Response>(() => {}));
    const controller = new AbortController();
    const pending = client.get('products', { signal: controller.signal });
    setTimeout(() => controller.abort(), 10);
    await expect(pending).rejects.toMatchObject({ name: 'AbortedError', code: 'REQUEST_ABORTED' });
    expect(fake.calls).toHaveLength(1);
    await expect(client.get('products', { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'REQUEST_ABORTED' });
  });
  it('slows down when X-Service-Api-Call-Limit says the bucket is nearly full', async () => {
    const { client, delays, clock } = await setup(async () => json({}, 200, { 'x-service-api-call-limit': '39/40' }));
    await client.get('products'); // learns 39/40
    await client.get('products'); // 39 + 1 > 40 - 1 → wait for one request to leak at 2/s
    expect(delays).toEqual([500]);
    clock.advance(10); // 20 leaked: room again
    await client.get('products');
    expect(delays).toEqual([500]);
  });
  it('the leak rate is configurable and pacing can be turned off', async () => {
    const slow = await setup(async () => json({}, 200, { 'x-service-api-call-limit': '40/40' }), {
      callLimit: { leakPerSecond: 1, reserve: 0 },
    });
    await slow.client.get('products');
    await slow.client.get('products');
    expect(slow.delays).toEqual([1000]);
    const off = await setup(async () => json({}, 200, { 'x-service-api-call-limit': '40/40' }), { callLimit: false });
    await off.client.get('products');
    await off.client.get('products');
    expect(off.delays).toEqual([]);
  });
});

describe('createAdminClient (private apps)', () => {
  it('uses the fixed token and the same machinery', async () => {
    const fake = fakeFetch(async () => json({ data: [], cursor: '', has_more: false }));
    const client = createAdminClient({ shop: SHOP, accessToken: 'sg_pt_fixed', fetch: fake.fetch, apiVersion: '2025-06' });
    await client.paginate('products').toArray();
    expect(fake.calls[0]!.url).toBe('http://demo.localhost:8080/openapi/2025-06/products');
    expect(fake.calls[0]!.headers.get('access-token')).toBe('sg_pt_fixed');
  });
});
