// --trust-proxy: the client's address and scheme come from X-Forwarded-For / X-Forwarded-Proto
// only when the peer is a trusted proxy, and then the client is the right-most address the proxies
// did not add. Login throttling per address and the request log follow it: clients behind one
// balancer are throttled apart, and a client talking to the node directly cannot dodge the
// throttle by writing the header itself. Addresses other than loopback appear only as header
// strings (inject's remoteAddress is a string too; nothing connects anywhere).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { createFixture, createTestPlatform, csrfFrom, DIALECTS, type Fixture, Jar, type TestPlatform } from './harness.ts';
import { get } from './web-pages.ts';

const KEY = 'ab'.repeat(32);

describe('--trust-proxy settings', () => {
  const base = { database: ':memory:', masterKey: KEY };

  it('takes addresses and CIDR ranges of both families, comma-separated; none by default', () => {
    expect(loadConfig(base).trustProxy).toEqual([]);
    expect(loadConfig({ ...base, trustProxy: '' }).trustProxy).toEqual([]);
    expect(loadConfig({ ...base, trustProxy: ' 10.0.0.5 , 10.1.0.0/16,::1, FD00::/8 ,192.168.0.0/24' }).trustProxy).toEqual([
      '10.0.0.5',
      '10.1.0.0/16',
      '::1',
      'fd00::/8',
      '192.168.0.0/24',
    ]);
  });

  it('refuses anything else with a message naming the entry', () => {
    for (const [value, reason] of [
      ['10.0.0', /^--trust-proxy: "10\.0\.0" is not an IP address or CIDR range/],
      ['balancer.internal', /^--trust-proxy: "balancer\.internal" is not an IP address or CIDR range/],
      ['10.0.0.0/33', /^--trust-proxy: "10\.0\.0\.0\/33" has a bad prefix length: expected 0 to 32/],
      ['::1/129', /^--trust-proxy: "::1\/129" has a bad prefix length: expected 0 to 128/],
      ['10.0.0.0/', /^--trust-proxy: "10\.0\.0\.0\/" has a bad prefix length/],
      ['10.0.0.0/8/8', /^--trust-proxy: "10\.0\.0\.0\/8\/8" has a bad prefix length/],
      ['[::1]', /^--trust-proxy: "\[::1\]" is not an IP address or CIDR range .*without brackets/],
      ['fe80::1%eth0', /^--trust-proxy: "fe80::1%eth0" has a zone index/],
      ['10.0.0.1,,10.0.0.2', /^--trust-proxy: entry 2 is empty/],
      ['loopback', /^--trust-proxy: "loopback" is not an IP address/],
      [Array.from({ length: 65 }, (_, i) => `10.0.0.${i}`).join(','), /^--trust-proxy: at most 64 addresses or ranges, got 65/],
    ] as const) {
      expect(() => loadConfig({ ...base, trustProxy: value })).toThrow(reason);
    }
  });
});

