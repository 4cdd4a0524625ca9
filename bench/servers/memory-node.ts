// Shared by bench/memory.bench.ts and bench/soak.bench.ts: a database prepared the way a running
// shop's looks (a store with products, a private app's Access-Token, a public app installed with
// refresh-token chains), the compiled `storegate serve` started on it in production mode as a
// child process, the same load shape for it and for a bare Fastify server, and RSS read from /proc.
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from 'undici';
import { compiledEntry } from '../../packages/cli/bin/entry.js';
import { createPlatform, loadConfig } from '../../packages/platform/src/index.ts';

const root = new URL('../../', import.meta.url);
const STORE = 'bench';
const HOST = `${STORE}.localhost`;
const REDIRECT = 'http://localhost:9/cb';
const API = '/openapi/2026-01';

export interface PreparedNode {
  masterKey: string;
  accessToken: string;
  clientId: string;
  clientSecret: string;
  /** One refresh-token chain per load connection (each rotates on every grant). */
  refreshTokens: string[];
  /** Cursors of pages spread over the whole list, minted the way the API mints them. */
  cursors: string[];
}

/** The resident set of process `pid` in MiB, as the kernel counts it (VmRSS). */
export function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1]) / 1024;
}

/** Builds the compiled platform (`npm run build`) unless this checkout has a current build. */
export async function ensureBuild(): Promise<void> {
  if (compiledEntry(new URL('packages/cli/', root), {}) !== null) return;
  console.log('no current build: running npm run build first');
  const code = await new Promise((r) =>
    spawn(process.execPath, ['scripts/build.mjs'], { cwd: fileURLToPath(root), stdio: 'inherit' }).once('exit', r),
  );
  if (code !== 0) throw new Error('npm run build failed');
}

/** Fills the database at `url` (in this process, before the node starts) and closes it again. */
export async function prepareDatabase(url: string, products: number, chains: number): Promise<PreparedNode> {
  const masterKey = randomBytes(32).toString('hex');
  const platform = await createPlatform(loadConfig({ database: url, masterKey, logLevel: 'silent' }), { http: false });
  try {
    const { services } = platform;
    const store = await services.accounts.createStore({ name: STORE, ownerEmail: 'o@bench.test', ownerPassword: 'bench-password' });
    await services.seeds.seed(store.id, { products, orders: 0, customers: 0 });
    const { accessToken } = await services.apps.createPrivateApp({
      storeId: store.id,
      name: 'bench',
      scopes: 'read_products,write_products',
    });
    const { app, clientSecret } = await services.apps.createApp({
      name: 'Bench',
      appUrl: 'http://localhost:9/',
      redirectUri: REDIRECT,
      scopes: 'read_products',
    });
    const inst = await services.apps.grant(store.id, app.id, ['read_products']);
    const refreshTokens: string[] = [];
    for (let i = 0; i < chains; i++) {
      const code = await services.oauth.issueCode({
        appId: app.id,
        storeId: store.id,
        installationId: inst.id,
        redirectUri: REDIRECT,
        scopes: ['read_products'],
        codeChallenge: null,
      });
      const pair = await services.oauth.exchangeCode({
        client: services.apps.clientCheck(app.client_id, clientSecret),
        storeId: store.id,
        storeName: STORE,
        code,
        redirectUri: REDIRECT,
        codeVerifier: undefined,
      });
      if (!('refresh_token' in pair)) throw new Error('an offline code was answered with online access');
      refreshTokens.push(pair.refresh_token);
    }
    const ids = await platform.db.kysely.selectFrom('products').select('id').where('store_id', '=', store.id).orderBy('id').execute();
    const step = Math.max(1, Math.floor(ids.length / 500));
    const cursors: string[] = [];
    for (let i = 0; i < ids.length - 50; i += step)
      cursors.push(services.cursors.encode({ storeId: store.id, resource: 'products', direction: 'next', id: ids[i]!.id }));
    return { masterKey, accessToken, clientId: app.client_id, clientSecret, refreshTokens, cursors };
  } finally {
    await platform.close();
  }
}

/**
 * `storegate serve` from the compiled build (STOREGATE_SOURCE=0 and a current stamp: no tsx in
 * the process), production mode, JSON logs at warn, the embedded webhook worker on, rate limits
 * counted (a bucket large enough that the load is never refused: the limiter's memory is part of
 * what is measured). Resolves with the port once the banner is out.
 */
export async function startNode(
  url: string,
  masterKey: string,
  extraEnv: Record<string, string> = {},
): Promise<{ child: ChildProcess; port: number }> {
  // Checked again right before the start: a source edited since would make the bin run the sources.
  await ensureBuild();
  const args = ['serve', '--database', url, '--master-key', masterKey, '--mode', 'production', '--public-scheme', 'https'];
  args.push('--port', '0', '--log-level', 'warn', '--rate-limit', '100000/100000', '--drain-delay', '0');
  // The token endpoint's limits too: one client refreshes every chain in one store.
  args.push('--token-rate-limit', '100000/100000', '--token-store-rate-limit', '100000/100000');
  return startServe(args, { NODE_ENV: 'production', ...extraEnv });
}

/**
 * `storegate serve --seed-demo` as `npm start` runs it (development mode, the embedded worker on)
 * on a fresh SQLite file at `path`: the idle footprint a first-time user sees.
 */
