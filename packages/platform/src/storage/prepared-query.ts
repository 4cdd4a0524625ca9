// The one way a hot-path statement runs: written once with Kysely's builder (or `sql`), with its
// parameters named and typed, compiled once, and run many times with new parameters:
// - SQLite: a statement prepared once on the process's connection (sqlite-handle.ts caches it) and
//   run synchronously when it may (outside a Kysely transaction), else through that transaction;
// - PostgreSQL: a named prepared statement, parsed once per connection (pg-pool.ts names it at its
//   first run), straight on the pool outside a transaction, else through that transaction.
// `queryRunner` below is the one place that makes these choices. Building and compiling a query each time would cost more than running it
// on these paths.
import type { Compilable, CompiledQuery, Kysely, Transaction } from 'kysely';
import type { DirectQuery } from './pg-pool.ts';
import type { Database } from './schema.ts';
import type { SqliteHandle } from './sqlite-handle.ts';

const MARK = '\u0000param:';

/** Parameters not declared at definition: any names, each typed where it is used. */
export type Params = Record<string, unknown>;

/**
 * What `p` is inside a definition. With declared parameters, `p('store')` takes a declared name
 * and has that parameter's type; without, `p<number>('store')` names any parameter and says its
 * type at the use (`p('id')` is a string).
 */
export type ParamRef<P> = string extends keyof P ? <T = string>(name: string) => T : <K extends keyof P & string>(name: K) => P[K];

export interface PreparedQuery<R, P = Params> {
  readonly compiled: CompiledQuery<R>;
  /** For each compiled parameter: the name to take from the call's params, or a fixed value. */
  readonly slots: readonly ({ name: string } | { value: unknown })[];
  /** Never set: carries the parameters' type to the runner. */
  readonly params?: P;
}

/**
 * `defineQuery<Row, { id: string }>((p) => db.selectFrom('t').selectAll().where('id', '=', p('id')))`:
 * `p(name)` stands for a parameter supplied at each run. It returns a marker string that only
 * stands in for the value while the query is compiled, so builders accept it wherever they accept
 * a value. The parameters' type may be left out (`defineQuery<Row>(…)`), then `p<T>(name)` says
 * each one's type where it is used.
 */
export function defineQuery<R, P extends object = Params>(build: (p: ParamRef<P>) => Compilable<R>): PreparedQuery<R, P> {
  const marker = ((name: string) => `${MARK}${name}`) as unknown as ParamRef<P>;
  const compiled = build(marker).compile();
  const slots = compiled.parameters.map((v) =>
    typeof v === 'string' && v.startsWith(MARK) ? { name: v.slice(MARK.length) } : { value: v },
  );
  return { compiled, slots };
}

function args<P>(q: PreparedQuery<unknown, P>, params: P): unknown[] {
  const given = params as Params;
  return q.slots.map((s) => {
    if ('value' in s) return s.value;
    if (!(s.name in given)) throw new Error(`missing query parameter ${s.name}`);
    return given[s.name];
  });
}

export interface QueryRunner {
  all<R, P>(q: PreparedQuery<R, P>, params: NoInfer<P>): Promise<R[]>;
  first<R, P>(q: PreparedQuery<R, P>, params: NoInfer<P>): Promise<R | undefined>;
  /** Runs a statement without result rows; returns the number of rows it changed. */
  run<P>(q: PreparedQuery<unknown, P>, params: NoInfer<P>): Promise<number>;
  /**
   * The same statements synchronously, when this runner's scope lets them run so right now (SQLite
   * outside a Kysely transaction; for 'when-idle', while no transaction is open); else undefined.
   * For a caller that must run several in one synchronous stretch (a better-sqlite3 transaction).
   */
  sync(): SyncQueryRunner | undefined;
}

export interface SyncQueryRunner {
  allSync<R, P>(q: PreparedQuery<R, P>, params: NoInfer<P>): R[];
  firstSync<R, P>(q: PreparedQuery<R, P>, params: NoInfer<P>): R | undefined;
  runSync<P>(q: PreparedQuery<unknown, P>, params: NoInfer<P>): number;
}

/** What a runner needs of the open database (database.ts's Db has it). */
export interface StatementTarget {
  readonly kysely: Kysely<Database>;
  /** SQLite's connection; undefined on PostgreSQL. */
  readonly sqlite: SqliteHandle | undefined;
  /** Marks statement texts to be prepared once per connection (named statements on PostgreSQL). */
  prepareStatements(texts: Iterable<string>): void;
  /** PostgreSQL: one statement straight on the pool, outside any transaction (pg-pool.ts). */
  readonly pgQuery?: DirectQuery | undefined;
}

export interface RunnerOptions {
  /**
   * Where the statements run:
   * - 'connection' (the default): outside any transaction. On SQLite synchronously at once, on the
   *   shared connection: a read may then see a write of a transaction still in flight, and a caller
   *   that holds the connection inside its own BEGIN … COMMIT (the grant batcher) runs in it;
   * - 'when-idle': on SQLite synchronously only while no transaction is open on the connection,
   *   else through Kysely, waiting its turn (for writes that must not join someone's transaction);
   * - a Kysely transaction: through it, on either database.
   */
  scope?: 'connection' | 'when-idle' | Transaction<Database>;
  /** Wraps each synchronous run on SQLite (the durability policy's `relaxed`, say). */
  around?: <T>(work: () => T) => T;
}

