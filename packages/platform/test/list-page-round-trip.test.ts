// On PostgreSQL a warm Admin API list page (no filters, no `fields`) is one statement: the
// request's Access-Token row and the page written by the database, read together, the token
// judged by the same service before any byte of the page is sent. This suite holds that path to
// the two-step one (the token, then the page), which every other request still takes: the same
// bytes for every page of both conventions, the same status and body for every refusal in the
// same order, and a revocation committed by another node refusing the very next request.
import type { LightMyRequestResponse } from 'fastify';
import { randomInt } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConfig } from '../src/config.ts';
import { products } from '../src/domain/resources.ts';
import { plainPageRequest } from '../src/http/admin-api/page-query.ts';
import { createPlatform, type Platform } from '../src/platform.ts';
import {
  appToken,
  createFixture,
  createTestPlatform,
  DIALECTS_WITH_PARTITIONED,
  type Fixture,
  privateToken,
  type TestPlatform,
} from './harness.ts';
import { unroutedQueries } from './partition-routing.ts';

const PG_DIALECTS = DIALECTS_WITH_PARTITIONED.filter((d) => d !== 'sqlite');
const NEW = '/openapi/2026-01';
const OLD = '/openapi/2022-01';
const N = 23;

/** What two answers must share: status, body (the request id aside) and the headers a client reads. */
function answer(res: LightMyRequestResponse) {
  return {
    status: res.statusCode,
    body: res.body.replace(/"request_id":"[^"]*"/, '"request_id":"-"'),
    type: res.headers['content-type'],
    link: res.headers.link,
    challenge: res.headers['www-authenticate'],
    retryAfter: res.headers['retry-after'],
    callLimit: res.headers['x-service-api-call-limit'],
  };
}

/** A test platform whose list pages can be switched to the two-step path, counting what each request runs. */
function paths(t: TestPlatform) {
  const tokens = t.platform.storage.tokens as { pageWithToken: unknown };
  const together = tokens.pageWithToken;
  // Statements of the tables a list request reads (background work of the platform left out).
  const relevant = () => t.queries!.filter((q) => /\b(products|customers|access_tokens|private_apps|token_families)\b/.test(q.sql));
  const get = (host: string, token: string | undefined, url: string) =>
    t.app.inject({ method: 'GET', url, headers: { host, ...(token === undefined ? {} : { 'access-token': token }) } });
  return {
    /** The request as it is answered now, and the statements it ran. */
    async combined(host: string, token: string | undefined, url: string) {
      const before = relevant().length;
      const res = await get(host, token, url);
      return {
        res,
        statements: relevant()
          .slice(before)
          .map((q) => q.sql),
      };
    },
    /** The same request with storage reading no page with its token: the two-step path. */
    async twoStep(host: string, token: string | undefined, url: string) {
      tokens.pageWithToken = undefined;
      try {
        const before = relevant().length;
        const res = await get(host, token, url);
        return {
          res,
          statements: relevant()
            .slice(before)
            .map((q) => q.sql),
        };
      } finally {
        tokens.pageWithToken = together;
      }
    },
  };
}

async function seed(t: TestPlatform, storeId: number, otherId: number): Promise<void> {
  const k = t.db.kysely;
  for (let i = 0; i < N; i++) {
    // Another store's rows lie on both sides of this store's.
    for (const [j, s] of [otherId, storeId, otherId].entries()) {
      const at = Date.UTC(2026, 0, 1) + i * 1_234_567;
      await k
        .insertInto('products')
        .values({
          store_id: s,
          title: `Product "${i}" \\ é 😀`,
          body_html: '<p>x</p>',
          vendor: 'V',
          product_type: 'T',
          status: 'active',
          price: `${i}.50`,
          sku: '',
          inventory_quantity: i,
          tags: '',
          created_at: at,
          updated_at: at + 1,
        })
        .execute();
      await k
        .insertInto('customers')
        .values({
          store_id: s,
          email: `c${i}-${j}@example.test`,
          first_name: 'F',
          last_name: 'L',
          phone: null,
          created_at: at,
          updated_at: at,
        })
        .execute();
    }
  }
}

