// A deprecated API version seen through the SDK: one warning per route (method and path pattern)
// through the app's logger, naming the version and the sunset, whichever shop's client called; and
// the 410 of a brown-out as ApiVersionGoneError with the stable code API_VERSION_GONE.
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { createAdminClient } from '../src/api/create-admin-client.ts';
import { pathPattern } from '../src/api/deprecation-notices.ts';
import { ApiError, ApiVersionGoneError, ERROR_CODES } from '../src/index.ts';
import { memorySessionStorage } from '../src/session/memory-session-storage.ts';
import { fakeFetch, fixedRandom, frozenClock, json } from './support/fake-fetch.ts';

const DEPRECATED = {
  deprecation: '@1748736000',
  sunset: 'Tue, 01 Jun 2027 00:00:00 GMT',
  'x-service-api-version': '2022-01',
};

function recordingLogger() {
  const warnings: { message: string; details: Record<string, unknown> | undefined }[] = [];
  return { warnings, logger: { warn: (message: string, details?: Record<string, unknown>) => warnings.push({ message, details }) } };
}

describe('Deprecation and Sunset answers', () => {
  it('warns once per method and path pattern, naming the version and the sunset', async () => {
    const { warnings, logger } = recordingLogger();
    const fake = fakeFetch(async (req) => (req.url.includes('/orders') ? json({ data: [] }) : json({ data: [] }, 200, DEPRECATED)));
    const client = createAdminClient({ shop: 'demo.localhost', accessToken: 'sg_pat_x', apiVersion: '2022-01', fetch: fake.fetch, logger });
    await client.get('products');
    await client.get('products');
    await client.get('products/1');
    await client.get('products/2');
    await client.post('products', { title: 'Hat' });
    await client.get('orders');
    expect(warnings.map((w) => w.details?.route)).toEqual([
      'GET /openapi/{version}/products',
      'GET /openapi/{version}/products/{id}',
      'POST /openapi/{version}/products',
    ]);
    expect(warnings[0]!.message).toBe(
      'API version 2022-01 is deprecated and stops answering on 2027-06-01T00:00:00.000Z: ' +
        'GET /openapi/{version}/products must move to a newer version',
    );
    expect(warnings[0]!.details).toMatchObject({ apiVersion: '2022-01', sunset: '2027-06-01T00:00:00.000Z', deprecation: '@1748736000' });
  });

  it('warns once per route for the whole app, whichever shop the client is for', async () => {
    const { warnings, logger } = recordingLogger();
    const sessionStorage = memorySessionStorage();
    for (const shop of ['a.localhost', 'b.localhost'])
      await sessionStorage.set({ shop, accessToken: 'sg_at_1', refreshToken: 'sg_rt_1', expiresAt: 1_800_000_000, scope: 'read_products' });
    const app = createApp({
      clientId: 'cid',
      clientSecret: 'secret',
      scopes: 'read_products',
      redirectUri: 'https://app.example/cb',
      fetch: fakeFetch(async () => json({ data: [] }, 200, { sunset: DEPRECATED.sunset })).fetch,
      clock: frozenClock(1_700_000_000_000),
      randomBytes: fixedRandom(),
      sessionStorage,
      logger,
    });
    await app.client('a.localhost').get('products');
    await app.client('b.localhost').get('products');
    expect(warnings.length).toBe(1);
    // Without X-Service-Api-Version the version is read from the path.
    expect(warnings[0]!.details).toMatchObject({ apiVersion: '2026-01', sunset: '2027-06-01T00:00:00.000Z' });
  });

  it('says nothing for answers without either field', async () => {
    const { warnings, logger } = recordingLogger();
    const client = createAdminClient({
      shop: 'demo.localhost',
      accessToken: 'sg_pat_x',
      fetch: fakeFetch(async () => json({})).fetch,
      logger,
    });
    await client.get('products');
    expect(warnings).toEqual([]);
  });

  it('names path patterns with the version and ids replaced', () => {
    expect(pathPattern('/openapi/2022-01/products/123')).toBe('/openapi/{version}/products/{id}');
    expect(pathPattern('/openapi/2022-01/products/count')).toBe('/openapi/{version}/products/count');
    expect(pathPattern('/openapi/2022-01/webhooks/wh_0123456789abcdef')).toBe('/openapi/{version}/webhooks/{id}');
  });
});

describe('brown-outs', () => {
  it('maps a 410 ApiVersionGone to ApiVersionGoneError with a stable code, the version and the sunset; not retried', async () => {
    const fake = fakeFetch(async () =>
      json(
        { code: 'ApiVersionGone', message: 'API version 2022-01 is deprecated; move to version 2026-01.', request_id: 'r-9' },
        410,
        DEPRECATED,
      ),
    );
    const client = createAdminClient({ shop: 'demo.localhost', accessToken: 'sg_pat_x', apiVersion: '2022-01', fetch: fake.fetch });
    const error = await client.get('products').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiVersionGoneError);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      code: 'API_VERSION_GONE',
      status: 410,
      platformCode: 'ApiVersionGone',
      apiVersion: '2022-01',
      sunset: '2027-06-01T00:00:00.000Z',
    });
    expect((error as Error).message).toContain('move to version 2026-01');
    expect(fake.calls.length).toBe(1);
    expect(ERROR_CODES.api).toContain('API_VERSION_GONE');
  });

  it('leaves another 410 a plain ApiError', async () => {
    const client = createAdminClient({
      shop: 'demo.localhost',
      accessToken: 'sg_pat_x',
      fetch: fakeFetch(async () => json({ code: 'Gone', message: 'gone' }, 410)).fetch,
    });
    const error = await client.get('products').catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(ApiVersionGoneError);
    expect(error).toMatchObject({ code: 'HTTP_ERROR', status: 410 });
  });
});
