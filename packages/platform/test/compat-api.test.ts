// What clients of this platform family rely on besides filters: bodies wrapped in the resource's
// name, the read_shop scope and GET /shop, Request-Id, and Link headers; on SQLite and PostgreSQL.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../src/storage/migrate.ts';
import { openStorage } from '../src/storage/sql-storage.ts';
import { ScopeParseError } from '../src/domain/errors.ts';
import { describeScope, parseScopes } from '../src/domain/scopes.ts';
import {
  api,
  appToken,
  authorizeUrl,
  createFixture,
  createTestPlatform,
  csrfFrom,
  DIALECTS,
  freshPostgresUrl,
  login,
  privateToken,
  type Fixture,
  type TestPlatform,
} from './harness.ts';
import { get as getPage, post as postPage, secretValue } from './web-pages.ts';

const SHOP_PROFILE = '2026-11-24T00-shop-profile';

/** The URL of each page link (rel next or previous) of an RFC 8288 Link header. */
function links(header: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of String(header ?? '').matchAll(/<([^>]+)>;\s*rel="(next|previous)"/g)) out[m[2]!] = m[1]!;
  return out;
}

describe('read_shop scope (pure)', () => {
  it('is read-only: read_shop parses, write_shop parses and grants nothing more; consent words name what it shows', () => {
    expect(parseScopes('read_shop, read_products')).toEqual(['read_products', 'read_shop']);
    expect(parseScopes('write_shop')).toEqual(['write_shop']);
    expect(() => parseScopes('read_shops')).toThrow(ScopeParseError);
    expect(describeScope('read_shop')).toMatch(/store’s name.*currency and time zone/);
    expect(describeScope('write_shop')).toMatch(/store’s name.*currency and time zone.*cannot change your store/);
  });
});

