// The token endpoint's limits: grants per client in a store and per store over all its clients,
// as leaky buckets (in memory; shared by every node through Redis). A refusal is 429 with
// Retry-After in the endpoint's OAuth error form, changes nothing, and is counted in the metrics;
// requests whose client fails authentication spend nobody's budget.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config.ts';
import { ConfigError } from '../src/domain/errors.ts';
import { hashToken } from '../src/domain/tokens.ts';
import { createPlatform } from '../src/platform.ts';
import {
  codeFor,
  createFixture,
  createTestPlatform,
  DIALECTS,
  exchange,
  type Fixture,
  formBody,
  refreshRequest,
  type TestPlatform,
} from './harness.ts';

type Limits = Config['tokenRateLimit'];

function refreshFields(f: Fixture, refreshToken: string, secret = f.clientSecret): Record<string, string> {
  return { client_id: f.clientId, client_secret: secret, refresh_token: refreshToken, grant_type: 'refresh_token' };
}

function post(app: TestPlatform['app'], f: Fixture, fields: Record<string, string>) {
  return app.inject({
    method: 'POST',
    url: '/admin/oauth/token',
    headers: { host: f.host, 'content-type': 'application/x-www-form-urlencoded' },
    payload: formBody(fields),
  });
}

async function rotatedAt(t: TestPlatform, refreshToken: string): Promise<number | null> {
  const row = await t.db.kysely
    .selectFrom('refresh_tokens')
    .select('rotated_at')
    .where('token_hash', '=', hashToken(refreshToken))
    .executeTakeFirstOrThrow();
  return row.rotated_at === null ? null : Number(row.rotated_at);
}

/** A second app installed in the fixture's store. */
async function secondClient(t: TestPlatform, f: Fixture): Promise<Fixture> {
  const { app, clientSecret } = await t.services.apps.createApp({
    name: `Second ${randomBytes(3).toString('hex')}`,
    appUrl: f.appUrl,
    redirectUri: f.redirectUri,
    scopes: 'read_products write_orders',
  });
  return { ...f, clientId: app.client_id, clientSecret, appName: app.name };
}

describe('token rate limit settings', () => {
  it('are on by default, per client in a store and per store', () => {
    const config = loadConfig({ database: ':memory:', masterKey: 'a'.repeat(64) });
    expect(config.tokenRateLimit).toEqual({ client: { bucket: 20, perSecond: 1 }, store: { bucket: 100, perSecond: 5 } });
  });

  it('take <bucket>/<per-second> or off, and refuse anything else naming the flag', () => {
    const config = loadConfig({ database: ':memory:', masterKey: 'a'.repeat(64), tokenRateLimit: '5/0.5', tokenStoreRateLimit: 'off' });
    expect(config.tokenRateLimit).toEqual({ client: { bucket: 5, perSecond: 0.5 }, store: 'off' });
    for (const [key, flag] of [
      ['tokenRateLimit', '--token-rate-limit'],
      ['tokenStoreRateLimit', '--token-store-rate-limit'],
    ] as const) {
      for (const bad of ['0/1', '5', '5/0', 'lots', '5/-1']) {
        expect(() => loadConfig({ database: ':memory:', masterKey: 'a'.repeat(64), [key]: bad })).toThrow(ConfigError);
        expect(() => loadConfig({ database: ':memory:', masterKey: 'a'.repeat(64), [key]: bad })).toThrow(`${flag}: expected`);
      }
    }
  });
});

