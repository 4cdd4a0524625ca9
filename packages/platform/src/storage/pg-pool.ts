// The PostgreSQL connection pool as Kysely sees it, made to survive the server going away:
// - every client gets an 'error' listener for its whole life. pg-pool listens only while a client is
//   idle, and a checked-out client (a transaction between two statements, say) that is told its
//   backend was terminated emits 'error' with nobody listening, which kills the process.
// - connection-level failures become DatabaseUnavailableError (see database-faults.ts), and the
//   client they happened on is destroyed on release instead of going back to the pool;
// - getting a connection and running a statement are bounded (connect timeout, statement_timeout
//   on the server, and a client-side deadline a little later for a server that went silent).
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import { createRequire } from 'node:module';
import type pg from 'pg';
import { databaseFault, translateDatabaseError } from './database-faults.ts';
import { DatabaseUnavailableError, type DatabaseFault } from '../domain/errors.ts';

export interface PgPoolSettings {
  url: string;
  /** Connections at most. */
  size: number;
  /** Server-side statement_timeout in ms (0: none). */
  statementTimeoutMs: number;
  /** Deadline for getting a connection, from the pool or a new one, in ms. */
  connectTimeoutMs: number;
}

export type Availability = 'up' | 'down';

/**
 * Whether the database can be reached: 'down' from a failed attempt to connect until the next
 * statement that succeeds. Listeners hear each change once.
 */
export class DatabaseHealth {
  private current: Availability = 'up';
  private lastFault: DatabaseFault | undefined;
  private readonly listeners = new Set<(state: Availability, fault: DatabaseFault | undefined) => void>();

  get state(): Availability {
    return this.current;
  }

  get fault(): DatabaseFault | undefined {
    return this.lastFault;
  }

  onChange(listener: (state: Availability, fault: DatabaseFault | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  failed(fault: DatabaseFault): void {
    // Only a failed connect says the server is away. A lost connection alone (a terminated
    // backend) is replaced by the pool at once, and a slow statement says nothing about whether
    // the server is there.
    if (fault !== 'cannot connect') return;
    this.lastFault = fault;
    this.set('down');
  }

  succeeded(): void {
    if (this.current === 'down') this.set('up');
  }

  private set(state: Availability): void {
    if (this.current === state) return;
    this.current = state;
    for (const fn of this.listeners) fn(state, this.lastFault);
  }
}

/** How long after statement_timeout the client gives up on a server that does not answer at all. */
const CLIENT_DEADLINE_MARGIN_MS = 5_000;

const require = createRequire(import.meta.url);
let driver: typeof pg | undefined;

/**
 * The pg driver, loaded when the first pool opens: a node on SQLite never holds it (with its
 * protocol and type parsers it is a few hundred kilobytes of code and heap for nothing).
 */
function pgDriver(): typeof pg {
  if (!driver) {
    driver = require('pg') as typeof pg;
    // int8 (bigint) columns hold unix milliseconds and ids: return them as numbers, not strings.
    driver.types.setTypeParser(20, (v) => Number(v));
  }
  return driver;
}

/**
 * Statement texts the server should parse once per connection and keep (named prepared
 * statements): the fixed hot-path queries. Any other text runs unnamed, so a query built with
 * varying shape never piles up in the server's per-connection cache.
 */
export class StatementNames {
  private readonly names = new Map<string, string>();
  add(texts: Iterable<string>): void {
    for (const text of texts) if (!this.names.has(text)) this.names.set(text, `sg_${this.names.size + 1}`);
  }
  of(text: string): string | undefined {
    return this.names.get(text);
  }
}

export function openPgPool(
  settings: PgPoolSettings,
  health: DatabaseHealth,
  names: StatementNames = new StatementNames(),
): { pool: PostgresPool; raw: pg.Pool; query: DirectQuery } {
  const raw = new (pgDriver().Pool)({
    connectionString: settings.url,
    max: settings.size,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    keepAlive: true,
    ...(settings.statementTimeoutMs > 0
      ? { statement_timeout: settings.statementTimeoutMs, query_timeout: settings.statementTimeoutMs + CLIENT_DEADLINE_MARGIN_MS }
      : {}),
  });
  // An idle client's error: pg-pool has already removed it; note the outage.
  raw.on('error', (err) => health.failed(databaseFault(err) ?? 'connection lost'));
  // Every new client, for its whole life (pg-pool emits 'connect' once per client it creates).
  raw.on('connect', (client) => {
    client.on('error', (err) => health.failed(databaseFault(err) ?? 'connection lost'));
  });
  const pool = new GuardedPool(raw, settings.size, health, names);
  return { pool, raw, query: (text, parameters) => pool.query(text, parameters) };
}

/**
 * One statement on a connection of the pool, outside any transaction, without Kysely's layers in
 * between (the same guards, deadlines and statement names as Kysely's queries get).
 */
export type DirectQuery = (text: string, parameters: readonly unknown[]) => Promise<{ rows: unknown[]; rowCount: number | null }>;

class GuardedPool implements PostgresPool {
  constructor(
    private readonly raw: pg.Pool,
    private readonly size: number,
    private readonly health: DatabaseHealth,
    private readonly names: StatementNames,
  ) {}

  async connect(): Promise<PostgresPoolClient> {
    // Every connection busy: this call waits for one to be released rather than for the server.
    const saturated = this.raw.idleCount === 0 && this.raw.totalCount >= this.size;
    let client: pg.PoolClient;
    try {
      client = await this.raw.connect();
    } catch (err) {
      // Waiting out the connect timeout for a free connection is overload, not an outage: still a
      // 503, but the database is not reported down for it.
      if (saturated && err instanceof Error && err.message.startsWith('timeout exceeded when trying to connect'))
        throw new DatabaseUnavailableError('pool exhausted');
      throw this.fail(err, true);
    }
    // Kysely keeps its connection objects per client object; a fresh wrapper per checkout only
    // costs it one small object.
    let broken: Error | undefined;
    const query = async (sql: string, parameters: readonly unknown[]) => {
      try {
        const name = this.names.of(sql);
        const result = await (name === undefined
          ? client.query(sql, parameters as unknown[])
          : client.query({ name, text: sql, values: parameters as unknown[] }));
        this.health.succeeded();
        return result;
      } catch (err) {
        const translated = this.fail(err, false);
        // The server cancelling a statement at its timeout leaves the connection fine; anything else
        // translated (a lost connection, the client's own deadline) leaves it unusable.
        if (translated !== err && (err as { code?: unknown }).code !== '57014')
          broken = err instanceof Error ? err : new Error(String(err));
        throw translated;
      }
    };
    return {
      query: query as unknown as PostgresPoolClient['query'],
      // A client that failed at the connection level is destroyed, never reused.
      release: () => client.release(broken),
    };
  }

  async query(text: string, parameters: readonly unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }> {
    const client = await this.connect();
    try {
      return (await client.query(text, parameters)) as { rows: unknown[]; rowCount: number | null };
    } finally {
      client.release();
    }
  }

  end(): Promise<void> {
    return this.raw.end();
  }

  private fail(err: unknown, connecting: boolean): unknown {
    const translated = translateDatabaseError(err, connecting);
    const fault = databaseFault(translated);
    if (fault) this.health.failed(fault);
    return translated;
  }
}