describe.each(DIALECTS)('client address and scheme behind proxies (%s)', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  let seq = 0;
  beforeAll(async () => {
    // The balancer is 127.0.0.1 (inject's default peer); 10.9.0.0/16 stands for an inner proxy tier.
    t = await createTestPlatform(dialect, { trustProxy: ['127.0.0.1', '10.9.0.0/16'] });
    f = await createFixture(t);
  });
  afterAll(async () => t.close());

  /** A failed login on a fresh account from `peer`, with the X-Forwarded-For given; returns where it redirects. */
  async function failedLogin(peer: string, forwardedFor?: string): Promise<string> {
    seq += 1;
    const jar = new Jar();
    const page = await get(t, f.host, '/admin/login', jar);
    const res = await t.app.inject({
      method: 'POST',
      url: '/admin/login',
      remoteAddress: peer,
      headers: {
        host: f.host,
        cookie: jar.header(),
        'content-type': 'application/x-www-form-urlencoded',
        ...(forwardedFor !== undefined ? { 'x-forwarded-for': forwardedFor } : {}),
      },
      payload: new URLSearchParams({
        _csrf: csrfFrom(page.body),
        email: `nobody${seq}@example.test`,
        password: 'wrong password',
      }).toString(),
    });
    expect(res.statusCode).toBe(303);
    return String(res.headers.location);
  }

  /** 20 failures on 20 accounts lock the address (the per-address limit), whatever each account's count. */
  async function lockAddress(peer: string, forwardedFor: () => string | undefined): Promise<void> {
    for (let i = 0; i < 20; i++) await failedLogin(peer, forwardedFor());
  }

  it('behind the trusted balancer, two clients are throttled apart by their X-Forwarded-For', async () => {
    await lockAddress('127.0.0.1', () => '203.0.113.7');
    expect(await failedLogin('127.0.0.1', '203.0.113.7')).toContain('locked=');
    // Another client behind the same balancer is not locked out.
    expect(await failedLogin('127.0.0.1', '198.51.100.9')).toContain('error=1');
    // The client is the right-most address the trusted proxies did not add: what the client wrote
    // to the left of it (rotated at will) changes nothing, while trusted hops to the right are skipped.
    expect(await failedLogin('127.0.0.1', '192.0.2.1, 203.0.113.7')).toContain('locked=');
    expect(await failedLogin('127.0.0.1', '192.0.2.2, 203.0.113.7, 10.9.3.4')).toContain('locked=');
    expect(await failedLogin('127.0.0.1', '203.0.113.7, 198.51.100.9')).toContain('error=1');
  });

  it('from an untrusted peer X-Forwarded-For is ignored: rotating it does not dodge the throttle', async () => {
    let n = 0;
    await lockAddress('127.0.0.2', () => `192.0.2.${++n}`);
    expect(await failedLogin('127.0.0.2', '192.0.2.200')).toContain('locked=');
    expect(await failedLogin('127.0.0.2')).toContain('locked=');
    // The addresses it named were never charged: a trusted balancer speaking for one of them gets through.
    expect(await failedLogin('127.0.0.1', '192.0.2.3')).toContain('error=1');
  });

  it('the request log has the client address and the scheme from X-Forwarded-Proto, only from a trusted peer', async () => {
    const probe = async (peer: string, headers: Record<string, string>) => {
      const before = t.logs.length;
      await t.app.inject({ method: 'GET', url: '/healthz', remoteAddress: peer, headers: { host: 'localhost', ...headers } });
      const line = t.logs
        .slice(before)
        .map((l) => JSON.parse(l))
        .find((l) => l.msg === 'incoming request');
      return line.req as { remoteAddress: string; scheme: string };
    };
    expect(await probe('127.0.0.1', { 'x-forwarded-for': '203.0.113.50', 'x-forwarded-proto': 'https' })).toMatchObject({
      remoteAddress: '203.0.113.50',
      scheme: 'https',
    });
    expect(await probe('127.0.0.2', { 'x-forwarded-for': '203.0.113.50', 'x-forwarded-proto': 'https' })).toMatchObject({
      remoteAddress: '127.0.0.2',
      scheme: 'http',
    });
    expect(await probe('127.0.0.1', {})).toMatchObject({ remoteAddress: '127.0.0.1', scheme: 'http' });
    // A node listening on :: sees an IPv4 balancer as an IPv4-mapped address: still trusted.
    expect(await probe('::ffff:127.0.0.1', { 'x-forwarded-for': '203.0.113.51', 'x-forwarded-proto': 'https' })).toMatchObject({
      remoteAddress: '203.0.113.51',
      scheme: 'https',
    });
    // IPv6 clients behind it come through as they are.
    expect(await probe('127.0.0.1', { 'x-forwarded-for': '2001:db8::7' })).toMatchObject({ remoteAddress: '2001:db8::7' });
  });

  it('without --trust-proxy nobody is believed, the balancer included', async () => {
    const plain = await createTestPlatform(dialect);
    try {
      const before = plain.logs.length;
      await plain.app.inject({
        method: 'GET',
        url: '/healthz',
        headers: { host: 'localhost', 'x-forwarded-for': '203.0.113.50', 'x-forwarded-proto': 'https' },
      });
      const line = plain.logs
        .slice(before)
        .map((l) => JSON.parse(l))
        .find((l) => l.msg === 'incoming request');
      expect(line.req).toMatchObject({ remoteAddress: '127.0.0.1', scheme: 'http' });
    } finally {
      await plain.close();
    }
  });
});
