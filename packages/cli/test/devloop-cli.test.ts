// The app developer loop as a developer runs it: storegate dev (platform, demo store, the app
// registered, its install link), apps env, apps deploy with storegate.app.toml, webhooks trigger
// and webhooks deliveries --follow. Bad input exits non-zero with one line and changes nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/src/config.ts';
import { createPlatform } from '../../platform/src/platform.ts';
import { openDatabase } from '../../platform/src/storage/database.ts';
import { bodyHmac, standardSignature, webhookHeaders } from '../../platform/src/webhooks/signer.ts';
import { Receiver, until } from '../../platform/test/webhook-receiver.ts';
import { CLI_TEST_TIMEOUT_MS, runCli, runCliInProcess, STOREGATE_BIN } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-devloop-cli-'));
const database = join(dir, 'devloop.db');
const masterKey = randomBytes(32).toString('hex');
const env = { ...process.env, DATABASE_URL: '', MASTER_KEY: masterKey, NODE_ENV: '', PORT: '' };
let clientId = '';
let clientSecret = '';
let receiver: Receiver;

// Commands that finish by themselves run in this process; one that follows the deliveries would keep
// running should it not refuse its flags, so it runs as a child process like the dev loop itself.
function run(args: string[]) {
  return (args.includes('--follow') ? runCli : runCliInProcess)([...args, '--database', database], env);
}

/** Long-running commands started, stopped at the end should a test fail before it stops them. */
const running: ChildProcess[] = [];

/** A long-running command, its output collected as it comes. */
function start(args: string[]): { child: ChildProcess; out: () => string; err: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [STOREGATE_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const exit = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, out: () => stdout, err: () => stderr, exit };
}

