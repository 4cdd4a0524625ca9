// A statement written in SQL (Kysely's `sql` template) rather than the builder, made compilable on
// one database so that `defineQuery` can compile it once like any builder query. For the few
// statements each database spells its own way (lists as one JSON array on SQLite, as arrays on
// PostgreSQL; UPDATE … FROM; a materialized CTE).
import type { Kysely, RawBuilder } from 'kysely';
import type { Database } from '../schema.ts';

export const rawQuery = <R>(k: Kysely<Database>, raw: RawBuilder<R>) => ({ compile: () => raw.compile(k) });

export type Dialect = 'sqlite' | 'postgres';

/** A list as one parameter: a JSON array on SQLite (read with json_each), an array on PostgreSQL. */
export function listParam(dialect: Dialect, values: readonly unknown[]): unknown {
  return dialect === 'sqlite' ? JSON.stringify(values) : [...values];
}
