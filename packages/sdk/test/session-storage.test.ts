// One contract, run against every adapter: memory and SQLite always, PostgreSQL and Redis when
// TEST_PG_URL / TEST_REDIS_URL are set (npm test sets them when the servers answer).
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import type { RefreshLock } from '../src/oauth/refresh-lock.ts';
import { fakeFetch, json } from './support/fake-fetch.ts';
import { memorySessionStorage } from '../src/session/memory-session-storage.ts';
import { postgresRefreshLock, postgresSessionStorage } from '../src/session/postgres-session-storage.ts';
import { redisRefreshLock, redisSessionStorage } from '../src/session/redis-session-storage.ts';
import { onlineSessionId, type Session, type SessionStorage } from '../src/session/session.ts';
import { sqliteSessionStorage } from '../src/session/sqlite-session-storage.ts';

const run = `t${process.pid}_${Date.now().toString(36)}`;
const session = (shop: string, refreshToken: string | null = 'sg_rt_1'): Session => ({
  shop,
  accessToken: 'sg_at_1',
  refreshToken,
  expiresAt: 1_700_003_600,
  scope: 'read_products',
  storeId: '42',
  storeName: 'demo',
});

const online = (shop: string, userId: string, accessToken = 'sg_at_online1'): Session => ({
  id: onlineSessionId(shop, userId),
  shop,
  accessToken,
  refreshToken: null,
  expiresAt: 1_700_086_400,
  scope: 'read_products write_products',
  storeId: '42',
  storeName: 'demo',
  online: true,
  associatedUser: { id: userId, email: `merchant${userId}@example.com` },
  associatedUserScope: 'read_products',
});

// What a version without session ids stored: no `id`, no online fields.
const LEGACY_JSON = JSON.stringify({
  shop: 'old.localhost',
  accessToken: 'sg_at_legacy',
  refreshToken: 'sg_rt_legacy',
  expiresAt: 1_700_003_600,
  scope: 'read_products',
});

/** A row written by an earlier version reads as the shop's offline session and can still be refreshed. */
async function readsLegacyRow(s: SessionStorage) {
  expect(await s.get('old.localhost')).toMatchObject({ id: 'old.localhost', shop: 'old.localhost', accessToken: 'sg_at_legacy' });
  expect(await s.compareAndSet('old.localhost', 'sg_rt_legacy', { ...session('old.localhost'), refreshToken: 'sg_rt_next' })).toBe(true);
  expect(await s.get('old.localhost')).toMatchObject({ id: 'old.localhost', refreshToken: 'sg_rt_next' });
}

/** Two apps (two "processes") sharing storage and a lock: one refresh between them. */
async function twoProcessesRefreshOnce(storage: SessionStorage, lock: RefreshLock) {
  const shop = 'h.localhost';
  await storage.set({ ...session(shop), expiresAt: Math.floor(Date.now() / 1000) - 5 });
  let issued = 0;
  const platform = fakeFetch(async () => {
    await new Promise((r) => setTimeout(r, 30));
    issued++;
    return json({ access_token: `sg_at_p${issued}`, refresh_token: `sg_rt_p${issued}`, expires_at: Math.floor(Date.now() / 1000) + 3600 });
  });
  const make = () =>
    createApp({
      clientId: 'c',
      clientSecret: 's',
      scopes: 'read_products',
      redirectUri: 'https://a.example/cb',
      fetch: platform.fetch,
      sessionStorage: storage,
      refreshLock: lock,
    });
  const [a, b] = [make(), make()];
  const tokens = await Promise.all([a.getAccessToken(shop), b.getAccessToken(shop), a.getAccessToken(shop), b.getAccessToken(shop)]);
  expect(platform.calls).toHaveLength(1);
  expect(new Set(tokens)).toEqual(new Set(['sg_at_p1']));
  expect(await storage.get(shop)).toMatchObject({ accessToken: 'sg_at_p1', refreshToken: 'sg_rt_p1' });
}

