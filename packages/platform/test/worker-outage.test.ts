// The webhook worker while its PostgreSQL goes away and comes back (cut and restored through a
// relay on loopback): it keeps running, logs one warning when the outage starts and one line when
// it ends, backs off in between, and resumes claiming by itself.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { createPlatform, type Platform } from '../src/platform.ts';
import { type FaultProxy, faultProxy } from './fault-proxy.ts';
import { freshPostgresUrl } from './harness.ts';

async function until(what: string, check: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(!process.env.TEST_PG_URL)('webhook worker during a PostgreSQL outage', () => {
  let schema: Awaited<ReturnType<typeof freshPostgresUrl>>;
  let proxy: FaultProxy;
  let platform: Platform;
  const lines: { level: string; msg: string; obj: object }[] = [];
  const logger = {
    info: (obj: object, msg: string) => void lines.push({ level: 'info', msg, obj }),
    warn: (obj: object, msg: string) => void lines.push({ level: 'warn', msg, obj }),
    error: (obj: object, msg: string) => void lines.push({ level: 'error', msg, obj }),
  };
  const count = (level: string, text: string) => lines.filter((l) => l.level === level && l.msg.includes(text)).length;

  beforeAll(async () => {
    schema = await freshPostgresUrl();
    const base = new URL(process.env.TEST_PG_URL!);
    proxy = await faultProxy({ host: '127.0.0.1', port: Number(base.port || 5432) });
    const url = new URL(schema.url);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    const config = loadConfig({ database: url.toString(), masterKey: randomBytes(32).toString('hex'), dbConnectTimeout: '500' });
    platform = await createPlatform(config, { http: false, worker: { logger, pollMs: 20 } });
    await platform.worker!.start();
  });
  afterAll(async () => {
    await platform?.close();
    await proxy?.close();
    await schema?.drop();
  });

  it('logs the outage once, keeps trying with growing waits, and logs once that the database is back', async () => {
    proxy.cut();
    await until('the outage warning', () => count('warn', 'the database is unavailable') === 1);
    // Several more attempts, all refused, and still a single line.
    await until('three refused attempts', () => proxy.refused >= 3);
    expect(count('warn', 'the database is unavailable')).toBe(1);
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);

    proxy.restore();
    await until('the worker to say the database is back', () => count('info', 'the database is back') === 1);
    expect(count('warn', 'the database is unavailable')).toBe(1);
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
  });
});
