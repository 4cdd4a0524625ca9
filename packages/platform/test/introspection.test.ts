// Token introspection (RFC 7662) for the operator's resource servers, on both databases: the answer
// for each kind of live token, `{"active": false}` for every token the Admin API would refuse (and
// for anything else), no use recorded, only resource-server credentials accepted, bad input
// refused with nothing counted, and a rate limit per credential.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlatform } from '../src/platform.ts';
import { hashToken } from '../src/domain/tokens.ts';
import type { Scope } from '../src/domain/scopes.ts';
import {
  api,
  codeFor,
  consent,
  createFixture,
  csrfFrom,
  createTestPlatform,
  DIALECTS,
  exchange,
  type Fixture,
  formBody,
  login,
  privateToken,
  refreshRequest,
  type TestPlatform,
  tokenRequest,
} from './harness.ts';

interface Credential {
  client_id: string;
  client_secret: string;
}

function basic(c: { client_id: string; client_secret: string }): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(c.client_id)}:${encodeURIComponent(c.client_secret)}`).toString('base64')}`;
}

function introspect(t: TestPlatform, host: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/admin/oauth/introspect',
    headers: { host, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: formBody(fields),
  });
}

async function usedAt(t: TestPlatform, token: string): Promise<number | null | undefined> {
  const row = await t.db.kysely.selectFrom('access_tokens').select('used_at').where('token_hash', '=', hashToken(token)).executeTakeFirst();
  return row?.used_at;
}

/** Header sets of a loop, typed as what inject takes. */
function headerSets(...sets: Record<string, string>[]): Record<string, string>[] {
  return sets;
}

