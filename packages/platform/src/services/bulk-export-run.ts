// Running one bulk export in the worker: take the lease of an operation, copy its snapshot once
// (bulk-operation-repository.ts says how the snapshot and its time hold on each database), write
// the JSON Lines file from that copy chunk by chunk, each chunk committed with the position it
// reached, and finish with the `bulk_operations/finish` webhook in the same transaction. A worker
// that takes over an operation whose lease ran out continues from the committed position, so the
// file has every row once. The owner's grant is checked before the export runs and again every
// second while it writes: one that ended or no longer reads the resource stops it. Every claim
// counts an attempt; an export that keeps failing (it throws, or its worker dies each time) is
// ended as failed after MAX_ATTEMPTS, so its app hears of it and its slot is free again.
import { setTimeout as sleep } from 'node:timers/promises';
import { BULK_CHUNK_BYTES } from '../domain/bulk-operations.ts';
import type { Clock } from '../domain/clock.ts';
import { BulkAttemptError } from '../domain/errors.ts';
import { selectFields } from '../domain/list-filters.ts';
import { allows, storedScopes } from '../domain/scopes.ts';
import type { BulkOperationRow } from '../storage/ports/bulk-operations.ts';
import type { Storage } from '../storage/ports/storage.ts';
import { bulkDef, rowOwner, storedFilters } from './bulk-exports.ts';
import type { WebhookOutbox } from './webhook-outbox.ts';

/** Snapshot rows read per statement while writing the file. */
const READ_BATCH = 5000;
/** How often a running export reads its owner's grant again. */
const GRANT_CHECK_MS = 1000;
/** How long the snapshot waits for the clock to pass its time before giving up. */
const CLOCK_WAIT_MS = 5_000;
/**
 * Attempts an export gets before it is ended as failed. A fault that passes (a database restart,
 * a worker stopped for a deploy) rarely hits the same export three times in a row, since each
 * attempt resumes where the last one stopped; one that stays (a bug, a row that cannot be
 * written) would otherwise hold one of its app's two slots forever.
 */
export const MAX_ATTEMPTS = 3;
/** What the app reads: never the error itself, which may quote rows or the database. */
const GAVE_UP = `the export failed on each of its ${MAX_ATTEMPTS} attempts; start a new one`;

export type RunOutcome = 'none' | 'completed' | 'failed' | 'lost';

export class BulkExportRun {
  /** Completed operations whose snapshot this worker still has to drop. */
  private readonly leftovers: BulkOperationRow[] = [];

  constructor(
    private readonly storage: Storage,
    private readonly outbox: WebhookOutbox,
    private readonly clock: Clock,
    private readonly chunkBytes = BULK_CHUNK_BYTES,
  ) {}

  /**
   * Claims one operation and runs it to its end; 'lost' when the lease went to another worker or
   * the operation was canceled meanwhile, 'none' when nothing was waiting. `stopping` ends the
   * run between chunks (its lease then runs out and another worker continues). A run that throws
   * rejects with a BulkAttemptError: the operation is retried once its lease runs out, or ended as
   * failed when that was its last attempt.
   */
  async runNext(worker: string, leaseMs: number, stopping: () => boolean = () => false): Promise<RunOutcome> {
    await this.dropLeftovers();
    const op = await this.storage.bulkOperations.claim(worker, this.clock(), this.clock() + leaseMs);
    if (!op) return 'none';
    // Its last attempt ended without a word (its worker died, or hung past its lease).
    if (op.attempts > MAX_ATTEMPTS) return this.fail(op, GAVE_UP, worker);
    // The copy of a big store may outlast a lease: renewed every third of it while this runs.
    const renew = setInterval(() => {
      this.storage.bulkOperations.renew(op.id, worker, this.clock() + leaseMs).catch(() => {});
    }, leaseMs / 3);
    try {
      return await this.execute(op, worker, leaseMs, stopping);
    } catch (err) {
      const final = op.attempts >= MAX_ATTEMPTS && (await this.fail(op, GAVE_UP, worker)) === 'failed';
      throw new BulkAttemptError(final, err);
    } finally {
      clearInterval(renew);
    }
  }

