// `storegate webhooks enable` and `storegate webhooks replay` as an operator runs them, on SQLite
// and on PostgreSQL: a disabled subscription enabled again in place, its dead delivery replayed with
// its webhook id; a malformed id exits 2, an unknown one or a bad time exits 1, and neither changes
// anything.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/src/config.ts';
import { createPlatform, type Platform } from '../../platform/src/platform.ts';
import { freshPostgresUrl } from '../../platform/test/harness.ts';
import { CLI_TEST_TIMEOUT_MS, type CliResult, runCliInProcess } from './run-cli.ts';

const DATABASES = process.env.TEST_PG_URL ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

describe.each(DATABASES)('storegate webhooks enable|replay (%s)', { timeout: CLI_TEST_TIMEOUT_MS }, (kind) => {
  const dir = mkdtempSync(join(tmpdir(), 'storegate-recovery-cli-'));
  let database = join(dir, 'recovery.db');
  let drop: (() => Promise<void>) | undefined;
  let platform: Platform;
  let subscriptionId = 0;

  const run = (args: string[]): Promise<CliResult> =>
    runCliInProcess([...args, '--database', database], { ...process.env, DATABASE_URL: '', MASTER_KEY: '' });
  const state = async () => ({
    sub: await platform.db.kysely
      .selectFrom('webhook_subscriptions')
      .selectAll()
      .where('id', '=', subscriptionId)
      .executeTakeFirstOrThrow(),
    deliveries: await platform.db.kysely
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('subscription_id', '=', subscriptionId)
      .execute(),
  });

  beforeAll(async () => {
    if (kind === 'postgres') {
      const pg = await freshPostgresUrl();
      database = pg.url;
      drop = pg.drop;
    }
    // The CLI's first command creates and migrates the database.
    const first = await run(['webhooks', 'deliveries']);
    expect(first.code, first.stderr).toBe(0);
    platform = await createPlatform(loadConfig({ database, logLevel: 'silent' }), { http: false });
    const store = await platform.services.accounts.createStore({
      name: 'recovershop',
      ownerEmail: 'o@recover.test',
      ownerPassword: 'pw-recover-1',
    });
    const priv = await platform.services.apps.createPrivateApp({ storeId: store.id, name: 'Sync', scopes: 'read_products' });
    const now = Date.now();
    const sub = await platform.db.kysely
      .insertInto('webhook_subscriptions')
      .values({
        store_id: store.id,
        owner: `private:${priv.id}`,
        app_id: null,
        private_app_id: priv.id,
        topic: 'products/create',
        address: 'https://hooks.example.test/in',
        api_version: '2026-01',
        created_at: now,
        updated_at: now,
        disabled_at: now,
        disabled_reason: '5 deliveries in a row failed every retry',
        dead_streak: 5,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    subscriptionId = Number(sub.id);
    await platform.db.kysely
      .insertInto('webhook_events')
      .values({ id: 'evt_cli', store_id: store.id, topic: 'products/create', payload: '{}', created_at: now - 60_000 })
      .execute();
    await platform.db.kysely
      .insertInto('webhook_deliveries')
      .values({
        webhook_id: 'wh_cli_replayed',
        event_id: 'evt_cli',
        subscription_id: subscriptionId,
        store_id: store.id,
        app_id: null,
        private_app_id: priv.id,
        topic: 'products/create',
        status: 'dead',
        attempts: 3,
        next_attempt_at: now - 60_000,
        created_at: now - 60_000,
        updated_at: now - 60_000,
      })
      .execute();
  });
  afterAll(async () => {
    await platform?.close();
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('enables in place, then replays with the original webhook id; bad input changes nothing', async () => {
    const before = await state();
    const malformed = await run(['webhooks', 'enable', 'abc', '--json']);
    expect(malformed.code).toBe(2);
    expect(JSON.parse(malformed.stderr).error.code).toBe('usage');
    const unknown = await run(['webhooks', 'enable', '999999', '--json']);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr).error).toEqual({ code: 'not_found', message: 'No webhook subscription with id 999999' });
    // A disabled subscription is not replayed.
    const early = await run(['webhooks', 'replay', String(subscriptionId), '--since', new Date(Date.now() - 3_600_000).toISOString()]);
    expect(early.code).toBe(1);
    expect(early.stderr).toContain('enable it first');
    expect(await state()).toEqual(before);

    const enabled = await run(['webhooks', 'enable', String(subscriptionId), '--json']);
    expect(enabled.code, enabled.stderr).toBe(0);
    expect(JSON.parse(enabled.stdout)).toEqual({
      id: String(subscriptionId),
      store: 'recovershop',
      topic: 'products/create',
      address: 'https://hooks.example.test/in',
      status: 'active',
      was_disabled: true,
    });
    const after = await state();
    expect(after.sub).toMatchObject({ disabled_at: null, disabled_reason: null, dead_streak: 0 });
    expect(after.deliveries).toEqual(before.deliveries);

    const badTime = await run(['webhooks', 'replay', String(subscriptionId), '--since', 'yesterday', '--json']);
    expect(badTime.code).toBe(1);
    expect(JSON.parse(badTime.stderr).error.code).toBe('invalid_input');
    const badStatus = await run(['webhooks', 'replay', String(subscriptionId), '--since', '2026-01-01', '--status', 'dead']);
    expect(badStatus.code).toBe(2);
    expect(await state()).toEqual(after);

    const replayed = await run([
      'webhooks',
      'replay',
      String(subscriptionId),
      '--since',
      new Date(Date.now() - 3_600_000).toISOString(),
      '--json',
    ]);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout)).toMatchObject({
      subscription_id: String(subscriptionId),
      status: 'failed',
      queued: 1,
      capped: false,
    });
    expect((await state()).deliveries).toMatchObject([{ webhook_id: 'wh_cli_replayed', status: 'pending', attempts: 0 }]);
  });
});
