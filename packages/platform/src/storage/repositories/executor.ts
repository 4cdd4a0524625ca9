// What every repository is built over: the Kysely handle of the database or of one open
// transaction, the runner for prepared statements on that same handle, and the hooks of the
// surrounding transaction.
import type { Kysely, Transaction } from 'kysely';
import type { QueryRunner } from '../prepared-query.ts';
import type { Database } from '../schema.ts';
import type { OutboxStatements } from './outbox-statements.ts';
import type { PreparedStatements } from './prepared-statements.ts';

export interface Executor {
  readonly k: Kysely<Database> | Transaction<Database>;
  /** For the few statements the two databases spell differently. */
  readonly dialect: 'sqlite' | 'postgres';
  /** Prepared statements on the same handle (synchronous on SQLite outside a transaction). */
  readonly runner: QueryRunner;
  /** The hot-path queries, compiled once for this database. */
  readonly prepared: PreparedStatements;
  /** The outbox's statements, compiled once for this database. */
  readonly outbox: OutboxStatements;
  /** Webhook deliveries were queued: the workers of this process are woken once this commits. */
  deliveriesQueued(): void;
}