function contract(name: string, make: () => Promise<SessionStorage>, options: { concurrent?: boolean } = {}) {
  describe(`${name} session storage`, () => {
    it('get returns undefined for an unknown shop', async () => {
      const s = await make();
      expect(await s.get('nobody.localhost')).toBeUndefined();
    });
    it('set then get returns the session; set again replaces it; delete removes it', async () => {
      const s = await make();
      await s.set(session('a.localhost'));
      expect(await s.get('a.localhost')).toMatchObject(session('a.localhost'));
      await s.set({ ...session('a.localhost'), accessToken: 'sg_at_2' });
      expect((await s.get('a.localhost'))?.accessToken).toBe('sg_at_2');
      await s.delete('a.localhost');
      expect(await s.get('a.localhost')).toBeUndefined();
      await s.delete('a.localhost');
    });
    it('compareAndSet writes only when the refresh token still matches', async () => {
      const s = await make();
      await s.set(session('b.localhost'));
      expect(await s.compareAndSet('b.localhost', 'sg_rt_other', { ...session('b.localhost'), refreshToken: 'sg_rt_x' })).toBe(false);
      expect((await s.get('b.localhost'))?.refreshToken).toBe('sg_rt_1');
      expect(
        await s.compareAndSet('b.localhost', 'sg_rt_1', { ...session('b.localhost'), accessToken: 'sg_at_2', refreshToken: 'sg_rt_2' }),
      ).toBe(true);
      expect(await s.get('b.localhost')).toMatchObject({ accessToken: 'sg_at_2', refreshToken: 'sg_rt_2' });
      expect(await s.compareAndSet('b.localhost', 'sg_rt_1', session('b.localhost'))).toBe(false);
      expect(await s.compareAndSet('none.localhost', 'sg_rt_1', session('none.localhost'))).toBe(false);
      expect(await s.get('none.localhost')).toBeUndefined();
    });
    it("keeps a shop's offline session and its merchants' online sessions apart, every field round-tripped", async () => {
      const s = await make();
      await s.set(session('o.localhost'));
      await s.set(online('o.localhost', '7'));
      await s.set(online('o.localhost', '8', 'sg_at_online8'));
      const offline = await s.get('o.localhost');
      expect(offline).toMatchObject({ ...session('o.localhost'), id: 'o.localhost' });
      expect(offline?.online).toBeUndefined();
      const seven = await s.get('online_o.localhost_7');
      expect(seven).toEqual({ ...online('o.localhost', '7'), updatedAt: seven?.updatedAt });
      expect(seven?.associatedUser).toEqual({ id: '7', email: 'merchant7@example.com' });
      expect(await s.get('online_o.localhost_8')).toMatchObject({ accessToken: 'sg_at_online8', associatedUser: { id: '8' } });
      // An online session without an id is stored under its merchant's key, not over the offline one.
      const { id: _dropped, ...withoutId } = online('o.localhost', '7', 'sg_at_online7b');
      await s.set(withoutId);
      expect(await s.get('online_o.localhost_7')).toMatchObject({ id: 'online_o.localhost_7', accessToken: 'sg_at_online7b' });
      expect((await s.get('o.localhost'))?.accessToken).toBe('sg_at_1');
      await s.delete('online_o.localhost_7');
      expect(await s.get('online_o.localhost_7')).toBeUndefined();
      expect(await s.get('online_o.localhost_8')).toBeDefined();
      expect((await s.get('o.localhost'))?.accessToken).toBe('sg_at_1');
    });
    it('compareAndSet handles a session without a refresh token', async () => {
      const s = await make();
      await s.set(session('c.localhost', null));
      expect(await s.compareAndSet('c.localhost', null, { ...session('c.localhost', null), reauthorizationRequired: true })).toBe(true);
      expect(await s.get('c.localhost')).toMatchObject({ reauthorizationRequired: true });
    });
    if (options.concurrent) {
      it('of 20 concurrent compareAndSets from the same version exactly one wins', async () => {
        const s = await make();
        await s.set(session('d.localhost'));
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            s.compareAndSet('d.localhost', 'sg_rt_1', { ...session('d.localhost'), refreshToken: `sg_rt_n${i}` }),
          ),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
      });
    }
  });
}

contract('memory', async () => memorySessionStorage(), { concurrent: true });

const sqlite = new Database(':memory:');
let sqliteTables = 0;
contract('SQLite', async () => sqliteSessionStorage(sqlite, { table: `${run}_s${++sqliteTables}` }), { concurrent: true });

describe('SQLite adapter', () => {
  it('creates its table on first use and refuses unsafe table names', async () => {
    const db = new Database(':memory:');
    const s = sqliteSessionStorage(db, { table: 'my_sessions' });
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'my_sessions'").get()).toBeUndefined();
    await s.get('x.localhost');
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'my_sessions'").get()).toEqual({ name: 'my_sessions' });
    expect(() => sqliteSessionStorage(db, { table: 'x; DROP TABLE y' })).toThrow(
      expect.objectContaining({ code: 'SESSION_STORAGE_FAILED' }),
    );
  });
  it('reads a row written by an earlier version as the offline session', async () => {
    const db = new Database(':memory:');
    const s = sqliteSessionStorage(db, { table: 'legacy' });
    await s.get('x.localhost');
    db.prepare('INSERT INTO legacy (shop, data, refresh_token, updated_at) VALUES (?, ?, ?, 0)').run(
      'old.localhost',
      LEGACY_JSON,
      'sg_rt_legacy',
    );
    await readsLegacyRow(s);
  });
});

