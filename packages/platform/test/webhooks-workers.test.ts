// Workers as processes and in pairs: SIGKILL in the middle of 2,000 pending deliveries loses none
// (SQLite file, `storegate worker` child processes); two workers on one PostgreSQL schema never
// send the same attempt twice (FOR UPDATE SKIP LOCKED).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { createPlatform, type Platform } from '../src/platform.ts';
import { WebhookOutbox } from '../src/services/webhook-outbox.ts';
import { openDatabase } from '../src/storage/database.ts';
import { createTestPlatform, testWorker, type TestPlatform } from './harness.ts';
import { Receiver, until } from './webhook-receiver.ts';

const BIN = new URL('../../cli/bin/storegate.js', import.meta.url).pathname;

async function seedPending(t: Pick<Platform, 'services' | 'db' | 'storage'>, addresses: string[], events: number): Promise<void> {
  const s = t.services;
  const store = await s.accounts.createStore({
    name: `kill${randomBytes(3).toString('hex')}`,
    ownerEmail: `o${randomBytes(3).toString('hex')}@x.test`,
    ownerPassword: 'kill-test-password',
  });
  const priv = await s.apps.createPrivateApp({ storeId: store.id, name: 'receiver', scopes: 'read_products' });
  for (const address of addresses) {
    await t.db.kysely
      .insertInto('webhook_subscriptions')
      .values({
        store_id: store.id,
        owner: `private:${priv.id}`,
        app_id: null,
        private_app_id: priv.id,
        topic: 'products/create',
        address,
        api_version: '2026-01',
        created_at: 0,
        updated_at: 0,
        disabled_at: null,
        disabled_reason: null,
      })
      .execute();
  }
  const outbox = new WebhookOutbox(s.clock);
  await t.storage.transaction(async (tx) => {
    for (let i = 0; i < events; i++)
      await outbox.enqueue(tx, { storeId: store.id, topic: 'products/create', payload: { id: String(i + 1), title: `p${i + 1}` } });
  });
}

describe('storegate worker killed with SIGKILL mid-way (SQLite file)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'storegate-kill-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('every event is delivered at least once after a restart; duplicates share X-Service-Webhook-Id', async () => {
    const database = join(dir, 'kill.db');
    const masterKey = randomBytes(32).toString('hex');
    const rx = await Receiver.start();
    rx.handler = (_req, res) => void setTimeout(() => res.end('ok'), 3);
    const config = loadConfig({ database, masterKey, logLevel: 'silent' });
    const seeding = await createPlatform(config, { http: false });
    await seedPending(seeding, [rx.url('/k')], 2000);
    await seeding.close();

    const start = (): ChildProcess =>
      spawn(process.execPath, [BIN, 'worker', '--database', database, '--log-level', 'warn'], {
        env: { ...process.env, MASTER_KEY: masterKey, DATABASE_URL: '' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
    let first = start();
    let stderr = '';
    first.stderr!.on('data', (c) => (stderr += c));
    try {
      await until(() => rx.received.length >= 400, 20_000, 'the first worker to deliver some');
      first.kill('SIGKILL');
      await new Promise((r) => first.once('exit', r));
      const atKill = rx.received.length;
      expect(atKill).toBeLessThan(2000);
      first = start();
      first.stderr!.on('data', (c) => (stderr += c));
      const eventIds = () => new Set(rx.received.map((r) => r.headers['x-service-event-id']));
      await until(() => eventIds().size === 2000, 30_000, 'every event after the restart');
      const byEvent = new Map<string, Set<string>>();
      for (const r of rx.received) {
        const eventId = r.headers['x-service-event-id']!;
        if (!byEvent.has(eventId)) byEvent.set(eventId, new Set());
        byEvent.get(eventId)!.add(r.headers['x-service-webhook-id']!);
      }
      expect([...byEvent.values()].every((ids) => ids.size === 1)).toBe(true);
      const payloadIds = new Set(rx.received.map((r) => JSON.parse(r.body).id));
      expect(payloadIds.size).toBe(2000);
      // The restarted worker records every outcome; a graceful stop exits 0.
      const check = openDatabase(config.database);
      try {
        await until(
          async () =>
            (await check.kysely.selectFrom('webhook_deliveries').select('id').where('status', '!=', 'delivered').execute()).length === 0,
          10_000,
          'all delivered in the log',
        );
      } finally {
        await check.close();
      }
      first.kill('SIGTERM');
      const code = await new Promise((r) => first.once('exit', r));
      expect(code).toBe(0);
      expect(stderr).not.toContain(masterKey);
    } finally {
      if (first.exitCode === null) first.kill('SIGKILL');
      await rx.close();
    }
  }, 60_000);
});

describe.runIf(!!process.env.TEST_PG_URL)('two workers on one PostgreSQL schema', () => {
  let t: TestPlatform;
  afterAll(async () => t?.close());

  it('never send the same attempt twice', async () => {
    t = await createTestPlatform('postgres', { rateLimit: 'off' });
    t.clock.now = Date.now() - 1000;
    const receivers = await Promise.all([Receiver.start(), Receiver.start(), Receiver.start()]);
    for (const r of receivers) r.handler = (_req, res) => void setTimeout(() => res.end('ok'), 2);
    await seedPending(
      t.platform,
      receivers.map((r) => r.url('/pg')),
      300,
    );
    const other = openDatabase(t.config.database, { poolSize: 5 });
    const opts = { pollMs: 20, pruneEveryMs: 0, batchSize: 25 };
    const w1 = await testWorker(t, opts);
    const w2 = await testWorker(t, opts, { db: other });
    try {
      await Promise.all([w1.start(), w2.start()]);
      const all = () => receivers.flatMap((r) => r.received);
      await until(() => all().length >= 900, 20_000, '900 deliveries');
      await until(
        async () =>
          (await t.db.kysely.selectFrom('webhook_deliveries').select('id').where('status', '!=', 'delivered').execute()).length === 0,
        10_000,
        'all delivered',
      );
      await new Promise((r) => setTimeout(r, 100));
      const ids = all().map((r) => r.headers['x-service-webhook-id']);
      expect(ids).toHaveLength(900);
      expect(new Set(ids).size).toBe(900);
      const attempts = await t.db.kysely
        .selectFrom('webhook_attempts')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(attempts.n)).toBe(900);
      expect(w1.attemptsMade + w2.attemptsMade).toBe(900);
      expect(w1.attemptsMade).toBeGreaterThan(0);
      expect(w2.attemptsMade).toBeGreaterThan(0);
    } finally {
      await w1.stop();
      await w2.stop();
      await other.close();
      for (const r of receivers) await r.close();
    }
  }, 60_000);
});
