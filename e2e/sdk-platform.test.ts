// The SDK against the real platform (`storegate serve` as a child process, no browser): install
// through the platform's own login and consent pages, code exchange through `auth.callback`, a real
// refresh with rotation, Admin API calls with typed errors, pagination in both conventions (and
// backwards), webhook subscriptions, a write whose answer was lost replayed through its Idempotency-Key,
// and 429 from a server with a tiny bucket.
import {
  AuthError,
  createAdminClient,
  createApp,
  memorySessionStorage,
  NotFoundError,
  RateLimitError,
  ReauthorizationRequiredError,
  ScopeError,
  TokenExchangeError,
  ValidationError,
  type AppConfig,
  type Page,
  type StoregateApp,
} from '@storegate/app';
import { localhostFetch } from '@storegate/app/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consentAsMerchant } from './merchant-consent.ts';
import { cli, startServer, type RunningServer } from './server-process.ts';

interface Product {
  id: string;
  title: string;
  price: string;
}

const merchant = { email: 'owner@sdk-e2e.test', password: 'sdk-e2e-password' };
const REDIRECT_URI = 'http://localhost:3000/auth/callback';
const SHOP = 'sdk.localhost';

describe('@storegate/app against the real platform', () => {
  let server: RunningServer;
  let tinyBucket: RunningServer;
  let credentials: { client_id: string; client_secret: string };
  let privateToken: string;
  let app: StoregateApp;
  const sessions = memorySessionStorage();
  const fetchLocal = localhostFetch();
  let firstCallback: { url: string; headers: { cookie: string } };

  beforeAll(async () => {
    let database = '';
    const starting = startServer({
      prepare: (db) => {
        database = db;
        cli(db, ['stores', 'create', 'sdk', '--owner-email', merchant.email, '--owner-password', merchant.password]);
        cli(db, ['seed', '--store', 'sdk', '--products', '23']);
        credentials = cli(db, [
          'apps',
          'create',
          '--name',
          'SDK e2e',
          '--app-url',
          'http://localhost:3000/',
          '--redirect-uri',
          REDIRECT_URI,
          '--scopes',
          'read_products write_products read_orders',
        ]);
        privateToken = cli(db, ['private-apps', 'create', '--store', 'sdk', '--name', 'Bucket', '--scopes', 'read_products']).access_token;
      },
    });
    // A second server on the same database with a 3-deep bucket leaking 1/s, for the 429 test.
    [server, tinyBucket] = await Promise.all([starting, startServer({ database, args: ['--rate-limit', '3/1'] })]);
    app = createApp(appConfig());
  });

  function appConfig(): AppConfig {
    return {
      clientId: credentials.client_id,
      clientSecret: credentials.client_secret,
      scopes: 'read_products write_products',
      redirectUri: REDIRECT_URI,
      storeDomain: 'localhost',
      apiOrigin: `http://{shop}:${server.port}`,
      sessionStorage: sessions,
      fetch: fetchLocal,
    };
  }

  afterAll(async () => {
    await tinyBucket?.stop();
    await server?.stop();
  });

  it('installs: auth.begin → the platform login and consent → auth.callback exchanges the real code', async () => {
    const { url, state, cookie } = await app.auth.begin({ shop: SHOP });
    expect(url.startsWith(`http://${SHOP}:${server.port}/admin/oauth/authorize?`)).toBe(true);
    const redirect = await consentAsMerchant(server.port, url, merchant);
    expect(`${redirect.origin}${redirect.pathname}`).toBe(REDIRECT_URI);
    expect(redirect.searchParams.get('state')).toBe(state);

    // The state cookie as the browser would send it back.
    const stateCookie = cookie.split(';')[0]!;
    const session = await app.auth.callback({ url: `${redirect.pathname}${redirect.search}`, headers: { cookie: stateCookie } });
    expect(session).toMatchObject({ shop: SHOP, storeName: 'sdk', scope: 'read_products write_products' });
    expect(session.accessToken).toMatch(/^sg_at_/);
    expect(session.refreshToken).toMatch(/^sg_rt_/);
    expect(session.expiresAt).toBeGreaterThan(Date.now() / 1000 + 3000);
    expect(await sessions.get(SHOP)).toMatchObject({ accessToken: session.accessToken });
    firstCallback = { url: `${redirect.pathname}${redirect.search}`, headers: { cookie: stateCookie } };
  });

  it('getAccessToken refreshes an expired token for real; the refresh token rotates and the new pair works', async () => {
    const before = (await sessions.get(SHOP))!;
    expect(await app.getAccessToken(SHOP)).toBe(before.accessToken);
    await sessions.set({ ...before, expiresAt: Math.floor(Date.now() / 1000) - 5 });

    const concurrent = await Promise.all(Array.from({ length: 5 }, () => app.getAccessToken(SHOP)));
    const after = (await sessions.get(SHOP))!;
    expect(new Set(concurrent)).toEqual(new Set([after.accessToken]));
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.expiresAt).toBeGreaterThan(Date.now() / 1000 + 3000);
    const products = await app.client(SHOP).get<{ data: Product[] }>('products', { query: { limit: 1 } });
    expect(products.data).toHaveLength(1);
  });

  it('creates products and maps every error status to its typed error', async () => {
    const client = app.client(SHOP);
    const created = await client.post<{ data: Product }>('products', { title: 'E2E hat', price: '19.90' });
    expect(created.data).toMatchObject({ title: 'E2E hat', price: '19.90' });
    expect(await client.get<{ data: Product }>(`products/${created.data.id}`)).toMatchObject({ data: { id: created.data.id } });
    await client.post('products', { title: 'E2E scarf', price: '9.00' });

    // 422 with the bad fields named.
    const invalid = await client.post('products', { title: '', price: 'cheap' }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(ValidationError);
    expect((invalid as ValidationError).status).toBe(422);
    expect(Object.keys((invalid as ValidationError).errors)).toEqual(expect.arrayContaining(['title', 'price']));
    expect((invalid as ValidationError).requestId).toBeTruthy();

    // 404.
    const missing = await client.get('products/999999999').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).status).toBe(404);

    // 403: orders were not granted to this installation.
    const forbidden = await client.get('orders').catch((e: unknown) => e);
    expect(forbidden).toBeInstanceOf(ScopeError);
    expect((forbidden as ScopeError).message).toContain('read_orders');

    // 401: a token the platform never issued (after the client's one refresh-and-retry, when it has a refresher).
    const stranger = createAdminClient({
      shop: SHOP,
      accessToken: 'sg_at_not-a-real-token',
      apiOrigin: `http://{shop}:${server.port}`,
      fetch: fetchLocal,
    });
    const unauthorized = await stranger.get('products').catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(AuthError);
    expect((unauthorized as AuthError).status).toBe(401);
    expect((unauthorized as AuthError).requestId).toBeTruthy();
  });

  it('paginates 2026-01 (has_more) and 2022-01 (pre_cursor) over the same rows, and walks 2022-01 backwards', async () => {
    // 23 seeded + 2 created.
    const newer = await app.client(SHOP).pages<Product>('products', { limit: 7 }).toArray();
    expect(newer.map((p) => p.data.length)).toEqual([7, 7, 7, 4]);
    expect(newer.slice(0, -1).every((p) => p.hasMore && p.cursor !== null)).toBe(true);
    expect(newer.at(-1)).toMatchObject({ hasMore: false, cursor: null });
    const ids = newer.flatMap((p) => p.data.map((d) => d.id));
    expect(new Set(ids).size).toBe(25);
    expect(await app.client(SHOP).paginate<Product>('products', { limit: 10 }).toArray()).toHaveLength(25);

    // Resume from an exposed cursor.
    const resumed = await app.client(SHOP).pages<Product>('products', { limit: 7, cursor: newer[1]!.cursor }).toArray();
    expect(resumed.flatMap((p) => p.data.map((d) => d.id))).toEqual(ids.slice(14));

    const older = createAdminClient({
      shop: SHOP,
      accessToken: (signal) => app.getAccessToken(SHOP, signal ? { signal } : {}),
      apiVersion: '2022-01',
      apiOrigin: `http://{shop}:${server.port}`,
      fetch: fetchLocal,
    });
    const forward: Page<Product>[] = await older.pages<Product>('products', { limit: 7 }).toArray();
    expect(forward.flatMap((p) => p.data.map((d) => d.id))).toEqual(ids);
    expect(forward[0]!.preCursor).toBeNull();
    expect(forward.slice(1).every((p) => p.preCursor !== null)).toBe(true);

    // From the last page back to the first, one page at a time.
    const backward = await older
      .pages<Product>('products', { limit: 7, direction: 'backward', cursor: forward.at(-1)!.preCursor })
      .toArray();
    expect(backward.map((p) => p.data.map((d) => d.id))).toEqual(
      forward
        .slice(0, -1)
        .reverse()
        .map((p) => p.data.map((d) => d.id)),
    );
    expect(backward.at(-1)).toMatchObject({ preCursor: null, hasMore: false });
  });

  it('subscribes to webhooks through the Admin API', async () => {
    const client = app.client(SHOP);
    const created = await client.post<{ data: { id: string; topic: string; address: string; status: string } }>('webhooks', {
      address: 'http://localhost:3000/webhooks',
      topic: 'products/create',
    });
    expect(created.data).toMatchObject({ topic: 'products/create', address: 'http://localhost:3000/webhooks', status: 'active' });
    const again = await client
      .post('webhooks', { address: 'http://localhost:3000/webhooks', topic: 'products/create' })
      .catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ValidationError);
    expect(await client.paginate<{ id: string }>('webhooks').toArray()).toEqual([expect.objectContaining({ id: created.data.id })]);
    // orders/create needs read_orders, which this installation lacks.
    await expect(client.post('webhooks', { address: 'http://localhost:3000/webhooks', topic: 'orders/create' })).rejects.toBeInstanceOf(
      ScopeError,
    );
  });

  it('a create whose answer was lost is retried with the same Idempotency-Key: the platform replays it, one product', async () => {
    // The first attempt reaches the platform and creates the product, then its answer is lost on
    // the way back; the client cannot tell that from a request that never arrived.
    let attempts = 0;
    const sentKeys: (string | null)[] = [];
    const losingFetch: typeof fetch = async (input, init) => {
      attempts++;
      sentKeys.push(new Headers(init?.headers).get('idempotency-key'));
      const response = await fetchLocal(input, init);
      if (attempts === 1) {
        await response.text();
        throw new TypeError('connection reset after the request was sent');
      }
      return response;
    };
    const client = createAdminClient({
      shop: SHOP,
      accessToken: (signal) => app.getAccessToken(SHOP, signal ? { signal } : {}),
      apiOrigin: `http://{shop}:${server.port}`,
      fetch: losingFetch,
      retry: { baseDelayMs: 1 },
    });
    const res = await client.request<{ data: Product }>('POST', 'products', { body: { title: 'Lost answer hat', price: '5.00' } });
    expect(res.status).toBe(201);
    expect(res.replayed).toBe(true);
    expect(attempts).toBe(2);
    expect(sentKeys[0]).toBeTruthy();
    expect(sentKeys[1]).toBe(sentKeys[0]);
    expect(res.idempotencyKey).toBe(sentKeys[0]);
    const all = await app.client(SHOP).paginate<Product>('products', { limit: 250 }).toArray();
    expect(all.filter((p) => p.title === 'Lost answer hat')).toEqual([expect.objectContaining({ id: res.data.data.id })]);

    // The same key with another body is refused, and nothing is created.
    const reused = await app
      .client(SHOP)
      .post('products', { title: 'Another hat', price: '5.00' }, { idempotencyKey: res.idempotencyKey! })
      .catch((e: unknown) => e);
    expect(reused).toBeInstanceOf(ValidationError);
    expect((reused as ValidationError).platformCode).toBe('IdempotencyKeyReused');
  });

  it('a replayed callback is refused, and the platform revokes what the code issued: the SDK asks for re-authorisation', async () => {
    const replay = await app.auth.callback(firstCallback).catch((e: unknown) => e);
    expect(replay).toBeInstanceOf(TokenExchangeError);
    expect((replay as TokenExchangeError).message).toContain('invalid_grant');
    // Every token of the code's family is gone: 401, one refresh (refused), a typed error.
    const events: string[] = [];
    const strict = createApp({ ...appConfig(), onReauthorizationRequired: ({ shop }) => void events.push(shop) });
    const error = await strict
      .client(SHOP)
      .get('products')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReauthorizationRequiredError);
    expect(events).toEqual([SHOP]);
    expect((await sessions.get(SHOP))?.reauthorizationRequired).toBe(true);
  });

  it('429 (from a server with --rate-limit 3/1) is a RateLimitError carrying Retry-After in seconds', async () => {
    expect(privateToken).toMatch(/^sg_pt_/);
    const client = createAdminClient({
      shop: 'sdk.localhost',
      accessToken: privateToken,
      apiOrigin: `http://{shop}:${tinyBucket.port}`,
      fetch: localhostFetch(),
      retry: { maxRetries: 0 },
      callLimit: false,
    });
    // The bucket holds 3: the burst fills it and the rest are refused at once (no retries here).
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => client.get('products')));
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as unknown);
    expect(refused.length).toBeGreaterThan(0);
    for (const error of refused) {
      expect(error).toBeInstanceOf(RateLimitError);
      expect((error as RateLimitError).status).toBe(429);
      expect((error as RateLimitError).retryAfter).toBeGreaterThanOrEqual(1);
      expect((error as RateLimitError).retryAfter).toBeLessThanOrEqual(3);
    }

    // With retries on (the default), the client waits Retry-After (seconds, not milliseconds) and gets through.
    const patient = createAdminClient({
      shop: 'sdk.localhost',
      accessToken: privateToken,
      apiOrigin: `http://{shop}:${tinyBucket.port}`,
      fetch: localhostFetch(),
      callLimit: false,
    });
    const started = Date.now();
    expect(await patient.get<{ data: unknown[] }>('products')).toHaveProperty('data');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });
});
