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
  if (file) for (const row of rows) appendFileSync(file, `${JSON.stringify({ database: kind, ...row })}\n`);
  console.log(`\nsummary (${kind}):`);
  for (const row of rows) console.log(formatRow(row));
}

export function formatValue(row: Pick<ReportRow, 'value' | 'unit' | 'ratio'>): string {
  const digits = Math.abs(row.value) >= 100 ? 0 : Math.abs(row.value) >= 10 ? 1 : 2;
  const value = `${row.value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })} ${row.unit}`;
  return row.ratio === undefined ? value : `${value} (${row.ratio.toFixed(2)}x)`;
}

function formatRow(row: ReportRow): string {
  const verdict = row.pass === undefined ? '' : row.pass ? 'PASS' : 'FAIL';
  return `  ${row.name.padEnd(44)} ${formatValue(row).padStart(26)}  ${(row.target ?? '').padEnd(12)} ${verdict}`;
}
