// The figures a benchmark wants compared across databases. Each benchmark prints its own lines
// as it goes; it also calls report() with its headline rows, which bench/run.ts collects when a
// run covers both databases (`--database both`) and prints side by side.
import { appendFileSync } from 'node:fs';
import { benchDatabaseKind } from './database.ts';

export interface ReportRow {
  /** What was measured, e.g. "refresh grants/s". Rows with the same name line up across databases. */
  name: string;
  value: number;
  unit: string;
  /** value / baseline measured in the same run, when the row has one. */
  ratio?: number;
  /** The goal, in words ("≥ 1.5x", "< 25 ms"). */
  target?: string;
  pass?: boolean;
}

export function report(rows: ReportRow[]): void {
  const file = process.env.BENCH_REPORT_FILE;
  const kind = benchDatabaseKind();
  // JSON has no NaN or Infinity: a figure that could not be measured arrives as null, and
  // formatValue prints it as "n/a" on both sides rather than failing the whole table.
  if (file) for (const row of rows) appendFileSync(file, `${JSON.stringify({ database: kind, ...row })}\n`);
  console.log(`\nsummary (${kind}):`);
  for (const row of rows) console.log(formatRow(row));
}

export function formatValue(row: Pick<ReportRow, 'value' | 'unit' | 'ratio'>): string {
  if (typeof row.value !== 'number' || !Number.isFinite(row.value)) return `n/a ${row.unit}`;
  const digits = Math.abs(row.value) >= 100 ? 0 : Math.abs(row.value) >= 10 ? 1 : 2;
  const value = `${row.value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })} ${row.unit}`;
  if (row.ratio === undefined) return value;
  return typeof row.ratio === 'number' && Number.isFinite(row.ratio) ? `${value} (${row.ratio.toFixed(2)}x)` : `${value} (n/a)`;
}

function formatRow(row: ReportRow): string {
  const verdict = row.pass === undefined ? '' : row.pass ? 'PASS' : 'FAIL';
  return `  ${row.name.padEnd(50)} ${formatValue(row).padStart(26)}  ${(row.target ?? '').padEnd(12)} ${verdict}`;
}
