// Runs the real `storegate` command as a child process on a free port, for browser tests.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CLI = new URL('../packages/cli/bin/storegate.js', import.meta.url).pathname;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Runs a storegate command to completion and parses its --json output. */
export function cli(database: string, args: string[]): any {
  const res = spawnSync(process.execPath, [CLI, ...args, '--database', database, '--json'], { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`storegate ${args.join(' ')} failed: ${res.stderr}`);
  return JSON.parse(res.stdout);
}

/** A request to 127.0.0.1 with an explicit Host header (Node does not resolve *.localhost here). */
export function request(
  port: number,
  host: string,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          host,
          ...(body ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } : {}),
          ...headers,
        },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (data += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data }));
      },
    );
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

export interface RunningServer {
  port: number;
  database: string;
  dir: string;
  child: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

/**
 * Starts `storegate serve` on a free port with a fresh SQLite database in a temp folder (filled by
 * `prepare` first), or on `database` when given: a second server sharing another's database, e.g.
 * with other flags (that database is left for its owner to remove).
 */
export async function startServer(
  options: { prepare?: (database: string) => void; args?: string[]; database?: string } = {},
): Promise<RunningServer> {
  const dir = mkdtempSync(join(tmpdir(), 'storegate-e2e-'));
  const database = options.database ?? join(dir, 'storegate.db');
  options.prepare?.(database);
  const port = await freePort();
  let out = '';
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--database', database, '--port', String(port), '--log-level', 'warn', ...(options.args ?? [])],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`storegate serve exited: ${out}`);
    try {
      const res = await request(port, `localhost:${port}`, 'GET', '/healthz');
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`storegate serve did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port,
    database,
    dir,
    child,
    output: () => out,
    async stop() {
      await terminate(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Stops a child process with SIGTERM and waits until it has exited. */
export async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];
