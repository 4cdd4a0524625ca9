// Platform.shutdown on a listening server, in process: during the drain delay /readyz is 503 and
// every response (still served) carries `Connection: close`; a request that will not finish is cut
// at the shutdown timeout and the report says so; one log line per phase, in order.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createFixture, createTestPlatform, DIALECTS, type TestPlatform } from './harness.ts';

function get(port: number, path: string, agent: http.Agent): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, agent, headers: { host: 'localhost' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end();
  });
}

function phases(t: TestPlatform): string[] {
  return t.logs.flatMap((line) => {
    const phase = (JSON.parse(line) as { phase?: string }).phase;
    return phase ? [phase] : [];
  });
}

describe.each(DIALECTS)('Platform.shutdown on %s', (dialect) => {
  let t: TestPlatform | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  async function listening(): Promise<{ t: TestPlatform; port: number }> {
    t = await createTestPlatform(dialect, { rateLimit: 'off' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    return { t, port: (t.app.server.address() as AddressInfo).port };
  }

  it('drains: /readyz 503 at once, requests still served with Connection: close, then a clean stop', async () => {
    const { t, port } = await listening();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const before = await get(port, '/healthz', agent);
      expect(before).toEqual({ status: 200, connection: 'keep-alive' });
      const stopping = t.platform.shutdown({ drainDelayMs: 400, timeoutMs: 5000 });
      expect(await get(port, '/readyz', agent)).toEqual({ status: 503, connection: 'close' });
      expect(await get(port, '/healthz', agent)).toEqual({ status: 200, connection: 'close' });
      expect(await stopping).toEqual({ clean: true, connectionsCut: 0, worker: undefined });
      expect(phases(t)).toEqual(['draining', 'listener-closed', 'stopped']);
      await expect(get(port, '/healthz', agent)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      agent.destroy();
    }
  });

  it('a request that does not finish within the timeout is cut, and the report says so', async () => {
    const { t, port } = await listening();
    const f = await createFixture(t);
    // Headers and half a body, and never the rest.
    const arrived = new Promise<void>((resolve) => t.app.server.once('request', () => resolve()));
    const cut = new Promise<string>((resolve) => {
      const req = http.request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/admin/oauth/token',
        headers: { host: f.host, 'content-type': 'application/json', 'content-length': '100' },
      });
      req.on('response', (res) => resolve(`answered ${res.statusCode}`));
      req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      req.write('{"grant_type":');
    });
    await arrived;
    const report = await t.platform.shutdown({ drainDelayMs: 0, timeoutMs: 200 });
    expect(report).toEqual({ clean: false, connectionsCut: 1, worker: undefined });
    expect(await cut).toBe('ECONNRESET');
    expect(phases(t)).toEqual(['draining', 'listener-closed', 'timeout', 'stopped']);
  });
});
