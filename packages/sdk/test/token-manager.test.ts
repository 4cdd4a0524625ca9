import { describe, expect, it, vi } from 'vitest';
import { createApp } from '../src/app.ts';
import type { AppConfig } from '../src/config/app-config.ts';
import type { RefreshLock } from '../src/oauth/refresh-lock.ts';
import { memorySessionStorage } from '../src/session/memory-session-storage.ts';
import type { Session } from '../src/session/session.ts';
import { fakeFetch, fixedRandom, frozenClock, json, recordingSleep, type FakeHandler } from './support/fake-fetch.ts';

const SHOP = 'demo.localhost';
const NOW = 1_700_000_000;

function stored(overrides: Partial<Session> = {}): Session {
  return { shop: SHOP, accessToken: 'sg_at_old', refreshToken: 'sg_rt_old', expiresAt: NOW + 3600, scope: 'read_products', ...overrides };
}

async function setup(handler: FakeHandler, session: Session | undefined, extra: Partial<AppConfig> = {}) {
  const clock = frozenClock(NOW * 1000);
  const { sleep, delays } = recordingSleep();
  const fake = fakeFetch(handler);
  const sessionStorage = memorySessionStorage();
  if (session) await sessionStorage.set(session);
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
  return { app, clock, delays, fake, sessionStorage };
}

let issued = 0;
const refreshOk: FakeHandler = async () => {
  issued++;
  return json({
    token_type: 'Bearer',
    access_token: `sg_at_new${issued}`,
    refresh_token: `sg_rt_new${issued}`,
    expires_at: NOW + 7200,
    store_id: '42',
    store_name: 'demo',
  });
};

