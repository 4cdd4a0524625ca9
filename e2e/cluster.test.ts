// The cluster of docs/deploy.md on loopback: two `storegate serve --no-worker` nodes and one
// `storegate worker` on a PostgreSQL database of their own and a Redis of their own, behind Debian's
// HAProxy running the committed deploy/haproxy.cfg (its ports come from the environment, as in
// production). Through the balancer only: a merchant installs an app (login and consent may land
// on different nodes), the app exchanges the code, calls the Admin API, subscribes to a webhook and
// receives the signed delivery the worker sends; the probes and metrics answer through it too.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Receiver, until } from '../packages/platform/test/webhook-receiver.ts';
import { consentAsMerchant, CookieJar } from './merchant-consent.ts';
import { CLI, freePort, request } from './server-process.ts';

const HAPROXY = process.env.TEST_HAPROXY ?? '/usr/sbin/haproxy';
const HAPROXY_CFG = new URL('../deploy/haproxy.cfg', import.meta.url).pathname;
const PG_URL = process.env.TEST_PG_URL;
const DOMAIN = 'localhost';
const METRICS_TOKEN = 'cluster-metrics-token-0123456789';
const MERCHANT = { email: 'owner@cluster.test', password: 'cluster-password' };

interface Proc {
  name: string;
  child: ChildProcess;
  output: () => string;
}

