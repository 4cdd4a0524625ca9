// Bulk exports in the database: the operations of each owner in a store, the lease a worker holds
// on one while it runs, the snapshot of the rows it exports and the file it writes, in chunks.
import type { BulkStatus } from '../../domain/bulk-operations.ts';
import type { ListFilters } from '../../domain/list-filters.ts';
import type { ResourceName } from '../../domain/resources.ts';
import type { Selectable } from 'kysely';
import type { Database } from '../schema.ts';

/** Who started an operation: an installed app or a private app of the store. */
export type BulkOwner = { appId: number } | { privateAppId: number };

type BulkOperations = Selectable<Database['bulk_operations']>;

/** An operation as stored; `resource` and `status` hold only the values the domain names. */
export interface BulkOperationRow extends Omit<BulkOperations, 'resource' | 'status' | 'filters' | 'attempts'> {
  resource: ResourceName;
  /** The list filters as query parameters (a JSON object of strings). */
  filters: BulkOperations['filters'];
  status: BulkStatus;
  /** How many times a worker has claimed it, this claim included. */
  attempts: BulkOperations['attempts'];
}

export interface NewBulkOperation {
  storeId: number;
  owner: BulkOwner;
  resource: ResourceName;
  filters: string;
  fields: string | null;
  now: number;
}

/** A piece of the file, with the progress it brings the operation to. */
export interface BulkChunk {
  seq: number;
  start: number;
  data: Buffer;
  /** The last snapshot id the chunk holds. */
  position: number;
  rows: number;
  bytes: number;
}

export interface BulkOperationRepository {
  /** How many operations the owner has created or running in the store (callers lock the store first). */
  countOpen(storeId: number, owner: BulkOwner): Promise<number>;
  insert(input: NewBulkOperation): Promise<BulkOperationRow>;
  get(storeId: number, owner: BulkOwner, id: number): Promise<BulkOperationRow | undefined>;
  /** Any owner's operation in the store (the download checks its owner itself). */
  getById(storeId: number, id: number): Promise<BulkOperationRow | undefined>;
  /** The owner's operations in the store, newest first. */
  list(storeId: number, owner: BulkOwner, limit: number): Promise<BulkOperationRow[]>;
  /**
   * Ends an unfinished operation with `status` (canceled or failed), only while `holder` holds its
   * lease when given; the row as it is after, or undefined.
   */
  end(id: number, status: 'canceled' | 'failed', error: string | null, now: number, holder?: string): Promise<BulkOperationRow | undefined>;
  /** The scopes the owner holds in the store now, or undefined when its grant ended (uninstalled, revoked). */
  ownerScopes(storeId: number, owner: BulkOwner): Promise<string | undefined>;
  /** Takes the lease of one created or running operation whose lease is free or ran out, counting the attempt. */
  claim(worker: string, now: number, leaseUntil: number): Promise<BulkOperationRow | undefined>;
  /** Moves the lease on; false when the worker no longer holds it (taken over, canceled). */
  renew(id: number, worker: string, leaseUntil: number): Promise<boolean>;
  /**
   * Run in a transaction of its own: keeps writes of the operation's resource out until it
   * commits, copies the rows the filters select and records `at()` (read after the copy) as the
   * snapshot time. Undefined when the worker lost the lease meanwhile.
   */
  snapshot(op: BulkOperationRow, filters: ListFilters, worker: string, at: () => Promise<number>): Promise<number | undefined>;
  /** Snapshot rows after `after` (by id), with the resource's columns. */
  snapshotRows(operationId: number, resource: ResourceName, after: number, limit: number): Promise<Record<string, unknown>[]>;
  /** Appends a chunk and the progress it brings, if the worker still holds the running operation. */
  appendChunk(id: number, worker: string, chunk: BulkChunk, leaseUntil: number): Promise<boolean>;
  /** Marks the operation completed if the worker still holds it running. */
  complete(id: number, worker: string, now: number): Promise<boolean>;
  /** Drops the snapshot rows of an operation that no longer runs. */
  dropSnapshot(operationId: number, resource: ResourceName): Promise<void>;
  /** Drops the snapshot rows of every finished operation (those a worker left behind); returns how many. */
  dropFinishedSnapshots(): Promise<number>;
  /** The chunks of the file that hold bytes from `from` on, in order, one read at a time. */
  chunks(operationId: number, from: number): AsyncIterable<{ start: number; data: Buffer }>;
  /** Deletes operations (and their files) that finished before `cutoff`; returns how many. */
  prune(cutoff: number): Promise<number>;
}
