// Queries written once with Kysely's builder, compiled once, and run many times with new
// parameters: on SQLite as synchronous prepared statements, on PostgreSQL (or inside a Kysely
// transaction) through Kysely. For hot paths such as the token endpoint and the Access-Token
// lookup, where building and compiling each query would cost more than running it.
import type { Compilable, CompiledQuery, Kysely, Transaction } from 'kysely';
import type SQLite from 'better-sqlite3';
import type { Database } from './schema.ts';

const MARK = '\u0000param:';

export interface PreparedQuery<R> {
  readonly compiled: CompiledQuery<R>;
  /** For each compiled parameter: the name to take from the call's params, or a fixed value. */
  readonly slots: readonly ({ name: string } | { value: unknown })[];
}

/**
 * `defineQuery((p) => db.selectFrom('t').selectAll().where('id', '=', p('id')))`: `p(name)` stands
 * for a parameter supplied at each run. It returns a marker string that only stands in for the
 * value while the query is compiled, so builders accept it wherever they accept a value.
 */
export function defineQuery<R>(build: (p: <T = string>(name: string) => T) => Compilable<R>): PreparedQuery<R> {
  const compiled = build(<T>(name: string) => `${MARK}${name}` as T).compile();
  const slots = compiled.parameters.map((v) =>
    typeof v === 'string' && v.startsWith(MARK) ? { name: v.slice(MARK.length) } : { value: v },
  );
  return { compiled, slots };
}

function args(q: PreparedQuery<unknown>, params: Record<string, unknown>): unknown[] {
  return q.slots.map((s) => {
    if ('value' in s) return s.value;
    if (!(s.name in params)) throw new Error(`missing query parameter ${s.name}`);
    return params[s.name];
  });
}

export interface QueryRunner {
  all<R>(q: PreparedQuery<R>, params: Record<string, unknown>): Promise<R[]>;
  first<R>(q: PreparedQuery<R>, params: Record<string, unknown>): Promise<R | undefined>;
  /** Runs a statement without result rows; returns the number of rows it changed. */
  run(q: PreparedQuery<unknown>, params: Record<string, unknown>): Promise<number>;
}

/** Synchronous prepared statements on the shared better-sqlite3 handle (which caches them by SQL). */
export class SqliteRunner implements QueryRunner {
  constructor(private readonly sqlite: SQLite.Database) {}
  allSync<R>(q: PreparedQuery<R>, params: Record<string, unknown>): R[] {
    return this.sqlite.prepare(q.compiled.sql).all(...args(q, params)) as R[];
  }
  runSync(q: PreparedQuery<unknown>, params: Record<string, unknown>): number {
    return this.sqlite.prepare(q.compiled.sql).run(...args(q, params)).changes;
  }
  async all<R>(q: PreparedQuery<R>, params: Record<string, unknown>): Promise<R[]> {
    return this.allSync(q, params);
  }
  async first<R>(q: PreparedQuery<R>, params: Record<string, unknown>): Promise<R | undefined> {
    return this.sqlite.prepare(q.compiled.sql).get(...args(q, params)) as R | undefined;
  }
  async run(q: PreparedQuery<unknown>, params: Record<string, unknown>): Promise<number> {
    return this.runSync(q, params);
  }
}

/** The same queries through Kysely (PostgreSQL, or inside a Kysely transaction). */
export class KyselyRunner implements QueryRunner {
  constructor(private readonly executor: Kysely<Database> | Transaction<Database>) {}
  async all<R>(q: PreparedQuery<R>, params: Record<string, unknown>): Promise<R[]> {
    return (await this.executor.executeQuery<R>({ ...q.compiled, parameters: args(q as PreparedQuery<unknown>, params) })).rows;
  }
  async first<R>(q: PreparedQuery<R>, params: Record<string, unknown>): Promise<R | undefined> {
    return (await this.all(q, params))[0];
  }
  async run(q: PreparedQuery<unknown>, params: Record<string, unknown>): Promise<number> {
    return Number((await this.executor.executeQuery({ ...q.compiled, parameters: args(q, params) })).numAffectedRows ?? 0);
  }
}