  private async execute(op: BulkOperationRow, worker: string, leaseMs: number, stopping: () => boolean): Promise<RunOutcome> {
    const def = bulkDef(op.resource);
    if (!def) return this.fail(op, `unknown resource ${op.resource}`);
    if (!(await this.mayRead(op))) return this.fail(op, `the app no longer holds the read_${op.resource} scope`);
    let { position, rows, bytes, chunks: seq, snapshot_at: snapshotAt } = op;
    if (snapshotAt === null) {
      const filters = storedFilters(def, op.filters);
      snapshotAt =
        (await this.storage.transaction((tx) => tx.bulkOperations.snapshot(op, filters, worker, () => this.snapshotTime()))) ?? null;
      if (snapshotAt === null) return 'lost';
      position = 0;
      rows = 0;
      bytes = 0;
      seq = 0;
    }
    const fields = op.fields === null ? undefined : op.fields.split(',');
    let lines: string[] = [];
    let pending = 0;
    let pendingRows = 0;
    // Writes what is pending as the next chunk, with the position of its last row; false when the
    // run must end (lease lost, canceled, stopping, or the grant no longer reads the resource).
    let checkedAt = Date.now();
    const flush = async (last: number): Promise<RunOutcome | undefined> => {
      if (stopping()) return 'lost';
      // The grant is read again at most every GRANT_CHECK_MS (the download checks it each time).
      if (Date.now() - checkedAt >= GRANT_CHECK_MS) {
        checkedAt = Date.now();
        if (!(await this.mayRead(op))) return this.fail(op, `the app no longer holds the read_${op.resource} scope`);
      }
      const data = Buffer.from(lines.join(''));
      const chunk = { seq, start: bytes, data, position: last, rows: rows + pendingRows, bytes: bytes + data.length };
      if (!(await this.storage.transaction((tx) => tx.bulkOperations.appendChunk(op.id, worker, chunk, this.clock() + leaseMs))))
        return 'lost';
      ({ position, rows, bytes } = chunk);
      seq++;
      lines = [];
      pending = 0;
      pendingRows = 0;
      return undefined;
    };
    let read = position;
    for (;;) {
      const batch = await this.storage.bulkOperations.snapshotRows(op.id, op.resource, read, READ_BATCH);
      for (const r of batch) {
        const line = `${JSON.stringify(selectFields(def.toJson(r), fields))}\n`;
        lines.push(line);
        // Characters, not bytes: a chunk's size only needs to be about right.
        pending += line.length;
        pendingRows++;
        read = Number(r.id);
        if (pending >= this.chunkBytes) {
          const ended = await flush(read);
          if (ended) return ended;
        }
      }
      if (batch.length < READ_BATCH) break;
    }
    if (pending > 0) {
      const ended = await flush(read);
      if (ended) return ended;
    }
    const finished = await this.storage.transaction(async (tx) => {
      const now = this.clock();
      if (!(await tx.bulkOperations.complete(op.id, worker, now))) return false;
      await this.notify(tx, { ...op, status: 'completed', rows, bytes, snapshot_at: snapshotAt, finished_at: now });
      return true;
    });
    if (!finished) return 'lost';
    // The app may fetch the file now; the snapshot is dropped before this worker's next claim.
    this.leftovers.push(op);
    return 'completed';
  }

  private async dropLeftovers(): Promise<void> {
    for (let op = this.leftovers.shift(); op; op = this.leftovers.shift())
      await this.storage.bulkOperations.dropSnapshot(op.id, op.resource);
  }

  /**
   * Deletes operations and files that finished before `cutoff`, and the snapshots finished
   * operations left behind (a worker that stopped before dropping one).
   */
  async prune(cutoff: number): Promise<number> {
    await this.storage.bulkOperations.dropFinishedSnapshots();
    let total = 0;
    for (let n = await this.storage.bulkOperations.prune(cutoff); n > 0; n = await this.storage.bulkOperations.prune(cutoff)) total += n;
    return total;
  }

  private async mayRead(op: BulkOperationRow): Promise<boolean> {
    const scopes = await this.storage.bulkOperations.ownerScopes(op.store_id, rowOwner(op));
    return scopes !== undefined && allows(storedScopes(scopes), 'read', op.resource);
  }

  /** Ends the operation as failed (only while `holder` holds its lease, when given) and tells its owner. */
  private async fail(op: BulkOperationRow, error: string, holder?: string): Promise<RunOutcome> {
    const ended = await this.storage.transaction(async (tx) => {
      const row = await tx.bulkOperations.end(op.id, 'failed', error, this.clock(), holder);
      if (row) await this.notify(tx, row);
      return row;
    });
    // Another worker that took the lease over still reads its snapshot.
    if (ended || holder === undefined) await this.storage.bulkOperations.dropSnapshot(op.id, op.resource);
    return ended ? 'failed' : 'lost';
  }

  /**
   * The snapshot time, read once the copy is done and while writes of the resource are still held
   * back: one millisecond past the clock, waited for, so that every write held back stamps its
   * event at that time or later and every earlier write stamped an earlier time.
   */
  private async snapshotTime(): Promise<number> {
    const t = this.clock() + 1;
    const deadline = Date.now() + CLOCK_WAIT_MS;
    while (this.clock() < t) {
      if (Date.now() > deadline) throw new Error('the clock did not advance while taking the snapshot');
      await sleep(1);
    }
    return t;
  }

  private async notify(tx: Parameters<Parameters<Storage['transaction']>[0]>[0], op: BulkOperationRow): Promise<void> {
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    const payload = {
      id: String(op.id),
      status: op.status,
      resource: op.resource,
      rows: op.rows,
      bytes: op.bytes,
      error: op.error,
      snapshot_at: iso(op.snapshot_at),
      completed_at: iso(op.finished_at),
    };
    const owner = rowOwner(op);
    await this.outbox.enqueue(tx, { storeId: op.store_id, topic: 'bulk_operations/finish', payload, ...owner });
  }
}
