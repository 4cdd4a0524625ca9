// A cluster's webhook side on one PostgreSQL: `storegate serve --no-worker` sends nothing itself;
// of two `storegate worker` processes, the one holding a delivery whose receiver hangs keeps its
// claim past the lease (its heartbeat renews it), and once it is killed with SIGKILL the other
// delivers within one lease. The delivery ends delivered once, recorded once.
//
// PostgreSQL only: on SQLite a worker assumes it is the only process on the file (it frees every
// claim when it starts), so two concurrent workers are not a supported setup there; the SQLite
// restart case is in packages/platform/test/webhooks-workers.test.ts.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../packages/platform/src/config.ts';
import { createPlatform } from '../packages/platform/src/platform.ts';
import { openDatabase } from '../packages/platform/src/storage/database.ts';
import { seedDeliveries } from '../packages/platform/test/delivery-seed.ts';
import { freshPostgresUrl } from '../packages/platform/test/harness.ts';
import { Receiver, until } from '../packages/platform/test/webhook-receiver.ts';
import { CLI, startServer, type RunningServer } from './server-process.ts';

const LEASE_MS = 2000;

interface WorkerProcess {
  child: ChildProcess;
  output: () => string;
  id: () => string | undefined;
}

function startWorker(database: string, masterKey: string): WorkerProcess {
  let out = '';
  const child = spawn(
    process.execPath,
    // The attempt's own deadline is far beyond the test: only the kill ends the hung one.
    [CLI, 'worker', '--database', database, '--webhook-claim-lease', `${LEASE_MS}ms`, '--webhook-timeout', '60000', '--log-level', 'info'],
    { env: { ...process.env, MASTER_KEY: masterKey, DATABASE_URL: '' }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  child.stderr!.on('data', (c) => (out += c));
  return { child, output: () => out, id: () => /"worker":"(w_[0-9a-f]+)"[^\n]*webhook worker started/.exec(out)?.[1] };
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe.runIf(!!process.env.TEST_PG_URL)('a worker killed mid-delivery (PostgreSQL, serve --no-worker + 2 workers)', () => {
  let pg: Awaited<ReturnType<typeof freshPostgresUrl>>;
  let rx: Receiver;
  const hung: ServerResponse[] = [];
  const masterKey = randomBytes(32).toString('hex');
  const children: ChildProcess[] = [];
  let server: RunningServer | undefined;

  beforeAll(async () => {
    pg = await freshPostgresUrl();
    rx = await Receiver.start();
    // The first attempt never gets an answer; later ones succeed at once.
    rx.handler = (_req, res) => {
      if (rx.received.length === 1) hung.push(res);
      else res.end('ok');
    };
    const seeding = await createPlatform(loadConfig({ database: pg.url, masterKey, logLevel: 'silent' }), { http: false });
    try {
      await seedDeliveries(seeding, rx.url('/failover'), 1);
    } finally {
      await seeding.close();
    }
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await server?.stop();
    for (const res of hung) res.destroy();
    await rx.close();
    await pg.drop();
  });

  it('the other worker delivers within the lease; the delivery is delivered and recorded once', async () => {
    const db = openDatabase(loadConfig({ database: pg.url, masterKey }).database, { poolSize: 1 });
    const row = () =>
      db.kysely
        .selectFrom('webhook_deliveries as d')
        .leftJoin('webhook_delivery_leases as l', 'l.delivery_id', 'd.id')
        .select(['d.status', 'd.attempts', 'l.worker as claimed_by', 'l.leased_until as claimed_until'])
        .executeTakeFirstOrThrow();
    try {
      server = await startServer({ database: pg.url, args: ['--no-worker', '--master-key', masterKey] });
      // Three of a worker's polls: an embedded worker would have claimed the due delivery by now.
      await new Promise((r) => setTimeout(r, 1500));
      expect(rx.received).toHaveLength(0);
      expect((await row()).claimed_by).toBeNull();

      const a = startWorker(pg.url, masterKey);
      children.push(a.child);
      await until(() => rx.received.length === 1, 20_000, "worker A's attempt");
      await until(() => a.id() !== undefined, 5000, "worker A's id in its log");
      const claimed = await row();
      expect(claimed.claimed_by).toBe(a.id());

      const b = startWorker(pg.url, masterKey);
      children.push(b.child);
      await until(() => b.id() !== undefined, 20_000, 'worker B to start');
      // Longer than a lease: A's heartbeat keeps the claim, so B leaves the delivery alone.
      await new Promise((r) => setTimeout(r, LEASE_MS + 1000));
      expect(rx.received).toHaveLength(1);
      const renewed = await row();
      expect(renewed.claimed_by).toBe(a.id());
      expect(Number(renewed.claimed_until)).toBeGreaterThan(Number(claimed.claimed_until));

      a.child.kill('SIGKILL');
      await exitOf(a.child);
      // Within a lease after the kill (plus a poll of B's): the claim ran out and B took it.
      await until(() => rx.received.length === 2, LEASE_MS + 3000, 'worker B to deliver');
      await until(async () => (await row()).status === 'delivered', 5000, 'the outcome to be recorded');
      expect(await row()).toMatchObject({ status: 'delivered', attempts: 1, claimed_by: null });
      const ids = rx.received.map((r) => r.headers['x-service-webhook-id']);
      expect(ids[1]).toBe(ids[0]);
      const attempts = await db.kysely.selectFrom('webhook_attempts').select(['status_code']).execute();
      expect(attempts).toEqual([{ status_code: 200 }]);

      const bExit = exitOf(b.child);
      b.child.kill('SIGTERM');
      expect(await bExit, b.output()).toBe(0);
      expect(b.output()).toContain('shutdown: stopped');
      expect(rx.received).toHaveLength(2);
    } finally {
      await db.close();
    }
  }, 90_000);
});
