// A list page without filters, written as JSON by the database: one statement answers the page's
// objects as one text value (each row's object, comma-joined, in id order), the first and last id,
// and whether rows lie on either side of it. Reading the same page as rows costs a JavaScript
// object per row and a string per column, then a serialisation of them all; here the database
// writes the bytes the API sends, in the shape ResourceDef.toJson gives (its `jsonFields`).
//
// The bytes match JSON.stringify's: SQLite's json_object and PostgreSQL's row_to_json escape
// strings as it does (`"`, `\`, \b \f \n \r \t, other control characters as \u00xx, nothing else),
// write integers and null alike, and add no blanks. Times are written as toISOString does for the
// years 0000 to 9999; a page with a time outside them is answered as rows (`undefined` here).
// Both are checked byte for byte against toJson in test/json-page.test.ts.
//
// The store condition and the order are the keyset reads' (keyset.ts explains both), so the plans
// are the same range scans; the probes either side are one index step each.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { type JsonField, RESOURCE_DEFS, type ResourceName } from '../../domain/resources.ts';
import { defineQuery, type ParamRef, type Params, type PreparedQuery } from '../prepared-query.ts';
import type { JsonPage, JsonPageQuery } from '../ports/json-page.ts';
import type { Executor } from './executor.ts';

/** The last millisecond toISOString writes with a four-digit year. */
const LAST_PLAIN_TIME = 253402300799999;

export interface PageRow {
  objects: string | null;
  n: number;
  lo: number | null;
  hi: number | null;
  ok: number | boolean | null;
  more: number | boolean;
  behind: number | boolean;
}

// Every statement, by dialect, table, side and whether the page starts at a cursor; built once
// from the resources' jsonFields (on PostgreSQL each becomes a named statement at its first run).
const statements = new Map<string, PreparedQuery<PageRow>>();
const keyOf = (dialect: string, table: string, side: string, from: boolean) => `${dialect}|${table}|${side}|${from}`;

/** Every page statement of `dialect`, built on first use. */
export function jsonPageStatements(k: Kysely<unknown>, dialect: 'sqlite' | 'postgres'): PreparedQuery<unknown>[] {
  const out: PreparedQuery<unknown>[] = [];
  for (const def of RESOURCE_DEFS) {
    if (!def.jsonFields) continue;
    for (const side of ['after', 'before'] as const) {
      for (const from of [false, true]) {
        const key = keyOf(dialect, def.table, side, from);
        let statement = statements.get(key);
        if (!statement) {
          statement = pageStatement(k, dialect, def.table, def.jsonFields, side, from);
          statements.set(key, statement);
        }
        out.push(statement);
      }
    }
  }
  return out;
}

/** The statement of one page shape (for tests that explain it). */
export function jsonPageStatement(
  k: Kysely<unknown>,
  dialect: 'sqlite' | 'postgres',
  table: string,
  side: 'after' | 'before',
  from: boolean,
): PreparedQuery<unknown> | undefined {
  jsonPageStatements(k, dialect);
  return statements.get(keyOf(dialect, table, side, from));
}

/** The page, or undefined when one of its rows has a time the database does not write as toISOString does. */
export async function jsonPage(
  x: Pick<Executor, 'k' | 'dialect' | 'runner'>,
  resource: ResourceName,
  q: JsonPageQuery,
): Promise<JsonPage | undefined> {
  const key = keyOf(x.dialect, resource, q.side, q.from !== undefined);
  if (!statements.has(key)) jsonPageStatements(x.k as unknown as Kysely<unknown>, x.dialect);
  const statement = statements.get(key);
  if (!statement) throw new Error(`${resource} has no page written by the database`);
  const store = x.dialect === 'postgres' ? [q.storeId] : q.storeId;
  const row = await x.runner.first(statement, { store, from: q.from, limit: q.limit });
  if (row === undefined) throw new Error('an aggregate answered no row');
  return pageOf(row);
}

/** The page an aggregate row describes, or undefined when the database could not write it as toJson would. */
export function pageOf(row: PageRow): JsonPage | undefined {
  if (row.ok === 0 || row.ok === false) return undefined;
  return {
    objects: row.objects ?? '',
    count: Number(row.n),
    first: row.lo === null ? null : Number(row.lo),
    last: row.hi === null ? null : Number(row.hi),
    more: Boolean(row.more),
    behind: Boolean(row.behind),
  };
}

