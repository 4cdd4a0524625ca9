// Probes as a load balancer sends them: /healthz and /readyz answer whatever the Host says (an IP
// address with or without a port, IPv6 in brackets, a store's host, the bare domain, another
// name, none at all), while every other route keeps its host rules. Addresses other than loopback
// appear only as Host strings; the one real connection goes to 127.0.0.1.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFixture, createTestPlatform, type Fixture, type TestPlatform } from './harness.ts';

const PROBE_HOSTS = [
  '10.0.0.5:8080',
  '10.0.0.5',
  '[fd00::5]:8080',
  '[::1]',
  '192.168.1.20:80',
  'localhost:8080',
  'LOCALHOST',
  'balancer.internal.example',
  'localhost.evil.example',
];

describe('probes on any Host', () => {
  let t: TestPlatform;
  let f: Fixture;
  let port: number;
  beforeAll(async () => {
    t = await createTestPlatform('sqlite');
    f = await createFixture(t);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });
  afterAll(async () => t.close());

  it('/healthz and /readyz answer 200 on an IP (v4, v6, with or without port), a store host, the platform domain and other names', async () => {
    for (const host of [...PROBE_HOSTS, f.host]) {
      const health = await t.app.inject({ method: 'GET', url: '/healthz', headers: { host } });
      expect(health.statusCode, host).toBe(200);
      expect(health.json()).toEqual({ status: 'ok' });
      const ready = await t.app.inject({ method: 'GET', url: '/readyz', headers: { host } });
      expect(ready.statusCode, host).toBe(200);
      expect(ready.json()).toMatchObject({ status: 'ready', dependencies: { database: 'up' } });
    }
  });

  it('every other route keeps its host rules: an IP Host is still 400', async () => {
    const paths = [
      ['GET', '/admin/login'],
      ['GET', '/admin'],
      ['POST', '/admin/oauth/token'],
      ['GET', '/openapi/2026-01/products'],
      ['GET', '/partner'],
      ['GET', '/openapi.json'],
      ['GET', '/assets/app.css'],
      ['GET', '/healthz/extra'],
      ['GET', '/no-such-page'],
    ] as const;
    for (const host of ['10.0.0.5:8080', '10.0.0.5', '[fd00::5]:8080']) {
      for (const [method, url] of paths) {
        const res = await t.app.inject({ method, url, headers: { host } });
        expect(res.statusCode, `${method} ${url} on ${host}`).toBe(400);
        expect(res.body).toContain('The Host header does not name this platform');
      }
    }
    // And the probes do not open store routes to other names: a store's pages still need its host.
    expect((await t.app.inject({ method: 'GET', url: '/admin/login', headers: { host: f.host } })).statusCode).toBe(200);
  });

  it('a probe with no Host at all, HTTP/1.0 or HTTP/1.1, gets 200; any other path without a Host gets 400', async () => {
    const health10 = await rawRequest(port, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(health10).toMatch(/^HTTP\/1\.1 200 /);
    expect(health10).toContain('{"status":"ok"}');
    const ready11 = await rawRequest(port, 'GET /readyz HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(ready11).toMatch(/^HTTP\/1\.1 200 /);
    expect(ready11).toContain('"status":"ready"');
    expect(await rawRequest(port, 'GET /admin/login HTTP/1.1\r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 /);
    expect(await rawRequest(port, 'GET /admin/login HTTP/1.0\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 /);
  });
});

/** Sends `text` on a fresh connection to 127.0.0.1 and resolves with everything received until the server closes it. */
function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let data = '';
    socket.setEncoding('latin1');
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.on('data', (chunk: string) => {
      data += chunk;
    });
    socket.once('error', reject);
    socket.once('close', () => resolve(data));
    socket.once('connect', () => socket.write(text));
  });
}
