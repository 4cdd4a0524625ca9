// `npm run build` output runs on its own: the `storegate` bin starts the compiled CLI and platform
// with no TypeScript loader and no .ts file in the process, and finds the non-TypeScript assets.
// Builds first when this checkout has no current build (dist/ is gitignored, so the tree stays clean).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledEntry } from '../packages/cli/bin/entry.js';
import { CLI, freePort, request, terminate } from './server-process.ts';

const ROOT = new URL('../', import.meta.url);
const CLI_ROOT = new URL('packages/cli/', ROOT);

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT.pathname, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('the compiled build', () => {
  let dir: string;
  let preload: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    if (compiledEntry(CLI_ROOT, {}) === null) {
      const build = await run(process.execPath, ['scripts/build.mjs']);
      if (build.code !== 0) throw new Error(`npm run build failed:\n${build.output}`);
    }
    dir = mkdtempSync(join(tmpdir(), 'storegate-build-'));
    // A module hook that makes any TypeScript source or the tsx loader fail to load: the compiled
    // process must not need either.
    writeFileSync(
      join(dir, 'refuse-ts.mjs'),
      `export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (/\\.[cm]?ts$/.test(result.url) || /\\/node_modules\\/tsx\\//.test(result.url)) throw new Error('refused to load ' + result.url);
  return result;
}
`,
    );
    preload = join(dir, 'preload.mjs');
    writeFileSync(
      preload,
      `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'refuse-ts.mjs')).href)});\n`,
    );
  }, 120_000);

  afterAll(async () => {
    for (const child of children) await terminate(child);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function serve(
    env: NodeJS.ProcessEnv,
  ): Promise<{ port: number; child: ChildProcess; exited: Promise<number | null>; output: () => string }> {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      ['--import', preload, CLI, 'serve', '--database', join(dir, `${port}.db`), '--port', String(port), '--log-level', 'warn'],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (out += c));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { port, child, exited, output: () => out };
  }

  async function healthy(port: number, exited: Promise<number | null>): Promise<boolean> {
    const deadline = Date.now() + 30_000;
    let gone = false;
    void exited.then(() => (gone = true));
    while (!gone && Date.now() < deadline) {
      const res = await request(port, `localhost:${port}`, 'GET', '/healthz').catch(() => null);
      if (res?.status === 200) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  }

  it('serves (migrations, /healthz, stylesheet and script assets) with no TypeScript loaded', async () => {
    const env = { ...process.env };
    delete env.STOREGATE_SOURCE;
    const node = await serve(env);
    expect(await healthy(node.port, node.exited), node.output()).toBe(true);
    const css = await request(node.port, `localhost:${node.port}`, 'GET', '/assets/app.css');
    expect(css.status).toBe(200);
    expect(css.body.length).toBeGreaterThan(100);
    const js = await request(node.port, `localhost:${node.port}`, 'GET', '/assets/copy-button.js');
    expect(js.status).toBe(200);
    expect(node.output()).not.toMatch(/refused to load/);
    await terminate(node.child);
  }, 60_000);

  it('STOREGATE_SOURCE=1 runs the sources through tsx (the same guard refuses it)', async () => {
    const node = await serve({ ...process.env, STOREGATE_SOURCE: '1' });
    const code = await node.exited;
    expect(code).not.toBe(0);
    expect(node.output()).toMatch(/refused to load .*(tsx|\.ts)/);
  }, 60_000);
});
