// What standard clients read besides the family's own conventions: the RFC 8414 metadata of each
// store, RFC 9207 `iss` on every authorization response, the IETF RateLimit fields, the version
// that answered, and the Deprecation / Sunset announcement of version 2022-01.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_2022_01_DEPRECATION, loadConfig, parseDeprecation } from '../src/config.ts';
import { verifyQueryString } from '../src/domain/query-signature.ts';
import { supportedScopes } from '../src/domain/scopes.ts';
import {
  api,
  appToken,
  authorizeUrl,
  consent,
  createFixture,
  createTestPlatform,
  csrfFrom,
  DIALECTS,
  type Fixture,
  login,
  privateToken,
  type TestPlatform,
} from './harness.ts';
import { PLATFORM_HOST, createPartner, expectCsrfRefused, expectGoodPage, get, partnerLogin, post } from './web-pages.ts';

describe('--deprecation-2022-01 and --sunset-2022-01', () => {
  it('default to 2025-06-01 and 2027-06-01', () => {
    const c = loadConfig({ database: ':memory:' });
    expect(c.apiDeprecations['2022-01']).toEqual(DEFAULT_2022_01_DEPRECATION);
    expect(new Date(DEFAULT_2022_01_DEPRECATION.deprecatedAt).toISOString()).toBe('2025-06-01T00:00:00.000Z');
    expect(new Date(DEFAULT_2022_01_DEPRECATION.sunsetAt).toISOString()).toBe('2027-06-01T00:00:00.000Z');
  });
  it('take a date or a UTC time', () => {
    expect(parseDeprecation('2022-01', '2026-01-15', '2026-12-31T18:30:00Z')).toEqual({
      deprecatedAt: Date.UTC(2026, 0, 15),
      sunsetAt: Date.UTC(2026, 11, 31, 18, 30),
    });
    expect(
      loadConfig({ database: ':memory:', deprecation202201: '2026-02-01', sunset202201: '2026-02-01' }).apiDeprecations['2022-01'],
    ).toEqual({
      deprecatedAt: Date.UTC(2026, 1, 1),
      sunsetAt: Date.UTC(2026, 1, 1),
    });
  });
  for (const [what, deprecation, sunset, message] of [
    ['words', 'soon', undefined, '--deprecation-2022-01: expected a date such as 2027-06-01 or 2027-06-01T00:00:00Z, got "soon"'],
    ['a day that does not exist', undefined, '2027-02-30', '--sunset-2022-01: expected a date such as 2027-06-01'],
    ['a time with an offset', '2026-01-01T00:00:00+02:00', undefined, '--deprecation-2022-01: expected a date'],
    ['a unix time', '1767225600', undefined, '--deprecation-2022-01: expected a date'],
    ['a sunset before the deprecation', '2026-06-01', '2026-05-31', '--sunset-2022-01: must not be earlier than --deprecation-2022-01'],
    ['a sunset before the default deprecation', undefined, '2025-01-01', '--sunset-2022-01: must not be earlier than'],
  ] as const) {
    it(`refuse ${what}`, () => {
      expect(() => loadConfig({ database: ':memory:', deprecation202201: deprecation, sunset202201: sunset })).toThrow(message);
    });
  }
});

