// The observability flags of `serve` and `worker`: bad values stop the start with one line (a bad
// metrics token is not echoed), and `storegate worker --metrics-port` serves /metrics (behind its
// token) and the probes on 127.0.0.1, then stops on SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, runCli, STOREGATE_BIN } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-observe-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const TOKEN = 'observe-cli-token-0123456789';

function env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, DATABASE_URL: '', METRICS_TOKEN: '', METRICS_PUBLIC: '', TRUST_PROXY: '', ...extra };
}

function get(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', headers, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end();
  });
}

describe('observability flags', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('serve and worker refuse bad values with one line; a bad token is not echoed', async () => {
    const db = join(dir, 'refused.db');
    for (const [args, extra, reason] of [
      [['serve', '--trust-proxy', '10.0.0.0/33'], {}, /--trust-proxy: "10\.0\.0\.0\/33" has a bad prefix length/],
      [['serve', '--trust-proxy', 'balancer.example'], {}, /--trust-proxy: "balancer\.example" is not an IP address or CIDR range/],
      [['serve'], { TRUST_PROXY: '10.0.0.1,,10.0.0.2' }, /--trust-proxy: entry 2 is empty/],
      [['serve', '--metrics-token', 'secret value!'], {}, /--metrics-token: expected 16 to 512 characters/],
      [['serve', '--metrics-token', TOKEN, '--metrics-public'], {}, /--metrics-public: cannot be combined with --metrics-token/],
      [['serve'], { METRICS_PUBLIC: 'maybe' }, /--metrics-public: expected true or false, got "maybe"/],
      [['worker', '--metrics-port', '70000'], {}, /--metrics-port: expected a port from 0 to 65535, got "70000"/],
      [['worker', '--metrics-host', '0.0.0.0'], {}, /--metrics-host: needs --metrics-port/],
      [['worker', '--metrics-port', '0', '--metrics-host', 'metrics.example'], {}, /--metrics-host: expected an IP address/],
    ] as const) {
      // Should a value be taken by mistake, serve listens on a free port rather than 8080.
      const port = args[0] === 'serve' ? ['--port', '0'] : [];
      const res = await runCli([...args, ...port, '--database', db], env(extra));
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).not.toBe(0);
      expect(res.stderr.trim().split('\n')).toHaveLength(1);
      expect(res.stderr).toMatch(reason);
      expect(res.stderr).not.toContain('secret value!');
    }
  });

  it('worker --metrics-port serves /metrics behind its token and the probes on any Host, and stops on SIGTERM', async () => {
    const child: ChildProcess = spawn(
      process.execPath,
      [STOREGATE_BIN, 'worker', '--database', join(dir, 'worker.db'), '--metrics-port', '0', '--metrics-token', TOKEN],
      { env: env(), stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`worker did not start: ${stderr}`)), 60_000);
        child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
          stderr += chunk;
          const m = /"metrics":"(http:\/\/127\.0\.0\.1:\d+\/metrics)"/.exec(stderr);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
        child.once('exit', () => reject(new Error(`worker exited: ${stderr}`)));
      });
      const port = Number(new URL(url).port);
      const scraped = await get(port, '/metrics', { host: '10.0.0.7:9100', authorization: `Bearer ${TOKEN}` });
      expect(scraped.status).toBe(200);
      expect(scraped.body).toContain('storegate_webhook_attempts_in_flight 0');
      expect(scraped.body).toContain('storegate_dependency_up{dependency="database"} 1');
      expect(scraped.body).toContain('process_resident_memory_bytes');
      expect((await get(port, '/metrics', { host: '10.0.0.7:9100' })).status).toBe(401);
      expect((await get(port, '/metrics', { host: '10.0.0.7:9100', authorization: `Bearer ${TOKEN}x` })).status).toBe(401);
      expect(await get(port, '/healthz', { host: '10.0.0.7:9100' })).toEqual({ status: 200, body: '{"status":"ok"}' });
      expect((await get(port, '/readyz', { host: '10.0.0.7' })).status).toBe(200);
      expect((await get(port, '/admin/login', { host: 'localhost' })).status).toBe(404);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(stderr).not.toContain(TOKEN);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
