// Access-Token lookups are reused between calls (SQLite: while storage's change stamp stands;
// PostgreSQL: never), yet a token that was just used, and so answered from the cache, is refused on
// the very next call once it is revoked, its app uninstalled or its grant narrowed. Also over a
// real socket when another process commits the revocation to the same SQLite file.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../src/domain/tokens.ts';
import { api, appToken, createFixture, createTestPlatform, DIALECTS, privateToken, type TestPlatform } from './harness.ts';

const V = '/openapi/2026-01';

describe.each(DIALECTS)('Access-Token cache on %s', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off' });
  });
  afterAll(async () => t.close());

  const ids = async (f: { storeName: string; clientId: string }) => ({
    storeId: (await t.services.accounts.findStoreByName(f.storeName))!.id,
    appId: (await t.services.apps.findByClientId(f.clientId))!.id,
  });
  const status = async (f: { host: string }, token: string, path = `${V}/products`) => (await api(t, f, token, 'GET', path)).statusCode;

  it('an uninstall refuses the app token on the next call', async () => {
    const f = await createFixture(t, { scopes: 'read_products' });
    const token = await appToken(t, f, 'read_products');
    expect(await status(f, token)).toBe(200);
    expect(await status(f, token)).toBe(200);
    const { storeId, appId } = await ids(f);
    await t.services.apps.uninstall(storeId, appId);
    expect(await status(f, token)).toBe(401);
  });

  it('a narrowed grant refuses the old token on the next call', async () => {
    const f = await createFixture(t, { scopes: 'read_products read_orders' });
    const token = await appToken(t, f, 'read_products read_orders');
    expect(await status(f, token, `${V}/orders`)).toBe(200);
    expect(await status(f, token, `${V}/orders`)).toBe(200);
    const { storeId, appId } = await ids(f);
    await t.services.apps.grant(storeId, appId, ['read_products']);
    expect(await status(f, token, `${V}/orders`)).toBe(401);
    expect(await status(f, token)).toBe(401);
  });

  it('a revoked private app refuses its token on the next call, and another store never takes it', async () => {
    const f = await createFixture(t);
    const other = await createFixture(t);
    const token = await privateToken(t, f.storeName, 'read_products');
    expect(await status(f, token)).toBe(200);
    expect(await status(other, token)).toBe(401);
    expect(await status(f, token)).toBe(200);
    const store = await t.services.accounts.findStoreByName(f.storeName);
    const [app] = await t.services.apps.listPrivateApps(store!.id);
    await t.services.apps.revokePrivateApp(store!.id, app!.id);
    expect(await status(f, token)).toBe(401);
  });
});

describe('Access-Token cache and another process (SQLite file, real socket)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'storegate-auth-cache-'));
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform('sqlite', { rateLimit: 'off', database: { dialect: 'sqlite', path: join(dir, 'auth.db') } });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a revocation committed by another connection is seen by the next request', async () => {
    const f = await createFixture(t);
    const token = await privateToken(t, f.storeName, 'read_products');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    const get = () =>
      new Promise<number>((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port, path: `${V}/products`, headers: { host: f.host, 'access-token': token } }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          })
          .on('error', reject);
      });
    expect(await get()).toBe(200);
    expect(await get()).toBe(200);
    const outside = new Database(join(dir, 'auth.db'));
    outside.prepare('update private_apps set revoked_at = ? where token_hash = ?').run(Date.now(), hashToken(token));
    outside.close();
    expect(await get()).toBe(401);
  });
});
