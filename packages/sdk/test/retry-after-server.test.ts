// Behaviour check against a real local HTTP server: `Retry-After: 2` means two seconds.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminClient } from '../src/api/create-admin-client.ts';

let server: Server;
let origin: string;
const arrivals: number[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    arrivals.push(Date.now());
    if (arrivals.length === 1) {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2', 'x-request-id': 'rl-1' });
      res.end(JSON.stringify({ code: 'TooManyRequests', message: 'slow down', request_id: 'rl-1' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data: [], cursor: '', has_more: false, token: req.headers['access-token'] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('429 against a real server', () => {
  it('429 with Retry-After: 2 waits two seconds, not two milliseconds', async () => {
    const client = createAdminClient({ shop: 'demo.localhost', accessToken: 'sg_pt_x', apiOrigin: origin, callLimit: false });
    const started = Date.now();
    const body = await client.get<{ token: string }>('products');
    const elapsed = Date.now() - started;
    expect(body.token).toBe('sg_pt_x');
    expect(arrivals).toHaveLength(2);
    expect(elapsed).toBeGreaterThanOrEqual(1900);
    expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(1900);
  });
});