async function appsTable(): Promise<string> {
  const db = openDatabase({ dialect: 'sqlite', path: database });
  try {
    const rows = await Promise.all(
      ['apps', 'webhook_subscriptions'].map((t) =>
        db.kysely
          .selectFrom(t as 'apps')
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
  receiver = await Receiver.start();
  receiver.handler = (req, res) => {
    res.statusCode = req.url === '/refuse' ? 500 : 200;
    res.end('ok');
  };
  const platform = await createPlatform(loadConfig({ database, masterKey, logLevel: 'silent' }), { http: false });
  const s = platform.services;
  await s.accounts.createStore({ name: 'shop', ownerEmail: 'o@shop.test', ownerPassword: 'shop-password' });
  const created = await s.apps.createApp({
    name: 'Env app',
    appUrl: 'http://localhost:3000/',
    redirectUri: 'http://localhost:3000/auth/callback',
    scopes: 'read_products write_orders',
  });
  clientId = created.app.client_id;
  clientSecret = created.clientSecret;
  await platform.close();
});
afterAll(async () => {
  // SIGTERM stops gracefully: `dev` stops the app it started too.
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('storegate apps env', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('prints the env lines examples/app reads; an unknown app is an error', async () => {
    const [res, json, unknown] = await Promise.all([
      run(['apps', 'env', clientId]),
      run(['apps', 'env', clientId, '--json']),
      run(['apps', 'env', 'nope']),
    ]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout.trim().split('\n')).toEqual([
      `STOREGATE_CLIENT_ID=${clientId}`,
      `STOREGATE_CLIENT_SECRET=${clientSecret}`,
      'STOREGATE_SCOPES="read_products write_orders"',
      'STOREGATE_STORE_DOMAIN=localhost',
      'STOREGATE_API_ORIGIN=http://{shop}:8080',
      'APP_URL=http://localhost:3000/',
      'APP_REDIRECT_URI=http://localhost:3000/auth/callback',
    ]);
    expect(JSON.parse(json.stdout)).toMatchObject({ STOREGATE_CLIENT_ID: clientId, STOREGATE_CLIENT_SECRET: clientSecret });
    expect(unknown.code).not.toBe(0);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/no app with client_id "nope"/);
  });
});

describe('storegate webhooks trigger', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('sends a sample signed with the app secret as deliveries are; a refusal exits 1; bad input changes nothing', async () => {
    const before = receiver.received.length;
    // A name under .localhost, as App URLs often are: sent to the loopback address.
    const address = `http://app.localhost:${receiver.port}/hook`;
    const res = await run(['webhooks', 'trigger', 'products/create', '--address', address, '--client-id', clientId, '--json']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out).toMatchObject({ topic: 'products/create', status: 200, ok: true });
    const got = receiver.received.slice(before);
    expect(got).toHaveLength(1);
    const h = got[0]!.headers;
    // The headers of a delivery, and nothing a browser-like client would add.
    const message = { webhookId: 'w', eventId: 'e', topic: 't', shopDomain: 's', apiVersion: 'v', triggeredAt: 0, body: '' };
    const signed = Object.keys(webhookHeaders({ current: 'x' }, message, 0)).map((n) => n.toLowerCase());
    expect(got[0]!.rawNames.map((n) => n.toLowerCase()).sort()).toEqual([...signed, 'host', 'content-length', 'connection'].sort());
    expect(h.host).toBe(`app.localhost:${receiver.port}`);
    expect(h['x-service-topic']).toBe('products/create');
    expect(h['x-service-shop-domain']).toBe('demo.localhost');
    expect(h['x-service-webhook-id']).toBe(out.webhook_id);
    expect(h['x-service-hmac-sha256']).toBe(bodyHmac(clientSecret, got[0]!.body));
    expect(h['webhook-signature']).toBe(standardSignature(clientSecret, out.webhook_id, h['webhook-timestamp']!, got[0]!.body));
    expect(JSON.parse(got[0]!.body)).toMatchObject({ id: '1001', title: 'Sample T-shirt' });

    const [refused, unknownTopic, badUrl, noSecret] = await Promise.all([
      run(['webhooks', 'trigger', 'orders/create', '--address', receiver.url('/refuse'), '--secret', 'given-secret']),
      run(['webhooks', 'trigger', 'products/explode', '--address', receiver.url('/hook'), '--secret', 's']),
      run(['webhooks', 'trigger', 'products/create', '--address', 'not a url', '--secret', 's']),
      run(['webhooks', 'trigger', 'products/create', '--address', receiver.url('/hook')]),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^storegate: http:\/\/127\.0\.0\.1:\d+\/refuse answered 500: ok; webhook id wh_/);
    const last = receiver.on('/refuse').at(-1)!;
    expect(last.headers['x-service-hmac-sha256']).toBe(bodyHmac('given-secret', last.body));
    for (const [r, reason] of [
      [unknownTopic, /unknown topic "products\/explode"/],
      [badUrl, /--address must be an absolute URL/],
      [noSecret, /give exactly one of --client-id/],
    ] as const) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(reason);
    }
    expect(receiver.received.length).toBe(before + 2);
  });
});

describe('storegate webhooks deliveries --follow', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('prints an attempt made after it started, one JSON object per line, and stops on SIGINT', async () => {
    const follow = start(['webhooks', 'deliveries', '--follow', '--json', '--database', database]);
    await until(() => follow.err().includes('following') || follow.child.exitCode !== null, 60_000, 'follow to start');
    expect(follow.out()).toBe('');
    // A delivery made by a worker in this process, on the same database.
    const platform = await createPlatform(loadConfig({ database, masterKey, logLevel: 'silent' }), { http: false, worker: {} });
    try {
      const s = platform.services;
      const store = (await s.accounts.findStoreByName('shop'))!;
      const app = (await s.apps.findByClientId(clientId))!;
      await s.apps.grant(store.id, app.id, ['read_products']);
      await s.appWebhooks.add(app.id, { topic: 'app/uninstalled', address: receiver.url('/follow') });
      await platform.worker!.start();
      await s.apps.uninstall(store.id, app.id);
      await until(() => follow.out().includes('\n'), 60_000, 'the attempt to be printed');
    } finally {
      await platform.shutdown();
    }
    follow.child.kill('SIGINT');
    expect(await follow.exit).toBe(0);
    const lines = follow.out().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ topic: 'app/uninstalled', store: 'shop', app: clientId, attempt: 1, status: 200 });
    const bad = await run(['webhooks', 'deliveries', '--follow', '--status', 'dead']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--follow prints new attempts only/);
  });
});

