// `storegate webhooks health --app <client_id>` as an operator runs it (SQLite; the figures
// themselves are tested on both databases in the platform's endpoint-health.test.ts): the table of
// endpoints and their busy hours, the JSON with every hour of the window, and bad input refused.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/src/config.ts';
import { HOUR_MS, hourOf } from '../../platform/src/domain/endpoint-health.ts';
import { createPlatform } from '../../platform/src/platform.ts';
import { CLI_TEST_TIMEOUT_MS, runCliInProcess } from './run-cli.ts';

describe('storegate webhooks health', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'storegate-webhook-health-cli-'));
  const database = join(dir, 'health.db');
  const run = (args: string[]) => runCliInProcess([...args, '--database', database], { ...process.env, DATABASE_URL: '', MASTER_KEY: '' });
  let clientId = '';

  beforeAll(async () => {
    const platform = await createPlatform(loadConfig({ database, logLevel: 'silent' }), { http: false });
    try {
      const { app } = await platform.services.apps.createApp({
        name: 'Hooked',
        appUrl: 'https://app.example.test/',
        redirectUri: 'https://app.example.test/cb',
        scopes: 'read_products',
      });
      clientId = app.client_id;
      // Two hours of figures as the workers add them: an hour ago 3 delivered and 1 timeout; now 2 failed answers.
      const now = hourOf(Date.now());
      const origin = 'https://hooks.example.test';
      const rows = [
        { hour: now - HOUR_MS, delivered: 3, no_answer: 1, ms_100: 3 },
        { hour: now, failed: 2, ms_400: 2 },
      ];
      for (const r of rows)
        await platform.db.kysely
          .insertInto('webhook_endpoint_hours')
          .values({ owner_kind: 'app', owner_id: app.id, origin, ...r })
          .execute();
    } finally {
      await platform.close();
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints the endpoints as a table and as JSON with the hourly series; bad input exits 2 or 1', async () => {
    const text = await run(['webhooks', 'health', '--app', clientId]);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines[0]).toMatch(/^ENDPOINT\s+ATTEMPTS\s+DELIVERED\s+FAILED\s+NO_ANSWER\s+NOT_SENT\s+P50\s+P99\s+BREAKER\s+NEXT_ATTEMPT$/);
    expect(lines[1]).toMatch(/^https:\/\/hooks\.example\.test\s+6\s+3\s+2\s+1\s+0\s+<=100ms\s+<=400ms\s+closed\s+-$/);
    // Below it, the hours with attempts only.
    expect(text.stdout.match(/^\d{4}-\d{2}-\d{2}T\d{2}:00:00\.000Z /gm)).toHaveLength(2);

    const json = await run(['webhooks', 'health', '--app', clientId, '--hours', '3', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const body = JSON.parse(json.stdout) as {
      client_id: string;
      hours: number;
      endpoints: { endpoint: string; totals: Record<string, number>; hourly: { attempts: number; p99_ms: number | null }[] }[];
    };
    expect(body.client_id).toBe(clientId);
    expect(body.hours).toBe(3);
    expect(body.endpoints).toHaveLength(1);
    expect(body.endpoints[0]!.totals).toEqual({ delivered: 3, failed: 2, no_answer: 1, not_sent: 0, attempts: 6 });
    // Every hour of the window, empty ones too (which ones are empty shifts if the hour turns meanwhile).
    const hourly = body.endpoints[0]!.hourly;
    expect(hourly).toHaveLength(3);
    expect(hourly.filter((h) => h.attempts > 0).map((h) => [h.attempts, h.p99_ms])).toEqual([
      [4, 100],
      [2, 400],
    ]);

    const bad = await run(['webhooks', 'health', '--app', clientId, '--hours', '200']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--hours: expected a whole number from 1 to 168, got "200"');
    const unknown = await run(['webhooks', 'health', '--app', 'nope', '--json']);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr).error.message).toBe('no app with client_id "nope"');
  });
});
