// An app written for this platform family, unchanged, against the real `storegate serve` (child
// process, no SDK, no browser) on SQLite and on PostgreSQL: it installs with read_shop, reads the
// shop first, subscribes with a wrapped webhook body, writes wrapped products, lists them with comma
// and repeated `ids`, `since_id` and `fields`, quotes `Request-Id`, and pages by following `Link`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgresUrl } from '../packages/platform/test/harness.ts';
import { consentAsMerchant } from './merchant-consent.ts';
import { cli, request, startServer, type RunningServer } from './server-process.ts';

const merchant = { email: 'owner@family.test', password: 'family-password' };
const REDIRECT_URI = 'http://localhost:3000/auth/callback';
const DATABASES = process.env.TEST_PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];

/** rel → URL of an RFC 8288 Link header, as such apps parse it. */
function parseLink(header: string | string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of String(header ?? '').split(',')) {
    const m = /<([^>]+)>;\s*rel="?([a-z]+)"?/.exec(part.trim());
    if (m) out[m[2]!] = m[1]!;
  }
  return out;
}

describe.each(DATABASES)('an app of the platform family on %s', (kind) => {
  let server: RunningServer;
  let dropSchema: (() => Promise<void>) | undefined;
  let credentials: { client_id: string; client_secret: string };
  let token: string;
  let host: string;

  /** What the app's HTTP client does: JSON in and out, the token in Access-Token. */
  const call = async (method: string, url: string, body?: unknown) => {
    const u = new URL(url, `http://${host}`);
    const res = await request(server.port, u.host, method, u.pathname + u.search, body === undefined ? undefined : JSON.stringify(body), {
      'access-token': token,
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    });
    return { status: res.status, headers: res.headers, json: res.body ? JSON.parse(res.body) : undefined };
  };

  beforeAll(async () => {
    let database: string | undefined;
    if (kind === 'postgres') {
      const schema = await freshPostgresUrl();
      database = schema.url;
      dropSchema = schema.drop;
    }
    server = await startServer({
      ...(database ? { database } : {}),
      prepare: (db) => {
        cli(db, ['migrate']);
        cli(db, [
          'stores',
          'create',
          'family',
          '--owner-email',
          merchant.email,
          '--owner-password',
          merchant.password,
          '--currency',
          'EUR',
          '--timezone',
          'Europe/Berlin',
        ]);
        credentials = cli(db, [
          'apps',
          'create',
          '--name',
          'Family app',
          '--app-url',
          'http://localhost:3000/',
          '--redirect-uri',
          REDIRECT_URI,
          '--scopes',
          'read_shop write_products',
        ]);
      },
    });
    host = `family.localhost:${server.port}`;
    // Install: scopes comma-separated, as these apps send them.
    const authorize = new URL(`http://${host}/admin/oauth/authorize`);
    authorize.search = new URLSearchParams({
      client_id: credentials.client_id,
      scope: 'read_shop,write_products',
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      state: 'nonce-1',
    }).toString();
    const back = await consentAsMerchant(server.port, authorize.toString(), merchant);
    expect(back.searchParams.get('shop')).toBe('family.localhost');
    const exchanged = await request(
      server.port,
      host,
      'POST',
      '/admin/oauth/token',
      JSON.stringify({
        client_id: credentials.client_id,
        client_secret: credentials.client_secret,
        code: back.searchParams.get('code'),
        grant_type: 'authorization_code',
        redirect_uri: REDIRECT_URI,
      }),
      { 'content-type': 'application/json' },
    );
    expect(exchanged.status, exchanged.body).toBe(200);
    token = JSON.parse(exchanged.body).access_token;
  }, 60_000);

  afterAll(async () => {
    // A server that never started leaves nothing to stop; the schema goes in any case.
    await server?.stop();
    await dropSchema?.();
  });

  it('reads the shop first', async () => {
    const res = await call('GET', '/openapi/2026-01/shop');
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({
      id: expect.stringMatching(/^\d+$/),
      name: 'family',
      domain: 'family.localhost',
      email: merchant.email,
      currency: 'EUR',
      timezone: 'Europe/Berlin',
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    expect(res.headers['request-id']).toBe(res.headers['x-request-id']);
  });

  it('subscribes with a wrapped body and writes wrapped products, then filters and pages like it always did', async () => {
    const hook = await call('POST', '/openapi/2026-01/webhooks', {
      webhook: { address: 'http://localhost:3000/webhooks', topic: 'products/update' },
    });
    expect(hook.status).toBe(201);
    expect(hook.json.data.topic).toBe('products/update');
    const hooks = await call('GET', `/openapi/2026-01/webhooks?ids=${hook.json.data.id}&fields=id,topic`);
    expect(hooks.json.data).toEqual([{ id: hook.json.data.id, topic: 'products/update' }]);

    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await call('POST', '/openapi/2026-01/products', { product: { title: `Family ${i}`, price: `${i}.50` } });
      expect(res.status).toBe(201);
      ids.push(res.json.data.id);
    }
    const comma = await call('GET', `/openapi/2026-01/products?ids=${ids[5]},${ids[1]}`);
    const repeated = await call('GET', `/openapi/2026-01/products?ids=${ids[1]}&ids=${ids[5]}`);
    expect(comma.json.data.map((p: { id: string }) => p.id)).toEqual([ids[1], ids[5]]);
    expect(repeated.json.data).toEqual(comma.json.data);
    const since = await call('GET', `/openapi/2026-01/products?since_id=${ids[4]}&fields=id,title`);
    expect(since.json.data).toEqual([
      { id: ids[5], title: 'Family 5' },
      { id: ids[6], title: 'Family 6' },
    ]);
    // A filter it misspelled is an error it can see, with the id to quote.
    const typo = await call('GET', `/openapi/2026-01/products?id=${ids[0]}`);
    expect(typo.status).toBe(400);
    expect(typo.json.message).toMatch(/Unsupported query parameter: id\b/);
    expect(typo.json.request_id).toBe(typo.headers['request-id']);

    // Pages by following Link rel="next" to the end, in each convention, keeping its filters.
    for (const version of ['2022-01', '2025-06', '2026-01']) {
      const seen: string[] = [];
      let next: string | undefined = `http://${host}/openapi/${version}/products?limit=2&since_id=${ids[0]}&fields=id`;
      let pages = 0;
      while (next) {
        const page = await call('GET', next);
        expect(page.status, version).toBe(200);
        expect(page.headers['request-id']).toMatch(/^req_/);
        for (const p of page.json.data) expect(Object.keys(p)).toEqual(['id']);
        seen.push(...page.json.data.map((p: { id: string }) => p.id));
        const link = parseLink(page.headers.link);
        if (pages > 0) expect(link.previous, version).toBeDefined();
        next = link.next;
        pages += 1;
      }
      expect(seen, version).toEqual(ids.slice(1));
      expect(pages, version).toBe(3);
    }
  });
});
