// Bulk inserts of new store records. SQLite: one prepared single-row insert run for every row inside
// one transaction (its statements run in-process, so a row costs a bind and a step, no parsing).
// PostgreSQL: COPY … FROM STDIN, which streams the rows as tab-separated text the server parses
// without planning a statement per row or per batch.
import type { Durability } from '../durability.ts';
import type { Db } from '../database.ts';
import type { BulkRows, BulkTable, NewRecord } from '../ports/bulk-rows.ts';

/** Every column a bulk insert writes, in order; the database fills the others (id, version). */
const COLUMNS: { readonly [T in BulkTable]: readonly (keyof NewRecord<T>)[] } = {
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

function values<T extends BulkTable>(table: T, row: NewRecord<T>): unknown[] {
  return COLUMNS[table].map((c) => row[c]);
}

export class SqliteBulkRows implements BulkRows {
  constructor(
    private readonly db: Db,
    private readonly durability: Durability,
  ) {}

  insert<T extends BulkTable>(table: T, rows: Iterable<NewRecord<T>>): Promise<number> {
    const sqlite = this.db.sqlite!;
    const columns = COLUMNS[table];
    const stmt = sqlite.prepare(`insert into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`);
    // Synchronous from the first row to the last: nothing else runs on the connection in between.
    return this.durability.transaction(async () => {
      let n = 0;
      for (const row of rows) {
        stmt.run(values(table, row));
        n++;
      }
      return n;
    });
  }
}

/** Text-format COPY escaping: backslash, tab, newline and carriage return are escaped; null is \N. */
function copyField(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  const text = String(value);
  return /[\\\t\n\r]/.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]!) : text;
}

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** Lines are sent in pieces of about this many characters. */
const CHUNK = 64 * 1024;

function* copyText<T extends BulkTable>(table: T, rows: Iterable<NewRecord<T>>, counted: { n: number }): Generator<string> {
  let chunk = '';
  for (const row of rows) {
    chunk += `${values(table, row).map(copyField).join('\t')}\n`;
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
    await this.db.copyFrom!(`copy ${table} (${COLUMNS[table].join(', ')}) from stdin`, copyText(table, rows, counted));
    return counted.n;
  }
}