describe('storegate apps deploy', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('creates the app, then says nothing to change, then prints a scope change; bad files change nothing', async () => {
    const file = join(dir, 'storegate.app.toml');
    const body = (scopes: string, id = '') =>
      `${id ? `client_id = "${id}"\n` : ''}name = "Toml app"\napplication_url = "http://localhost:3000/"\nredirect_url = "http://localhost:3000/auth/callback"\nscopes = [${scopes}]\n`;
    writeFileSync(file, body('"read_products"'));
    const created = await run(['apps', 'deploy', '--config', file, '--json']);
    expect(created.stderr).toBe('');
    const id = JSON.parse(created.stdout).client_id as string;
    expect(JSON.parse(created.stdout)).toEqual({
      client_id: id,
      created: true,
      changes: [],
      subscriptions: { added: [], changed: [], removed: [], unchanged: [] },
    });
    writeFileSync(file, body('"read_products"', id));
    const again = await run(['apps', 'deploy', '--config', file]);
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toBe(`"Toml app" (${id}): nothing to change`);
    writeFileSync(file, body('"read_products", "read_orders"', id));
    const changed = await run(['apps', 'deploy', '--config', file]);
    expect(changed.code).toBe(0);
    expect(changed.stdout).toContain('scopes: read_products -> read_orders read_products');
    // The scopes a freshly generated app of the platform family asks for, singular forms included.
    writeFileSync(file, body('"read_product", "write_cart_transform", "read_themes", "write_themes", "write_shop"', id));
    const family = await run(['apps', 'deploy', '--config', file]);
    expect(family.stderr).toBe('');
    expect(family.stdout).toContain(
      'scopes: read_orders read_products -> read_products read_themes write_cart_transform write_shop write_themes',
    );
    // The file's subscriptions become the app's app-level list: added, listed, then removed when left out.
    const hook = '[[webhooks.subscriptions]]\ntopic = "products/create"\naddress = "http://localhost:3000/hooks"\n';
    const familyScopes = '"read_product", "write_cart_transform", "read_themes", "write_themes", "write_shop"';
    writeFileSync(file, `${body(familyScopes, id)}${hook}`);
    const subscribed = await run(['apps', 'deploy', '--config', file, '--json']);
    expect(subscribed.stderr).toBe('');
    expect(JSON.parse(subscribed.stdout).subscriptions).toMatchObject({
      added: [{ topic: 'products/create', address: 'http://localhost:3000/hooks', stores: 0, skipped: [] }],
      removed: [],
    });
    const listed = await run(['apps', 'webhooks', 'list', id, '--json']);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ topic: 'products/create', address: 'http://localhost:3000/hooks', stores: 0 }),
    ]);
    // A filter and include_fields on the same entry: changed in place (identity is topic and address).
    writeFileSync(file, `${body(familyScopes, id)}${hook}filter = "vendor:Acme"\ninclude_fields = ["id", "title"]\n`);
    const filtered = await run(['apps', 'deploy', '--config', file, '--json']);
    expect(filtered.stderr).toBe('');
    const subscriptionId = JSON.parse(listed.stdout)[0].id as string;
    expect(JSON.parse(filtered.stdout).subscriptions).toMatchObject({
      added: [],
      changed: [
        {
          id: subscriptionId,
          filter: 'vendor:Acme',
          include_fields: ['id', 'title'],
          previous: { filter: null, include_fields: null },
          stores: 0,
        },
      ],
    });
    writeFileSync(file, `${body(familyScopes, id)}${hook}filter = "vendor:Beta"\ninclude_fields = ["id", "title"]\n`);
    const refiltered = await run(['apps', 'deploy', '--config', file]);
    expect(refiltered.stdout.trim()).toBe(
      'changed products/create -> http://localhost:3000/hooks: filter: vendor:Acme -> vendor:Beta (its copies in 0 stores changed)',
    );
    const updated = await run(['apps', 'webhooks', 'update', id, subscriptionId, '--include-fields', 'id, vendor', '--json']);
    expect(updated.stderr).toBe('');
    expect(JSON.parse(updated.stdout)).toMatchObject({ changed: true, filter: 'vendor:Beta', include_fields: ['id', 'vendor'] });
    const refused = await run(['apps', 'webhooks', 'update', id, subscriptionId, '--filter', 'colour:red']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/filter unknown field "colour"/);
    const table = await run(['apps', 'webhooks', 'list', id]);
    expect(table.stdout).toMatch(/FILTER +FIELDS/);
    expect(table.stdout).toMatch(/vendor:Beta +id,vendor/);
    writeFileSync(file, body(familyScopes, id));
    const unsubscribed = await run(['apps', 'deploy', '--config', file]);
    expect(unsubscribed.stdout.trim()).toBe('removed products/create -> http://localhost:3000/hooks (its copies in 0 stores deleted)');

    const before = await appsTable();
    const bad = [
      [
        `${body('"read_products"', id)}[[webhooks.subscriptions]]\ntopic = "products/create"\naddress = [\n`,
        /:9:\d+: Invalid TOML document/,
      ],
      [
        `${body('"read_products"', id)}[[webhooks.subscriptions]]\ntopic = "products/explode"\naddress = "http://localhost:3000/w"\n`,
        /:7: webhooks\.subscriptions\[0\]\.topic must be one of/,
      ],
      [`${body('"read_products"', id)}${hook}filter = "colour:red"\n`, /:9: webhooks\.subscriptions\[0\]\.filter unknown field "colour"/],
      [
        `${body('"read_products"', id)}${hook}filter = "vendor:Acme"\ninclude_fields = "id,title"\n`,
        /:10: webhooks\.subscriptions\[0\]\.include_fields must be a list of field names/,
      ],
      [body('"read_everything"', id), /:5: scopes /],
      [body('"read_products"', 'no-such-app'), /names no app on this platform/],
      [body('"read_products"', id).replace('http://localhost:3000/"', 'ftp://x/"'), /:3: application_url must be an http or https URL/],
    ] as const;
    const results = await Promise.all(
      bad.map(([text], i) => {
        const f = join(dir, `bad${i}.toml`);
        writeFileSync(f, text);
        return run(['apps', 'deploy', '--config', f]);
      }),
    );
    results.forEach((r, i) => {
      expect(r.code, String(i)).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(bad[i]![1]);
    });
    expect(await appsTable()).toBe(before);
  });
});