function identifier(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain identifier: ${name}`);
  return name;
}

/** A field's value as the API writes it, from the page row `p`. */
function fieldSql(dialect: 'sqlite' | 'postgres', f: JsonField): string {
  const c = `p.${identifier(f.column)}`;
  if (f.as === 'id') return dialect === 'postgres' ? `${c}::text` : `cast(${c} as text)`;
  if (f.as === 'value') return c;
  return dialect === 'postgres'
    ? `to_char(timestamp 'epoch' + ${c} * interval '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
    : `strftime('%Y-%m-%dT%H:%M:%fZ', ${c} / 1000.0, 'unixepoch')`;
}

function pageStatement(
  k: Kysely<unknown>,
  dialect: 'sqlite' | 'postgres',
  table: string,
  fields: readonly JsonField[],
  side: 'after' | 'before',
  from: boolean,
): PreparedQuery<PageRow> {
  return defineQuery<PageRow>((p) => {
    const { page, aggregate } = pageParts(dialect, table, fields, side, from, p);
    const query = sql<PageRow>`with page as (${page}) ${aggregate}`;
    return { compile: () => query.compile(k) };
  });
}

/**
 * The two parts of a page statement: `page`, the rows of the page (to be named `page` in a WITH),
 * and `aggregate`, the one row written from them. `only` narrows the page further: a condition
 * the statement around it holds (PostgreSQL evaluates one without columns once, before the scan).
 */
export function pageParts(
  dialect: 'sqlite' | 'postgres',
  table: string,
  fields: readonly JsonField[],
  side: 'after' | 'before',
  from: boolean,
  p: ParamRef<Params>,
  only: RawBuilder<unknown> = sql``,
): { page: RawBuilder<unknown>; aggregate: RawBuilder<PageRow> } {
  const t = sql.raw(identifier(table));
  const pg = dialect === 'postgres';
  const forward = side === 'after';
  const dir = sql.raw(forward ? 'asc' : 'desc');
  const times = fields.filter((f) => f.as === 'time').map((f) => `p.${identifier(f.column)} between 0 and ${LAST_PLAIN_TIME}`);
  const plain = sql.raw(times.length === 0 ? 'true' : times.join(' and '));
  const inStore = pg ? sql`store_id = any(${p('store')}::bigint[])` : sql`likelihood(store_id = ${p('store')}, 0.000001)`;
  const bound = from ? sql`and id ${sql.raw(forward ? '>' : '<')} ${p('from')}` : sql``;
  // Rows past the page's far end exist exactly when one lies past its last row on its side.
  const edge = sql.raw(forward ? '(select max(id) from page)' : '(select min(id) from page)');
  // Each probe is the first id past a bound, ordered as a page is, so that it is the same
  // bounded range scan (keyset.ts); a scalar subquery, since PostgreSQL drops the order and the
  // limit of an EXISTS and may then read the table from its start.
  const probe = (op: string, bound: unknown, order: 'asc' | 'desc') =>
    sql`(select id from ${t} where ${inStore} and id ${sql.raw(op)} ${bound}
      order by store_id ${sql.raw(order)}, id ${sql.raw(order)} limit 1) is not null`;
  const more = probe(forward ? '>' : '<', edge, forward ? 'asc' : 'desc');
  // Rows behind the cursor: at or before it on the other side (none lies between it and the page).
  const behind = from ? probe(forward ? '<=' : '>=', p('from'), forward ? 'desc' : 'asc') : sql`${sql.lit(false)}`;
  const objects = pg
    ? sql.raw(`string_agg(row_to_json(r)::text, ',' order by p.id)`)
    : sql.raw(
        `group_concat(json_object(${fields.map((f) => `'${identifier(f.key)}', ${fieldSql(dialect, f)}`).join(', ')}), ',' ` +
          'order by p.id)',
      );
  const object = pg
    ? sql.raw(` cross join lateral (select ${fields.map((f) => `${fieldSql(dialect, f)} as ${identifier(f.key)}`).join(', ')}) r`)
    : sql``;
  const ok = pg ? sql`bool_and(${plain})` : sql`min(${plain})`;
  const page = sql`select * from ${t} where ${inStore} ${bound} ${only} order by store_id ${dir}, id ${dir} limit ${p('limit')}`;
  const aggregate = sql<PageRow>`select ${objects} as objects, count(*) as n, min(p.id) as lo, max(p.id) as hi, ${ok} as ok,
      ${more} as more, ${behind} as behind
    from page p${object}`;
  return { page, aggregate };
}
