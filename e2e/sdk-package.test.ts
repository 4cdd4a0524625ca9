// The SDK as an app outside this repository gets it: compiled, `npm pack`ed, the tarball
// installed offline into a scratch app in a temp folder, and the README's quick start run there
// with plain `node` against a running `storegate serve`. No workspace link, no TypeScript loader,
// no `@storegate/source` condition: only what the tarball holds.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBlocks } from './doc-blocks.ts';
import { CLI, type RunningServer, startServer } from './server-process.ts';

const root = new URL('../', import.meta.url);
const rootDir = new URL('.', root).pathname;
const sdkDir = new URL('packages/sdk/', root).pathname;

function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, npm_config_update_notifier: 'false', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

describe('@storegate/app from its npm tarball', () => {
  let server: RunningServer;
  let scratch: string;
  let stage: string;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'storegate-sdk-app-'));
    stage = join(scratch, 'stage');
    mkdirSync(stage);
    server = await startServer({ args: ['--seed-demo'] });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  // The package is built into a staging copy (its package.json and README next to a dist/ compiled
  // by the same tsc command as `prepare`), never into packages/sdk/dist: `npm run build`, run by
  // other tests at the same time, deletes and rewrites that folder.
  it('its `prepare` script (run by every `npm install` of the workspace) builds every file the exports name', async () => {
    const manifest = JSON.parse(readFileSync(join(sdkDir, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      exports: Record<string, string | Record<string, string>>;
    };
    expect(manifest.scripts.prepare).toBe('tsc -p tsconfig.build.json');
    const built = await run(
      process.execPath,
      [join(rootDir, 'node_modules/typescript/bin/tsc'), '-p', join(sdkDir, 'tsconfig.build.json'), '--outDir', join(stage, 'dist')],
      { cwd: sdkDir },
    );
    expect(built.code, built.out + built.err).toBe(0);
    for (const file of ['package.json', 'README.md']) copyFileSync(join(sdkDir, file), join(stage, file));
    for (const [subpath, target] of Object.entries(manifest.exports)) {
      if (typeof target === 'string') continue;
      for (const [condition, file] of Object.entries(target)) {
        if (condition === '@storegate/source') continue;
        expect(existsSync(join(stage, file)), `${subpath} ${condition} → ${file}`).toBe(true);
      }
    }
  }, 60_000);

  it('packs, installs offline into a scratch app and runs the README quick start there', async () => {
    expect(existsSync(join(stage, 'dist/index.js')), 'built by the test before').toBe(true);
    const packed = await run('npm', ['pack', '--ignore-scripts', '--pack-destination', scratch, '--json'], { cwd: stage });
    expect(packed.code, packed.err).toBe(0);
    const tarball = readdirSync(scratch).find((f) => f.endsWith('.tgz'));
    expect(tarball).toMatch(/^storegate-app-[\d.]+\.tgz$/);
    // What the tarball holds: compiled JavaScript and types, no TypeScript sources or tests.
    const files = (JSON.parse(packed.out) as { files: { path: string }[] }[])[0]?.files.map((f) => f.path) ?? [];
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/node/localhost-fetch.js');
    expect(files.filter((f) => f.startsWith('src/') || f.startsWith('test/'))).toEqual([]);

    const app = join(scratch, 'app');
    rmSync(app, { recursive: true, force: true });
    await run('mkdir', ['-p', app], { cwd: scratch });
    writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'scratch-app', private: true, type: 'module' })}\n`);
    const installed = await run(
      'npm',
      ['install', join(scratch, tarball ?? ''), '--offline', '--no-audit', '--no-fund', '--ignore-scripts'],
      { cwd: app },
    );
    expect(installed.code, installed.err).toBe(0);
    expect(existsSync(join(app, 'node_modules/@storegate/app/dist/index.js'))).toBe(true);

    const token = await run(
      process.execPath,
      [
        CLI,
        'private-apps',
        'create',
        '--store',
        'demo',
        '--name',
        'quickstart',
        '--scopes',
        'read_shop read_products',
        '--database',
        server.database,
        '--json',
      ],
      { cwd: scratch },
    );
    expect(token.code, token.err).toBe(0);
    const accessToken = (JSON.parse(token.out) as { access_token: string }).access_token;

    const quickstart = readBlocks(root.href, 'packages/sdk/README.md').find((b) => b.directive.includes('quickstart'));
    expect(quickstart, 'the SDK README has a block marked <!-- doctest: platform quickstart -->').toBeDefined();
    writeFileSync(join(app, 'quickstart.mjs'), (quickstart?.code ?? '').replaceAll(':8080', `:${server.port}`));
    const result = await run(process.execPath, ['quickstart.mjs'], { cwd: app, env: { STOREGATE_TOKEN: accessToken } });
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    const lines = result.out.trim().split('\n');
    expect(lines[0]).toMatch(/^demo: USD, UTC$/);
    // Three products, across two pages of two.
    expect(lines.slice(1)).toHaveLength(3);
    for (const line of lines.slice(1)) expect(line).toMatch(/^\d+ \S/);
  }, 90_000);
});