describe.skipIf(PG_DIALECTS.length === 0).each(PG_DIALECTS)('a list page and its token in one round trip (%s)', (dialect) => {
  let t: TestPlatform;
  let p: ReturnType<typeof paths>;
  let f: Fixture;
  let other: Fixture;
  let storeId: number;
  let appId: number;
  let access: string;
  let priv: string;

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off' }, { record: true });
    p = paths(t);
    f = await createFixture(t, { scopes: 'read_products read_customers' });
    other = await createFixture(t);
    storeId = (await t.services.accounts.findStoreByName(f.storeName))!.id;
    appId = (await t.services.apps.findByClientId(f.clientId))!.id;
    await seed(t, storeId, (await t.services.accounts.findStoreByName(other.storeName))!.id);
    access = await appToken(t, f, 'read_products read_customers');
    priv = await privateToken(t, f.storeName, 'read_products');
    // The first call of an access token records its use: after it, calls only read.
    expect((await p.combined(f.host, access, `${NEW}/products`)).res.statusCode).toBe(200);
  }, 60_000);
  afterAll(() => t?.close());

  it('a warm page is one statement, token and page together; the two-step path runs two', async () => {
    for (const token of [access, priv]) {
      for (const url of [`${NEW}/products`, `${NEW}/products?limit=3`]) {
        const one = await p.combined(f.host, token, url);
        expect(one.res.statusCode).toBe(200);
        expect(one.statements).toHaveLength(1);
        expect(one.statements[0]).toMatch(/^with token as/);
        const two = await p.twoStep(f.host, token, url);
        expect(two.statements).toHaveLength(2);
        expect(answer(one.res)).toEqual(answer(two.res));
      }
    }
    const customers = await p.combined(f.host, access, `${NEW}/customers?limit=5`);
    expect(customers.res.statusCode).toBe(200);
    expect(customers.statements).toHaveLength(1);
  });

  it.runIf(dialect === 'postgres-partitioned')('the statement reads one partition of each store table it names', async () => {
    const url = (t.config.database as DatabaseConfig & { url: string }).url;
    const combined = t.queries!.filter((q) => q.sql.startsWith('with token as'));
    expect(combined.length).toBeGreaterThan(0);
    expect(await unroutedQueries(url, combined)).toEqual([]);
  });

  /** One request by both paths: the answers must be the same; returns the one of the combined path. */
  async function same(host: string, token: string | undefined, url: string, statements?: number) {
    const one = await p.combined(host, token, url);
    const two = await p.twoStep(host, token, url);
    expect(answer(one.res), url).toEqual(answer(two.res));
    if (statements !== undefined) expect(one.statements, url).toHaveLength(statements);
    return one.res;
  }

  const linked = (res: LightMyRequestResponse, rel: 'next' | 'previous') => {
    const m = new RegExp(`<([^>]+)>; rel="${rel}"`).exec(String(res.headers.link ?? ''));
    return m ? new URL(m[1]!).pathname + new URL(m[1]!).search : undefined;
  };

  it('every page of both conventions, forward and back, is byte for byte the two-step page', async () => {
    for (const [base, older] of [
      [NEW, false],
      [OLD, true],
    ] as const) {
      for (const resource of ['products', 'customers']) {
        for (const size of ['?limit=1', '?limit=5', `?page_size=${N}`, '?per_page=250', '', '?limit=7&cursor=']) {
          const ids: string[] = [];
          let res = await same(f.host, access, `${base}/${resource}${size}`, older ? undefined : 1);
          ids.push(...JSON.parse(res.body).data.map((o: { id: string }) => o.id));
          for (let url = linked(res, 'next'); url !== undefined; url = linked(res, 'next')) {
            res = await same(f.host, access, url, older ? undefined : 1);
            ids.push(...JSON.parse(res.body).data.map((o: { id: string }) => o.id));
          }
          expect(new Set(ids).size).toBe(N);
          // And back from the last page to the first, by the previous links.
          let back = 0;
          for (let url = linked(res, 'previous'); url !== undefined; url = linked(res, 'previous')) {
            res = await same(f.host, access, url, older ? undefined : 1);
            back++;
          }
          expect(JSON.parse(res.body).data[0]?.id).toBe(ids[0]);
          expect(back).toBe(Math.ceil(ids.length / JSON.parse(res.body).data.length) - 1);
        }
      }
    }
  });

  it('an empty list and a store without rows answer the same bytes', async () => {
    const empty = await createFixture(t, { scopes: 'read_products' });
    const token = await privateToken(t, empty.storeName, 'read_products');
    await same(empty.host, token, `${NEW}/products`, 1);
    await same(empty.host, token, `${OLD}/products?limit=3`);
  });

  it('a page the database cannot write is read as rows after the token is judged, in the same bytes', async () => {
    const far = await createFixture(t, { scopes: 'read_customers' });
    const farStore = (await t.services.accounts.findStoreByName(far.storeName))!.id;
    const token = await privateToken(t, far.storeName, 'read_customers');
    await t.db.kysely
      .insertInto('customers')
      .values({
        store_id: farStore,
        email: 'far@example.test',
        first_name: 'F',
        last_name: 'L',
        phone: null,
        created_at: 253402300800000,
        updated_at: 1,
      })
      .execute();
    const one = await p.combined(far.host, token, `${NEW}/customers`);
    expect(one.statements[0]).toMatch(/^with token as/);
    expect(one.statements.length).toBeGreaterThan(1);
    expect(JSON.parse(one.res.body).data[0].created_at).toBe('+010000-01-01T00:00:00.000Z');
    expect(answer(one.res)).toEqual(answer((await p.twoStep(far.host, token, `${NEW}/customers`)).res));
  });

  it('every refusal is the two-step answer, in the same order, and bad input changes nothing', async () => {
    const narrow = await privateToken(t, f.storeName, 'read_customers');
    const gone = await t.services.apps.createPrivateApp({ storeId, name: 'Gone', scopes: 'read_products' });
    const revoked = gone.accessToken;
    await t.services.apps.revokePrivateApp(storeId, gone.id);
    const first = await same(f.host, access, `${NEW}/products?limit=2`, 1);
    const cursor = JSON.parse(first.body).cursor as string;
    const unknown = `${access.slice(0, -4)}AAAA`;
    const snapshot = async () => ({
      tokens: await t.db.kysely.selectFrom('access_tokens').selectAll().orderBy('token_hash').execute(),
      apps: await t.db.kysely.selectFrom('private_apps').selectAll().orderBy('id').execute(),
      products: await t.db.kysely.selectFrom('products').select(['id', 'version']).orderBy('id').execute(),
    });
    const before = await snapshot();
    const cases: [string | undefined, string, number][] = [
      [undefined, `${NEW}/products`, 401],
      ['', `${NEW}/products`, 401],
      ['not-a-token', `${NEW}/products`, 401],
      [unknown, `${NEW}/products`, 401],
      [unknown, `${NEW}/products?limit=0`, 401],
      [unknown, `${NEW}/products?cursor=nope`, 401],
      [revoked, `${NEW}/products`, 401],
      [revoked, `${NEW}/products?cursor=${cursor}`, 401],
      [narrow, `${NEW}/products`, 403],
      [narrow, `${NEW}/products?cursor=${cursor}`, 403],
      [narrow, `${NEW}/products?limit=999`, 403],
      [access, `${NEW}/products?limit=0`, 422],
      [access, `${NEW}/products?limit=251`, 422],
      [access, `${NEW}/products?limit=ten`, 422],
      [access, `${NEW}/products?limit=5&limit=6`, 422],
      [access, `${NEW}/products?cursor=nope`, 400],
      [access, `${NEW}/products?cursor=${cursor}x`, 400],
      [access, `${NEW}/customers?cursor=${cursor}`, 400],
      [access, `${NEW}/products?pre_cursor=${cursor}`, 422],
      [access, `${OLD}/products?pre_cursor=${cursor}`, 400],
      [access, `${NEW}/products?fields=nope`, 422],
      [access, `${NEW}/products?colour=red`, 400],
      [access, `${NEW}/products?created_at_min=yesterday`, 422],
      [access, '/openapi/1999-01/products', 404],
    ];
    for (const [token, url, status] of cases) {
      expect((await same(f.host, token, url)).statusCode, `${token?.slice(0, 8)} ${url}`).toBe(status);
    }
    // An unknown store, with a token of another.
    expect((await same('nosuchstore.localhost:8080', access, `${NEW}/products`)).statusCode).toBe(404);
    expect((await same(other.host, access, `${NEW}/products`)).statusCode).toBe(401);
    expect(await snapshot()).toEqual(before);
  });

  it('an expired access token is refused as on the two-step path', async () => {
    const token = await appToken(t, f, 'read_products read_customers');
    await same(f.host, token, `${NEW}/products`);
    const now = t.clock.now;
    try {
      t.clock.advance(t.config.accessTokenTtlSeconds * 1000 + 1);
      const one = await p.combined(f.host, token, `${NEW}/products`);
      expect(one.statements).toEqual([expect.stringMatching(/^with token as/)]);
      expect((await same(f.host, token, `${NEW}/products`)).statusCode).toBe(401);
    } finally {
      t.clock.now = now;
    }
  });

  describe('a revocation committed by another node refuses the very next request', () => {
    let node: Platform;
    let client: pg.Client;
    beforeAll(async () => {
      // Another platform process on the same database: its own pool, its own connections.
      node = await createPlatform(t.config, { clock: t.clock.fn, http: false, migrate: false });
      client = new pg.Client({ connectionString: (t.config.database as DatabaseConfig & { url: string }).url });
      await client.connect();
    });
    afterAll(async () => {
      await client?.end();
      await node?.close();
    });

    const refused = async (token: string, url = `${NEW}/products`) => {
      const one = await p.combined(f.host, token, url);
      // Answered by the one statement: its token row was read with the page.
      expect(one.statements).toHaveLength(1);
      expect(one.statements[0]).toMatch(/^with token as/);
      expect(one.res.statusCode).toBe(401);
      expect(answer(one.res)).toEqual(answer((await p.twoStep(f.host, token, url)).res));
    };

    it('a revoked access token', async () => {
      const token = await appToken(t, f, 'read_products read_customers');
      expect((await p.combined(f.host, token, `${NEW}/products`)).res.statusCode).toBe(200);
      expect((await p.combined(f.host, token, `${NEW}/products`)).statements).toHaveLength(1);
      const { hashToken } = await import('../src/domain/tokens.ts');
      await client.query('update access_tokens set revoked_at = $1 where token_hash = $2', [t.clock.now, hashToken(token)]);
      await refused(token);
    });

    it('an uninstall, and a narrowed grant', async () => {
      const token = await appToken(t, f, 'read_products read_customers');
      expect((await p.combined(f.host, token, `${NEW}/customers`)).res.statusCode).toBe(200);
      await node.services.apps.grant(storeId, appId, ['read_products']);
      await refused(token, `${NEW}/customers`);
      const again = await appToken(t, f, 'read_products');
      expect((await p.combined(f.host, again, `${NEW}/products`)).res.statusCode).toBe(200);
      await node.services.apps.uninstall(storeId, appId);
      await refused(again);
    });

    it('a revoked private app', async () => {
      const { id, accessToken: token } = await t.services.apps.createPrivateApp({ storeId, name: 'Revoked', scopes: 'read_products' });
      expect((await p.combined(f.host, token, `${NEW}/products`)).res.statusCode).toBe(200);
      await node.services.apps.revokePrivateApp(storeId, id);
      await refused(token);
    });
  });
});