describe('getAccessToken', () => {
  it('returns the stored token while it is fresh, without a request', async () => {
    const { app, fake } = await setup(refreshOk, stored());
    expect(await app.getAccessToken(SHOP)).toBe('sg_at_old');
    expect(fake.calls).toHaveLength(0);
  });

  it('refreshes within the margin with the refresh_token grant and saves the pair before returning', async () => {
    const { app, fake, sessionStorage } = await setup(refreshOk, stored({ expiresAt: NOW + 59 }));
    const token = await app.getAccessToken(SHOP);
    expect(token).toMatch(/^sg_at_new/);
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]!.url).toBe('http://demo.localhost:8080/admin/oauth/token');
    expect(JSON.parse(fake.calls[0]!.body!)).toEqual({
      client_id: 'cid',
      client_secret: 'secret',
      refresh_token: 'sg_rt_old',
      grant_type: 'refresh_token',
      redirect_uri: 'https://app.example/cb',
    });
    expect(await sessionStorage.get(SHOP)).toMatchObject({
      accessToken: token,
      refreshToken: expect.stringMatching(/^sg_rt_new/),
      expiresAt: NOW + 7200,
      storeName: 'demo',
    });
  });

  it('honours a configured margin', async () => {
    const { app, fake } = await setup(refreshOk, stored({ expiresAt: NOW + 200 }), { refreshMarginSeconds: 300 });
    await app.getAccessToken(SHOP);
    expect(fake.calls).toHaveLength(1);
  });

  it('100 concurrent callers cause exactly one refresh request', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { app, fake } = await setup(
      async (call, signal) => {
        await gate;
        return refreshOk(call, signal);
      },
      stored({ expiresAt: NOW - 10 }),
    );
    const all = Promise.all(Array.from({ length: 100 }, () => app.getAccessToken(SHOP)));
    await new Promise((r) => setTimeout(r, 20));
    release();
    const tokens = await all;
    expect(new Set(tokens).size).toBe(1);
    expect(fake.calls).toHaveLength(1);
  });

  it('one caller aborting stops its own wait, not the refresh the others share', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { app, fake } = await setup(
      async (call, signal) => {
        await gate;
        return refreshOk(call, signal);
      },
      stored({ expiresAt: NOW - 10 }),
    );
    const controller = new AbortController();
    const aborted = app.getAccessToken(SHOP, { signal: controller.signal });
    const others = Promise.all([app.getAccessToken(SHOP), app.getAccessToken(SHOP)]);
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ code: 'REQUEST_ABORTED' });
    release();
    const tokens = await others;
    expect(tokens[0]).toMatch(/^sg_at_new/);
    expect(fake.calls).toHaveLength(1);
  });

  it('takes the lock hook and re-reads storage under it (another process refreshed meanwhile)', async () => {
    const events: string[] = [];
    let storage: ReturnType<typeof memorySessionStorage> | undefined;
    const lock: RefreshLock = {
      async acquire(shop) {
        events.push(`acquire ${shop}`);
        // Another process refreshed while we waited for the lock.
        await storage!.set(stored({ accessToken: 'sg_at_by_other', refreshToken: 'sg_rt_by_other', expiresAt: NOW + 3600 }));
        return () => void events.push(`release ${shop}`);
      },
    };
    const ctx = await setup(refreshOk, stored({ expiresAt: NOW - 1 }), { refreshLock: lock });
    storage = ctx.sessionStorage;
    expect(await ctx.app.getAccessToken(SHOP)).toBe('sg_at_by_other');
    expect(ctx.fake.calls).toHaveLength(0);
    expect(events).toEqual([`acquire ${SHOP}`, `release ${SHOP}`]);
  });

  it('releases the lock when the refresh fails', async () => {
    const release = vi.fn();
    const { app } = await setup(async () => json({ error: 'invalid_client' }, 401), stored({ expiresAt: NOW - 1 }), {
      refreshLock: { acquire: async () => release },
    });
    await expect(app.getAccessToken(SHOP)).rejects.toMatchObject({ code: 'TOKEN_REFRESH_FAILED', oauthError: 'invalid_client' });
    expect(release).toHaveBeenCalledOnce();
  });

  it('invalid_grant: typed ReauthorizationRequiredError, the event, the session marked, no more requests', async () => {
    const onReauthorizationRequired = vi.fn();
    const { app, fake, sessionStorage } = await setup(
      async () => json({ error: 'invalid_grant', error_description: 'revoked' }, 400),
      stored({ expiresAt: NOW - 1 }),
      {
        onReauthorizationRequired,
      },
    );
    await expect(app.getAccessToken(SHOP)).rejects.toMatchObject({
      code: 'REAUTHORIZATION_REQUIRED',
      name: 'ReauthorizationRequiredError',
      shop: SHOP,
    });
    expect(onReauthorizationRequired).toHaveBeenCalledWith(
      expect.objectContaining({ shop: SHOP, error: expect.objectContaining({ code: 'REAUTHORIZATION_REQUIRED' }) }),
    );
    expect(await sessionStorage.get(SHOP)).toMatchObject({ reauthorizationRequired: true, refreshToken: 'sg_rt_old' });
    await expect(app.getAccessToken(SHOP)).rejects.toMatchObject({ code: 'REAUTHORIZATION_REQUIRED' });
    expect(fake.calls).toHaveLength(1);
  });

  it('retries a 5xx refresh with backoff, then succeeds', async () => {
    let n = 0;
    const { app, fake, delays } = await setup(
      async (call, signal) => (++n <= 2 ? new Response('oops', { status: 503 }) : refreshOk(call, signal)),
      stored({ expiresAt: NOW - 1 }),
    );
    expect(await app.getAccessToken(SHOP)).toMatch(/^sg_at_new/);
    expect(fake.calls).toHaveLength(3);
    // Full jitter with fixed random 0x80808080/2^32 ≈ 0.502 of 500 ms, then of 1000 ms.
    expect(delays).toEqual([250, 501]);
    // Every attempt sent the same refresh token (the platform answers a retry with the same pair).
    expect(new Set(fake.calls.map((c) => JSON.parse(c.body!).refresh_token))).toEqual(new Set(['sg_rt_old']));
  });

  it('5xx on every attempt: typed error, stored refresh token untouched', async () => {
    const { app, fake, sessionStorage } = await setup(async () => new Response('down', { status: 502 }), stored({ expiresAt: NOW - 1 }), {
      retry: { maxRetries: 2 },
    });
    await expect(app.getAccessToken(SHOP)).rejects.toMatchObject({ code: 'TOKEN_REFRESH_FAILED', status: 502 });
    expect(fake.calls).toHaveLength(3);
    expect(await sessionStorage.get(SHOP)).toMatchObject({ refreshToken: 'sg_rt_old', accessToken: 'sg_at_old' });
  });

  it('a timeout during the refresh is retried, then a typed error; refresh token untouched', async () => {
    const { app, fake, sessionStorage } = await setup(() => new Promise<Response>(() => {}), stored({ expiresAt: NOW - 1 }), {
      requestTimeoutMs: 20,
      retry: { maxRetries: 1 },
    });
    const error = await app.getAccessToken(SHOP).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TOKEN_REFRESH_FAILED', cause: expect.objectContaining({ code: 'REQUEST_TIMEOUT' }) });
    expect(fake.calls).toHaveLength(2);
    expect(await sessionStorage.get(SHOP)).toMatchObject({ refreshToken: 'sg_rt_old' });
  });

  it('when another writer stored a newer pair first (compare-and-set lost), returns that one', async () => {
    const ctx = await setup(
      async (call, signal) => {
        await ctx.sessionStorage.set(stored({ accessToken: 'sg_at_winner', refreshToken: 'sg_rt_winner', expiresAt: NOW + 3600 }));
        return refreshOk(call, signal);
      },
      stored({ expiresAt: NOW - 1 }),
    );
    expect(await ctx.app.getAccessToken(SHOP)).toBe('sg_at_winner');
    expect(await ctx.sessionStorage.get(SHOP)).toMatchObject({ refreshToken: 'sg_rt_winner' });
  });

  it('an expired session without a refresh token needs re-authorisation; a private token never expires', async () => {
    const a = await setup(refreshOk, stored({ refreshToken: null, expiresAt: NOW - 1 }));
    await expect(a.app.getAccessToken(SHOP)).rejects.toMatchObject({ code: 'REAUTHORIZATION_REQUIRED' });
    const b = await setup(refreshOk, stored({ refreshToken: null, expiresAt: null }));
    expect(await b.app.getAccessToken(SHOP)).toBe('sg_at_old');
    expect([...a.fake.calls, ...b.fake.calls]).toHaveLength(0);
  });

  it('SESSION_NOT_FOUND for a shop that never installed', async () => {
    const { app } = await setup(refreshOk, undefined);
    await expect(app.getAccessToken(SHOP)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
  });
});
