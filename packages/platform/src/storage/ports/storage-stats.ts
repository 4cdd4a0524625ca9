// What the metrics read from storage at scrape time: the webhook outbox's backlog and the
// database connection pool. Cheap reads, never inside a transaction.

/** Pending webhook deliveries: all of them, those due now, and since when the oldest due one waits. */
export interface OutboxBacklog {
  /** Deliveries not yet delivered, dead or cancelled (retries scheduled later included). */
  pending: number;
  /** Of those, the ones whose time has come (`next_attempt_at <= now`), in flight included. */
  due: number;
  /** The earliest `next_attempt_at` among the due ones (unix ms); null when none is due. */
  oldestDueAt: number | null;
}

/** The PostgreSQL connection pool of this process. */
export interface PoolStats {
  /** Connections the pool may open. */
  max: number;
  /** Connections checked out by a query or a transaction. */
  inUse: number;
  /** Open connections waiting for work. */
  idle: number;
  /** Queries waiting for a connection because all `max` are in use. */
  waiting: number;
}

export interface StorageStats {
  outboxBacklog(now: number): Promise<OutboxBacklog>;
  /** The connection pool; undefined on SQLite, which works on one connection and has no pool. */
  pool(): PoolStats | undefined;
}
