// storegate webhooks deliveries|redeliver, apps uninstall and worker as a user runs them: --json on
// stdout, one-line reasons on stderr for bad input, nothing changed.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/src/config.ts';
import { createPlatform } from '../../platform/src/platform.ts';
import { openDatabase } from '../../platform/src/storage/database.ts';
import { CLI_TEST_TIMEOUT_MS, runCliInProcess } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-webhooks-cli-'));
const database = join(dir, 'cli.db');
const masterKey = randomBytes(32).toString('hex');
let clientId = '';
let deliveryId = 0;
let webhookId = '';

function run(args: string[]) {
  return runCliInProcess([...args, '--database', database], { ...process.env, DATABASE_URL: '', MASTER_KEY: masterKey });
}

async function snapshot(): Promise<string> {
  const db = openDatabase({ dialect: 'sqlite', path: database });
  try {
    const rows = await Promise.all(
      ['webhook_deliveries', 'installations', 'access_tokens', 'webhook_events'].map((t) =>
        db.kysely
          .selectFrom(t as 'webhook_deliveries')
          .selectAll()
          .execute(),
      ),
    );
    return JSON.stringify(rows);
  } finally {
    await db.close();
  }
}

beforeAll(async () => {
  const config = loadConfig({ database, masterKey, logLevel: 'silent' });
  const platform = await createPlatform(config, { http: false });
  const { db, services: s } = platform;
  const store = await s.accounts.createStore({ name: 'hooks', ownerEmail: 'o@hooks.test', ownerPassword: 'hooks-password' });
  const { app } = await s.apps.createApp({
    name: 'Hooked',
    appUrl: 'http://localhost:3000/',
    redirectUri: 'http://localhost:3000/cb',
    scopes: 'read_products',
  });
  clientId = app.client_id;
  await s.apps.grant(store.id, app.id, ['read_products']);
  await db.kysely
    .insertInto('webhook_subscriptions')
    .values({
      store_id: store.id,
      owner: `app:${app.id}`,
      app_id: app.id,
      private_app_id: null,
      topic: 'app/uninstalled',
      address: 'http://127.0.0.1:9/hook',
      api_version: '2026-01',
      created_at: 0,
      updated_at: 0,
      disabled_at: null,
      disabled_reason: null,
    })
    .execute();
  await platform.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('storegate webhooks and apps uninstall', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('apps uninstall enqueues app/uninstalled; deliveries lists it; redeliver re-queues a finished one', async () => {
    const res = await run(['apps', 'uninstall', '--store', 'hooks', '--client-id', clientId, '--json']);
    expect(res.stderr).toBe('');
    expect(JSON.parse(res.stdout)).toEqual({ store: 'hooks', client_id: clientId, uninstalled: true });
    const list = await run(['webhooks', 'deliveries', '--app', clientId, '--json']);
    expect(list.code).toBe(0);
    const [d] = JSON.parse(list.stdout);
    expect(d).toMatchObject({
      topic: 'app/uninstalled',
      status: 'pending',
      store: 'hooks',
      app: clientId,
      attempts: 0,
      address: 'http://127.0.0.1:9/hook',
    });
    deliveryId = Number(d.id);
    webhookId = d.webhook_id;
    // Finish it by hand (no worker here), then send it again.
    const db = openDatabase({ dialect: 'sqlite', path: database });
    await db.kysely.updateTable('webhook_deliveries').set({ status: 'dead', attempts: 20 }).where('id', '=', deliveryId).execute();
    await db.close();
    const again = await run(['webhooks', 'redeliver', String(deliveryId), '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ id: String(deliveryId), webhook_id: webhookId, status: 'pending', attempts: 0 });
    expect((await run(['webhooks', 'deliveries', '--status', 'pending', '--store', 'hooks'])).stdout).toContain(webhookId);
  });

  it('bad input: non-zero exit, one line on stderr, nothing on stdout, nothing changed', async () => {
    const before = await snapshot();
    const cases: [string[], RegExp][] = [
      [['webhooks', 'redeliver', 'abc'], /delivery_id must be a delivery id/],
      [['webhooks', 'redeliver', '99999'], /No webhook delivery with id 99999/],
      [['webhooks', 'redeliver', String(deliveryId)], /is already queued/],
      [['webhooks', 'deliveries', '--status', 'lost'], /status must be one of: pending, delivered, dead, cancelled/],
      [['webhooks', 'deliveries', '--app', 'nope'], /no app with client_id "nope"/],
      [['webhooks', 'deliveries', '--store', 'nope'], /no store named "nope"/],
      [['webhooks', 'deliveries', '--limit', '-1'], /--limit: expected a whole number/],
      [['apps', 'uninstall', '--store', 'hooks', '--client-id', clientId], /not installed/],
      [['apps', 'uninstall', '--store', 'nope', '--client-id', clientId], /no store named "nope"/],
      [['apps', 'uninstall', '--store', 'hooks', '--client-id', 'ghost'], /no app with client_id "ghost"/],
      [['worker', '--webhook-retry-schedule', '1s,soon'], /--webhook-retry-schedule: expected waits/],
      [['worker', '--webhook-timeout', '5'], /--webhook-timeout: expected an integer from 50/],
      [['worker', '--pool-size', 'many'], /--pool-size: expected an integer from 1 to 1000/],
    ];
    for (const [args, reason] of cases) {
      const res = await run([...args, '--json']);
      expect(res.code, args.join(' ')).not.toBe(0);
      expect(res.stdout, args.join(' ')).toBe('');
      expect(res.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      // With --json the reason is the message of one JSON object (its quotes escaped in the raw text).
      expect(JSON.parse(res.stderr).error.message, args.join(' ')).toMatch(reason);
    }
    expect(await snapshot()).toBe(before);
  });
});