describe('storegate dev', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('starts the platform with the app registered and running with its env lines, prints a working install link, stops both on SIGINT', async () => {
    // The app: prints the env it was given, then runs until it is stopped.
    const app = `"${process.execPath}" -e "console.log('app got', process.env.STOREGATE_CLIENT_ID, process.env.STOREGATE_API_ORIGIN); setInterval(() => {}, 1000)"`;
    const dev = start([
      'dev',
      '--app-url',
      'http://localhost:3999/',
      '--port',
      '0',
      '--database',
      join(dir, 'dev.db'),
      '--app-command',
      app,
    ]);
    await until(() => /install link[\s\S]*\n\s+(http\S+)/.test(dev.out()) || dev.child.exitCode !== null, 120_000, 'the install link');
    const link = new URL(/install link[\s\S]*?\n\s+(http\S+)/.exec(dev.out())![1]!);
    expect(link.hostname).toBe('demo.localhost');
    expect(link.searchParams.get('redirect_uri')).toBe('http://localhost:3999/auth/callback');
    expect(dev.out()).toContain(`STOREGATE_CLIENT_ID=${link.searchParams.get('client_id')}`);
    // Not logged in: the store sends the merchant to its login page, the link kept to come back to.
    const answer = await new Promise<{ status: number; location: string }>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: Number(link.port), path: `${link.pathname}${link.search}`, headers: { host: link.host } },
        (res) => {
          res.resume();
          resolve({ status: res.statusCode ?? 0, location: String(res.headers.location ?? '') });
        },
      );
      req.once('error', reject);
      req.end();
    });
    expect(answer.status).toBe(303);
    expect(answer.location).toMatch(/login/);
    await until(() => /^app got /m.test(dev.out()), 60_000, 'the app to start');
    expect(dev.out()).toMatch(new RegExp(`^app got ${link.searchParams.get('client_id')} http://\\{shop\\}:${link.port}$`, 'm'));
    dev.child.kill('SIGINT');
    expect(await dev.exit).toBe(0);
    const bad = await runCli(['dev', '--app-url', 'ftp://localhost/', '--port', '0', '--database', join(dir, 'never.db')], env);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/--app-url must be an http or https URL/);
    expect(existsSync(join(dir, 'never.db'))).toBe(false);
    expect(dev.err()).toMatch(/your app exited \(SIGTERM\)/);
  });
});
