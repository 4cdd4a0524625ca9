// `npm run bench -- <name…> [--database sqlite|postgres://…|both]` runs bench/<name>.bench.ts.
// Each benchmark prints its own figures and the ratio against a baseline it measures in the same
// run. --database picks the database the platform runs on (default sqlite; a postgres:// URL
// names a server on which each run creates and drops its own database); `both` runs each
// benchmark once per database, one after the other, and ends with their headline rows side by side.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
  if (a === '--database' || a.startsWith('--database=')) {
    const v = a === '--database' ? args[++i] : a.slice('--database='.length);
    if (!v) fail('--database needs a value: sqlite, a postgres:// URL or both');
    database = v;
  } else if (a.startsWith('-')) fail(`unknown option "${a}"\n${usage}`);
  else wanted.push(a);
}
if (wanted.length === 0) fail(usage);
for (const name of wanted) if (!names.includes(name)) fail(`unknown benchmark "${name}"; available: ${names.join(', ')}`);
if (database !== 'sqlite' && database !== 'both' && !/^postgres(ql)?:\/\/./.test(database))
  fail(`--database: expected sqlite, a postgres:// URL or both, got "${database}"`);

if (database === 'both') {
  const pgServer = process.env.BENCH_PG_URL ?? DEFAULT_POSTGRES_URL;
  const dir = mkdtempSync(join(tmpdir(), 'storegate-bench-report-'));
  let failed = false;
  for (const name of wanted) {
    const rows: (ReportRow & { database: string })[] = [];
    for (const db of ['sqlite', pgServer]) {
      const file = join(dir, `${name}-${db === 'sqlite' ? 'sqlite' : 'postgres'}.jsonl`);
      const run = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), name, '--database', db], {
        stdio: 'inherit',
        env: { ...process.env, BENCH_REPORT_FILE: file },
      });
      if (run.status !== 0) failed = true;
      try {
        for (const line of readFileSync(file, 'utf8').split('\n')) if (line.trim() !== '') rows.push(JSON.parse(line));
      } catch {
        // the benchmark reported nothing (it failed before its summary); the table shows a gap
      }
    }
    printSideBySide(name, rows);
  }
  rmSync(dir, { recursive: true, force: true });
  process.exit(failed ? 1 : 0);
}

process.env.BENCH_DATABASE = database;
for (const name of wanted) {
  console.log(`\n=== bench: ${name} (${database === 'sqlite' ? 'SQLite' : 'PostgreSQL'}) ===`);
  await import(`./${name}.bench.ts`);
}

function printSideBySide(name: string, rows: (ReportRow & { database: string })[]): void {
  const order: string[] = [];
  for (const r of rows) if (!order.includes(r.name)) order.push(r.name);
  const cell = (db: string, n: string) => {
    const r = rows.find((x) => x.database === db && x.name === n);
    if (!r) return '—';
    return `${formatValue(r)}${r.pass === undefined ? '' : r.pass ? ' PASS' : ' FAIL'}`;
  };
  console.log(`\n=== ${name}: SQLite and PostgreSQL ===`);
  console.log(`${'measure'.padEnd(44)} ${'SQLite'.padStart(32)} ${'PostgreSQL'.padStart(32)}  PG/SQLite  target`);
  for (const n of order) {
    const target = rows.find((x) => x.name === n)?.target ?? '';
    const lite = rows.find((x) => x.database === 'sqlite' && x.name === n)?.value;
    const pgv = rows.find((x) => x.database === 'postgres' && x.name === n)?.value;
    const across = lite && pgv !== undefined ? `${(pgv / lite).toFixed(2)}x` : '—';
    console.log(`${n.padEnd(44)} ${cell('sqlite', n).padStart(32)} ${cell('postgres', n).padStart(32)}  ${across.padStart(9)}  ${target}`);
  }
}

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}
