// Bulk inserts of new store records. SQLite: a prepared insert of 100 rows run again and again inside
// one transaction (its statements run in-process, so rows cost binds and steps, no parsing).
// PostgreSQL: COPY … FROM STDIN, which streams the rows as tab-separated text the server parses
// without planning a statement per row or per batch.
import type { Durability } from '../durability.ts';
import type { Db } from '../database.ts';
import type { BulkRows, BulkTable, NewRecord } from '../ports/bulk-rows.ts';

/**
 * Every column of a store record but those the database fills (id, version), in order: what a bulk
 * insert writes, and with the id what a bulk export's snapshot copies.
 */
export const RECORD_COLUMNS: { readonly [T in BulkTable]: readonly (keyof NewRecord<T>)[] } = {
  products: [
    'store_id',
    'title',
    'body_html',
    'vendor',
    'product_type',
    'status',
    'price',
    'sku',
    'inventory_quantity',
    'tags',
    'created_at',
    'updated_at',
  ],
  customers: ['store_id', 'email', 'first_name', 'last_name', 'phone', 'created_at', 'updated_at'],
  orders: [
    'store_id',
    'customer_id',
    'email',
    'currency',
    'financial_status',
    'fulfillment_status',
    'total_price',
    'line_items',
    'created_at',
    'updated_at',
  ],
};

/** Rows per SQLite statement: one step inserts them all, the per-statement cost spread over 100 rows. */
const SQLITE_ROWS = 100;

function insertText(table: BulkTable, rows: number): string {
  const columns = RECORD_COLUMNS[table];
  const one = `(${columns.map(() => '?').join(', ')})`;
  return `insert into ${table} (${columns.join(', ')}) values ${Array.from({ length: rows }, () => one).join(', ')}`;
}

export class SqliteBulkRows implements BulkRows {
  constructor(
    private readonly db: Db,
    private readonly durability: Durability,
  ) {}

  insert<T extends BulkTable>(table: T, rows: Iterable<NewRecord<T>>): Promise<number> {
    const sqlite = this.db.sqlite!;
    const columns = RECORD_COLUMNS[table];
    const many = sqlite.prepare(insertText(table, SQLITE_ROWS));
    const one = sqlite.prepare(insertText(table, 1));
    // Synchronous from the first row to the last: nothing else runs on the connection in between.
    return this.durability.transaction(async () => {
      let n = 0;
      const values: unknown[] = [];
      for (const row of rows) {
        for (const c of columns) values.push(row[c]);
        if (++n % SQLITE_ROWS === 0) {
          many.run(values);
          values.length = 0;
        }
      }
      for (let i = 0; i < values.length; i += columns.length) one.run(values.slice(i, i + columns.length));
      return n;
    });
  }
}

const ESCAPED = /[\\\t\n\r]/;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A row as a line of COPY's text format: tab-separated, backslash escapes, null as \N. */
function copyLine<T extends BulkTable>(columns: readonly (keyof NewRecord<T>)[], row: NewRecord<T>): string {
  let line = '';
  for (let i = 0; i < columns.length; i++) {
    const value: unknown = row[columns[i]!];
    const text =
      value === null || value === undefined
        ? '\\N'
        : typeof value === 'string'
          ? ESCAPED.test(value)
            ? value.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]!)
            : value
          : String(value);
    line += i === 0 ? text : `\t${text}`;
  }
  return `${line}\n`;
}

/** Lines are sent in pieces of about this many characters. */
const CHUNK = 64 * 1024;

function* copyText<T extends BulkTable>(table: T, rows: Iterable<NewRecord<T>>, counted: { n: number }): Generator<string> {
  const columns = RECORD_COLUMNS[table];
  let chunk = '';
  for (const row of rows) {
    chunk += copyLine(columns, row);
    counted.n++;
    if (chunk.length >= CHUNK) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk.length > 0) yield chunk;
}

export class PgBulkRows implements BulkRows {
  constructor(private readonly db: Db) {}

  async insert<T extends BulkTable>(table: T, rows: Iterable<NewRecord<T>>): Promise<number> {
    const counted = { n: 0 };
    // One statement: the COPY commits or fails as a whole.
    await this.db.copyFrom!(`copy ${table} (${RECORD_COLUMNS[table].join(', ')}) from stdin`, copyText(table, rows, counted));
    return counted.n;
  }
}
