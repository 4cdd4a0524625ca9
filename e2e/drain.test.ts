// `storegate serve` stopped with SIGTERM while it works: a bounded load of kept-alive requests, two
// product creations whose bodies arrive slowly (still in flight when the listener closes) and a
// webhook attempt to a slow receiver. /readyz turns 503 at once, no request that began before the
// signal fails, the webhook is delivered and recorded, and the process exits 0 within the drain
// delay plus the shutdown timeout. A second signal exits at once.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, request, startServer, type RunningServer } from './server-process.ts';

const SHOP = 'drain.localhost';
const DRAIN_MS = 1000;
const TIMEOUT_MS = 10_000;
/** The receiver answers the webhook this late: after the listener has closed. */
const RECEIVER_DELAY_MS = 2500;
/** The slow requests send the second half of their body this late. */
const TRICKLE_MS = 2000;

interface Sample {
  began: number;
  status?: number;
  error?: string;
}

function exited(server: RunningServer): Promise<number | null> {
  if (server.child.exitCode !== null) return Promise.resolve(server.child.exitCode);
  return new Promise((resolve) => server.child.once('exit', (code) => resolve(code)));
}

/** Polls /readyz on fresh connections until it is 503; returns every status seen. */
async function readyzUntil503(port: number): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < 40; i++) {
    const res = await request(port, `localhost:${port}`, 'GET', '/readyz', undefined, { connection: 'close' });
    seen.push(res.status);
    if (res.status === 503) return seen;
    await new Promise((r) => setTimeout(r, 25));
  }
  return seen;
}

/** POST /products with the body sent in two halves, `TRICKLE_MS` apart. */
function slowCreate(port: number, token: string, title: string): Promise<Sample> {
  const body = JSON.stringify({ title, price: '3.00' });
  const sample: Sample = { began: performance.now() };
  return new Promise((resolve) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/openapi/2026-01/products',
        headers: {
          host: `${SHOP}:${port}`,
          'access-token': token,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ ...sample, status: res.statusCode ?? 0 }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ ...sample, error: err.code ?? err.message }));
    req.write(body.slice(0, 10));
    setTimeout(() => req.end(body.slice(10)), TRICKLE_MS);
  });
}