describe.each(DIALECTS)('discovery and standard headers on %s', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  let token: string;
  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: { bucket: 4, perSecond: 2 } });
    f = await createFixture(t);
    token = await appToken(t, f, 'read_products');
  });
  afterAll(async () => t.close());

  it('serves RFC 8414 metadata at /.well-known/oauth-authorization-server of each store, the store being the issuer', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server', headers: { host: f.host } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const issuer = `http://${f.storeName}.localhost:8080`;
    expect(res.json()).toEqual({
      issuer,
      authorization_endpoint: `${issuer}/admin/oauth/authorize`,
      token_endpoint: `${issuer}/admin/oauth/token`,
      revocation_endpoint: `${issuer}/admin/oauth/revoke`,
      scopes_supported: supportedScopes(),
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:token-exchange'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      revocation_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      introspection_endpoint: `${issuer}/admin/oauth/introspect`,
      introspection_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      authorization_response_iss_parameter_supported: true,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
    });
    // Every scope the authorize endpoint accepts, and nothing it would refuse.
    expect(res.json().scopes_supported).toEqual(
      expect.arrayContaining(['read_products', 'write_products', 'read_orders', 'write_customers']),
    );
    const other = await createFixture(t);
    const theirs = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server', headers: { host: other.host } });
    expect(theirs.json().issuer).toBe(`http://${other.storeName}.localhost:8080`);
  });

  it('has no metadata on the platform host or for an unknown store, and refuses other methods', async () => {
    const platform = await t.app.inject({
      method: 'GET',
      url: '/.well-known/oauth-authorization-server',
      headers: { host: 'localhost:8080' },
    });
    expect(platform.statusCode).toBe(404);
    const unknown = await t.app.inject({
      method: 'GET',
      url: '/.well-known/oauth-authorization-server',
      headers: { host: 'nosuchstore.localhost' },
    });
    expect(unknown.statusCode).toBe(404);
    const post = await t.app.inject({ method: 'POST', url: '/.well-known/oauth-authorization-server', headers: { host: f.host } });
    expect(post.statusCode).toBe(404);
  });

  it('documents the metadata route in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'localhost:8080' } })).json();
    const op = doc.paths['/.well-known/oauth-authorization-server'].get;
    expect(op.security).toEqual([]);
    expect(op.responses['200'].content['application/json'].schema.required).toContain('authorization_response_iss_parameter_supported');
    const list = doc.paths['/openapi/{version}/products'].get.responses['200'].headers;
    for (const h of ['X-Service-Api-Call-Limit', 'RateLimit-Policy', 'RateLimit', 'X-Service-Api-Version', 'Deprecation', 'Sunset'])
      expect(list, h).toHaveProperty(h);
    expect(doc.paths['/openapi/{version}/products'].get.responses['429'].headers).toHaveProperty('RateLimit');
    // The token endpoint with its three grants, form and JSON bodies, and both answers.
    const token = doc.paths['/admin/oauth/token'].post;
    expect(token.security).toEqual([]);
    const form = token.requestBody.content['application/x-www-form-urlencoded'].schema;
    expect(form.properties.grant_type.enum).toContain('urn:ietf:params:oauth:grant-type:token-exchange');
    expect(Object.keys(token.requestBody.content)).toContain('application/json');
    expect(Object.keys(token.responses['200'].content['application/json'].schema.properties)).toEqual(
      expect.arrayContaining(['refresh_token', 'issued_token_type', 'associated_user']),
    );
    const docsPage = await t.app.inject({ method: 'GET', url: '/docs', headers: { host: 'localhost:8080' } });
    expect(docsPage.body).toContain('/admin/oauth/token');
    expect(docsPage.body).toContain('subject_token');
  });

  it('an app that turned iss on gets it on the code redirect, signed with the rest, and on every error redirect', async () => {
    const issuer = `http://${f.storeName}.localhost:8080`;
    const app = await t.services.apps.findByClientId(f.clientId);
    await t.services.apps.setAuthorizationIss(app!.id, true);
    const ok = await consent(t, f);
    expect(ok.searchParams.get('iss')).toBe(issuer);
    expect(verifyQueryString(ok.search.slice(1), f.clientSecret)).toBe(true);
    // A changed iss breaks the signature.
    const forged = new URLSearchParams(ok.search);
    forged.set('iss', 'http://evil.localhost:8080');
    expect(verifyQueryString(forged.toString(), f.clientSecret)).toBe(false);

    const jar = await login(t, f);
    for (const [extra, error] of [
      [{ scope: 'read_everything' }, 'invalid_scope'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ code_challenge: 'x', code_challenge_method: 'plain' }, 'invalid_request'],
    ] as const) {
      const res = await t.app.inject({ method: 'GET', url: authorizeUrl(f, extra), headers: { host: f.host, cookie: jar.header() } });
      expect(res.statusCode).toBe(303);
      const url = new URL(res.headers.location as string);
      expect(url.searchParams.get('error')).toBe(error);
      expect(url.searchParams.get('iss')).toBe(issuer);
    }
    // An untrusted redirect_uri gets an error page, never a redirect: no iss to carry anywhere.
    const page = await t.app.inject({
      method: 'GET',
      url: authorizeUrl(f, { redirect_uri: 'http://evil.example/cb' }),
      headers: { host: f.host, cookie: jar.header() },
    });
    expect(page.statusCode).toBe(400);
    expect(page.headers.location).toBeUndefined();
  });

  it('the partner turns iss on and off on the app page (CSRF-protected; a bad value or another partner changes nothing)', async () => {
    const p = await createPartner(t, 7);
    const { app } = await t.services.apps.createApp({
      name: 'Issuer app',
      appUrl: 'https://app.example.test/',
      redirectUri: 'https://app.example.test/cb',
      partnerId: p.id,
      authorizationIss: false,
    });
    const jar = await partnerLogin(t, p);
    const url = `/partner/apps/${app.client_id}`;
    const stored = async () => (await t.services.apps.findByClientId(app.client_id))!.authorization_iss;
    const page = await get(t, PLATFORM_HOST, url, jar);
    expectGoodPage(page);
    expect(page.body).toContain('>Send iss with the code</button>');
    await expectCsrfRefused(t, PLATFORM_HOST, `${url}/authorization-iss`, jar, { authorization_iss: 'on' }, stored);
    const bad = await post(t, PLATFORM_HOST, `${url}/authorization-iss`, jar, { _csrf: csrfFrom(page.body), authorization_iss: 'maybe' });
    expect(bad.statusCode).toBe(422);
    expect(await stored()).toBe(0);
    const on = await post(t, PLATFORM_HOST, `${url}/authorization-iss`, jar, { _csrf: csrfFrom(page.body), authorization_iss: 'on' });
    expect(on.statusCode).toBe(303);
    expect(on.headers.location).toBe(`${url}?done=iss_on`);
    expect(await stored()).toBe(1);
    const after = await get(t, PLATFORM_HOST, on.headers.location as string, jar);
    expectGoodPage(after);
    expect(after.body).toContain('now carries iss');
    expect(after.body).toContain('>Stop sending iss with the code</button>');
    const q = await createPartner(t, 8);
    const otherJar = await partnerLogin(t, q);
    const otherPage = await get(t, PLATFORM_HOST, '/partner', otherJar);
    const foreign = await post(t, PLATFORM_HOST, `${url}/authorization-iss`, otherJar, {
      _csrf: csrfFrom(otherPage.body),
      authorization_iss: 'off',
    });
    expect(foreign.statusCode).toBe(404);
    expect(await stored()).toBe(1);
    const off = await post(t, PLATFORM_HOST, `${url}/authorization-iss`, jar, { _csrf: csrfFrom(page.body), authorization_iss: 'off' });
    expect(off.headers.location).toBe(`${url}?done=iss_off`);
    expect(await stored()).toBe(0);
  });

  it('a new app gets iss on the code redirect, signed; one that turned it off gets none (its hmac verifiable in percent-encoded form), and the metadata then stops promising it', async () => {
    const g = await createFixture(t);
    const app = (await t.services.apps.findByClientId(g.clientId))!;
    expect(app.authorization_iss).toBe(1);
    const metadata = async () => {
      const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server', headers: { host: g.host } });
      expect(res.headers['cache-control']).toBe('no-cache');
      return res.json().authorization_response_iss_parameter_supported as boolean;
    };
    const withIss = await consent(t, g);
    expect(withIss.searchParams.get('iss')).toBe(`http://${g.storeName}.localhost:8080`);
    await t.services.apps.setAuthorizationIss(app.id, false);
    expect(await metadata()).toBe(false);
    const ok = await consent(t, g);
    expect([...ok.searchParams.keys()].sort()).toEqual(['code', 'hmac', 'shop', 'state', 'timestamp']);
    // What clients of this platform family compute: HMAC-SHA256 over the query without hmac, in
    // URLSearchParams' percent-encoded form, sorted by key.
    const rest = new URLSearchParams([...ok.searchParams].filter(([k]) => k !== 'hmac').sort(([a], [b]) => a.localeCompare(b)));
    expect(createHmac('sha256', g.clientSecret).update(rest.toString()).digest('hex')).toBe(ok.searchParams.get('hmac'));

    const jar = await login(t, g);
    const res = await t.app.inject({
      method: 'GET',
      url: authorizeUrl(g, { scope: 'read_everything' }),
      headers: { host: g.host, cookie: jar.header() },
    });
    expect(res.statusCode).toBe(303);
    const url = new URL(res.headers.location as string);
    expect(url.searchParams.get('error')).toBe('invalid_scope');
    expect(url.searchParams.get('iss')).toBe(`http://${g.storeName}.localhost:8080`);
    // Once every app carries it again, the metadata promises it again.
    for (const a of await t.services.apps.listApps()) await t.services.apps.setAuthorizationIss(a.id, true);
    expect(await metadata()).toBe(true);
  });

  it('answers every Admin API call with the version, the call limit and the IETF RateLimit fields; the 429 too', async () => {
    t.clock.advance(60_000);
    const seen: { status: number; limit: string; policy: string; rate: string }[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await api(t, f, token, 'GET', '/openapi/2026-01/products');
      seen.push({
        status: res.statusCode,
        limit: String(res.headers['x-service-api-call-limit']),
        policy: String(res.headers['ratelimit-policy']),
        rate: String(res.headers.ratelimit),
      });
      expect(res.headers['x-service-api-version']).toBe('2026-01');
      expect(res.headers.deprecation).toBeUndefined();
      expect(res.headers.sunset).toBeUndefined();
    }
    // Bucket 4 deep leaking 2/s: at most 4 within 2 s; the clock is frozen, so nothing leaks between calls.
    expect(seen).toEqual([
      { status: 200, limit: '1/4', policy: '"admin-api";q=4;w=2', rate: '"admin-api";r=3;t=1' },
      { status: 200, limit: '2/4', policy: '"admin-api";q=4;w=2', rate: '"admin-api";r=2;t=1' },
      { status: 200, limit: '3/4', policy: '"admin-api";q=4;w=2', rate: '"admin-api";r=1;t=2' },
      { status: 200, limit: '4/4', policy: '"admin-api";q=4;w=2', rate: '"admin-api";r=0;t=2' },
      { status: 429, limit: '4/4', policy: '"admin-api";q=4;w=2', rate: '"admin-api";r=0;t=2' },
    ]);
    t.clock.advance(1_000);
    const after = await api(t, f, token, 'GET', '/openapi/2026-01/products');
    expect(after.statusCode).toBe(200);
    expect(after.headers.ratelimit).toBe('"admin-api";r=1;t=2');
    t.clock.advance(60_000);
  });

  it('names the version on errors where it is known, and not where it is not', async () => {
    t.clock.advance(60_000);
    const unauthorized = await api(t, f, 'sg_at_nope', 'GET', '/openapi/2025-06/products');
    expect(unauthorized.statusCode).toBe(401);
    expect(unauthorized.headers['x-service-api-version']).toBe('2025-06');
    const forbidden = await api(t, f, token, 'GET', '/openapi/2025-06/orders');
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.headers['x-service-api-version']).toBe('2025-06');
    expect(forbidden.headers.ratelimit).toMatch(/^"admin-api";r=\d+;t=\d+$/);
    const notFound = await api(t, f, token, 'GET', '/openapi/2025-06/products/999999');
    expect(notFound.statusCode).toBe(404);
    expect(notFound.headers['x-service-api-version']).toBe('2025-06');
    const unknown = await api(t, f, token, 'GET', '/openapi/2019-01/products');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['x-service-api-version']).toBeUndefined();
    t.clock.advance(60_000);
  });

  it('names the version on every answer under /openapi/{version}/: unknown paths, other methods, refused hosts and bodies', async () => {
    t.clock.advance(60_000);
    const writer = await privateToken(t, f.storeName, 'write_products');
    const call = (
      method: 'GET' | 'HEAD' | 'OPTIONS' | 'POST' | 'DELETE',
      url: string,
      headers: Record<string, string> = {},
      payload?: string,
    ) =>
      t.app.inject({
        method,
        url,
        headers: { host: f.host, 'access-token': token, ...headers },
        ...(payload === undefined ? {} : { payload }),
      });
    const answers: [string, Awaited<ReturnType<typeof call>>, number][] = [
      ['unknown path', await call('GET', '/openapi/2025-06/nope'), 404],
      ['unknown path, HEAD', await call('HEAD', '/openapi/2025-06/nope/deeper'), 404],
      ['the version alone', await call('GET', '/openapi/2025-06'), 404],
      ['the version and a query', await call('GET', '/openapi/2025-06?x=1'), 404],
      ['OPTIONS', await call('OPTIONS', '/openapi/2025-06/products'), 404],
      ['another method', await call('DELETE', '/openapi/2025-06/products'), 405],
      ['no token', await call('GET', '/openapi/2025-06/products', { 'access-token': '' }), 401],
      ['an unknown store', await call('GET', '/openapi/2025-06/products', { host: 'nostore.localhost:8080' }), 404],
      ['the platform host', await call('GET', '/openapi/2025-06/products', { host: 'localhost:8080' }), 404],
      ['a malformed host', await call('GET', '/openapi/2025-06/products', { host: 'evil.example' }), 400],
      [
        'a body too large',
        await call(
          'POST',
          '/openapi/2025-06/products',
          { 'access-token': writer, 'content-type': 'application/json' },
          `"${'x'.repeat(2 * 1024 * 1024)}"`,
        ),
        413,
      ],
      [
        'a body not JSON',
        await call('POST', '/openapi/2025-06/products', { 'access-token': writer, 'content-type': 'application/json' }, '{"title":'),
        400,
      ],
      [
        'a body of another type',
        await call('POST', '/openapi/2025-06/products', { 'access-token': writer, 'content-type': 'text/plain' }, 'x'),
        415,
      ],
    ];
    for (const [what, res, status] of answers) {
      expect(res.statusCode, what).toBe(status);
      expect(res.headers['x-service-api-version'], what).toBe('2025-06');
    }
    // The deprecated version announces itself on them too; paths that only look alike do not.
    const old = await call('GET', '/openapi/2022-01/nope');
    expect(old.headers['x-service-api-version']).toBe('2022-01');
    expect(old.headers.deprecation).toBe(`@${Date.UTC(2025, 5, 1) / 1000}`);
    for (const url of [
      '/openapi/2025-06x/products',
      '/openapi/2019-01/nope',
      '/openapi',
      '/openapi.json/2025-06',
      '/admin/openapi/2025-06/x',
    ]) {
      expect((await call('GET', url)).headers['x-service-api-version'], url).toBeUndefined();
    }
    t.clock.advance(60_000);
  });

  it('announces the deprecation and sunset of 2022-01 on its answers, errors included, with a link to the docs', async () => {
    t.clock.advance(60_000);
    for (const res of [
      await api(t, f, token, 'GET', '/openapi/2022-01/products'),
      await api(t, f, undefined, 'GET', '/openapi/2022-01/products'),
    ]) {
      expect(res.headers['x-service-api-version']).toBe('2022-01');
      expect(res.headers.deprecation).toBe(`@${Date.UTC(2025, 5, 1) / 1000}`);
      expect(res.headers.sunset).toBe('Tue, 01 Jun 2027 00:00:00 GMT');
      expect(res.headers.link).toContain('<http://localhost:8080/docs#deprecation>; rel="deprecation"; type="text/html"');
    }
    const docs = await t.app.inject({ method: 'GET', url: '/docs', headers: { host: 'localhost:8080' } });
    expect(docs.body).toContain('<p id="deprecation">Version <code>2022-01</code> is deprecated');
    expect(docs.body).toContain('(2025-06-01)');
    expect(docs.body).toContain('(2027-06-01)');
    expect(docs.body).toContain('RateLimit-Policy');
    expect(docs.body).toContain('/.well-known/oauth-authorization-server');
    t.clock.advance(60_000);
  });
});

describe('configured 2022-01 dates', () => {
  it('are the ones announced', async () => {
    const t = await createTestPlatform('sqlite', {
      rateLimit: 'off',
      apiDeprecations: { '2022-01': parseDeprecation('2022-01', '2026-03-01', '2026-12-31T23:59:59Z') },
    });
    try {
      const f = await createFixture(t);
      const res = await api(t, f, await appToken(t, f, 'read_products'), 'GET', '/openapi/2022-01/products');
      expect(res.statusCode).toBe(200);
      expect(res.headers.deprecation).toBe(`@${Date.UTC(2026, 2, 1) / 1000}`);
      expect(res.headers.sunset).toBe('Thu, 31 Dec 2026 23:59:59 GMT');
      // Rate limiting off: no rate-limit fields at all rather than made-up ones.
      expect(res.headers.ratelimit).toBeUndefined();
      expect(res.headers['ratelimit-policy']).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});
