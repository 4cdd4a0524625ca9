// The list-page cache (SQLite) never serves a page the database no longer agrees with: writes on
// the platform's own connection and commits by another process both invalidate it.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PageCache } from '../src/services/page-cache.ts';
import { sqliteChangeStamp } from '../src/storage/change-stamp.ts';
import { api, createFixture, createTestPlatform, privateToken, type Fixture, type TestPlatform } from './harness.ts';

describe('page cache', () => {
  const dir = mkdtempSync(join(tmpdir(), 'storegate-cache-'));
  let t: TestPlatform;
  let f: Fixture;
  let token: string;
  beforeAll(async () => {
    t = await createTestPlatform('sqlite', { rateLimit: 'off', database: { dialect: 'sqlite', path: join(dir, 'cache.db') } });
    f = await createFixture(t);
    token = await privateToken(t, f.storeName, 'write_products');
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const titles = async () =>
    ((await api(t, f, token, 'GET', '/openapi/2026-01/products')).json().data as { title: string }[]).map((p) => p.title);

  it('serves repeated reads from the cache and sees writes made through the API at once', async () => {
    await api(t, f, token, 'POST', '/openapi/2026-01/products', { title: 'one' });
    expect(await titles()).toEqual(['one']);
    expect(await titles()).toEqual(['one']);
    await api(
      t,
      f,
      token,
      'PUT',
      `/openapi/2026-01/products/${(await api(t, f, token, 'GET', '/openapi/2026-01/products')).json().data[0].id}`,
      { title: 'uno' },
    );
    expect(await titles()).toEqual(['uno']);
  });

  it('sees a write that returns rows (INSERT … RETURNING) made outside a transaction', async () => {
    const before = await titles();
    const store = await t.services.accounts.findStoreByName(f.storeName);
    await t.db.kysely
      .insertInto('products')
      .values({
        store_id: store!.id,
        title: 'returned',
        body_html: '',
        vendor: '',
        product_type: '',
        status: 'active',
        price: '1.00',
        sku: '',
        inventory_quantity: 0,
        tags: '',
        created_at: 0,
        updated_at: 0,
      })
      .returningAll()
      .execute();
    expect(await titles()).toEqual([...before, 'returned']);
  });

  it('an UPDATE that changes nothing keeps the cache; one that changes a row empties it', async () => {
    const before = t.db.writes();
    await t.db.kysely.updateTable('products').set({ title: 'never' }).where('id', '=', -1).execute();
    expect(t.db.writes()).toBe(before);
    const first = (await api(t, f, token, 'GET', '/openapi/2026-01/products')).json().data[0];
    await t.db.kysely.updateTable('products').set({ title: 'renamed' }).where('id', '=', Number(first.id)).execute();
    expect(t.db.writes()).toBeGreaterThan(before);
    expect((await titles())[0]).toBe('renamed');
  });

  it('sees a commit made by another process on the same database file (requests over a real socket)', async () => {
    // Over HTTP as a client sends it: the platform reads another process's commits once per turn of
    // its event loop, and a request sent after that commit is handled in a later turn.
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    const overHttp = () =>
      new Promise<string[]>((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port, path: '/openapi/2026-01/products', headers: { host: f.host, 'access-token': token } }, (res) => {
            let body = '';
            res.on('data', (c) => (body += c));
            res.on('end', () => resolve((JSON.parse(body).data as { title: string }[]).map((p) => p.title)));
          })
          .on('error', reject);
      });
    const before = await overHttp();
    expect(await overHttp()).toEqual(before);
    const outside = new Database(join(dir, 'cache.db'));
    const store = outside.prepare('select id from stores where name = ?').get(f.storeName) as { id: number };
    outside
      .prepare(
        "insert into products (store_id, title, body_html, vendor, product_type, status, price, sku, inventory_quantity, tags, created_at, updated_at) values (?, ?, '', '', '', 'active', '1.00', '', 0, '', 0, 0)",
      )
      .run(store.id, 'from the CLI');
    outside.close();
    expect(await overHttp()).toEqual([...before, 'from the CLI']);
  });

  it('a write between the read and the store discards the rendered page', () => {
    const sqlite = new Database(':memory:');
    sqlite.exec('create table x (a)');
    let writes = 0;
    const cache = new PageCache(sqliteChangeStamp(sqlite, () => writes));
    const page = (text: string) => ({ body: Buffer.from(text), next: '', previous: null });
    const v = cache.snapshot();
    writes++;
    cache.set('k', page('stale'), v);
    expect(cache.get('k')).toBeUndefined();
    const v2 = cache.snapshot();
    cache.set('k', page('fresh'), v2);
    expect(cache.get('k')?.body.toString()).toBe('fresh');
    writes++;
    expect(cache.get('k')).toBeUndefined();
  });

  it('keeps at most its byte budget, oldest pages out first, and counts a replaced page once', () => {
    let writes = 0;
    // 24 bytes in all, at most 3 per page.
    const cache = new PageCache(() => `v${writes}`, 24);
    const page = (text: string) => ({ body: Buffer.from(text), next: '', previous: null });
    cache.set('a', page('a'), cache.snapshot());
    cache.set('a', page('aaa'), cache.snapshot());
    for (const k of 'bcdefgh') cache.set(k, page(k.repeat(3)), cache.snapshot());
    // 8 pages of 3 bytes: exactly the budget (the first 'a' was replaced, not added to).
    expect(cache.get('a')?.body.toString()).toBe('aaa');
    cache.set('i', page('iii'), cache.snapshot());
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')?.body.toString()).toBe('bbb');
    expect(cache.get('i')?.body.toString()).toBe('iii');
    cache.set('big', page('xxxx'), cache.snapshot());
    expect(cache.get('big')).toBeUndefined();
    writes++;
    expect(cache.get('i')).toBeUndefined();
  });
});
