// RFC 6750 on the Admin API, on both databases: `Authorization: Bearer <token>` works wherever
// Access-Token does, with the same rules (public and private app tokens, first use recorded, one
// rate-limit bucket and one Idempotency-Key owner per principal whichever header carried the
// token); two different tokens at once are a 400; refusals carry the RFC 6750 challenge and keep
// their JSON body; neither header reaches the log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../src/domain/tokens.ts';
import { appToken, createFixture, createTestPlatform, DIALECTS, type Fixture, privateToken, type TestPlatform } from './harness.ts';

const V = '/openapi/2026-01';

function call(
  t: TestPlatform,
  f: Fixture,
  headers: Record<string, string>,
  method: 'GET' | 'POST' = 'GET',
  path = `${V}/products`,
  body?: unknown,
) {
  return t.app.inject({
    method,
    url: path,
    headers: { host: f.host, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

/** Header sets of a loop, typed as what inject takes. */
function headerSets(...sets: Record<string, string>[]): Record<string, string>[] {
  return sets;
}

describe.each(DIALECTS)('Authorization: Bearer on the Admin API on %s', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  let token: string;
  let priv: string;
  let realm: string;

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: { bucket: 1000, perSecond: 100 } });
    f = await createFixture(t);
    token = await appToken(t, f, 'read_products write_orders');
    priv = await privateToken(t, f.storeName, 'write_products');
    realm = `realm="http://${f.storeName}.localhost:8080"`;
  });
  afterAll(() => t?.close());

  it("takes public and private app tokens as Bearer, records an access token's first use, and agrees with Access-Token", async () => {
    const used = async () =>
      (await t.db.kysely.selectFrom('access_tokens').select('used_at').where('token_hash', '=', hashToken(token)).executeTakeFirst())
        ?.used_at;
    expect(await used()).toBeNull();
    for (const headers of headerSets(
      { authorization: `Bearer ${token}` },
      { authorization: `bearer   ${token} ` },
      { authorization: `Bearer ${priv}` },
      { authorization: `Bearer ${token}`, 'access-token': token },
      { authorization: 'Basic dXNlcjpwYXNz', 'access-token': token },
    )) {
      const res = await call(t, f, headers);
      expect(res.statusCode, JSON.stringify(Object.keys(headers))).toBe(200);
      expect(res.headers['www-authenticate']).toBeUndefined();
    }
    expect(await used()).toBe(t.clock.now);
    const created = await call(t, f, { authorization: `Bearer ${priv}` }, 'POST', `${V}/products`, { title: 'Bearer made' });
    expect(created.statusCode, created.body).toBe(201);
  });

  it('refuses two different tokens with 400 in the usual error body, before looking either up', async () => {
    for (const [bearer, accessToken] of [
      [token, priv],
      [token, 'garbage'],
      ['', token],
    ]) {
      const res = await call(t, f, { authorization: `Bearer ${bearer}`, 'access-token': accessToken! });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        code: 'BadRequest',
        message: 'The Access-Token header and Authorization: Bearer carry different tokens; send one token, in either header',
        request_id: res.headers['x-request-id'],
      });
      expect(res.headers['www-authenticate']).toBe(`Bearer ${realm}, error="invalid_request"`);
      expect(res.body).not.toContain(token);
    }
  });

  it('401 carries Bearer realm, with error="invalid_token" when a token was sent; the body stays the same', async () => {
    const body = (res: { json(): unknown; headers: Record<string, unknown> }) =>
      expect(res.json()).toEqual({
        code: 'Unauthorized',
        message: 'Missing or invalid Access-Token',
        request_id: res.headers['x-request-id'],
      });
    for (const headers of headerSets({}, { authorization: 'Basic dXNlcjpwYXNz' })) {
      const res = await call(t, f, headers);
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe(`Bearer ${realm}`);
      body(res);
    }
    const other = await createFixture(t);
    const foreign = await appToken(t, other, 'read_products');
    for (const headers of headerSets(
      { authorization: 'Bearer garbage' },
      { authorization: 'Bearer' },
      { authorization: `Bearer ${foreign}` },
      { 'access-token': 'garbage' },
      { 'access-token': foreign },
    )) {
      const res = await call(t, f, headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      expect(res.headers['www-authenticate']).toBe(`Bearer ${realm}, error="invalid_token"`);
      body(res);
    }
    // Every route, the version's 404 first as before.
    const events = await call(t, f, { authorization: 'Bearer garbage' }, 'GET', `${V}/events`);
    expect(events.statusCode).toBe(401);
    expect(events.headers['www-authenticate']).toBe(`Bearer ${realm}, error="invalid_token"`);
    const version = await call(t, f, { authorization: 'Bearer garbage' }, 'GET', '/openapi/1999-01/products');
    expect(version.statusCode).toBe(404);
    expect(version.headers['www-authenticate']).toBeUndefined();
  });

  it('403 for a missing scope names it in WWW-Authenticate (routes, webhook topics, events)', async () => {
    const cases: [string, 'GET' | 'POST', string, unknown, string][] = [
      ['customers', 'GET', `${V}/customers`, undefined, 'read_customers'],
      ['a product write', 'POST', `${V}/products`, { title: 'x' }, 'write_products'],
      ['a webhook topic', 'POST', `${V}/webhooks`, { address: 'https://example.com/hook', topic: 'customers/create' }, 'read_customers'],
      ['events of a topic', 'GET', `${V}/events?topic=customers/create`, undefined, 'read_customers'],
    ];
    for (const [what, method, path, payload, scope] of cases) {
      const res = await call(t, f, { authorization: `Bearer ${token}` }, method, path, payload);
      expect(res.statusCode, `${what}: ${res.body}`).toBe(403);
      expect(res.headers['www-authenticate']).toBe(`Bearer error="insufficient_scope", scope="${scope}"`);
      expect(res.json()).toMatchObject({ code: 'Forbidden', request_id: res.headers['x-request-id'] });
    }
  });

  it('replays an Idempotency-Key whichever header carries the token', async () => {
    const key = { 'idempotency-key': 'bearer-key-1' };
    const first = await call(t, f, { 'access-token': priv, ...key }, 'POST', `${V}/products`, { title: 'Once' });
    const again = await call(t, f, { authorization: `Bearer ${priv}`, ...key }, 'POST', `${V}/products`, { title: 'Once' });
    expect(first.statusCode, first.body).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
  });

  it('never logs either header', async () => {
    await call(t, f, { authorization: `Bearer ${token}` });
    await call(t, f, { 'access-token': priv });
    const logs = t.logs.join('\n');
    expect(logs).not.toContain(token);
    expect(logs).not.toContain(priv);
  });
});

describe.each(DIALECTS)('one rate-limit bucket per principal, whichever header on %s', (dialect) => {
  let t: TestPlatform;
  afterAll(() => t?.close());

  it('counts Access-Token and Bearer calls of one token in the same bucket', async () => {
    t = await createTestPlatform(dialect, { rateLimit: { bucket: 3, perSecond: 1 } });
    const f = await createFixture(t);
    const token = await privateToken(t, f.storeName, 'read_products');
    expect((await call(t, f, { 'access-token': token })).headers['x-service-api-call-limit']).toBe('1/3');
    expect((await call(t, f, { authorization: `Bearer ${token}` })).headers['x-service-api-call-limit']).toBe('2/3');
    expect((await call(t, f, { 'access-token': token })).statusCode).toBe(200);
    const refused = await call(t, f, { authorization: `Bearer ${token}` });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
  });
});
