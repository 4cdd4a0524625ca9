// npm run bench -- startup
// `storegate serve` start-up time (process start until it listens: the banner on stderr) and
// resident memory once idle, run from the TypeScript sources through tsx (STOREGATE_SOURCE=1) and
// from the compiled build (`npm run build`, made first if this checkout has none). Each mode starts
// RUNS times on a fresh SQLite database, alternating, so both see the same machine load.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compiledEntry } from '../packages/cli/bin/entry.js';

const RUNS = Number(process.env.BENCH_RUNS ?? '10');
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? '2000');
const root = new URL('../', import.meta.url);
const cli = new URL('packages/cli/bin/storegate.js', root).pathname;
const dir = mkdtempSync(join(tmpdir(), 'storegate-startup-bench-'));

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1]) / 1024;
}

async function once(mode: 'source' | 'compiled', n: number): Promise<{ ms: number; rss: number }> {
  const env = { ...process.env, STOREGATE_SOURCE: mode === 'source' ? '1' : '0' };
  const started = performance.now();
  const child = spawn(process.execPath, [cli, 'serve', '--database', join(dir, `${mode}-${n}.db`), '--port', '0', '--log-level', 'warn'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  const ms = await new Promise<number>((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      err += c;
      if (err.includes('storegate is running')) resolve(performance.now() - started);
    });
    child.once('exit', () => reject(new Error(`serve exited: ${err}`)));
  });
  await new Promise((r) => setTimeout(r, IDLE_MS));
  const rss = rssMiB(child.pid!);
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
  return { ms, rss };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

try {
  if (compiledEntry(new URL('packages/cli/', root), {}) === null) {
    console.log('no current build: running npm run build first');
    const code = await new Promise((r) =>
      spawn(process.execPath, ['scripts/build.mjs'], { cwd: root.pathname, stdio: 'inherit' }).once('exit', r),
    );
    if (code !== 0) throw new Error('npm run build failed');
  }
  const results = { source: [] as { ms: number; rss: number }[], compiled: [] as { ms: number; rss: number }[] };
  for (let i = 0; i < RUNS; i++) {
    results.source.push(await once('source', i));
    results.compiled.push(await once('compiled', i));
  }
  const line = (mode: 'source' | 'compiled', label: string) => {
    const ms = results[mode].map((r) => r.ms);
    const rss = results[mode].map((r) => r.rss);
    console.log(
      `${label}: start-up median ${median(ms).toFixed(0)} ms (min ${Math.min(...ms).toFixed(0)}, max ${Math.max(...ms).toFixed(0)}), idle RSS median ${median(rss).toFixed(1)} MiB`,
    );
  };
  console.log(`storegate serve, SQLite, ${RUNS} starts each, RSS after ${IDLE_MS} ms idle:`);
  line('source', 'sources through tsx (STOREGATE_SOURCE=1)');
  line('compiled', 'compiled build (npm run build)       ');
  const ratio = (f: (r: { ms: number; rss: number }) => number) =>
    (median(results.compiled.map(f)) / median(results.source.map(f))).toFixed(2);
  console.log(`compiled / sources: start-up ${ratio((r) => r.ms)}x, idle RSS ${ratio((r) => r.rss)}x`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
