import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminClient } from '../src/api/create-admin-client.ts';
import { localhostFetch } from '../src/node/localhost-fetch.ts';

let server: Server;
let port: number;
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      res.writeHead(req.url?.startsWith('/missing') ? 404 : 200, {
        'content-type': 'application/json',
        'x-request-id': 'r1',
        'set-cookie': ['a=1', 'b=2'],
      });
      res.end(
        JSON.stringify({ host: req.headers.host, method: req.method, url: req.url, body, token: req.headers['access-token'] ?? null }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('localhostFetch (@storegate/app/node)', () => {
  it('reaches *.localhost on loopback with the store Host header', async () => {
    const f = localhostFetch();
    const res = await f(`http://demo.localhost:${port}/openapi/2026-01/products?limit=2`, {
      method: 'POST',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('r1');
    expect(await res.json()).toEqual({
      host: `demo.localhost:${port}`,
      method: 'POST',
      url: '/openapi/2026-01/products?limit=2',
      body: '{"a":1}',
      token: null,
    });
  });
  it('works as the fetch of an Admin API client', async () => {
    const client = createAdminClient({
      shop: 'demo.localhost',
      accessToken: 'sg_pt_1',
      apiOrigin: `http://{shop}:${port}`,
      fetch: localhostFetch(),
    });
    expect(await client.get('products')).toMatchObject({ host: `demo.localhost:${port}`, token: 'sg_pt_1' });
    await expect(client.get('/missing')).rejects.toMatchObject({ code: 'NOT_FOUND', requestId: 'r1' });
  });
  it('passes other hosts to the given fetch', async () => {
    const seen: string[] = [];
    const f = localhostFetch({
      fetch: (async (input: string | URL | Request) => {
        seen.push(String(input));
        return new Response('ok');
      }) as typeof fetch,
    });
    await f('https://example.com/x');
    expect(seen).toEqual(['https://example.com/x']);
  });
});
