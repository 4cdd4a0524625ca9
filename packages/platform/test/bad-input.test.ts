// Every endpoint answers malformed, missing, oversized or hostile input with a clear 4xx and
// changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  authorizeUrl,
  codeFor,
  createFixture,
  createTestPlatform,
  DIALECTS,
  exchange,
  formBody,
  Jar,
  login,
  privateToken,
  tokenRequest,
  type Fixture,
  type TestPlatform,
} from './harness.ts';

async function countRows(t: TestPlatform): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of [
    'authorization_codes',
    'access_tokens',
    'refresh_tokens',
    'installations',
    'token_families',
    'web_sessions',
  ] as const) {
    const row = await t.db.kysely
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    out[table] = Number(row.n);
  }
  return out;
}

describe.each(DIALECTS)('bad input on %s', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  let jar: Jar;
  beforeAll(async () => {
    t = await createTestPlatform(dialect);
    f = await createFixture(t);
    jar = await login(t, f);
  });
  afterAll(async () => t.close());

  describe('authorize: never redirects to an untrusted redirect_uri', () => {
    const cases: [string, Record<string, string | undefined>, string][] = [
      ['unknown client', { client_id: 'nope' }, 'No app is registered'],
      ['missing client_id', { client_id: undefined }, 'missing client_id'],
      ['missing redirect_uri', { redirect_uri: undefined }, 'missing redirect_uri'],
      ['wrong redirect_uri', { redirect_uri: 'https://evil.example/cb' }, 'does not match'],
      ['redirect_uri with #', { redirect_uri: 'http://localhost:3000/auth/callback#frag' }, 'must not contain'],
      ['redirect_uri with a longer path', { redirect_uri: 'http://localhost:3000/auth/callback/x' }, 'does not match'],
    ];
    for (const [name, change, message] of cases) {
      it(name, async () => {
        const before = await countRows(t);
        const params = new URLSearchParams(authorizeUrl(f).split('?')[1]);
        for (const [k, v] of Object.entries(change)) v === undefined ? params.delete(k) : params.set(k, v);
        const res = await t.app.inject({
          method: 'GET',
          url: `/admin/oauth/authorize?${params}`,
          headers: { host: f.host, cookie: jar.header(), accept: 'text/html' },
        });
        expect(res.statusCode).toBe(400);
        expect(res.headers.location).toBeUndefined();
        expect(res.headers['content-type']).toContain('text/html');
        expect(res.body).toContain(message);
        expect(await countRows(t)).toEqual(before);
      });
    }
  });

  describe('authorize: errors after the redirect_uri is trusted go back to the app', () => {
    const cases: [string, Record<string, string | undefined>, string, string | null][] = [
      ['missing state', { state: undefined }, 'invalid_request', null],
      // The state is signed as sent: only letters, digits and -._~, so no signed string can be re-split.
      ['state with & and =', { state: 'x&shop=other.localhost' }, 'invalid_request', 'x&shop=other.localhost'],
      ['state with %', { state: 'a%26b' }, 'invalid_request', 'a%26b'],
      ['state with a space', { state: 'a b' }, 'invalid_request', 'a b'],
      ['state with +, / and :', { state: 'a+b/c:d' }, 'invalid_request', 'a+b/c:d'],
      ['state with a letter outside ASCII', { state: 'caf\u00e9' }, 'invalid_request', 'caf\u00e9'],
      ['state with a control character', { state: 'a\u0001b' }, 'invalid_request', 'a\u0001b'],
      ['state longer than 1024 characters', { state: 'a'.repeat(1025) }, 'invalid_request', 'a'.repeat(1025)],
      ['unknown scope', { scope: 'read_products read_secrets' }, 'invalid_scope', 'st-123'],
      ['empty scope', { scope: ' ' }, 'invalid_scope', 'st-123'],
      ['missing scope', { scope: undefined }, 'invalid_scope', 'st-123'],
      ['scope named after an object property (read_constructor)', { scope: 'read_constructor' }, 'invalid_scope', 'st-123'],
      ['scope named after an object property (write___proto__)', { scope: 'write___proto__' }, 'invalid_scope', 'st-123'],
      ['scope named after an object property (read_toString)', { scope: 'read_toString' }, 'invalid_scope', 'st-123'],
      ['scope named after an object property (read_hasOwnProperty)', { scope: 'read_hasOwnProperty' }, 'invalid_scope', 'st-123'],
      ['response_type token', { response_type: 'token' }, 'unsupported_response_type', 'st-123'],
      ['PKCE plain', { code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request', 'st-123'],
      ['PKCE malformed challenge', { code_challenge: 'short', code_challenge_method: 'S256' }, 'invalid_request', 'st-123'],
    ];
    for (const [name, change, error, state] of cases) {
      it(name, async () => {
        const before = await countRows(t);
        const params = new URLSearchParams(authorizeUrl(f).split('?')[1]);
        for (const [k, v] of Object.entries(change)) v === undefined ? params.delete(k) : params.set(k, v);
        const res = await t.app.inject({
          method: 'GET',
          url: `/admin/oauth/authorize?${params}`,
          headers: { host: f.host, cookie: jar.header() },
        });
        expect(res.statusCode).toBe(303);
        const url = new URL(res.headers.location as string);
        expect(url.origin + url.pathname).toBe(f.redirectUri);
        expect(url.searchParams.get('error')).toBe(error);
        expect(url.searchParams.get('state')).toBe(state);
        expect(url.searchParams.get('code')).toBeNull();
        expect(url.searchParams.get('hmac')).toBeNull();
        if (name.startsWith('state '))
          expect(url.searchParams.get('error_description')).toBe(
            'state must be 1 to 1024 URL-safe characters: letters, digits and "-", ".", "_", "~"',
          );
        expect(await countRows(t)).toEqual(before);
      });
    }

    it('a state changed to one with & and = in the consent form is refused the same way, and nothing is granted', async () => {
      const page = await t.app.inject({ method: 'GET', url: authorizeUrl(f), headers: { host: f.host, cookie: jar.header() } });
      expect(page.statusCode).toBe(200);
      jar.take(page);
      const before = await countRows(t);
      const fields: Record<string, string> = {};
      for (const m of page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]!] = m[2]!;
      const res = await t.app.inject({
        method: 'POST',
        url: '/admin/oauth/authorize',
        headers: { host: f.host, cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
        payload: formBody({ ...fields, state: 'x&shop=other.localhost', decision: 'install' }),
      });
      expect(res.statusCode).toBe(303);
      const url = new URL(res.headers.location as string);
      expect(url.searchParams.get('error')).toBe('invalid_request');
      expect(url.searchParams.get('code')).toBeNull();
      expect(url.searchParams.get('hmac')).toBeNull();
      expect(await countRows(t)).toEqual(before);
    });
  });

  describe('consent POST', () => {
    it('without a CSRF token or with a wrong one changes nothing', async () => {
      const before = await countRows(t);
      const fields = { ...Object.fromEntries(new URLSearchParams(authorizeUrl(f).split('?')[1])), decision: 'install' };
      for (const csrf of [undefined, 'forged-token']) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/admin/oauth/authorize',
          headers: { host: f.host, cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
          payload: formBody(csrf ? { ...fields, _csrf: csrf } : fields),
        });
        expect(res.statusCode).toBe(403);
        expect(res.headers.location).toBeUndefined();
      }
      expect(await countRows(t)).toEqual(before);
    });
  });

  describe('login', () => {
    it('wrong password, unknown email and missing fields: back to the form, no session', async () => {
      for (const body of [
        { email: f.email, password: 'wrong password' },
        { email: 'nobody@example.test', password: f.password },
        {},
      ] as Record<string, string>[]) {
        const j = new Jar();
        const page = await t.app.inject({ method: 'GET', url: '/admin/login', headers: { host: f.host } });
        j.take(page);
        const before = await countRows(t);
        const res = await t.app.inject({
          method: 'POST',
          url: '/admin/login',
          headers: { host: f.host, cookie: j.header(), 'content-type': 'application/x-www-form-urlencoded' },
          payload: formBody({ _csrf: /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!, ...body }),
        });
        expect(res.statusCode).toBe(303);
        expect(res.headers.location).toContain('error=1');
        expect(res.cookies.find((c) => c.name === 'sg_session')).toBeUndefined();
        expect(await countRows(t)).toEqual(before);
      }
    });
    it('an off-site return_to is ignored', async () => {
      const j = new Jar();
      const page = await t.app.inject({ method: 'GET', url: '/admin/login?return_to=//evil.example/x', headers: { host: f.host } });
      j.take(page);
      expect(page.body).toContain('name="return_to" value="/admin"');
      const res = await t.app.inject({
        method: 'POST',
        url: '/admin/login',
        headers: { host: f.host, cookie: j.header(), 'content-type': 'application/x-www-form-urlencoded' },
        payload: formBody({
          _csrf: /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!,
          email: f.email,
          password: f.password,
          return_to: 'https://evil.example/',
        }),
      });
      expect(res.headers.location).toBe('/admin');
    });
  });

  describe('token endpoint', () => {
    const good = () => ({
      client_id: f.clientId,
      client_secret: f.clientSecret,
      grant_type: 'authorization_code',
      redirect_uri: f.redirectUri,
    });
    const expectError = async (res: Awaited<ReturnType<typeof tokenRequest>>, status: number, error: string) => {
      expect(res.statusCode).toBe(status);
      expect(res.json().error).toBe(error);
      expect(typeof res.json().error_description).toBe('string');
      expect(res.headers['cache-control']).toBe('no-store');
    };

    it('unknown client and wrong secret: 401 invalid_client with WWW-Authenticate; the code survives', async () => {
      const code = await codeFor(t, f);
      const before = await countRows(t);
      for (const change of [{ client_id: 'unknown' }, { client_secret: 'sg_cs_wrong' }, { client_secret: '' }]) {
        const res = await tokenRequest(t, f, { ...good(), code, ...change });
        await expectError(res, 401, 'invalid_client');
        expect(res.headers['www-authenticate']).toContain('Basic');
      }
      expect(await countRows(t)).toEqual(before);
      expect((await tokenRequest(t, f, { ...good(), code })).statusCode).toBe(200);
    });

    it('wrong redirect_uri, missing code, foreign code, garbage code', async () => {
      const code = await codeFor(t, f);
      await expectError(await tokenRequest(t, f, { ...good(), code, redirect_uri: 'http://localhost:3000/other' }), 400, 'invalid_grant');
      await expectError(await tokenRequest(t, f, { ...good() }), 400, 'invalid_request');
      await expectError(await tokenRequest(t, f, { ...good(), code: 'sg_ac_' + 'A'.repeat(43) }), 400, 'invalid_grant');
      await expectError(await tokenRequest(t, f, { ...good(), code: "' or 1=1 --" }), 400, 'invalid_grant');
      // A code of another app cannot be redeemed by this one.
      const other = await createFixture(t);
      const foreign = await codeFor(t, other);
      await expectError(await tokenRequest(t, f, { ...good(), code: foreign }), 400, 'invalid_grant');
      expect(
        (
          await tokenRequest(t, other, {
            client_id: other.clientId,
            client_secret: other.clientSecret,
            grant_type: 'authorization_code',
            redirect_uri: other.redirectUri,
            code: foreign,
          })
        ).statusCode,
      ).toBe(200);
      expect((await tokenRequest(t, f, { ...good(), code })).statusCode).toBe(200);
    });

    it("a code or refresh token used at another store's token endpoint is invalid there and stays usable at home", async () => {
      const elsewhere = await createFixture(t);
      const code = await codeFor(t, f);
      const atOther = await t.app.inject({
        method: 'POST',
        url: '/admin/oauth/token',
        headers: { host: elsewhere.host, 'content-type': 'application/json' },
        payload: JSON.stringify({ ...good(), code }),
      });
      expect(atOther.statusCode).toBe(400);
      expect(atOther.json().error).toBe('invalid_grant');
      const pair = (await tokenRequest(t, f, { ...good(), code })).json();
      expect(pair.store_name).toBe(f.storeName);
      const refreshOther = await t.app.inject({
        method: 'POST',
        url: '/admin/oauth/token',
        headers: { host: elsewhere.host, 'content-type': 'application/json' },
        payload: JSON.stringify({
          client_id: f.clientId,
          client_secret: f.clientSecret,
          grant_type: 'refresh_token',
          refresh_token: pair.refresh_token,
        }),
      });
      expect(refreshOther.json().error).toBe('invalid_grant');
      const revokeOther = await t.app.inject({
        method: 'POST',
        url: '/admin/oauth/revoke',
        headers: { host: elsewhere.host, 'content-type': 'application/json' },
        payload: JSON.stringify({ client_id: f.clientId, client_secret: f.clientSecret, token: pair.refresh_token }),
      });
      expect(revokeOther.statusCode).toBe(200);
      expect(
        (
          await tokenRequest(t, f, {
            client_id: f.clientId,
            client_secret: f.clientSecret,
            grant_type: 'refresh_token',
            refresh_token: pair.refresh_token,
          })
        ).statusCode,
      ).toBe(200);
    });

    it('missing, wrong and unsupported grant types', async () => {
      await expectError(await tokenRequest(t, f, { client_id: f.clientId, client_secret: f.clientSecret }), 400, 'invalid_request');
      await expectError(await tokenRequest(t, f, { ...good(), grant_type: 'password' }), 400, 'unsupported_grant_type');
      await expectError(await tokenRequest(t, f, { ...good(), grant_type: 'client_credentials' }), 400, 'unsupported_grant_type');
    });

    it('refresh token of another client, missing or garbage refresh token', async () => {
      const other = await createFixture(t);
      const pair = await exchange(t, other, await codeFor(t, other));
      const base = { client_id: f.clientId, client_secret: f.clientSecret, grant_type: 'refresh_token' };
      await expectError(await tokenRequest(t, f, { ...base, refresh_token: pair.refresh_token }), 400, 'invalid_grant');
      await expectError(await tokenRequest(t, f, base), 400, 'invalid_request');
      await expectError(await tokenRequest(t, f, { ...base, refresh_token: 'garbage' }), 400, 'invalid_grant');
      // The other client's token was not burnt by the attempt.
      expect(
        (
          await tokenRequest(t, other, {
            client_id: other.clientId,
            client_secret: other.clientSecret,
            grant_type: 'refresh_token',
            refresh_token: pair.refresh_token,
          })
        ).statusCode,
      ).toBe(200);
    });

    it('garbage JSON, a JSON array, repeated parameters, an unsupported content type', async () => {
      const send = (payload: string, type: string) =>
        t.app.inject({ method: 'POST', url: '/admin/oauth/token', headers: { host: f.host, 'content-type': type }, payload });
      await expectError(await send('{"grant_type": "authorization_code",', 'application/json'), 400, 'invalid_request');
      await expectError(await send('[1,2]', 'application/json'), 400, 'invalid_request');
      await expectError(
        await send('grant_type=refresh_token&grant_type=authorization_code', 'application/x-www-form-urlencoded'),
        400,
        'invalid_request',
      );
      await expectError(await send('<xml/>', 'application/xml'), 415, 'invalid_request');
      await expectError(await send('', 'application/json'), 400, 'invalid_request');
    });

    it('Basic and body credentials together, or a malformed Authorization header', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/admin/oauth/token',
        headers: {
          host: f.host,
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from(`${f.clientId}:${f.clientSecret}`).toString('base64')}`,
        },
        payload: JSON.stringify({ ...good(), code: 'x' }),
      });
      await expectError(res, 400, 'invalid_request');
      const bearer = await t.app.inject({
        method: 'POST',
        url: '/admin/oauth/token',
        headers: { host: f.host, 'content-type': 'application/json', authorization: 'Bearer abc' },
        payload: JSON.stringify({ grant_type: 'refresh_token', refresh_token: 'x' }),
      });
      await expectError(bearer, 401, 'invalid_client');
    });

    it('a 10 MB body is refused with 413 and never parsed', async () => {
      const before = await countRows(t);
      const big = 'x'.repeat(10 * 1024 * 1024);
      for (const [type, payload] of [
        ['application/json', JSON.stringify({ grant_type: 'refresh_token', refresh_token: big })],
        ['application/x-www-form-urlencoded', `grant_type=refresh_token&refresh_token=${big}`],
      ] as const) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/admin/oauth/token',
          headers: { host: f.host, 'content-type': type },
          payload,
        });
        expect(res.statusCode).toBe(413);
        expect(res.json().error).toBe('invalid_request');
      }
      const login = await t.app.inject({
        method: 'POST',
        url: '/admin/login',
        headers: { host: f.host, 'content-type': 'application/x-www-form-urlencoded' },
        payload: `email=${big}`,
      });
      expect(login.statusCode).toBe(413);
      expect(await countRows(t)).toEqual(before);
    });

    it('revocation endpoint refuses a wrong secret, a missing token and an unknown hint', async () => {
      const send = (fields: Record<string, string>) =>
        t.app.inject({
          method: 'POST',
          url: '/admin/oauth/revoke',
          headers: { host: f.host, 'content-type': 'application/x-www-form-urlencoded' },
          payload: formBody(fields),
        });
      expect((await send({ client_id: f.clientId, client_secret: 'nope', token: 'x' })).statusCode).toBe(401);
      expect((await send({ client_id: f.clientId, client_secret: f.clientSecret })).json().error).toBe('invalid_request');
      expect(
        (await send({ client_id: f.clientId, client_secret: f.clientSecret, token: 'x', token_type_hint: 'id_token' })).json().error,
      ).toBe('unsupported_token_type');
    });
  });

  describe('deeply nested JSON: refused by a depth scan before it is parsed', () => {
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    const nested = /nested too deeply/;

    it('a 1 MB body of [[[[… answers 400 with a clear message on the Admin API, the token endpoint and the form routes', async () => {
      const token = await privateToken(t, f.storeName, 'write_products');
      const before = await countRows(t);
      const products = '/openapi/2026-01/products';
      for (const [path, body] of [
        [products, '['.repeat(1024 * 1024 - 1)],
        [products, deep(500_000)],
        [products, `{"product":${deep(64)}}`],
        ['/openapi/2026-01/webhooks', `{"address":"https://example.test/","topic":${'{"a":'.repeat(100)}1${'}'.repeat(100)}}`],
      ] as const) {
        const res = await api(t, f, token, 'POST', path, body);
        expect(res.statusCode, `${path} ${body.slice(0, 20)}`).toBe(400);
        expect(res.json().code).toBe('BadRequest');
        expect(res.json().message).toMatch(nested);
      }
      const oauth = await t.app.inject({
        method: 'POST',
        url: '/admin/oauth/token',
        headers: { host: f.host, 'content-type': 'application/json' },
        payload: '['.repeat(10_000),
      });
      expect(oauth.statusCode).toBe(400);
      expect(oauth.json().error).toBe('invalid_request');
      expect(oauth.json().error_description).toMatch(nested);
      for (const path of ['/admin/login', '/partner/login', '/admin/private-apps']) {
        const host = path.startsWith('/partner') ? 'localhost:8080' : f.host;
        const small = await t.app.inject({
          method: 'POST',
          url: path,
          headers: { host, cookie: jar.header(), 'content-type': 'application/json' },
          payload: '['.repeat(60_000),
        });
        expect(small.statusCode, path).toBe(400);
        expect(small.json().message).toMatch(nested);
        // Pages and forms take small bodies whatever their type: 1 MB is refused unread.
        const big = await t.app.inject({
          method: 'POST',
          url: path,
          headers: { host, cookie: jar.header(), 'content-type': 'application/json' },
          payload: '['.repeat(1024 * 1024 - 1),
        });
        expect(big.statusCode, path).toBe(413);
      }
      expect(await countRows(t)).toEqual(before);
    });

    it('normal bodies still work: brackets inside strings do not count, and 64 levels are parsed', async () => {
      const token = await privateToken(t, f.storeName, 'write_products');
      // Quotes, backslashes and thousands of brackets inside strings: not nesting.
      const body_html = `[{"\\[${'['.repeat(5000)}\\"{{{ \\\\"[[`;
      const created = await api(
        t,
        f,
        token,
        'POST',
        '/openapi/2026-01/products',
        JSON.stringify({ product: { title: 'x"[{', body_html } }),
      );
      expect(created.statusCode).toBe(201);
      expect(created.json().data.body_html).toBe(body_html);
      // 64 levels are parsed (and then fail validation as any array would); 65 are not.
      const at64 = await api(t, f, token, 'POST', '/openapi/2026-01/products', deep(64));
      expect(at64.statusCode).toBe(422);
      const at65 = await api(t, f, token, 'POST', '/openapi/2026-01/products', deep(65));
      expect(at65.statusCode).toBe(400);
      expect(at65.json().message).toMatch(nested);
      // A JSON token request is parsed as before.
      const code = await codeFor(t, f);
      const fields = {
        client_id: f.clientId,
        client_secret: f.clientSecret,
        grant_type: 'authorization_code',
        redirect_uri: f.redirectUri,
        code,
      };
      expect((await tokenRequest(t, f, fields, 'json')).statusCode).toBe(200);
    });
  });

  describe('hosts', () => {
    it('a Host that is not a store: 404; malformed: 400; platform pages only on the bare domain, probes on any', async () => {
      const unknown = await t.app.inject({
        method: 'POST',
        url: '/admin/oauth/token',
        headers: { host: 'nostore.localhost:8080', 'content-type': 'application/json' },
        payload: '{}',
      });
      expect(unknown.statusCode).toBe(404);
      for (const host of ['evil.example', 'a.b.localhost', 'sh_op.localhost', 'demo.localhost:99999x', 'localhost.evil.example']) {
        const res = await t.app.inject({ method: 'GET', url: '/admin/login', headers: { host } });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toMatchObject({ code: 'BadRequest', request_id: expect.stringMatching(/^req_/) });
      }
      expect((await t.app.inject({ method: 'GET', url: '/healthz', headers: { host: 'localhost:8080' } })).json()).toEqual({
        status: 'ok',
      });
      expect((await t.app.inject({ method: 'GET', url: '/readyz', headers: { host: 'localhost:8080' } })).json()).toEqual({
        status: 'ready',
        draining: false,
        dependencies: { database: 'up' },
      });
      // Probes answer on a store's host too (any Host does; see probes.test.ts).
      expect((await t.app.inject({ method: 'GET', url: '/healthz', headers: { host: f.host } })).statusCode).toBe(200);
      expect((await t.app.inject({ method: 'GET', url: '/admin/login', headers: { host: 'localhost:8080' } })).statusCode).toBe(404);
    });
    it('install of an unknown app: 404', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/admin/apps/nope/install', headers: { host: f.host, cookie: jar.header() } });
      expect(res.statusCode).toBe(404);
    });
  });

  it('a DELETE labelled JSON with no body is a DELETE; an empty JSON body elsewhere is a 400 that changes nothing', async () => {
    const token = await privateToken(t, f.storeName, 'write_products');
    const made = await api(t, f, token, 'POST', '/openapi/2026-01/products', { title: 'Doomed' });
    const id = made.json().data.id;
    const send = (method: 'PUT' | 'DELETE', payload?: string) =>
      t.app.inject({
        method,
        url: `/openapi/2026-01/products/${id}`,
        headers: { host: f.host, 'access-token': token, 'content-type': 'application/json' },
        ...(payload !== undefined ? { payload } : {}),
      });
    const put = await send('PUT', '');
    expect(put.statusCode).toBe(400);
    expect(put.json()).toMatchObject({ code: 'BadRequest', message: 'Request body is not valid JSON' });
    expect((await send('DELETE', '{')).statusCode).toBe(400);
    expect((await api(t, f, token, 'GET', `/openapi/2026-01/products/${id}`)).statusCode).toBe(200);
    const removed = await send('DELETE', '');
    expect(removed.statusCode, removed.body).toBe(200);
    expect((await api(t, f, token, 'GET', `/openapi/2026-01/products/${id}`)).statusCode).toBe(404);
  });

  it('an unexpected failure is a 500 with a generic body and a request id; details only in the log', async () => {
    const broken = await createTestPlatform(dialect);
    const g = await createFixture(broken);
    // The database goes away under the running app.
    await broken.db.kysely.destroy();
    const res = await broken.app.inject({ method: 'GET', url: '/admin/login', headers: { host: g.host } });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({
      code: 'ServerError',
      message: 'Internal error; quote the request id when reporting it',
      request_id: res.headers['x-request-id'],
    });
    expect(res.body).not.toMatch(/destroy|kysely|sqlite|pool/i);
    const logged = broken.logs.find((l) => l.includes('unexpected error'));
    expect(logged).toBeDefined();
    expect(logged).toContain(String(res.headers['x-request-id']));
    await broken.app.close();
  });
});