describe.skipIf(PG_DIALECTS.length === 0).each(PG_DIALECTS)('rate limits on the combined path (%s)', (dialect) => {
  for (const limiter of ['memory', ...(process.env.TEST_REDIS_URL ? ['redis'] : [])]) {
    it(`with the ${limiter} limiter a limited page answers 429 as the two-step path does`, async () => {
      const t = await createTestPlatform(
        dialect,
        { rateLimit: { bucket: 3, perSecond: 1 }, ...(limiter === 'redis' ? { redisUrl: process.env.TEST_REDIS_URL } : {}) },
        { record: true },
      );
      try {
        const p = paths(t);
        // Redis is shared by every test run: a store id of its own keeps this run's bucket apart.
        const storeIds = sql`select setval(pg_get_serial_sequence('stores', 'id'), ${randomInt(1_000_000, 2 ** 40)})`;
        await storeIds.execute(t.db.kysely);
        const f = await createFixture(t, { scopes: 'read_products' });
        const token = await privateToken(t, f.storeName, 'read_products');
        const calls = [];
        for (let i = 0; i < 3; i++) calls.push(await p.combined(f.host, token, `${NEW}/products`));
        expect(calls.map((c) => c.res.statusCode)).toEqual([200, 200, 200]);
        expect(calls.map((c) => c.statements.length)).toEqual([1, 1, 1]);
        const one = await p.combined(f.host, token, `${NEW}/products`);
        const two = await p.twoStep(f.host, token, `${NEW}/products`);
        expect(one.res.statusCode).toBe(429);
        expect(answer(one.res)).toEqual(answer(two.res));
      } finally {
        await t.close();
      }
    });
  }
});