export async function startDemo(path: string, extraEnv: Record<string, string> = {}): Promise<{ child: ChildProcess; port: number }> {
  await ensureBuild();
  return startServe(['serve', '--seed-demo', '--database', path, '--port', '0', '--log-level', 'warn'], extraEnv);
}

/**
 * Runs the bin itself, as an operator's shell or process manager does (its first line picks the
 * interpreter and the Node settings), never `node <bin>`, which would skip that line. Without
 * STOREGATE_SOURCE and with a current build there is no tsx in the process. The child's pid stays
 * the node's: the bin's shell line replaces itself with Node (exec).
 */
async function startServe(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const bin = fileURLToPath(new URL('packages/cli/bin/storegate.js', root));
  const { NODE_OPTIONS: _inherited, ...parentEnv } = process.env;
  const child = spawn(bin, args, {
    // The benchmark's own NODE_OPTIONS (tsx's loader) is not the node's: an operator has none.
    env: { ...parentEnv, STOREGATE_SOURCE: '0', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (c: string) => {
      err += c;
      const m = /platform: +https?:\/\/[^:\s]+:(\d+)/.exec(err);
      if (err.includes('storegate is running') && m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
  return { child, port };
}

/** The baseline: a bare Fastify server (one process, no database) answering the same routes from memory. */
export async function startBare(): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(fileURLToPath(new URL('bare-fastify.mjs', import.meta.url)), [], {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
  return { child, port };
}

export function stopProcess(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
  });
}

export interface LoadResult {
  requests: number;
  errors: number;
  /** Non-2xx answers by status, and transport errors as -1. */
  statuses: Record<string, number>;
}

/**
 * The mixed load: `connections` keep-alive connections until `until` resolves; of every 8, six
 * loop over Admin API list pages at varying cursors, one creates products and one follows its own
 * rotating refresh-token chain. Writes wait for their commit to be durable, so they get
 * connections of their own: mixed into every connection they would hold the reads back to the
 * pace of the disk. `pauseMs` > 0 makes the load moderate (a pause after each answer). The same
 * requests go to the bare server, which answers each from memory.
 */
export function runLoad(
  port: number,
  node: PreparedNode,
  opts: { connections: number; pauseMs: number; until: Promise<void> },
): Promise<LoadResult> {
  return startLoad(port, node, opts).done;
}

/** runLoad, with its counts readable while it runs (`live`). */
export function startLoad(
  port: number,
  node: PreparedNode,
  opts: { connections: number; pauseMs: number; until: Promise<void> },
): { live: LoadResult; done: Promise<LoadResult> } {
  let done = false;
  void opts.until.then(() => {
    done = true;
  });
  const result: LoadResult = { requests: 0, errors: 0, statuses: {} };
  const api = { host: HOST, 'access-token': node.accessToken };
  const worker = async (i: number) => {
    const client = new Client(`http://127.0.0.1:${port}`, { pipelining: 1, keepAliveTimeout: 60_000 });
    let chain = node.refreshTokens[i % node.refreshTokens.length]!;
    const role = i % 8 === 6 ? 'create' : i % 8 === 7 ? 'refresh' : 'list';
    let n = i * 7;
    try {
      while (!done) {
        n++;
        let status: number;
        try {
          if (role === 'list') {
            const cursor = node.cursors[(n * 31 + i) % node.cursors.length]!;
            const res = await client.request({
              path: `${API}/products?limit=50&cursor=${encodeURIComponent(cursor)}`,
              method: 'GET',
              headers: api,
            });
            status = res.statusCode;
            await res.body.dump();
          } else if (role === 'create') {
            const body = JSON.stringify({ title: `Load ${i}-${n}`, price: '10.00' });
            const res = await client.request({
              path: `${API}/products`,
              method: 'POST',
              headers: { ...api, 'content-type': 'application/json' },
              body,
            });
            status = res.statusCode;
            await res.body.dump();
          } else {
            const body = new URLSearchParams({
              client_id: node.clientId,
              client_secret: node.clientSecret,
              refresh_token: chain,
              grant_type: 'refresh_token',
            }).toString();
            const res = await client.request({
              path: '/admin/oauth/token',
              method: 'POST',
              headers: { host: HOST, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
              body,
            });
            status = res.statusCode;
            const json = (await res.body.json()) as { refresh_token?: string };
            if (status === 200 && json.refresh_token) chain = json.refresh_token;
          }
        } catch {
          status = -1;
        }
        result.requests++;
        if (status < 200 || status >= 300) {
          result.errors++;
          result.statuses[status] = (result.statuses[status] ?? 0) + 1;
        }
        if (opts.pauseMs > 0) await new Promise((r) => setTimeout(r, opts.pauseMs));
      }
    } finally {
      await client.close();
    }
  };
  const finished = Promise.all(Array.from({ length: opts.connections }, (_, i) => worker(i))).then(() => result);
  return { live: result, done: finished };
}

/** Samples the RSS of `pid` every `everyMs` until `until` resolves; returns the samples in MiB. */
export async function sampleRss(pid: number, everyMs: number, until: Promise<void>): Promise<number[]> {
  const samples: number[] = [];
  let done = false;
  void until.then(() => {
    done = true;
  });
  while (!done) {
    samples.push(rssMiB(pid));
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return samples;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