describe.each(DIALECTS)('token introspection on %s', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  let rs: Credential;
  let ask: (token: string, host?: string) => Promise<Record<string, unknown>>;

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { introspectRateLimit: { bucket: 1000, perSecond: 100 } });
    f = await createFixture(t);
    rs = await t.services.resourceServers.create({ name: 'Gateway' });
    ask = async (token, host = f.host) => {
      const res = await introspect(t, host, { token }, { authorization: basic(rs) });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      return res.json();
    };
  });
  afterAll(() => t?.close());

  it("describes a live app access token without recording its use; the Admin API's first call still does", async () => {
    const issuedAt = Math.floor(t.clock.now / 1000);
    const tokens = await exchange(t, f, await codeFor(t, f));
    expect(await ask(tokens.access_token)).toEqual({
      active: true,
      scope: 'read_products write_orders',
      client_id: f.clientId,
      token_type: 'Bearer',
      exp: tokens.expires_at,
      iat: issuedAt,
      iss: `http://${f.storeName}.localhost:8080`,
      store: f.storeName,
    });
    expect(await ask(tokens.access_token)).toMatchObject({ active: true });
    expect(await usedAt(t, tokens.access_token)).toBeNull();
    // Still unused (a replay of its refresh token would get the same pair): the Admin API's first
    // call is what records the use.
    expect((await api(t, f, tokens.access_token, 'GET', '/openapi/2026-01/products')).statusCode).toBe(200);
    expect(await usedAt(t, tokens.access_token)).toBe(t.clock.now);
  });

  it('describes a live refresh token (token_type refresh_token); once rotated it is inactive', async () => {
    const tokens = await exchange(t, f, await codeFor(t, f));
    expect(await ask(tokens.refresh_token)).toEqual({
      active: true,
      scope: 'read_products write_orders',
      client_id: f.clientId,
      token_type: 'refresh_token',
      exp: Math.floor((t.clock.now + t.config.refreshTokenTtlSeconds * 1000) / 1000),
      iss: `http://${f.storeName}.localhost:8080`,
      store: f.storeName,
    });
    const rotated = await refreshRequest(t, f, tokens.refresh_token);
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(await ask(tokens.refresh_token)).toEqual({ active: false });
    expect(await ask(rotated.json().refresh_token)).toMatchObject({ active: true, token_type: 'refresh_token' });
  });

  it("names the merchant of online access as sub; the merchant's logout makes it inactive", async () => {
    const g = await createFixture(t);
    const jar = await login(t, g);
    const url = await consent(t, g, { 'grant_options[]': 'per-user' }, jar);
    const res = await tokenRequest(t, g, {
      client_id: g.clientId,
      client_secret: g.clientSecret,
      code: url.searchParams.get('code')!,
      grant_type: 'authorization_code',
      redirect_uri: g.redirectUri,
    });
    expect(res.statusCode, res.body).toBe(200);
    const online = res.json() as { access_token: string; expires_at: number; associated_user: { id: string } };
    const offline = await exchange(t, g, await codeFor(t, g));
    expect(await ask(online.access_token, g.host)).toEqual({
      active: true,
      scope: 'read_products write_orders',
      client_id: g.clientId,
      sub: online.associated_user.id,
      token_type: 'Bearer',
      exp: online.expires_at,
      iat: Math.floor(t.clock.now / 1000),
      iss: `http://${g.storeName}.localhost:8080`,
      store: g.storeName,
    });
    expect(await ask(offline.access_token, g.host)).not.toHaveProperty('sub');
    const page = await t.app.inject({ method: 'GET', url: '/admin', headers: { host: g.host, cookie: jar.header() } });
    const logout = await t.app.inject({
      method: 'POST',
      url: '/admin/logout',
      headers: { host: g.host, cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: formBody({ _csrf: csrfFrom(page.body) }),
    });
    expect(logout.statusCode).toBe(303);
    expect(await ask(online.access_token, g.host)).toEqual({ active: false });
    expect(await ask(offline.access_token, g.host)).toMatchObject({ active: true });
  });

  it("describes a private app's token (private_app_id, no client_id, no exp); revoked, it is inactive", async () => {
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    const created = await t.services.apps.createPrivateApp({ storeId: store.id, name: 'Sync', scopes: 'read_orders write_products' });
    expect(await ask(created.accessToken)).toEqual({
      active: true,
      scope: 'read_orders write_products',
      private_app_id: String(created.id),
      token_type: 'Bearer',
      iat: Math.floor(t.clock.now / 1000),
      iss: `http://${f.storeName}.localhost:8080`,
      store: f.storeName,
    });
    await t.services.apps.revokePrivateApp(store.id, created.id);
    expect(await ask(created.accessToken)).toEqual({ active: false });
  });

  it('answers exactly {"active": false} for an expired, revoked, uninstalled, narrowed, unknown, malformed or foreign token', async () => {
    const g = await createFixture(t);
    const store = (await t.services.accounts.findStoreByName(g.storeName))!;
    const app = (await t.services.apps.findByClientId(g.clientId))!;
    const expiring = await exchange(t, g, await codeFor(t, g));
    const revoked = await exchange(t, g, await codeFor(t, g));
    const revoke = await t.app.inject({
      method: 'POST',
      url: '/admin/oauth/revoke',
      headers: { host: g.host, 'content-type': 'application/x-www-form-urlencoded' },
      payload: formBody({ token: revoked.access_token, client_id: g.clientId, client_secret: g.clientSecret }),
    });
    expect(revoke.statusCode).toBe(200);
    expect(await ask(revoked.access_token, g.host)).toEqual({ active: false });
    expect(await ask(revoked.refresh_token, g.host)).toMatchObject({ active: true });

    // Another store's token, asked at this store; and this store's token at another.
    const foreign = await exchange(t, f, await codeFor(t, f));
    expect(await ask(foreign.access_token, g.host)).toEqual({ active: false });
    expect(await ask(foreign.refresh_token, g.host)).toEqual({ active: false });
    expect(await ask(expiring.access_token, f.host)).toEqual({ active: false });
    const foreignPrivate = await privateToken(t, f.storeName, 'read_products');
    expect(await ask(foreignPrivate, g.host)).toEqual({ active: false });

    for (const junk of [
      'garbage',
      'sg_at_',
      `sg_at_${'A'.repeat(43)}`,
      `sg_rt_${'B'.repeat(43)}`,
      `sg_pt_${'C'.repeat(43)}`,
      'x'.repeat(5000),
    ])
      expect(await ask(junk, g.host)).toEqual({ active: false });

    // Narrowed: the grant drops write_orders, which ends every token family of the installation.
    const narrowed = await exchange(t, g, await codeFor(t, g));
    await t.services.apps.grant(store.id, app.id, ['read_products'] as Scope[]);
    expect(await ask(narrowed.access_token, g.host)).toEqual({ active: false });
    expect(await ask(narrowed.refresh_token, g.host)).toEqual({ active: false });

    // Uninstalled.
    const installed = await exchange(t, g, await codeFor(t, g, { scope: 'read_products' }));
    expect(await ask(installed.access_token, g.host)).toMatchObject({ active: true, scope: 'read_products' });
    await t.services.apps.uninstall(store.id, app.id);
    expect(await ask(installed.access_token, g.host)).toEqual({ active: false });
    expect(await ask(installed.refresh_token, g.host)).toEqual({ active: false });

    // Expired: an hour later.
    const h = await createFixture(t);
    const late = await exchange(t, h, await codeFor(t, h));
    t.clock.advance(t.config.accessTokenTtlSeconds * 1000);
    expect(await ask(late.access_token, h.host)).toEqual({ active: false });
    expect(await ask(late.refresh_token, h.host)).toMatchObject({ active: true });
    t.clock.advance(t.config.refreshTokenTtlSeconds * 1000);
    expect(await ask(late.refresh_token, h.host)).toEqual({ active: false });
  });

  it("refuses an app's client credentials and anything but a resource server's, with 401 invalid_client", async () => {
    const token = (await exchange(t, f, await codeFor(t, f))).access_token;
    const app = { client_id: f.clientId, client_secret: f.clientSecret };
    const refusals = headerSets(
      { authorization: basic(app) },
      { authorization: basic({ ...rs, client_secret: `${rs.client_secret.slice(0, -1)}x` }) },
      { authorization: basic({ client_id: 'rs_nope', client_secret: rs.client_secret }) },
      { authorization: `Bearer ${token}` },
      {},
    );
    for (const headers of refusals) {
      const res = await introspect(t, f.host, { token }, headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      expect(res.json().error).toBe('invalid_client');
      expect(res.headers['www-authenticate']).toMatch(/^Basic /);
      expect(res.body).not.toContain(token);
    }
    const inBody = await introspect(t, f.host, { token, ...app });
    expect(inBody.statusCode).toBe(401);
    // The resource server's own credentials work in the body too, and as JSON.
    expect((await introspect(t, f.host, { token, ...rs })).json()).toMatchObject({ active: true });
    const json = await t.app.inject({
      method: 'POST',
      url: '/admin/oauth/introspect',
      headers: { host: f.host, 'content-type': 'application/json', authorization: basic(rs) },
      payload: JSON.stringify({ token, token_type_hint: 'refresh_token' }),
    });
    expect(json.json()).toMatchObject({ active: true, token_type: 'Bearer' });
    // A deleted resource server is refused at its next request.
    const other = await t.services.resourceServers.create({ name: 'Short-lived' });
    expect((await introspect(t, f.host, { token }, { authorization: basic(other) })).statusCode).toBe(200);
    await t.services.resourceServers.delete(other.client_id);
    expect((await introspect(t, f.host, { token }, { authorization: basic(other) })).statusCode).toBe(401);
  });

  it('answers bad input with 400 invalid_request; no such endpoint off a store host', async () => {
    const auth = { authorization: basic(rs) };
    for (const [fields, message] of [
      [{}, 'token is required'],
      [{ token: '' }, 'token is required'],
      [{ token: 'sg_at_x', token_type_hint: 'id_token' }, 'token_type_hint must be access_token or refresh_token'],
    ] as const) {
      const res = await introspect(t, f.host, fields, auth);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_request', error_description: message });
    }
    const array = await t.app.inject({
      method: 'POST',
      url: '/admin/oauth/introspect',
      headers: { host: f.host, 'content-type': 'application/json', ...auth },
      payload: JSON.stringify({ token: ['a', 'b'] }),
    });
    expect(array.statusCode).toBe(400);
    expect(array.json().error).toBe('invalid_request');
    const both = await introspect(t, f.host, { token: 'x', client_id: rs.client_id, client_secret: rs.client_secret }, auth);
    expect(both.statusCode).toBe(400);
    const platformHost = await introspect(t, 'localhost:8080', { token: 'x' }, auth);
    expect(platformHost.statusCode).toBe(404);
    const unknownStore = await introspect(t, 'nosuchstore.localhost:8080', { token: 'x' }, auth);
    expect(unknownStore.statusCode).toBe(404);
  });

  it('creates credentials with a hashed secret; lists and deletes them; refuses a bad name', async () => {
    const created = await t.services.resourceServers.create({ name: '  Reports API ' });
    expect(created.client_id).toMatch(/^rs_[0-9a-f]{32}$/);
    expect(created.client_secret).toMatch(/^sg_rss_[A-Za-z0-9_-]{43}$/);
    const row = await t.db.kysely.selectFrom('resource_servers').selectAll().where('client_id', '=', created.client_id).executeTakeFirst();
    expect(row).toMatchObject({ name: 'Reports API', secret_hash: hashToken(created.client_secret) });
    expect(JSON.stringify(row)).not.toContain(created.client_secret);
    expect(await t.services.resourceServers.list()).toContainEqual({
      client_id: created.client_id,
      name: 'Reports API',
      created_at: new Date(t.clock.now).toISOString(),
    });
    await t.services.resourceServers.delete(created.client_id);
    await expect(t.services.resourceServers.delete(created.client_id)).rejects.toThrow('no resource server');
    for (const name of ['', '   ', 'x'.repeat(101), 'tab\there'])
      await expect(t.services.resourceServers.create({ name })).rejects.toThrow('Validation failed');
  });

  it('is documented in the OpenAPI document and on the API docs page, with its own security scheme', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'localhost:8080' } })).json();
    const op = doc.paths['/admin/oauth/introspect'].post;
    expect(op.security).toEqual([{ ResourceServer: [] }]);
    expect(doc.components.securitySchemes.ResourceServer).toMatchObject({ type: 'http', scheme: 'basic' });
    expect(doc.components.securitySchemes.Bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(Object.keys(op.responses['200'].content['application/json'].schema.properties)).toEqual(
      expect.arrayContaining(['active', 'scope', 'client_id', 'private_app_id', 'token_type', 'exp', 'iat', 'iss', 'store']),
    );
    const page = await t.app.inject({ method: 'GET', url: '/docs', headers: { host: 'localhost:8080' } });
    expect(page.body).toContain('<code>POST /admin/oauth/introspect</code>');
    expect(page.body).toContain('Authorization: Bearer &lt;token&gt;');
  });

  it('counts introspections in /metrics by outcome', async () => {
    const { body } = await t.services.metrics.scrape();
    expect(body).toMatch(/storegate_token_introspections_total\{outcome="active"\} [1-9]/);
    expect(body).toMatch(/storegate_token_introspections_total\{outcome="inactive"\} [1-9]/);
    expect(body).toMatch(/storegate_token_introspections_total\{outcome="invalid_client"\} [1-9]/);
  });
});