describe('storegate serve stopped with SIGTERM', () => {
  let receiver: Server;
  let receiverPort = 0;
  const webhooks: string[] = [];
  let token = '';

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        webhooks.push(String(req.headers['x-service-webhook-id']));
        setTimeout(() => res.end('ok'), RECEIVER_DELAY_MS);
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverPort = (receiver.address() as AddressInfo).port;
  });
  afterAll(async () => {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  it('under load: /readyz 503 at once, nothing that began before the signal fails, the webhook in flight is recorded, exit 0', async () => {
    const server = await startServer({
      prepare: (db) => {
        cli(db, ['stores', 'create', 'drain', '--owner-email', 'owner@drain-e2e.test', '--owner-password', 'drain-e2e-password']);
        token = cli(db, [
          'private-apps',
          'create',
          '--store',
          'drain',
          '--name',
          'Load',
          '--scopes',
          'read_products,write_products',
        ]).access_token;
      },
      args: ['--drain-delay', `${DRAIN_MS}ms`, '--shutdown-timeout', `${TIMEOUT_MS}ms`, '--log-level', 'info'],
    });
    const { port } = server;
    const api = (method: string, path: string, body: object) => fetchJson(port, token, method, path, body);
    const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 4 });
    try {
      expect((await api('POST', 'webhooks', { address: `http://127.0.0.1:${receiverPort}/hooks`, topic: 'products/create' })).status).toBe(
        201,
      );

      // Four kept-alive connections asking for /healthz, a few ms apart each, until the node is gone.
      const samples: Sample[] = [];
      let loading = true;
      const loop = async () => {
        while (loading) {
          const s: Sample = { began: performance.now() };
          samples.push(s);
          try {
            const res = await pool.request({ path: '/healthz', method: 'GET', headers: { host: `localhost:${port}` } });
            await res.body.text();
            s.status = res.statusCode;
          } catch (err) {
            s.error = (err as NodeJS.ErrnoException).code ?? String(err);
          }
          await new Promise((r) => setTimeout(r, 5));
        }
      };
      const loops = [loop(), loop(), loop(), loop()];

      // A webhook attempt in flight at the signal (the receiver answers late).
      expect((await api('POST', 'products', { title: 'Drained hat', price: '2.00' })).status).toBe(201);
      const deadline = Date.now() + 15_000;
      while (webhooks.length === 0) {
        if (Date.now() > deadline) throw new Error(`the webhook never arrived: ${server.output()}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const slow = [slowCreate(port, token, 'Slow scarf'), slowCreate(port, token, 'Slow mitten')];
      // The load has been going for a while when the signal comes.
      while (samples.filter((x) => x.status === 200).length < 200) {
        if (Date.now() > deadline) throw new Error(`the load did not get going: ${server.output().slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 20));
      }

      const signalled = performance.now();
      const exit = exited(server);
      server.child.kill('SIGTERM');
      const readyz = await readyzUntil503(port);
      const code = await exit;
      const elapsed = performance.now() - signalled;
      loading = false;
      await Promise.all(loops);

      expect(readyz.at(-1), `readyz statuses ${readyz.join(',')}`).toBe(503);
      expect(code, server.output().slice(-2000)).toBe(0);
      expect(elapsed).toBeLessThan(DRAIN_MS + TIMEOUT_MS);

      const before = samples.filter((s) => s.began < signalled);
      expect(before.length).toBeGreaterThanOrEqual(200);
      expect(before.filter((s) => s.status !== 200)).toEqual([]);
      // During the drain delay the node still served requests sent after the signal.
      expect(samples.filter((s) => s.began >= signalled && s.status === 200).length).toBeGreaterThan(0);
      expect((await Promise.all(slow)).map((s) => s.status ?? s.error)).toEqual([201, 201]);

      // The attempt in flight finished and was recorded; nothing was sent twice.
      expect(webhooks).toHaveLength(1);
      const db = new Database(server.database, { readonly: true });
      try {
        // The slow creations committed during the shutdown: their deliveries wait, unclaimed, for the
        // next worker (this one had stopped claiming).
        expect(
          db
            .prepare(
              `select d.status, d.attempts, l.worker as claimed_by
             from webhook_deliveries d left join webhook_delivery_leases l on l.delivery_id = d.id order by d.id`,
            )
            .all(),
        ).toEqual([
          { status: 'delivered', attempts: 1, claimed_by: null },
          { status: 'pending', attempts: 0, claimed_by: null },
          { status: 'pending', attempts: 0, claimed_by: null },
        ]);
        const titles = db.prepare('select title from products order by id').all() as { title: string }[];
        expect(titles.map((t) => t.title).sort()).toEqual(['Drained hat', 'Slow mitten', 'Slow scarf']);
      } finally {
        db.close();
      }
      const out = server.output();
      const phases = ['shutdown: draining', 'shutdown: listener closed', 'shutdown: webhook worker stopped', 'shutdown: stopped'];
      const at = phases.map((p) => out.indexOf(p));
      expect(
        at.every((i) => i >= 0),
        out.slice(-2000),
      ).toBe(true);
      expect([...at].sort((a, b) => a - b)).toEqual(at);
    } finally {
      await pool.destroy();
      await server.stop();
    }
  }, 60_000);

  it('a second signal during the drain exits at once with 128 + the signal number', async () => {
    const server = await startServer({ args: ['--drain-delay', '60s'] });
    try {
      const exit = exited(server);
      server.child.kill('SIGTERM');
      expect((await readyzUntil503(server.port)).at(-1)).toBe(503);
      server.child.kill('SIGINT');
      expect(await exit).toBe(130);
    } finally {
      await server.stop();
    }
  }, 60_000);
});

/** A JSON request to the Admin API of the drain store. */
function fetchJson(port: number, token: string, method: string, path: string, body: object): Promise<{ status: number; body: string }> {
  return request(port, `${SHOP}:${port}`, method, `/openapi/2026-01/${path}`, JSON.stringify(body), {
    'access-token': token,
    'content-type': 'application/json',
  });
}
