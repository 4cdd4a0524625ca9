// The stop flags of `serve` and `worker` as a user meets them (and the webhook per-endpoint cap they
// share): bad values are refused with one line naming the flag, exit code 2, and nothing started
// (no database file); the help says what the signals do.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, runCli } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-lifecycle-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('serve and worker stop flags', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('bad values: exit 2 (usage), one line naming the flag, nothing started', async () => {
    const cases: [string[], NodeJS.ProcessEnv, RegExp][] = [
      [['serve', '--drain-delay', 'soon'], {}, /^storegate: --drain-delay: expected a duration such as "500ms", "5s" or "2m", got "soon"$/],
      [['serve', '--shutdown-timeout', '11m'], {}, /^storegate: --shutdown-timeout: must be from 0 to 10m, got "11m"$/],
      [['serve', '--no-worker', '--webhook-claim-lease', '0'], {}, /^storegate: --webhook-claim-lease: must be from 1s to 60m, got "0"$/],
      [['worker', '--webhook-claim-lease', '500ms'], {}, /^storegate: --webhook-claim-lease: must be from 1s to 60m, got "500ms"$/],
      [['worker', '--shutdown-timeout', '-1'], {}, /^storegate: --shutdown-timeout: expected a duration/],
      [['worker'], { WEBHOOK_CLAIM_LEASE: 'forever' }, /^storegate: --webhook-claim-lease: expected a duration/],
      [['serve'], { DRAIN_DELAY: '10m' }, /^storegate: --drain-delay: must be from 0 to 5m, got "10m"$/],
      [
        ['serve', '--webhook-endpoint-concurrency', '0'],
        {},
        /^storegate: --webhook-endpoint-concurrency: expected an integer from 1 to 64, got "0"$/,
      ],
      [
        ['worker'],
        { WEBHOOK_ENDPOINT_CONCURRENCY: '65' },
        /^storegate: --webhook-endpoint-concurrency: expected an integer from 1 to 64, got "65"$/,
      ],
    ];
    const results = await Promise.all(
      cases.map(([args, env], i) =>
        runCli([...args, '--database', join(dir, `bad${i}.db`), '--port', '0'].slice(0, args[0] === 'worker' ? -2 : undefined), {
          ...process.env,
          DATABASE_URL: '',
          ...env,
        }),
      ),
    );
    results.forEach((res, i) => {
      const [args, , message] = cases[i]!;
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stdout).toBe('');
      expect(res.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(res.stderr.trim()).toMatch(message);
      expect(existsSync(join(dir, `bad${i}.db`))).toBe(false);
    });
  });

  it('the help of serve and worker names the flags, their defaults and what a second signal does', async () => {
    const [serve, worker] = await Promise.all([runCli(['serve', '--help'], process.env), runCli(['worker', '--help'], process.env)]);
    expect(serve.code).toBe(0);
    expect(serve.stdout).toMatch(/--no-worker\s+serve\s+HTTP\s+only/);
    expect(serve.stdout).toMatch(/--drain-delay <duration>[\s\S]*default 5s\s+in\s+production,\s+0\s+in\s+development[\s\S]*DRAIN_DELAY/);
    expect(serve.stdout).toMatch(/--shutdown-timeout <duration>[\s\S]*default\s+10s[\s\S]*SHUTDOWN_TIMEOUT/);
    expect(serve.stdout).toMatch(/--webhook-claim-lease <duration>[\s\S]*default\s+30s[\s\S]*WEBHOOK_CLAIM_LEASE/);
    expect(serve.stdout).toMatch(/A second SIGTERM or SIGINT exits at once \(code 143 or 130\)/);
    expect(worker.code).toBe(0);
    expect(worker.stdout).toMatch(/--shutdown-timeout <duration>/);
    expect(worker.stdout).toMatch(/--webhook-claim-lease <duration>/);
    for (const help of [serve.stdout, worker.stdout])
      expect(help).toMatch(/--webhook-endpoint-concurrency <n>[\s\S]*default\s+8\)[\s\S]*WEBHOOK_ENDPOINT_CONCURRENCY/);
    expect(worker.stdout).not.toMatch(/--drain-delay/);
    expect(worker.stdout).toMatch(/A second SIGTERM or SIGINT exits at once \(code 143 or 130\)/);
  });
});
