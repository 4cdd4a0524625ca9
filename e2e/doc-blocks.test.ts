// Doc tests: every fenced code block of README.md, packages/*/README.md and examples/**/*.md runs
// here, against one `storegate serve --seed-demo` on a free port with a temp database. A block the
// docs gain later is picked up by itself, and fails until it runs or says why it cannot.
//
// How a block runs follows its language and the `<!-- doctest: … -->` comment right above it:
//   ts / js       run with node (workspace sources, through tsx); `server` starts it and installs it
//                 into the demo store like a merchant would, then waits for its webhook
//   sh            run with bash -e, `curl` failing on HTTP errors; `storegate` commands reach the
//                 temp database through DATABASE_URL
//   json          parsed
//   form <why>    shell not run (installs, long-running commands); npm scripts named must exist,
//                 files named must exist
//   output serve  sample output: each label must appear in what `storegate serve --seed-demo` printed
//   synopsis      `storegate …` and `npx storegate …` lines: each command exists and has each flag written
//   app-config    a storegate.app.toml: `storegate apps deploy`'s reader accepts it
//   layout        a file tree: each path exists
//   skip <why>    not run, with the reason (listed at the end of the run)
// Every block sees the platform at http://localhost:8080 as the docs say: `:8080` is replaced by the
// free port, and a `server` block's `3000` by its own free port. Environment: TOKEN and
// STOREGATE_TOKEN (a private app of the demo store with every scope), STOREGATE_CLIENT_ID/_SECRET and
// CLIENT_ID/CLIENT_SECRET (the demo app), CODE (a fresh authorization code of the demo app, made
// when a block mentions $CODE), ID_TOKEN (a fresh launch token of the demo app, when a block
// mentions $ID_TOKEN).
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAppConfig } from '../packages/cli/src/app-config-file.ts';
import { buildProgram } from '../packages/cli/src/program.ts';
import { type DocBlock, readBlocks } from './doc-blocks.ts';
import { consentAsMerchant, CookieJar, openAsMerchant } from './merchant-consent.ts';
import { CLI, freePort, request, type RunningServer, startServer, terminate } from './server-process.ts';

const root = new URL('../', import.meta.url);
const rootDir = root.pathname;
// Git ignores `.vitest-*/`, and the repository's tsc and Biome do not look there.
const workDir = join(rootDir, `.vitest-doctest-${process.pid}`);

function docFiles(): string[] {
  const files = ['README.md'];
  for (const pkg of readdirSync(join(rootDir, 'packages'))) {
    if (existsSync(join(rootDir, 'packages', pkg, 'README.md'))) files.push(`packages/${pkg}/README.md`);
  }
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(rootDir, dir), { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'data' || entry.name === 'dist') continue;
      if (entry.isDirectory()) walk(`${dir}/${entry.name}`);
      else if (entry.name.endsWith('.md')) files.push(`${dir}/${entry.name}`);
    }
  };
  walk('examples');
  return files;
}

const blocks: DocBlock[] = docFiles().flatMap((f) => readBlocks(root.href, f));
const where = (b: DocBlock) => `${b.file}:${b.line}`;
const kind = (b: DocBlock) => b.directive[0] ?? '';

interface Ran {
  code: number | null;
  out: string;
  err: string;
}