describe.each(DIALECTS)('Admin API compatibility on %s', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  let token: string;

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off' });
    f = await createFixture(t, { scopes: 'read_shop read_products' });
    token = await privateToken(t, f.storeName, 'write_products write_orders write_customers read_shop');
  });
  afterAll(async () => t.close());

  describe('wrapped bodies', () => {
    it('webhooks, products, customers and orders take {"<singular>": {...}} as well as the bare object', async () => {
      const wrapped = await api(t, f, token, 'POST', '/openapi/2026-01/webhooks', {
        webhook: { address: 'http://localhost:9/w', topic: 'products/create' },
      });
      expect(wrapped.statusCode, wrapped.body).toBe(201);
      expect(wrapped.json().data).toMatchObject({ address: 'http://localhost:9/w', topic: 'products/create' });
      const bare = await api(t, f, token, 'POST', '/openapi/2026-01/webhooks', {
        address: 'http://localhost:9/w',
        topic: 'products/update',
      });
      expect(bare.statusCode).toBe(201);

      const product = await api(t, f, token, 'POST', '/openapi/2026-01/products', { product: { title: 'Wrapped' } });
      expect(product.statusCode).toBe(201);
      const id = product.json().data.id;
      for (const method of ['PUT', 'PATCH'] as const) {
        const res = await api(t, f, token, method, `/openapi/2026-01/products/${id}`, { product: { vendor: method } });
        expect(res.json().data.vendor).toBe(method);
      }
      const customer = await api(t, f, token, 'POST', '/openapi/2026-01/customers', { customer: { email: 'wrapped@example.test' } });
      expect(customer.statusCode).toBe(201);
      const cid = customer.json().data.id;
      expect(
        (await api(t, f, token, 'PUT', `/openapi/2026-01/customers/${cid}`, { customer: { first_name: 'W' } })).json().data.first_name,
      ).toBe('W');
      const order = await api(t, f, token, 'POST', '/openapi/2026-01/orders', {
        order: { email: 'o@example.test', line_items: [{ title: 'x', quantity: 2, price: '1.50' }] },
      });
      expect(order.statusCode).toBe(201);
      expect(order.json().data.total_price).toBe('3.00');
    });

    it('bad wrapped bodies are 422 naming the field, and change nothing', async () => {
      const count = async () => (await api(t, f, token, 'GET', '/openapi/2026-01/webhooks?limit=250')).json().data.length;
      const before = await count();
      const cases: [unknown, string][] = [
        [{ webhook: { address: 'http://localhost:9/x' } }, 'topic'],
        [{ webhook: { address: 'http://localhost:9/x', topic: 'nope/never' } }, 'topic'],
        // A wrapper beside other keys is not a wrapper: the body is taken as it is.
        [{ webhook: { address: 'http://localhost:9/x', topic: 'orders/create' }, topic: 'orders/create' }, 'webhook'],
        // The wrong wrapper name.
        [{ product: { address: 'http://localhost:9/x', topic: 'orders/create' } }, 'product'],
        [{ webhook: [] }, 'webhook'],
      ];
      for (const [body, field] of cases) {
        const res = await api(t, f, token, 'POST', '/openapi/2026-01/webhooks', body);
        expect(res.statusCode, JSON.stringify(body)).toBe(422);
        expect(JSON.stringify(res.json().errors), JSON.stringify(body)).toContain(field);
      }
      expect(await count()).toBe(before);
      const res = await api(t, f, token, 'POST', '/openapi/2026-01/products', { product: { title: '' } });
      expect(res.statusCode).toBe(422);
      expect(res.json().errors).toHaveProperty('title');
    });
  });

  describe('GET /shop', () => {
    it('answers the store profile to a public app installed with read_shop', async () => {
      const appTok = await appToken(t, f, 'read_shop read_products');
      for (const v of ['2022-01', '2025-06', '2026-01']) {
        const res = await api(t, f, appTok, 'GET', `/openapi/${v}/shop`);
        expect(res.statusCode, res.body).toBe(200);
        const store = await t.services.accounts.findStoreByName(f.storeName);
        expect(res.json()).toEqual({
          data: {
            id: String(store!.id),
            name: f.storeName,
            domain: `${f.storeName}.localhost`,
            email: f.email,
            currency: 'USD',
            timezone: 'UTC',
            created_at: new Date(t.clock.now).toISOString(),
          },
        });
      }
    });

    it('is 403 naming read_shop without the scope (write scopes do not imply it); 405 for other methods', async () => {
      const other = await privateToken(t, f.storeName, 'write_products write_orders write_customers');
      const res = await api(t, f, other, 'GET', '/openapi/2026-01/shop');
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: 'Forbidden', message: 'This request needs the read_shop scope (or write_shop)' });
      expect((await api(t, f, undefined, 'GET', '/openapi/2026-01/shop')).statusCode).toBe(401);
      const put = await api(t, f, token, 'PUT', '/openapi/2026-01/shop', { shop: { name: 'x' } });
      expect(put.statusCode).toBe(405);
      expect(put.headers.allow).toBe('GET');
    });

    it('currency and time zone are set at creation and validated; a bad one creates nothing', async () => {
      const store = await t.services.accounts.createStore({
        name: `${f.storeName}-eu`,
        ownerEmail: 'eu@example.test',
        ownerPassword: 'correct horse battery',
        currency: 'EUR',
        timezone: 'europe/paris',
      });
      const shop = await t.services.accounts.findShop(store.id);
      expect(shop).toMatchObject({ currency: 'EUR', timezone: 'Europe/Paris', owner_email: 'eu@example.test' });
      const bad: [Record<string, string>, string, RegExp][] = [
        [{ currency: 'usd' }, 'currency', /three-letter ISO 4217/],
        [{ currency: 'XYZ' }, 'currency', /not a known ISO 4217/],
        [{ timezone: 'Mars/Olympus' }, 'timezone', /not a known IANA/],
        [{ timezone: '../../etc' }, 'timezone', /IANA time zone name/],
      ];
      for (const [extra, field, message] of bad) {
        const name = `${f.storeName}-bad`;
        const err = await t.services.accounts
          .createStore({ name, ownerEmail: 'bad@example.test', ownerPassword: 'correct horse battery', ...extra })
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        expect((err as { details: { errors: Record<string, string[]> } }).details.errors[field]?.[0]).toMatch(message);
        expect(await t.services.accounts.findStoreByName(name)).toBeUndefined();
      }
    });

    it('authorize: write_shop is accepted and reads the shop, never changes it; read_shop is described on the consent page and offered to private apps', async () => {
      const jar = await login(t, f);
      const asked = await t.app.inject({
        method: 'GET',
        url: authorizeUrl(f, { scope: 'read_products write_shop' }),
        headers: { host: f.host, cookie: jar.header() },
      });
      expect(asked.statusCode).toBe(200);
      expect(asked.body).toMatch(/\(write_shop(, new)?\)/);
      expect(asked.body).toContain('it cannot change your store');
      const writer = await privateToken(t, f.storeName, 'write_shop');
      expect((await api(t, f, writer, 'GET', '/openapi/2026-01/shop')).json().data.name).toBe(f.storeName);
      for (const method of ['PUT', 'PATCH', 'POST'] as const)
        expect((await api(t, f, writer, method, '/openapi/2026-01/shop', { shop: { name: 'taken' } })).statusCode).toBe(405);
      expect((await t.services.accounts.findStoreByName(f.storeName))?.name).toBe(f.storeName);

      const g = await createFixture(t);
      const gjar = await login(t, g);
      const consent = await t.app.inject({
        method: 'GET',
        url: authorizeUrl(g, { scope: 'read_shop' }),
        headers: { host: g.host, cookie: gjar.header() },
      });
      expect(consent.statusCode).toBe(200);
      expect(consent.body).toContain('(read_shop)');
      expect(consent.body).toContain('currency and time zone');

      const form = await getPage(t, g.host, '/admin/private-apps/new', gjar);
      expect(form.body).toContain('<label for="scope-read_shop">');
      expect(form.body).toContain('<label for="scope-write_shop">');
      const created = await postPage(t, g.host, '/admin/private-apps', gjar, {
        _csrf: csrfFrom(form.body),
        name: 'Shop reader',
        scopes: ['read_shop'],
      });
      expect(created.statusCode).toBe(303);
      const shown = await getPage(t, g.host, String(created.headers.location), gjar);
      const privTok = secretValue(shown.body, 'access-token')!;
      expect((await api(t, g, privTok, 'GET', '/openapi/2026-01/shop')).json().data.name).toBe(g.storeName);
      expect((await api(t, g, privTok, 'GET', '/openapi/2026-01/products')).statusCode).toBe(403);
    });
  });

  describe('Request-Id', () => {
    it('every response carries Request-Id equal to X-Request-Id: success, errors, pages, other hosts', async () => {
      const responses = [
        await api(t, f, token, 'GET', '/openapi/2026-01/products'),
        await api(t, f, token, 'GET', '/openapi/2026-01/products?nope=1'),
        await api(t, f, undefined, 'GET', '/openapi/2026-01/products'),
        await api(t, f, token, 'GET', '/openapi/1999-01/products'),
        await api(t, f, token, 'POST', '/openapi/2026-01/products', { product: {} }),
        await t.app.inject({ method: 'GET', url: '/admin/login', headers: { host: f.host } }),
        await t.app.inject({ method: 'GET', url: '/healthz', headers: { host: '127.0.0.1' } }),
        await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'localhost:8080' } }),
      ];
      const seen = new Set<string>();
      for (const res of responses) {
        const id = res.headers['request-id'];
        expect(id, `${res.statusCode} ${res.body.slice(0, 80)}`).toMatch(/^req_/);
        expect(res.headers['x-request-id']).toBe(id);
        seen.add(String(id));
      }
      expect(seen.size).toBe(responses.length);
      const err = responses[1]!;
      expect(err.json().request_id).toBe(err.headers['request-id']);
    });
  });

  describe('Link headers', () => {
    let ids: string[];
    beforeAll(async () => {
      ids = [];
      for (let i = 0; i < 7; i++)
        ids.push((await api(t, f, token, 'POST', '/openapi/2026-01/customers', { email: `link${i}@example.test` })).json().data.id);
    });

    it('newer versions: next until the last page, previous from the second page on; absolute, keeping limit and filters', async () => {
      const filters = `ids=${ids.join(',')}&fields=id,email`;
      let url: string | undefined = `http://${f.storeName}.localhost:8080/openapi/2026-01/customers?limit=3&${filters}`;
      const seen: string[] = [];
      const pages: Record<string, string>[] = [];
      while (url) {
        const u: URL = new URL(url);
        const res = await api(t, f, token, 'GET', u.pathname + u.search);
        expect(res.statusCode, res.body).toBe(200);
        seen.push(...res.json().data.map((c: { id: string }) => c.id));
        const l = links(res.headers.link);
        pages.push(l);
        url = l.next;
      }
      expect(seen).toEqual(ids);
      expect(pages.map((l) => Object.keys(l).sort())).toEqual([['next'], ['next', 'previous'], ['previous']]);
      const next = new URL(pages[0]!.next!);
      expect(next.origin).toBe(`http://${f.storeName}.localhost:8080`);
      expect(next.searchParams.get('limit')).toBe('3');
      expect(next.searchParams.get('ids')).toBe(ids.join(','));
      expect(next.searchParams.get('fields')).toBe('id,email');
      // The previous link of the last page leads back to the middle page, which links on again.
      const prev = new URL(pages[2]!.previous!);
      const back = await api(t, f, token, 'GET', prev.pathname + prev.search);
      expect(back.json().data.map((c: { id: string }) => c.id)).toEqual(ids.slice(3, 6));
      expect(back.json().has_more).toBe(true);
      expect(Object.keys(links(back.headers.link)).sort()).toEqual(['next', 'previous']);
    });

    it('2022-01: previous links use pre_cursor; a single page has no Link header', async () => {
      const first = await api(t, f, token, 'GET', `/openapi/2022-01/customers?limit=2&since_id=${ids[0]}`);
      const l1 = links(first.headers.link);
      expect(Object.keys(l1)).toEqual(['next']);
      const n = new URL(l1.next!);
      const second = await api(t, f, token, 'GET', n.pathname + n.search);
      expect(second.json().data.map((c: { id: string }) => c.id)).toEqual(ids.slice(3, 5));
      const p = new URL(links(second.headers.link).previous!);
      expect(p.searchParams.get('pre_cursor')).toBe(second.json().pre_cursor);
      expect(p.searchParams.get('since_id')).toBe(ids[0]);
      expect(p.searchParams.has('cursor')).toBe(false);
      const back = await api(t, f, token, 'GET', p.pathname + p.search);
      expect(back.json().data.map((c: { id: string }) => c.id)).toEqual(ids.slice(1, 3));
      const single = await api(t, f, token, 'GET', `/openapi/2022-01/customers?ids=${ids[0]}`);
      // No page links (2022-01 still links its deprecation notice).
      expect(links(single.headers.link)).toEqual({});
      expect(String(single.headers.link)).not.toMatch(/rel="(next|previous)"/);
      const newer = await api(t, f, token, 'GET', `/openapi/2026-01/customers?ids=${ids[0]}`);
      expect(newer.headers.link).toBeUndefined();
      // page_size is kept as limit.
      const aliased = await api(t, f, token, 'GET', `/openapi/2025-06/customers?page_size=4&ids=${ids.join(',')}`);
      expect(new URL(links(aliased.headers.link).next!).searchParams.get('limit')).toBe('4');
    });
  });

  it('the OpenAPI document lists every filter of every list, the shop route and the list headers', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'localhost:8080' } })).json();
    for (const list of ['products', 'orders', 'customers', 'webhooks']) {
      const op = doc.paths[`/openapi/{version}/${list}`].get;
      const names = op.parameters.map((p: { name: string }) => p.name);
      for (const name of ['ids', 'since_id', 'created_at_min', 'created_at_max', 'updated_at_min', 'updated_at_max', 'fields']) {
        expect(names, `${list} ${name}`).toContain(name);
        expect(op.parameters.find((p: { name: string }) => p.name === name).description, name).toBeTruthy();
      }
      expect(Object.keys(op.responses['200'].headers ?? {}), list).toEqual(expect.arrayContaining(['Link', 'Request-Id']));
    }
    expect(doc.paths['/openapi/{version}/shop'].get.summary).toMatch(/read_shop/);
  });
});