describe.each(DIALECTS)('token introspection rate limit on %s', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { introspectRateLimit: { bucket: 3, perSecond: 0.5 } });
    f = await createFixture(t);
  });
  afterAll(() => t?.close());

  it('refuses past the bucket of a credential with 429 and Retry-After; others and wrong secrets are not counted', async () => {
    const first = await t.services.resourceServers.create({ name: 'Busy' });
    const second = await t.services.resourceServers.create({ name: 'Quiet' });
    for (let i = 0; i < 5; i++) {
      const wrong = await introspect(t, f.host, { token: 'x' }, { authorization: basic({ ...first, client_secret: 'wrong' }) });
      expect(wrong.statusCode).toBe(401);
    }
    for (let i = 0; i < 3; i++) expect((await introspect(t, f.host, { token: 'x' }, { authorization: basic(first) })).statusCode).toBe(200);
    const refused = await introspect(t, f.host, { token: 'x' }, { authorization: basic(first) });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('2');
    expect(refused.json()).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'too many introspection requests from this resource server; retry after 2 s',
    });
    // The bucket is the credential's, whichever store it asks at; another credential has its own.
    const g = await createFixture(t);
    expect((await introspect(t, g.host, { token: 'x' }, { authorization: basic(first) })).statusCode).toBe(429);
    expect((await introspect(t, g.host, { token: 'x' }, { authorization: basic(second) })).statusCode).toBe(200);
    t.clock.advance(2000);
    expect((await introspect(t, f.host, { token: 'x' }, { authorization: basic(first) })).statusCode).toBe(200);
  });
});

describe.skipIf(!process.env.TEST_REDIS_URL).each(DIALECTS)('token introspection rate limit shared through Redis on %s', (dialect) => {
  it("two platform nodes count one resource server's requests in one bucket", async () => {
    const t = await createTestPlatform(dialect, { introspectRateLimit: { bucket: 3, perSecond: 1 }, redisUrl: process.env.TEST_REDIS_URL });
    const second = await createPlatform({ ...t.config }, { db: t.db, clock: t.clock.fn, migrate: false });
    try {
      const f = await createFixture(t);
      // A fresh client_id on every run: its Redis key is fresh too.
      const rs = await t.services.resourceServers.create({ name: 'Clustered' });
      const ask = (node: typeof t.app) =>
        node.inject({
          method: 'POST',
          url: '/admin/oauth/introspect',
          headers: { host: f.host, 'content-type': 'application/x-www-form-urlencoded', authorization: basic(rs) },
          payload: formBody({ token: 'x' }),
        });
      for (const node of [t.app, second.http, t.app]) expect((await ask(node)).statusCode).toBe(200);
      const refused = await ask(second.http);
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['retry-after']).toBe('1');
    } finally {
      await second.close();
      await t.close();
    }
  });
});
