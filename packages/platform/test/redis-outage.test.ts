// Redis going away under the shared rate limit: the Admin API keeps answering from a bucket local
// to each node, /readyz stays 200 naming Redis as degraded, one warning is logged when Redis is
// lost and one line when it is back, and the nodes share their buckets again once it answers.
// The test runs its own redis-server on a free loopback port (never the shared one).
import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPlatform, type Platform } from '../src/platform.ts';
import type { RateLimiter } from '../src/services/rate-limiter.ts';
import { createFixture, createTestPlatform, type Fixture, privateToken, type TestPlatform } from './harness.ts';

const REDIS_BIN = process.env.REDIS_SERVER ?? 'redis-server';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => {
      socket.destroy();
      resolve(String(d).startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(REDIS_BIN, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  await until('redis-server to answer', () => answersPing(port));
  return child;
}

async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

const redisAvailable = await new Promise<boolean>((resolve) => {
  const probe = spawn(REDIS_BIN, ['--version'], { stdio: 'ignore' });
  probe.once('error', () => resolve(false));
  probe.once('exit', (code) => resolve(code === 0));
});

describe.skipIf(!redisAvailable && !process.env.CI)('Redis stops and comes back under the shared rate limit', () => {
  let port: number;
  let redis: ChildProcess;
  let t: TestPlatform;
  let second: Platform & { http: NonNullable<Platform['http']> };
  const secondLogs: string[] = [];
  let f: Fixture;
  let token: string;
  const consoleError = vi.spyOn(console, 'error');

  const call = (p: { http: NonNullable<Platform['http']> }) =>
    p.http.inject({ method: 'GET', url: '/openapi/2026-01/products', headers: { host: f.host, 'access-token': token } });
  const ready = (p: { http: NonNullable<Platform['http']> }) =>
    p.http.inject({ method: 'GET', url: '/readyz', headers: { host: 'localhost:8080' } });
  const limiter = (p: { services: { rateLimiter: RateLimiter | undefined } }) => p.services.rateLimiter!;
  const lines = (logs: string[], text: string) => logs.filter((l) => l.includes(text));

  beforeAll(async () => {
    port = await freePort();
    redis = await startRedis(port);
    t = await createTestPlatform('sqlite', { rateLimit: { bucket: 10, perSecond: 1 }, redisUrl: `redis://127.0.0.1:${port}` });
    second = await createPlatform(
      { ...t.config },
      {
        db: t.db,
        clock: t.clock.fn,
        migrate: false,
        logStream: new Writable({
          write(chunk, _enc, cb) {
            secondLogs.push(String(chunk));
            cb();
          },
        }),
      },
    );
    f = await createFixture(t);
    token = await privateToken(t, f.storeName, 'read_products');
  });
  afterAll(async () => {
    consoleError.mockRestore();
    await second?.close();
    await t?.close();
    if (redis) await stopRedis(redis);
  });

  it('while Redis answers, both nodes count in one bucket and /readyz says redis up', async () => {
    expect(limiter(t.platform).state()).toBe('shared');
    expect(limiter(second).state()).toBe('shared');
    const seen = [];
    for (const p of [t.platform, second, t.platform]) {
      const res = await call(p as typeof second);
      expect(res.statusCode).toBe(200);
      seen.push(res.headers['x-service-api-call-limit']);
    }
    expect(seen).toEqual(['1/10', '2/10', '3/10']);
    const res = await ready(second);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', draining: false, dependencies: { database: 'up', redis: 'up' } });
  });

  it('Redis stopped: each node serves from its own bucket, /readyz stays 200 with redis degraded, one warning per node', async () => {
    await stopRedis(redis);
    await until('both nodes to notice', () => limiter(t.platform).state() === 'local' && limiter(second).state() === 'local');
    const seen = [];
    for (const p of [t.platform, t.platform, second, t.platform, second]) {
      const res = await call(p as typeof second);
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-policy']).toBeDefined();
      seen.push(res.headers['x-service-api-call-limit']);
    }
    // Fresh buckets on each node: they no longer see each other's drops.
    expect(seen).toEqual(['1/10', '2/10', '1/10', '3/10', '2/10']);
    for (const p of [t.platform, second]) {
      const res = await ready(p as typeof second);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'ready', draining: false, dependencies: { database: 'up', redis: 'degraded' } });
    }
    expect(lines(t.logs, 'Redis is unavailable')).toHaveLength(1);
    expect(lines(secondLogs, 'Redis is unavailable')).toHaveLength(1);
    expect(limiter(t.platform).fallbacks).toBe(1);
    // ioredis prints nothing of its own (no "Unhandled error event" per reconnection attempt).
    expect(consoleError).not.toHaveBeenCalled();
  });

  it('Redis back on the same port: both nodes share one bucket again, one line each for the recovery', async () => {
    redis = await startRedis(port);
    await until('both nodes to reconnect', () => limiter(t.platform).state() === 'shared' && limiter(second).state() === 'shared');
    const seen = [];
    for (const p of [second, t.platform, second]) {
      const res = await call(p as typeof second);
      expect(res.statusCode).toBe(200);
      seen.push(res.headers['x-service-api-call-limit']);
    }
    // The restarted Redis kept nothing (no persistence): one new shared bucket, seen by both.
    expect(seen).toEqual(['1/10', '2/10', '3/10']);
    expect((await ready(t.platform as typeof second)).json()).toMatchObject({ dependencies: { redis: 'up' } });
    expect(lines(t.logs, 'Redis is back')).toHaveLength(1);
    expect(lines(secondLogs, 'Redis is back')).toHaveLength(1);
    expect(lines(t.logs, 'Redis is unavailable')).toHaveLength(1);
    expect(limiter(t.platform).fallbacks).toBe(1);
    expect(consoleError).not.toHaveBeenCalled();
  });
});

describe('a node started while Redis does not answer', () => {
  it('starts, serves from local buckets, reports redis degraded and says so once', async () => {
    const consoleError = vi.spyOn(console, 'error');
    const t = await createTestPlatform('sqlite', {
      rateLimit: { bucket: 10, perSecond: 1 },
      redisUrl: `redis://127.0.0.1:${await freePort()}`,
    });
    try {
      const f = await createFixture(t);
      const token = await privateToken(t, f.storeName, 'read_products');
      for (const expected of ['1/10', '2/10']) {
        const res = await t.app.inject({
          method: 'GET',
          url: '/openapi/2026-01/products',
          headers: { host: f.host, 'access-token': token },
        });
        expect(res.statusCode).toBe(200);
        expect(res.headers['x-service-api-call-limit']).toBe(expected);
      }
      const ready = await t.app.inject({ method: 'GET', url: '/readyz', headers: { host: 'localhost:8080' } });
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toEqual({ status: 'ready', draining: false, dependencies: { database: 'up', redis: 'degraded' } });
      expect(t.logs.filter((l) => l.includes('"dependency":"redis"'))).toHaveLength(1);
      expect(t.services.rateLimiter!.state()).toBe('local');
      expect(consoleError).not.toHaveBeenCalled();
    } finally {
      consoleError.mockRestore();
      await t.close();
    }
  });
});