describe.each(DIALECTS)('2026-11-24T00-shop-profile on %s', (dialect) => {
  it('gives stores made before it USD and UTC, and new stores what they are created with', async () => {
    const pgSchema = dialect === 'postgres' ? await freshPostgresUrl() : undefined;
    const storage = openStorage(pgSchema ? { dialect: 'postgres', url: pgSchema.url } : { dialect: 'sqlite', path: ':memory:' });
    try {
      await storage.migrate();
      const k = storage.db.kysely;
      // Back to before it: it and the migrations after it undone.
      const undone = Object.keys(MIGRATIONS).filter((name) => name >= SHOP_PROFILE);
      for (const name of [...undone].reverse()) {
        await MIGRATIONS[name]!.down?.(k);
        await sql`delete from kysely_migration where name = ${name}`.execute(k);
      }
      const merchant = await storage.accounts.insertMerchant({ email: 'old@example.test', passwordHash: 'hash', now: 1 });
      const old = await storage.accounts.insertStore({ name: 'old', ownerMerchantId: merchant.id, now: 1 });
      expect(await storage.migrate()).toEqual(undone);
      expect(await storage.accounts.findShop(old.id)).toEqual({
        id: old.id,
        name: 'old',
        currency: 'USD',
        timezone: 'UTC',
        created_at: 1,
        owner_email: 'old@example.test',
      });
      const eu = await storage.accounts.insertStore({
        name: 'eu',
        ownerMerchantId: merchant.id,
        now: 2,
        currency: 'EUR',
        timezone: 'Europe/Rome',
      });
      expect(await storage.accounts.findShop(eu.id)).toMatchObject({ currency: 'EUR', timezone: 'Europe/Rome' });
      expect(await storage.accounts.findShop(eu.id + 1000)).toBeUndefined();
    } finally {
      await storage.close();
      await pgSchema?.drop();
    }
  });

  it('runs on a database that already ran a migration named after it (they land in either order)', async () => {
    const pgSchema = dialect === 'postgres' ? await freshPostgresUrl() : undefined;
    const storage = openStorage(pgSchema ? { dialect: 'postgres', url: pgSchema.url } : { dialect: 'sqlite', path: ':memory:' });
    try {
      await storage.migrate();
      const k = storage.db.kysely;
      await MIGRATIONS[SHOP_PROFILE]!.down!(k);
      await sql`delete from kysely_migration where name = ${SHOP_PROFILE}`.execute(k);
      expect(await storage.migrate()).toEqual([SHOP_PROFILE]);
      expect(await storage.migrate()).toEqual([]);
    } finally {
      await storage.close();
      await pgSchema?.drop();
    }
  });
});