describe('SQLite keeps its own path', () => {
  it('storage reads no page with its token there: the token comes from the cache while the change stamp stands', async () => {
    const t = await createTestPlatform('sqlite', { rateLimit: 'off' });
    try {
      expect(t.platform.storage.tokens.pageWithToken).toBeUndefined();
      expect(t.services.authenticatedPages.serves(products)).toBe(false);
    } finally {
      await t.close();
    }
  });
});

describe('a list query read by hand, before validation', () => {
  it('reads page parameters as validation and pageRequest would, and leaves anything else to them', () => {
    const plain = (q: Record<string, unknown>, version: '2022-01' | '2026-01' = '2026-01') => plainPageRequest(q, version);
    expect(plain({})).toEqual({ limit: 50, cursor: undefined, preCursor: undefined, convention: 'newer' });
    expect(plain({ per_page: '7', page_size: '8' })?.limit).toBe(8);
    expect(plain({ per_page: '1', limit: '250' })?.limit).toBe(250);
    expect(plain({ limit: '007', cursor: '' })).toMatchObject({ limit: 7, cursor: '' });
    expect(plain({ pre_cursor: 'abc' }, '2022-01')).toMatchObject({ preCursor: 'abc', convention: 'older' });
    for (const q of [
      { limit: '0' },
      { limit: '251' },
      { limit: ' 5' },
      { limit: '5.0' },
      { limit: '1e2' },
      { limit: ['5', '6'] },
      { cursor: 'c'.repeat(201) },
      { cursor: ['a', 'b'] },
      { pre_cursor: 'abc' },
      { fields: 'id' },
      { since_id: '3' },
      { limit: '5', status: 'active' },
    ])
      expect(plain(q), JSON.stringify(q)).toBeUndefined();
  });
});
