/** Rows as aligned text columns under a header, for the text output of `list` commands. */
export function table<T>(rows: readonly T[], columns: [header: string, cell: (row: T) => string | number | null][], empty: string): string {
  if (rows.length === 0) return empty;
  const cells = [columns.map(([header]) => header), ...rows.map((row) => columns.map(([, cell]) => String(cell(row) ?? '-')))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)));
  return cells.map((line) => line.map((cell, i) => (i === line.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}

/** One record as "key  value" lines, for the text output of `show` commands. */
export function details(record: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(record).map((k) => k.length));
  return Object.entries(record)
    .map(([key, value]) => `${key.padEnd(width)}  ${value === null || value === undefined || value === '' ? '-' : String(value)}`)
    .join('\n');
}
