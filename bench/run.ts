// `npm run bench -- <name…> [--database sqlite|postgres://…|both]` runs bench/<name>.bench.ts.
// Each benchmark prints its own figures and the ratio against a baseline it measures in the same
// run. --database picks the database the platform runs on (default sqlite; a postgres:// URL
// names a server on which each run creates and drops its own database); `both` runs each
// benchmark once per database, one after the other, and ends with their headline rows side by side.
// How to run each benchmark, what it compares with, and the last figures: bench/README.md.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_POSTGRES_URL } from './database.ts';
import { formatValue, type ReportRow } from './report.ts';

const names = readdirSync(new URL('.', import.meta.url))
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.slice(0, -'.bench.ts'.length))
  .sort();
const usage = `usage: npm run bench -- <${names.join('|')}>… [--database sqlite|postgres://…|both]`;

const args = process.argv.slice(2);
const wanted: string[] = [];
let database = process.env.BENCH_DATABASE ?? 'sqlite';
for (let i = 0; i < args.length; i++) {
  const a = args[i]!;
  if (a === '-h' || a === '--help') {
    console.log(`${usage}\nEach benchmark, its knobs and its last figures: bench/README.md`);
    process.exit(0);
  } else if (a === '--database' || a.startsWith('--database=')) {
    const v = a === '--database' ? args[++i] : a.slice('--database='.length);
    if (!v || v.startsWith('-')) fail('--database needs a value: sqlite, a postgres:// URL or both');
    database = v;
  } else if (a.startsWith('-')) fail(`unknown option "${a}"\n${usage}`);
  else if (!wanted.includes(a)) wanted.push(a);
}
if (wanted.length === 0) fail(usage);
for (const name of wanted) if (!names.includes(name)) fail(`unknown benchmark "${name}"; available: ${names.join(', ')}`);
checkDatabase(database);
if (database === 'both' && process.env.BENCH_PG_URL) checkDatabase(process.env.BENCH_PG_URL, 'BENCH_PG_URL');

if (database === 'both') {
  const pgServer = process.env.BENCH_PG_URL ?? DEFAULT_POSTGRES_URL;
  const dir = mkdtempSync(join(tmpdir(), 'storegate-bench-report-'));
  let failed = false;
  try {
    for (const name of wanted) {
      const rows: (ReportRow & { database: string })[] = [];
      const failures: string[] = [];
      for (const db of ['sqlite', pgServer]) {
        const label = db === 'sqlite' ? 'SQLite' : 'PostgreSQL';
        const file = join(dir, `${name}-${db === 'sqlite' ? 'sqlite' : 'postgres'}.jsonl`);
        const run = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), name, '--database', db], {
          stdio: 'inherit',
          env: { ...process.env, BENCH_REPORT_FILE: file },
        });
        if (run.status !== 0) {
          failed = true;
          failures.push(`${label}: ${run.signal ? `killed by ${run.signal}` : run.error ? run.error.message : `exit code ${run.status}`}`);
        }
        // A benchmark that failed before its summary reported nothing; the table shows a gap.
        let text = '';
        try {
          text = readFileSync(file, 'utf8');
        } catch {}
        for (const line of text.split('\n')) if (line.trim() !== '') rows.push(JSON.parse(line));
      }
      printSideBySide(name, rows);
      for (const f of failures) console.log(`${name} FAILED on ${f} (its rows above are missing or partial)`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}

process.env.BENCH_DATABASE = database;
// What a figure needs beside it to be read later: the machine and how busy it was.
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');
const cpu = cpus();
console.log(`node ${process.version}, ${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}`);
for (const name of wanted) {
  console.log(`\n=== bench: ${name} (${database === 'sqlite' ? 'SQLite' : 'PostgreSQL'}), load average ${load()} ===`);
  await import(`./${name}.bench.ts`);
  console.log(`(${name}: load average at the end ${load()})`);
}
// Every benchmark has finished and reported; a handle it left open (a keep-alive socket, a pool)
// must not keep the run, or the `both` run waiting on it, from ending.
process.exit(process.exitCode ?? 0);

function printSideBySide(name: string, rows: (ReportRow & { database: string })[]): void {
  const order: string[] = [];
  for (const r of rows) if (!order.includes(r.name)) order.push(r.name);
  const find = (db: string, n: string) => rows.find((x) => x.database === db && x.name === n);
  const cell = (db: string, n: string) => {
    const r = find(db, n);
    if (!r) return '—';
    return `${formatValue(r)}${r.pass === undefined ? '' : r.pass ? ' PASS' : ' FAIL'}`;
  };
  console.log(`\n=== ${name}: SQLite and PostgreSQL ===`);
  console.log(`${'measure'.padEnd(50)} ${'SQLite'.padStart(32)} ${'PostgreSQL'.padStart(32)}  PG/SQLite  target`);
  for (const n of order) {
    // A row may have a target on one database only, or a different one on each (token: a ratio
    // to the reference on SQLite, a ratio to SQLite on PostgreSQL).
    const [tl, tp] = [find('sqlite', n)?.target, find('postgres', n)?.target];
    const target = tl && tp && tl !== tp ? `SQLite ${tl}; PG ${tp}` : (tl ?? tp ?? '');
    const lite = find('sqlite', n)?.value;
    const pgv = find('postgres', n)?.value;
    const across =
      typeof lite === 'number' && typeof pgv === 'number' && lite !== 0 && Number.isFinite(pgv / lite)
        ? `${(pgv / lite).toFixed(2)}x`
        : '—';
    console.log(`${n.padEnd(50)} ${cell('sqlite', n).padStart(32)} ${cell('postgres', n).padStart(32)}  ${across.padStart(9)}  ${target}`);
  }
}

function checkDatabase(value: string, what = '--database'): void {
  if (value === 'sqlite' || (value === 'both' && what === '--database')) return;
  let ok = /^postgres(ql)?:\/\/./.test(value);
  if (ok) {
    try {
      ok = new URL(value).hostname !== '';
    } catch {
      ok = false;
    }
  }
  if (!ok) fail(`${what}: expected ${what === '--database' ? 'sqlite, a postgres:// URL or both' : 'a postgres:// URL'}, got "${value}"`);
}

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}