describe.each(DIALECTS)('token rate limit on %s', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect, {
      tokenRateLimit: { client: { bucket: 5, perSecond: 1 }, store: { bucket: 8, perSecond: 2 } },
    });
  });
  afterAll(async () => t.close());

  it('150 refresh grants of one client at once: the bucket admits 5 grants, the rest are 429 with Retry-After, nothing rotated by them', async () => {
    const f = await createFixture(t);
    const pair = await exchange(t, f, await codeFor(t, f));
    const results = await Promise.all(Array.from({ length: 150 }, () => refreshRequest(t, f, pair.refresh_token)));
    const ok = results.filter((r) => r.statusCode === 200);
    const limited = results.filter((r) => r.statusCode === 429);
    // The code exchange took one drop of five.
    expect(ok).toHaveLength(4);
    expect(limited).toHaveLength(146);
    for (const r of limited) {
      expect(r.headers['retry-after']).toBe('1');
      expect(r.headers['cache-control']).toBe('no-store');
      expect(r.json()).toEqual({
        error: 'temporarily_unavailable',
        error_description: 'too many token requests from this client in this store; retry after 1 s',
      });
    }
    // Refused before any work: the admitted ones rotated the token once; no refusal revoked or rotated anything.
    expect(new Set(ok.map((r) => r.json().refresh_token)).size).toBe(1);
    const successor = ok[0]!.json();
    const family = await t.db.kysely
      .selectFrom('refresh_tokens')
      .select(['token_hash', 'rotated_at', 'family_id'])
      .where('token_hash', 'in', [hashToken(pair.refresh_token), hashToken(successor.refresh_token)])
      .execute();
    expect(family).toHaveLength(2);
    expect(family.find((r) => r.token_hash === hashToken(successor.refresh_token))!.rotated_at).toBeNull();
    // After waiting as told, the client goes on with the successor.
    t.clock.advance(1000);
    const next = await refreshRequest(t, f, successor.refresh_token);
    expect(next.statusCode, next.body).toBe(200);
  });

  it('a refused grant changes nothing: its refresh token is not rotated and works once the client waits', async () => {
    const f = await createFixture(t);
    const a = await exchange(t, f, await codeFor(t, f));
    const b = await exchange(t, f, await codeFor(t, f));
    let current = a.refresh_token;
    for (let i = 0; i < 3; i++) {
      const res = await refreshRequest(t, f, current);
      expect(res.statusCode).toBe(200);
      current = res.json().refresh_token;
    }
    const refused = await refreshRequest(t, f, b.refresh_token);
    expect(refused.statusCode).toBe(429);
    expect(await rotatedAt(t, b.refresh_token)).toBeNull();
    t.clock.advance(Number(refused.headers['retry-after']) * 1000);
    const later = await refreshRequest(t, f, b.refresh_token);
    expect(later.statusCode, later.body).toBe(200);
    expect(await rotatedAt(t, b.refresh_token)).not.toBeNull();
    // A code refused by the limit is still unused: it is redeemed once the client waits.
    t.clock.advance(5000);
    const code = await codeFor(t, f);
    for (let i = 0; i < 5; i++) expect((await refreshRequest(t, f, later.json().refresh_token)).statusCode).toBe(200);
    const tooSoon = await post(t.app, f, {
      client_id: f.clientId,
      client_secret: f.clientSecret,
      code,
      grant_type: 'authorization_code',
      redirect_uri: f.redirectUri,
    });
    expect(tooSoon.statusCode).toBe(429);
    t.clock.advance(1000);
    expect((await exchange(t, f, code)).access_token).toMatch(/^sg_at_/);
  });

  it('the store limit counts every client of the store; another store is not limited', async () => {
    const f = await createFixture(t);
    const g = await secondClient(t, f);
    const fromF = await exchange(t, f, await codeFor(t, f));
    const fromG = await exchange(t, g, await codeFor(t, g));
    // 2 drops in the store's bucket of 8; each client 1 of 5.
    const results: number[] = [];
    let [rf, rg] = [fromF.refresh_token, fromG.refresh_token];
    for (let i = 0; i < 3; i++) {
      const a = await refreshRequest(t, f, rf);
      const b = await refreshRequest(t, g, rg);
      results.push(a.statusCode, b.statusCode);
      if (a.statusCode === 200) rf = a.json().refresh_token;
      if (b.statusCode === 200) rg = b.json().refresh_token;
    }
    expect(results).toEqual([200, 200, 200, 200, 200, 200]);
    const refused = await refreshRequest(t, g, rg);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error_description).toBe('too many token requests in this store; retry after 1 s');
    expect(await rotatedAt(t, rg)).toBeNull();
    // Refused by the store's bucket, the grant gave its client's drop back (g's bucket holds 4 of
    // 5, not 5): once the store's bucket leaks a little, g has room for three more.
    t.clock.advance(1500);
    const other = await createFixture(t);
    expect((await exchange(t, other, await codeFor(t, other))).access_token).toMatch(/^sg_at_/);
    for (let i = 0; i < 3; i++) {
      const res = await refreshRequest(t, g, rg);
      expect(res.statusCode, `refresh ${i}: ${res.body}`).toBe(200);
      rg = res.json().refresh_token;
      t.clock.advance(500);
    }
  });

  it('requests whose client fails authentication spend nothing of its budget', async () => {
    const f = await createFixture(t);
    const pair = await exchange(t, f, await codeFor(t, f));
    const forged = await Promise.all(
      Array.from({ length: 50 }, () => post(t.app, f, refreshFields(f, pair.refresh_token, 'not-the-secret'))),
    );
    expect(new Set(forged.map((r) => r.statusCode))).toEqual(new Set([401]));
    expect(forged[0]!.json().error).toBe('invalid_client');
    // The real client still has its 4 grants left.
    let current = pair.refresh_token;
    for (let i = 0; i < 4; i++) {
      const res = await refreshRequest(t, f, current);
      expect(res.statusCode, `refresh ${i}: ${res.body}`).toBe(200);
      current = res.json().refresh_token;
    }
    expect((await refreshRequest(t, f, current)).statusCode).toBe(429);
  });

  it('a secret that authenticated before and no longer does gives its drop back', async () => {
    const f = await createFixture(t);
    const pair = await exchange(t, f, await codeFor(t, f));
    const app = await t.services.apps.findByClientId(f.clientId);
    const { secret } = await t.services.rotations.rotateClientSecret(app!.id);
    await t.services.rotations.finishClientSecretRotation(app!.id);
    for (let i = 0; i < 6; i++) {
      const stale = await post(t.app, f, refreshFields(f, pair.refresh_token));
      expect(stale.statusCode).toBe(401);
    }
    const fresh = { ...f, clientSecret: secret };
    let current = pair.refresh_token;
    for (let i = 0; i < 4; i++) {
      const res = await refreshRequest(t, fresh, current);
      expect(res.statusCode, `refresh ${i}: ${res.body}`).toBe(200);
      current = res.json().refresh_token;
    }
    expect((await refreshRequest(t, fresh, current)).statusCode).toBe(429);
  });

  it('counts refusals in the metrics by limit, not by client', async () => {
    const before = (await t.services.metrics.scrape()).body;
    const f = await createFixture(t);
    const pair = await exchange(t, f, await codeFor(t, f));
    await Promise.all(Array.from({ length: 10 }, () => refreshRequest(t, f, pair.refresh_token)));
    const body = (await t.services.metrics.scrape()).body;
    const count = (text: string, series: string) => Number(new RegExp(`^${series} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    const limited = 'storegate_rate_limit_rejections_total{limiter="token_client"}';
    const outcome = 'storegate_token_grants_total{grant_type="refresh_token",outcome="rate_limited"}';
    expect(count(body, limited) - count(before, limited)).toBe(6);
    expect(count(body, outcome) - count(before, outcome)).toBe(6);
    expect(body).not.toContain(f.clientId);
  });
});

describe.each(DIALECTS)('token rate limit turned off on %s', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect, { tokenRateLimit: { client: 'off', store: 'off' } });
  });
  afterAll(async () => t.close());

  it('150 refresh grants of one client at once all succeed (benchmarks)', async () => {
    const f = await createFixture(t);
    const pair = await exchange(t, f, await codeFor(t, f));
    const results = await Promise.all(Array.from({ length: 150 }, () => refreshRequest(t, f, pair.refresh_token)));
    expect(new Set(results.map((r) => r.statusCode))).toEqual(new Set([200]));
  });
});

describe.skipIf(!process.env.TEST_REDIS_URL).each(DIALECTS)('token rate limit shared through Redis on %s', (dialect) => {
  it('two platform nodes on one database count one client in one bucket', async () => {
    const limits: Limits = { client: { bucket: 4, perSecond: 1 }, store: 'off' };
    const t = await createTestPlatform(dialect, { tokenRateLimit: limits, redisUrl: process.env.TEST_REDIS_URL });
    const second = await createPlatform({ ...t.config }, { db: t.db, clock: t.clock.fn, migrate: false });
    try {
      // A store name of its own: its Redis keys are fresh on every run.
      const f = await createFixture(t, { storeName: `grants-${randomBytes(4).toString('hex')}` });
      const pair = await exchange(t, f, await codeFor(t, f));
      let current = pair.refresh_token;
      for (const [i, node] of [second.http, t.app, second.http].entries()) {
        const res = await post(node, f, refreshFields(f, current));
        expect(res.statusCode, `grant ${i}: ${res.body}`).toBe(200);
        current = res.json().refresh_token;
      }
      const limited = await post(t.app, f, refreshFields(f, current));
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['retry-after']).toBe('1');
      expect(await rotatedAt(t, current)).toBeNull();
      t.clock.advance(1000);
      expect((await post(second.http, f, refreshFields(f, current))).statusCode).toBe(200);
    } finally {
      await second.close();
      await t.close();
    }
  });
});