describe.skipIf(!process.env.TEST_PG_URL)('PostgreSQL', () => {
  const pool = new pg.Pool({ connectionString: process.env.TEST_PG_URL, max: 5 });
  const tables: string[] = [];
  afterAll(async () => {
    for (const t of tables) await pool.query(`DROP TABLE IF EXISTS ${t}`);
    await pool.end();
  });
  contract(
    'PostgreSQL',
    async () => {
      const table = `${run}_pg${tables.length}`;
      tables.push(table);
      return postgresSessionStorage(pool, { table });
    },
    { concurrent: true },
  );
  it('two app instances sharing PostgreSQL storage and the advisory lock refresh once', async () => {
    const table = `${run}_pg_two`;
    tables.push(table);
    await twoProcessesRefreshOnce(postgresSessionStorage(pool, { table }), postgresRefreshLock(pool, { prefix: `${run}:two:` }));
  });
  it('the advisory refresh lock lets one holder in at a time', async () => {
    const lock = postgresRefreshLock(pool, { prefix: `${run}:lock:` });
    const order: string[] = [];
    const holder = async (name: string) => {
      const release = await lock.acquire('g.localhost');
      order.push(`${name} in`);
      await new Promise((r) => setTimeout(r, 30));
      order.push(`${name} out`);
      await release();
    };
    await Promise.all([holder('a'), holder('b'), holder('c')]);
    expect(order).toHaveLength(6);
    for (let i = 0; i < order.length; i += 2) expect(order[i]!.split(' ')[0]).toBe(order[i + 1]!.split(' ')[0]);
  });
  it('reads a row written by an earlier version as the offline session', async () => {
    const table = `${run}_pg_legacy`;
    tables.push(table);
    const s = postgresSessionStorage(pool, { table });
    await s.get('x.localhost');
    await pool.query(`INSERT INTO ${table} (shop, data, refresh_token, updated_at) VALUES ($1, $2, $3, 0)`, [
      'old.localhost',
      LEGACY_JSON,
      'sg_rt_legacy',
    ]);
    await readsLegacyRow(s);
  });
  it('creates its table on first use, also when two instances start at once', async () => {
    const table = `${run}_pg_race`;
    tables.push(table);
    const [a, b] = [postgresSessionStorage(pool, { table }), postgresSessionStorage(pool, { table })];
    await Promise.all([a.set(session('e.localhost')), b.set(session('f.localhost'))]);
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${table}`);
    expect(rows[0]).toEqual({ n: 2 });
  });
});

describe.skipIf(!process.env.TEST_REDIS_URL)('Redis', () => {
  const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: true });
  const prefix = `storegate-test:${run}:`;
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });
  let n = 0;
  contract('Redis', async () => redisSessionStorage(redis, { prefix: `${prefix}${++n}:` }), { concurrent: true });

  it('two app instances sharing Redis storage and the Redis lock refresh once', async () => {
    await twoProcessesRefreshOnce(
      redisSessionStorage(redis, { prefix: `${prefix}two:` }),
      redisRefreshLock(redis, { prefix: `${prefix}twolock:` }),
    );
  });
  it('reads a hash written by an earlier version as the offline session', async () => {
    await redis.hset(`${prefix}legacy:old.localhost`, 'data', LEGACY_JSON, 'rt', 'sg_rt_legacy');
    await readsLegacyRow(redisSessionStorage(redis, { prefix: `${prefix}legacy:` }));
  });
  it('the refresh lock lets one holder in at a time', async () => {
    const lock = redisRefreshLock(redis, { prefix: `${prefix}lock:`, ttlMs: 5000 });
    const order: string[] = [];
    const holder = async (name: string) => {
      const release = await lock.acquire('g.localhost');
      order.push(`${name} in`);
      await new Promise((r) => setTimeout(r, 30));
      order.push(`${name} out`);
      await release();
    };
    await Promise.all([holder('a'), holder('b'), holder('c')]);
    for (let i = 0; i < order.length; i += 2) expect(order[i]!.split(' ')[0]).toBe(order[i + 1]!.split(' ')[0]);
  });
});