function run(command: string, args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: rootDir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

const SCRIPT_LANGS = new Set(['ts', 'typescript', 'js', 'javascript', 'mjs']);
const SHELL_LANGS = new Set(['sh', 'bash', 'shell']);

describe('every code block in the docs', () => {
  let server: RunningServer;
  let env: Record<string, string>;
  let demoAuthorizeUrl = '';
  const children: ChildProcess[] = [];
  const skipped: string[] = [];

  beforeAll(async () => {
    rmSync(workDir, { recursive: true, force: true });
    mkdirSync(workDir, { recursive: true });
    server = await startServer({ args: ['--seed-demo'] });
    const banner = server.output();
    const clientId = /client_id\s+(\S+)/.exec(banner)?.[1] ?? '';
    const clientSecret = /client_secret\s+(\S+)/.exec(banner)?.[1] ?? '';
    demoAuthorizeUrl = /(http:\/\/demo\.localhost:\d+\/admin\/oauth\/authorize\?\S+)/.exec(banner)?.[1] ?? '';
    expect([clientId, clientSecret, demoAuthorizeUrl].every(Boolean), banner).toBe(true);
    const scopes = 'read_shop read_products write_products read_orders write_orders read_customers write_customers';
    const made = await run(
      process.execPath,
      [CLI, 'private-apps', 'create', '--store', 'demo', '--name', 'doctest', '--scopes', scopes, '--database', server.database, '--json'],
      {},
    );
    expect(made.code, made.err).toBe(0);
    const token = (JSON.parse(made.out) as { access_token: string }).access_token;
    env = {
      PATH: `${join(rootDir, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
      DATABASE_URL: server.database,
      TOKEN: token,
      STOREGATE_TOKEN: token,
      CLIENT_ID: clientId,
      CLIENT_SECRET: clientSecret,
      STOREGATE_CLIENT_ID: clientId,
      STOREGATE_CLIENT_SECRET: clientSecret,
      NO_COLOR: '1',
    };
  }, 60_000);

  afterAll(async () => {
    for (const child of children) await terminate(child);
    await server?.stop();
    rmSync(workDir, { recursive: true, force: true });
    if (skipped.length) console.log(`doc blocks not run:\n  ${skipped.join('\n  ')}`);
  });

  const withPort = (code: string) => code.replaceAll(':8080', `:${server.port}`);

  async function freshCode(): Promise<string> {
    const url = demoAuthorizeUrl.replaceAll('&amp;', '&');
    const callback = await consentAsMerchant(server.port, url, { email: 'merchant@demo.test', password: 'demo-password' });
    return callback.searchParams.get('code') ?? '';
  }

  /** A launch token of the demo app: installed by the merchant, then opened from the store admin. */
  async function freshLaunchToken(): Promise<string> {
    const url = new URL(demoAuthorizeUrl.replaceAll('&amp;', '&'));
    const jar = new CookieJar();
    await consentAsMerchant(server.port, url.toString(), { email: 'merchant@demo.test', password: 'demo-password' }, jar);
    const launch = await openAsMerchant(server.port, url.host, env.CLIENT_ID ?? '', jar);
    return launch.searchParams.get('id_token') ?? '';
  }

  async function runScript(b: DocBlock, code: string, extraEnv: Record<string, string> = {}): Promise<Ran> {
    const ext = b.lang.startsWith('j') || b.lang === 'mjs' ? 'mjs' : 'ts';
    const file = join(workDir, `${b.file.replace(/\W+/g, '-')}-${b.line}.${ext}`);
    writeFileSync(file, code);
    return run(process.execPath, ['--conditions=@storegate/source', '--import', 'tsx', file], { ...env, ...extraEnv });
  }

  async function runShell(b: DocBlock): Promise<Ran> {
    const extra: Record<string, string> = {};
    if (b.code.includes('$CODE')) extra.CODE = await freshCode();
    if (b.code.includes('$ID_TOKEN')) extra.ID_TOKEN = await freshLaunchToken();
    // A documented curl that gets an HTTP error is a broken example.
    const prelude = 'curl() { command curl --fail-with-body "$@"; }\n';
    return run('bash', ['-e', '-o', 'pipefail', '-c', prelude + withPort(b.code)], { ...env, ...extra });
  }

  /** Starts an app block, installs it into the demo store as a merchant, and waits for its webhook. */
  async function runServer(b: DocBlock): Promise<void> {
    const appPort = await freePort();
    const created = await run(
      process.execPath,
      [
        CLI,
        'apps',
        'create',
        '--name',
        `Doc app ${b.line}`,
        '--app-url',
        `http://localhost:${appPort}/`,
        '--redirect-uri',
        `http://localhost:${appPort}/auth/callback`,
        '--scopes',
        'read_products write_products',
        '--database',
        server.database,
        '--json',
      ],
      {},
    );
    expect(created.code, created.err).toBe(0);
    const creds = JSON.parse(created.out) as { client_id: string; client_secret: string };
    const ext = b.lang.startsWith('j') ? 'mjs' : 'ts';
    const file = join(workDir, `${b.file.replace(/\W+/g, '-')}-${b.line}.${ext}`);
    writeFileSync(file, withPort(b.code).replace(/\b3000\b/g, String(appPort)));
    let out = '';
    const child = spawn(process.execPath, ['--conditions=@storegate/source', '--import', 'tsx', file], {
      cwd: rootDir,
      env: { ...process.env, ...env, STOREGATE_CLIENT_ID: creds.client_id, STOREGATE_CLIENT_SECRET: creds.client_secret },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    const until = async (what: string, ok: () => boolean | Promise<boolean>) => {
      for (let i = 0; i < 300; i++) {
        if (await ok()) return;
        if (child.exitCode !== null) throw new Error(`${where(b)} exited while waiting for ${what}:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`${where(b)}: no ${what} after 30 s:\n${out}`);
    };
    const appHost = `localhost:${appPort}`;
    await until('listening port', async () => {
      try {
        await request(appPort, appHost, 'GET', '/favicon.ico');
        return true;
      } catch {
        return false;
      }
    });
    // The store admin's Install: the App URL with ?shop= (the adapter accepts it unsigned to begin).
    const jar = new CookieJar();
    const begin = await request(appPort, appHost, 'GET', '/?shop=demo.localhost');
    expect(begin.status, `${where(b)} App URL: ${begin.body}\n${out}`).toBe(302);
    jar.take(begin.headers['set-cookie']);
    const callback = await consentAsMerchant(server.port, begin.headers.location ?? '', {
      email: 'merchant@demo.test',
      password: 'demo-password',
    });
    const done = await request(appPort, appHost, 'GET', `${callback.pathname}${callback.search}`, undefined, { cookie: jar.header() });
    expect(done.status, `${where(b)} callback: ${done.body}\n${out}`).toBe(302);
    const landing = await request(appPort, appHost, 'GET', done.headers.location ?? '/');
    expect(landing.status, `${where(b)} landing: ${landing.body}\n${out}`).toBe(200);
    // The app subscribed in afterAuth: a product created through the API reaches it as a webhook.
    const title = `Doc hat ${b.line}`;
    const made = await request(
      server.port,
      `demo.localhost:${server.port}`,
      'POST',
      '/openapi/2026-01/products',
      JSON.stringify({ title }),
      {
        'access-token': env.TOKEN ?? '',
        'content-type': 'application/json',
      },
    );
    expect(made.status, made.body).toBe(201);
    await until('products/create webhook', () => out.includes('products/create') && out.includes(title));
    await terminate(child);
  }

  function checkForm(b: DocBlock): void {
    const scripts = (dir: string) =>
      (JSON.parse(readFileSync(join(rootDir, dir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
    let dir = '.';
    for (const raw of b.code.split('\n')) {
      const line = raw.replace(/\s+#.*$/, '').trim();
      if (!line) continue;
      const cd = /^cd\s+(\S+)/.exec(line);
      if (cd) {
        dir = join(dir, cd[1] ?? '.');
        expect(existsSync(join(rootDir, dir)), `${where(b)}: cd ${cd[1]}`).toBe(true);
      }
      for (const m of line.matchAll(/npm (?:run (\S+)|(start|test)\b)/g)) {
        const name = m[1] ?? m[2] ?? '';
        expect(scripts(dir)[name], `${where(b)}: npm script "${name}" in ${dir}/package.json`).toBeDefined();
      }
      for (const m of line.matchAll(/(?:^|\s)((?:\.\/)?(?:src|packages|examples|e2e|scripts)\/[\w./-]+\.\w+)/g)) {
        expect(existsSync(join(rootDir, dir, m[1] ?? '')), `${where(b)}: ${m[1]} in ${dir}`).toBe(true);
      }
    }
  }

  /** Each `storegate …` line names a command of the CLI (its commander tree, in this process) and only flags it has. */
  function checkSynopsis(b: DocBlock): void {
    const lines = b.code
      .split('\n')
      .map((l) => l.replace(/^npx /, ''))
      .filter((l) => l.startsWith('storegate '));
    expect(lines.length, where(b)).toBeGreaterThan(0);
    const program = buildProgram({ out: () => {}, err: () => {} });
    for (const raw of lines) {
      const line = raw.replace(/#.*$/, '');
      let command: Command = program;
      const path: string[] = [];
      for (const word of line.split(/\s+/).slice(1)) {
        if (!/^[a-z][a-z-]*$/.test(word)) break;
        const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
        expect(sub, `${where(b)}: storegate ${[...path, word].join(' ')} is not a command`).toBeDefined();
        command = sub as Command;
        path.push(word);
      }
      expect(path.length, `${where(b)}: ${raw}`).toBeGreaterThan(0);
      const flags = new Set<string>();
      for (let c: Command | null = command; c; c = c.parent) for (const o of c.options) flags.add(o.long ?? '');
      for (const flag of line.match(/--[a-z][a-z0-9-]*/g) ?? []) {
        const known = flags.has(flag) || flags.has(flag.replace(/^--no-/, '--'));
        expect(known, `${where(b)}: storegate ${path.join(' ')} has no ${flag}`).toBe(true);
      }
    }
  }

  it('the TypeScript blocks that run also typecheck (strict, as the repository)', async () => {
    const dir = join(workDir, 'typecheck');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: '../../tsconfig.base.json',
        compilerOptions: { noEmit: true, types: ['node'], customConditions: ['@storegate/source'] },
        include: ['*.ts'],
      }),
    );
    const names = new Map<string, DocBlock>();
    for (const b of blocks) {
      if (!['ts', 'typescript'].includes(b.lang) || ['skip', 'form'].includes(kind(b))) continue;
      const name = `${b.file.replace(/\W+/g, '-')}-${b.line}.ts`;
      names.set(name, b);
      writeFileSync(join(dir, name), b.code);
    }
    expect(names.size).toBeGreaterThan(3);
    const tsc = await run(
      process.execPath,
      [join(rootDir, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')],
      {},
      120_000,
    );
    // Name the doc lines, not the temp files.
    const report = tsc.out.replace(/^(\S+\.ts)\((\d+),\d+\)/gm, (_m, f: string, l: string) => {
      const b = names.get(f.split('/').pop() ?? '');
      return b ? `${b.file}:${b.line + Number(l)}` : f;
    });
    expect(report).toBe('');
    expect(tsc.code).toBe(0);
  }, 120_000);

  it('finds the blocks, and every block says how it runs', () => {
    expect(blocks.length).toBeGreaterThan(20);
    const known = new Set(['', 'platform', 'run', 'server', 'quickstart', 'form', 'output', 'synopsis', 'layout', 'app-config', 'skip']);
    for (const b of blocks) {
      expect(known.has(kind(b)), `${where(b)}: unknown doctest directive "${kind(b)}"`).toBe(true);
      if (kind(b) === 'skip' || kind(b) === 'form')
        expect(b.reason.length, `${where(b)}: a ${kind(b)} needs its reason`).toBeGreaterThan(15);
      const runnable = SCRIPT_LANGS.has(b.lang) || SHELL_LANGS.has(b.lang) || b.lang === 'json';
      if (!runnable)
        expect(
          ['form', 'output', 'synopsis', 'layout', 'app-config', 'skip'],
          `${where(b)}: a block without a runnable language needs a doctest directive`,
        ).toContain(kind(b));
    }
  });

  for (const b of blocks) {
    const label = `${where(b)} ${b.lang || 'text'}${b.directive.length ? ` (${b.directive.join(' ')})` : ''}: ${b.code.split('\n')[0]?.slice(0, 60)}`;
    it(label, async () => {
      switch (kind(b)) {
        case 'skip':
          skipped.push(`${where(b)}: ${b.reason}`);
          return;
        case 'form':
          checkForm(b);
          return;
        case 'layout': {
          // Top-level paths from the repository root; indented ones (`src/…`) under the last of them.
          let parent = '';
          for (const line of b.code.split('\n')) {
            const top = /^(\S+)/.exec(line)?.[1];
            const nested = /^\s+(\S+\/\S*)\s/.exec(line)?.[1];
            const path = top ?? (nested ? join(parent, nested) : undefined);
            if (top) parent = top;
            if (path) expect(existsSync(join(rootDir, path)), `${where(b)}: ${path}`).toBe(true);
          }
          return;
        }
        case 'output':
          for (const line of b.code.split('\n')) {
            const label = /^\s*([a-z][a-z _]+?):?\s{2,}/.exec(line)?.[1];
            if (label) expect(server.output(), `${where(b)}: "${label}" in the output of storegate serve --seed-demo`).toContain(label);
          }
          return;
        case 'synopsis':
          checkSynopsis(b);
          return;
        case 'app-config': {
          // What `storegate apps deploy` reads: the block must pass its validation as written.
          const file = join(workDir, `${b.file.replace(/\W+/g, '-')}-${b.line}.toml`);
          writeFileSync(file, b.code);
          expect(() => readAppConfig(file), where(b)).not.toThrow();
          return;
        }
        case 'server':
          await runServer(b);
          return;
      }
      if (b.lang === 'json') {
        expect(() => JSON.parse(b.code), where(b)).not.toThrow();
        return;
      }
      const result = SCRIPT_LANGS.has(b.lang) ? await runScript(b, withPort(b.code)) : await runShell(b);
      expect(result.code, `${where(b)} failed (exit ${result.code}):\n${result.out}\n${result.err}`).toBe(0);
    }, 90_000);
  }
});