// The queries each database has been told to prepare already (telling it again costs a lookup).
const preparedOn = new WeakMap<StatementTarget, WeakSet<object>>();

/** The one place that decides how a prepared query runs on an open database. */
export function queryRunner(db: StatementTarget, options: RunnerOptions = {}): QueryRunner {
  const scope = options.scope ?? 'connection';
  let known = preparedOn.get(db);
  if (!known) preparedOn.set(db, (known = new WeakSet()));
  const seen = known;
  const names = (q: PreparedQuery<unknown, never>) => {
    if (seen.has(q)) return;
    seen.add(q);
    db.prepareStatements([q.compiled.sql]);
  };
  if (typeof scope === 'object') return new KyselyStatements(scope, names);
  if (!db.sqlite) return db.pgQuery ? new PoolRunner(db.pgQuery, names) : new KyselyStatements(db.kysely, names);
  const sync = new SqliteStatements(db.sqlite, options.around ?? ((work) => work()));
  if (scope === 'connection') return sync;
  const sqlite = db.sqlite;
  const queued = new KyselyStatements(db.kysely, names);
  const pick = (): QueryRunner => (sqlite.inTransaction ? queued : sync);
  return {
    all: (q, params) => pick().all(q, params),
    first: (q, params) => pick().first(q, params),
    run: (q, params) => pick().run(q, params),
    sync: () => (sqlite.inTransaction ? undefined : sync),
  };
}

/** Synchronous prepared statements on the SQLite connection (which keeps them prepared). */
class SqliteStatements implements QueryRunner, SyncQueryRunner {
  constructor(
    private readonly sqlite: SqliteHandle,
    private readonly around: <T>(work: () => T) => T,
  ) {}
  allSync<R, P>(q: PreparedQuery<R, P>, params: NoInfer<P>): R[] {
    return this.around(() => this.sqlite.prepare(q.compiled.sql).all(...args(q, params)) as R[]);
  }
  runSync<P>(q: PreparedQuery<unknown, P>, params: NoInfer<P>): number {
    return this.around(() => this.sqlite.prepare(q.compiled.sql).run(...args(q, params)).changes);
  }
  firstSync<R, P>(q: PreparedQuery<R, P>, params: NoInfer<P>): R | undefined {
    return this.around(() => this.sqlite.prepare(q.compiled.sql).get(...args(q, params)) as R | undefined);
  }
  sync(): SyncQueryRunner {
    return this;
  }
  async all<R, P>(q: PreparedQuery<R, P>, params: P): Promise<R[]> {
    return this.allSync(q, params);
  }
  async first<R, P>(q: PreparedQuery<R, P>, params: P): Promise<R | undefined> {
    return this.firstSync(q, params);
  }
  async run<P>(q: PreparedQuery<unknown, P>, params: P): Promise<number> {
    return this.runSync(q, params);
  }
}

/** The same queries through Kysely (PostgreSQL, or inside a Kysely transaction). */
class KyselyStatements implements QueryRunner {
  constructor(
    private readonly executor: Kysely<Database> | Transaction<Database>,
    private readonly named: (q: PreparedQuery<unknown, never>) => void,
  ) {}
  async all<R, P>(q: PreparedQuery<R, P>, params: P): Promise<R[]> {
    this.named(q as PreparedQuery<unknown, never>);
    return (await this.executor.executeQuery<R>({ ...q.compiled, parameters: args(q, params) })).rows;
  }
  async first<R, P>(q: PreparedQuery<R, P>, params: P): Promise<R | undefined> {
    return (await this.all(q, params))[0];
  }
  sync(): undefined {
    return undefined;
  }
  async run<P>(q: PreparedQuery<unknown, P>, params: P): Promise<number> {
    this.named(q as PreparedQuery<unknown, never>);
    return Number((await this.executor.executeQuery({ ...q.compiled, parameters: args(q, params) })).numAffectedRows ?? 0);
  }
}

/** PostgreSQL outside a transaction: straight on the pool (Kysely's layers cost about a fifth of a warm grant statement's node CPU). */
class PoolRunner implements QueryRunner {
  constructor(
    private readonly query: DirectQuery,
    private readonly named: (q: PreparedQuery<unknown, never>) => void,
  ) {}
  async all<R, P>(q: PreparedQuery<R, P>, params: P): Promise<R[]> {
    this.named(q as PreparedQuery<unknown, never>);
    return (await this.query(q.compiled.sql, args(q, params))).rows as R[];
  }
  async first<R, P>(q: PreparedQuery<R, P>, params: P): Promise<R | undefined> {
    return (await this.all(q, params))[0];
  }
  sync(): undefined {
    return undefined;
  }
  async run<P>(q: PreparedQuery<unknown, P>, params: P): Promise<number> {
    this.named(q as PreparedQuery<unknown, never>);
    return (await this.query(q.compiled.sql, args(q, params))).rowCount ?? 0;
  }
}