describe.skipIf(!PG_URL || !existsSync(HAPROXY))('a cluster behind HAProxy (deploy/haproxy.cfg)', () => {
  const procs: Proc[] = [];
  const dbName = `sg_cluster_${randomBytes(6).toString('hex')}`;
  let database = '';
  let dbCreated = false;
  let lbPort = 0;
  let receiver: Receiver;
  let app: { client_id: string; client_secret: string };
  let workerMetricsPort = 0;
  let accessToken = '';
  const env: NodeJS.ProcessEnv = { ...process.env, MASTER_KEY: randomBytes(32).toString('hex'), STOREGATE_LOG: undefined };

  function start(name: string, command: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Proc {
    const child = spawn(command, args, { env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (out += c));
    const proc = { name, child, output: () => out };
    procs.push(proc);
    return proc;
  }

  /** Runs a storegate command to completion (asynchronously) and parses its --json output. */
  async function cli(args: string[]): Promise<unknown> {
    const proc = start(`storegate ${args[0]}`, process.execPath, [CLI, ...args, '--database', database, '--json']);
    const code = await new Promise((r) => proc.child.once('close', r));
    if (code !== 0) throw new Error(`storegate ${args.join(' ')} failed: ${proc.output()}`);
    // The JSON is one line; stderr may add lines after it (a warning of the command).
    const out = proc.output();
    const from = out.indexOf('{');
    return JSON.parse(out.slice(from, out.indexOf('\n', from)));
  }

  async function untilAnswers(port: number, host: string, path: string, proc: Proc): Promise<void> {
    await until(
      async () => {
        if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited: ${proc.output()}`);
        const res = await request(port, host, 'GET', path).catch(() => null);
        return res?.status === 200;
      },
      30_000,
      `${proc.name} to answer ${path}`,
    );
  }

  const lbHost = (store?: string) => `${store ? `${store}.` : ''}${DOMAIN}:${lbPort}`;
  const viaLb = (store: string | undefined, method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
    request(lbPort, lbHost(store), method, path, body, headers);

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${dbName}`);
      dbCreated = true;
    } finally {
      await admin.end();
    }
    const url = new URL(PG_URL!);
    url.pathname = `/${dbName}`;
    database = url.toString();

    const redisPort = await freePort();
    const redis = start('redis-server', 'redis-server', [
      '--port',
      String(redisPort),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
    ]);
    receiver = await Receiver.start();
    lbPort = await freePort();

    // Two commands at once on the fresh database: each runs the migrations on start, under the
    // database's migration lock, as several nodes starting together do.
    const [, created] = await Promise.all([
      cli(['stores', 'create', 'cluster', '--owner-email', MERCHANT.email, '--owner-password', MERCHANT.password]),
      cli([
        'apps',
        'create',
        '--name',
        'Cluster App',
        '--app-url',
        receiver.url('/'),
        '--redirect-uri',
        receiver.url('/callback'),
        '--scopes',
        'read_products write_products',
      ]),
    ]);
    app = created as typeof app;

    await until(() => redis.output().includes('Ready to accept connections'), 10_000, 'redis-server');
    const shared = ['--database', database, '--redis', `redis://127.0.0.1:${redisPort}`];
    const nodePorts = [await freePort(), await freePort()];
    const nodes = nodePorts.map((port, i) =>
      start(`node${i + 1}`, process.execPath, [
        CLI,
        'serve',
        ...shared,
        '--no-worker',
        '--port',
        String(port),
        '--public-port',
        String(lbPort),
        // Long enough for the balancer to see /readyz fail twice (checks every second) before
        // the listener closes.
        // A deep bucket that barely leaks, so the calls of this file never hit it and its count
        // shows whether the nodes share it.
        '--rate-limit',
        '1000/0.1',
        '--drain-delay',
        '3s',
        '--trust-proxy',
        '127.0.0.1',
        '--metrics-token',
        METRICS_TOKEN,
        '--log-level',
        'info',
      ]),
    );
    workerMetricsPort = await freePort();
    const worker = start('worker', process.execPath, [
      CLI,
      'worker',
      '--database',
      database,
      '--metrics-port',
      String(workerMetricsPort),
      '--metrics-token',
      METRICS_TOKEN,
      '--log-level',
      'warn',
    ]);
    await Promise.all(nodes.map((node, i) => untilAnswers(nodePorts[i]!, DOMAIN, '/readyz', node)));

    const haproxy = start('haproxy', HAPROXY, ['-db', '-f', HAPROXY_CFG], {
      STOREGATE_DOMAIN: DOMAIN,
      STOREGATE_BIND: `127.0.0.1:${lbPort}`,
      STOREGATE_NODE1: `127.0.0.1:${nodePorts[0]}`,
      STOREGATE_NODE2: `127.0.0.1:${nodePorts[1]}`,
    });
    await untilAnswers(lbPort, lbHost(), '/readyz', haproxy);
    if (worker.child.exitCode !== null) throw new Error(`worker exited: ${worker.output()}`);
  }, 90_000);

  afterAll(async () => {
    // Every process this file started, whatever happened: SIGTERM, then SIGKILL after 5 s.
    await Promise.all(
      procs.map(async ({ child }) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }),
    );
    await receiver?.close();
    if (dbCreated) {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      try {
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
          dbName,
        ]);
        await admin.query(`DROP DATABASE IF EXISTS ${dbName}`);
      } finally {
        await admin.end();
      }
    }
  }, 30_000);

  it('installs an app, serves the Admin API and delivers a signed webhook, all through the balancer', async () => {
    const state = randomBytes(8).toString('hex');
    const authorize = `http://${lbHost('cluster')}/admin/oauth/authorize?${new URLSearchParams({
      client_id: app.client_id,
      scope: 'read_products write_products',
      redirect_uri: receiver.url('/callback'),
      response_type: 'code',
      state,
    })}`;
    // Round robin: the login, the consent page and the decision are spread over both nodes.
    const redirect = await consentAsMerchant(lbPort, authorize, MERCHANT, new CookieJar());
    expect(redirect.origin + redirect.pathname).toBe(receiver.url('/callback'));
    expect(redirect.searchParams.get('state')).toBe(state);
    expect(redirect.searchParams.get('shop')).toBe('cluster.localhost');

    const exchanged = await viaLb(
      'cluster',
      'POST',
      '/admin/oauth/token',
      new URLSearchParams({
        client_id: app.client_id,
        client_secret: app.client_secret,
        code: redirect.searchParams.get('code')!,
        grant_type: 'authorization_code',
        redirect_uri: receiver.url('/callback'),
      }).toString(),
    );
    expect(exchanged.status, exchanged.body).toBe(200);
    const token = JSON.parse(exchanged.body).access_token as string;
    accessToken = token;
    const api = (method: string, path: string, body?: unknown) =>
      viaLb('cluster', method, `/openapi/2026-01/${path}`, body === undefined ? undefined : JSON.stringify(body), {
        'access-token': token,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      });

    const subscribed = await api('POST', 'webhooks', { address: receiver.url('/hooks'), topic: 'products/create' });
    expect(subscribed.status, subscribed.body).toBe(201);
    for (const title of ['Lamp', 'Desk', 'Chair', 'Shelf']) {
      const created = await api('POST', 'products', { title, price: '10.00' });
      expect(created.status, created.body).toBe(201);
    }
    const listed = await api('GET', 'products?limit=10');
    expect(listed.status).toBe(200);
    // Six calls, alternating between the nodes, counted in one bucket in Redis (a bucket per node
    // would have counted three each).
    expect(Number(String(listed.headers['x-service-api-call-limit']).split('/')[0])).toBeGreaterThanOrEqual(5);
    expect(
      JSON.parse(listed.body)
        .data.map((p: { title: string }) => p.title)
        .sort(),
    ).toEqual(['Chair', 'Desk', 'Lamp', 'Shelf']);

    // The worker (the nodes run none) delivers each event once, signed with the app's secret.
    await until(() => receiver.on('/hooks').length >= 4, 20_000, 'four webhook deliveries');
    const deliveries = receiver.on('/hooks');
    expect(deliveries.map((d) => JSON.parse(d.body).title).sort()).toEqual(['Chair', 'Desk', 'Lamp', 'Shelf']);
    for (const d of deliveries) {
      expect(d.headers['x-service-hmac-sha256']).toBe(createHmac('sha256', app.client_secret).update(d.body).digest('base64'));
    }
    // The worker's own metrics port (it serves no platform traffic) counts what it sent.
    await until(
      async () => {
        const res = await request(workerMetricsPort, '127.0.0.1', 'GET', '/metrics', undefined, {
          authorization: `Bearer ${METRICS_TOKEN}`,
        });
        return /^storegate_webhook_attempts_total\{outcome="delivered"\} 4$/m.test(res.body);
      },
      10_000,
      'the worker to count four delivered attempts',
    );

    // Both nodes served part of it (each logs its requests at info level).
    for (const node of procs.filter((p) => p.name.startsWith('node')))
      await until(() => /\/openapi\/2026-01\//.test(node.output()), 10_000, `${node.name} to log an Admin API request`);
  }, 60_000);

  it('answers the probes and the metrics through the balancer, forwards the client address and scheme it saw, and refuses other Hosts', async () => {
    const ready = await viaLb(undefined, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    const metrics = await viaLb(undefined, 'GET', '/metrics', undefined, { authorization: `Bearer ${METRICS_TOKEN}` });
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/^storegate_http_requests_total\{/m);
    expect((await viaLb(undefined, 'GET', '/metrics')).status).toBe(401);
    // What a client writes in the forwarded headers is replaced by what the balancer saw, and the
    // nodes (--trust-proxy 127.0.0.1) log the balancer's values.
    const path = '/forwarded-headers-check';
    const forged = await viaLb('cluster', 'GET', path, undefined, { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https' });
    expect(forged.status).toBe(404);
    const loggedLines = () =>
      procs
        .filter((p) => p.name.startsWith('node'))
        .flatMap((p) => p.output().split('\n'))
        .filter((line) => line.includes(path))
        .flatMap((line) => {
          try {
            return [JSON.parse(line) as { req?: { remoteAddress?: string; scheme?: string } }];
          } catch {
            return []; // the rest of the line is still in the pipe
          }
        })
        .filter((entry) => entry.req);
    // The node's log line travels through a pipe: it may arrive after the response.
    await until(() => loggedLines().length > 0, 10_000, 'the node to log the request');
    const logged = loggedLines();
    for (const entry of logged) expect(entry.req).toMatchObject({ remoteAddress: '127.0.0.1', scheme: 'http' });
    expect(procs.map((p) => p.output()).join('\n')).not.toContain('203.0.113.9');
    // A Host that is neither the platform domain nor one of its stores stops at the balancer.
    expect((await request(lbPort, `example.com:${lbPort}`, 'GET', '/readyz')).status).toBe(421);
  });

  it('takes a node out for an upgrade: SIGTERM drains it, no request through the balancer fails, it exits 0', async () => {
    expect(accessToken).not.toBe('');
    const node1 = procs.find((p) => p.name === 'node1')!;
    const exited = new Promise<number | null>((resolve) => node1.child.once('exit', (code) => resolve(code)));
    const failures: string[] = [];
    let answered = 0;
    let stopping = false;
    // One client sending Admin API calls back to back through the balancer, across the signal.
    const load = (async () => {
      while (!stopping) {
        const res = await viaLb('cluster', 'GET', '/openapi/2026-01/products?limit=1', undefined, { 'access-token': accessToken }).catch(
          (err: Error) => ({ status: 0, body: err.message }),
        );
        if (res.status === 200) answered++;
        else failures.push(`${res.status} ${res.body.slice(0, 200)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await until(() => answered >= 5, 10_000, 'calls before the signal');
    node1.child.kill('SIGTERM');
    const code = await exited;
    const atExit = answered;
    await until(() => answered >= atExit + 5, 10_000, 'calls after the node left');
    stopping = true;
    await load;
    expect(code, node1.output()).toBe(0);
    expect(failures).toEqual([]);
  }, 60_000);
});
