// What the services and the webhook worker are handed as storage: the repositories, the grant store, the
// delivery queue and bulk rows, transactions, and the database's lifecycle. The SQL, the dialects (SQLite or
// PostgreSQL), prepared statements and the commit-and-fsync policy stay behind it.
import type { BulkRows } from './bulk-rows.ts';
import type { DeliveryQueue } from './delivery-queue.ts';
import type { Repositories } from './repositories.ts';
import type { GrantStore } from './tokens.ts';

export interface Storage extends Repositories {
  grants: GrantStore;
  deliveryQueue: DeliveryQueue;
  /** Many new records of a store at once, each call one transaction (seeding). */
  bulkRows: BulkRows;
  /**
   * Runs `work` in one transaction: everything it does through `tx` commits or rolls back
   * together, and the caller hears back only once the commit is on disk.
   */
  transaction<T>(work: (tx: Repositories) => Promise<T>): Promise<T>;
  /**
   * A value that changes whenever the data may have changed (any write, by any process), cheap to
   * read; undefined when the database cannot tell (then nothing may be cached against it).
   */
  changeStamp(): string | undefined;
  /** Calls `listener` after each commit in this process that queued webhook deliveries. */
  onDeliveriesQueued(listener: () => void): () => void;
  /** Throws when the database does not answer. */
  ping(): Promise<void>;
  /**
   * Applies pending migrations; returns their names. `partitions` (PostgreSQL, an empty database):
   * hash-partition every store table by store_id into that many partitions, recorded in the
   * database so later runs keep the layout without being told.
   */
  migrate(options?: { partitions?: number | undefined }): Promise<string[]>;
  close(): Promise<void>;
}
