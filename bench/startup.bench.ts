// npm run bench -- startup [--database sqlite|postgres://…|both]
// `storegate serve` start-up time (process start until it listens: the banner on stderr) and
// resident memory once idle, run from the TypeScript sources through tsx (STOREGATE_SOURCE=1) and
// from the compiled build (`npm run build`, made first if this checkout has none). Each mode starts
// RUNS times, alternating so both see the same machine load, each start against a fresh database
// of its own (a new SQLite file, or a new PostgreSQL database created before the process starts and
// dropped after it stops), so every start migrates an empty database. Baseline in the same run:
// the sources; target: the compiled build below 1.0x of them in start-up time and idle RSS.
// Knobs: BENCH_RUNS (10 starts per mode), BENCH_IDLE_MS (2,000 ms idle before RSS is read).
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { compiledEntry } from '../packages/cli/bin/entry.js';
import { benchDatabaseName, createBenchDatabase } from './database.ts';
import { report } from './report.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? '10');
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? '2000');
const START_TIMEOUT_MS = 60_000;
const root = new URL('../', import.meta.url);
const cli = new URL('packages/cli/bin/storegate.js', root).pathname;
// Given, so that no start writes a development key file (on PostgreSQL it would land in ./data).
const MASTER_KEY = randomBytes(32).toString('hex');

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1]) / 1024;
}

async function once(mode: 'source' | 'compiled'): Promise<{ ms: number; rss: number }> {
  const database = await createBenchDatabase(`startup_${mode}`);
  try {
    // The bin itself, as an operator runs it (its first line gives the node its settings), without
    // the benchmark's own NODE_OPTIONS.
    const { NODE_OPTIONS: _inherited, ...parentEnv } = process.env;
    const env = { ...parentEnv, STOREGATE_SOURCE: mode === 'source' ? '1' : '0', MASTER_KEY };
    const started = performance.now();
    const child = spawn(cli, ['serve', '--database', database.url, '--port', '0', '--log-level', 'warn'], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise((r) => child.once('exit', r));
    try {
      let err = '';
      const ms = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`serve did not start within ${START_TIMEOUT_MS} ms: ${err}`)), START_TIMEOUT_MS);
        child.stderr.setEncoding('utf8').on('data', (c: string) => {
          err += c;
          if (err.includes('storegate is running')) {
            clearTimeout(timer);
            resolve(performance.now() - started);
          }
        });
        child.once('exit', () => {
          clearTimeout(timer);
          reject(new Error(`serve exited: ${err}`));
        });
      });
      await new Promise((r) => setTimeout(r, IDLE_MS));
      return { ms, rss: rssMiB(child.pid!) };
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    }
  } finally {
    await database.drop();
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

if (compiledEntry(new URL('packages/cli/', root), {}) === null) {
  console.log('no current build: running npm run build first');
  const code = await new Promise((r) =>
    spawn(process.execPath, ['scripts/build.mjs'], { cwd: root.pathname, stdio: 'inherit' }).once('exit', r),
  );
  if (code !== 0) throw new Error('npm run build failed');
}
const results = { source: [] as { ms: number; rss: number }[], compiled: [] as { ms: number; rss: number }[] };
for (let i = 0; i < RUNS; i++) {
  results.source.push(await once('source'));
  results.compiled.push(await once('compiled'));
}
const line = (mode: 'source' | 'compiled', label: string) => {
  const ms = results[mode].map((r) => r.ms);
  const rss = results[mode].map((r) => r.rss);
  console.log(
    `${label}: start-up median ${median(ms).toFixed(0)} ms (min ${Math.min(...ms).toFixed(0)}, max ${Math.max(...ms).toFixed(0)}), idle RSS median ${median(rss).toFixed(1)} MiB`,
  );
};
console.log(`storegate serve, ${benchDatabaseName()}, ${RUNS} starts each on a fresh database, RSS after ${IDLE_MS} ms idle:`);
line('source', 'sources through tsx (STOREGATE_SOURCE=1)');
line('compiled', 'compiled build (npm run build)       ');
const med = (mode: 'source' | 'compiled', f: (r: { ms: number; rss: number }) => number) => median(results[mode].map(f));
const startRatio = med('compiled', (r) => r.ms) / med('source', (r) => r.ms);
const rssRatio = med('compiled', (r) => r.rss) / med('source', (r) => r.rss);
console.log(`compiled / sources: start-up ${startRatio.toFixed(2)}x, idle RSS ${rssRatio.toFixed(2)}x`);
report([
  { name: 'start-up, sources through tsx (median)', value: med('source', (r) => r.ms), unit: 'ms' },
  {
    name: 'start-up, compiled (median)',
    value: med('compiled', (r) => r.ms),
    unit: 'ms',
    ratio: startRatio,
    target: '< 1.0x',
    pass: startRatio < 1,
  },
  { name: 'idle RSS, sources through tsx (median)', value: med('source', (r) => r.rss), unit: 'MiB' },
  {
    name: 'idle RSS, compiled (median)',
    value: med('compiled', (r) => r.rss),
    unit: 'MiB',
    ratio: rssRatio,
    target: '< 1.0x',
    pass: rssRatio < 1,
  },
]);
