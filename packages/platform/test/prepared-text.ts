// A prepared query's SQL with the values of one run, in the order its placeholders take them, for
// tests that EXPLAIN a statement through a client of their own, and a compiler of PostgreSQL's text.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { PreparedQuery } from '../src/storage/prepared-query.ts';
import type { Database } from '../src/storage/schema.ts';

export function bound(q: PreparedQuery<unknown>, params: Record<string, unknown>): { sql: string; params: unknown[] } {
  return { sql: q.compiled.sql, params: q.slots.map((s) => ('value' in s ? s.value : params[s.name])) };
}

/** What deliveryQueries needs to compile PostgreSQL's statements, without connecting. */
export function postgresCompiler(): { kysely: Kysely<Database>; dialect: 'postgres' } {
  return { kysely: new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ max: 1 }) }) }), dialect: 'postgres' };
}
