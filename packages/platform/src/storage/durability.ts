// The one place that decides when a commit reaches the disk and who waits for it.
//
// SQLite runs in WAL mode. Its default here is synchronous=FULL: a plain statement's commit is
// fsynced before the statement returns, so nothing is answered that a crash could lose. FULL
// syncs on the event loop, though, and a sync takes milliseconds. So:
//
// - Transactions (`transaction`) and token-grant batches (`unsynced` + `flush`) commit with
//   synchronous=NORMAL (the WAL frames are written, not yet flushed) and answer only after an
//   fdatasync of the WAL run on libuv's thread pool. Same guarantee as FULL for the caller, but
//   the event loop keeps serving meanwhile, and commits that wait together share one sync.
// - The webhook worker's own bookkeeping (`relaxed`: claims, attempt rows, next attempt times)
//   commits without waiting for any sync. A power cut can lose the last of those writes, which
//   costs at most one repeated send of a delivery (same webhook id, so receivers de-duplicate),
//   never an event: events are written with the change that caused them, durably.
//
// PostgreSQL syncs its own commits (and groups them); there is nothing to add there.
import { closeSync, fdatasync, openSync } from 'node:fs';
import type { Kysely, Transaction } from 'kysely';
import { coalescedFlush } from './coalesced-flush.ts';
import type { Database } from './schema.ts';
import type { HandleStatement, SqliteHandle } from './sqlite-handle.ts';

/** SQLite's synchronous setting outside the windows this file opens. */
export const DEFAULT_SYNCHRONOUS = 'FULL';

export interface Durability {
  /** A transaction whose caller hears back only once it is on disk. */
  transaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  /**
   * Runs `work` while holding the connection, with commits not synced; the caller must `flush()`
   * before answering anyone whose write committed inside.
   */
  unsynced<T>(work: () => Promise<T>): Promise<T>;
  /** Resolves once everything committed so far is on disk (concurrent callers share one sync). */
  flush(): Promise<void>;
  /** Runs synchronous bookkeeping statements whose loss in a crash is harmless, without a sync. */
  relaxed<T>(work: () => T): T;
  close(): void;
}

/** The policy for a database: `sqlite` is its better-sqlite3 handle, absent on PostgreSQL. */
export function durabilityFor(kysely: Kysely<Database>, sqlite: SqliteHandle | undefined): Durability {
  if (!sqlite) return postgresDurability(kysely);
  if (sqlite.memory) return memoryDurability(kysely);
  let walFd: number | undefined;
  const syncWal = (): Promise<void> => {
    walFd ??= openSync(`${sqlite.name}-wal`, 'r');
    const fd = walFd;
    return new Promise((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve())));
  };
  const flush = coalescedFlush(syncWal);
  // Every change of the setting goes through here, so the current one is known without asking
  // SQLite; the two statements are prepared once (a pragma() call would parse its text each time,
  // and this runs twice per transaction).
  const pragmas = new Map<string, HandleStatement>();
  let synchronous = DEFAULT_SYNCHRONOUS;
  const setSynchronous = (value: 'NORMAL' | typeof DEFAULT_SYNCHRONOUS) => {
    let stmt = pragmas.get(value);
    if (!stmt) pragmas.set(value, (stmt = sqlite.prepare(`PRAGMA synchronous = ${value}`)));
    stmt.run();
    synchronous = value;
  };
  const unsynced = <T>(work: () => Promise<T>): Promise<T> =>
    // Holding Kysely's connection from the pragma to the commit keeps every other user of the
    // (single) connection out, so nothing else commits unsynced in between.
    kysely.connection().execute(async () => {
      setSynchronous('NORMAL');
      try {
        return await work();
      } finally {
        setSynchronous(DEFAULT_SYNCHRONOUS);
      }
    });
  return {
    async transaction(work) {
      const result = await kysely.connection().execute(async (conn) => {
        setSynchronous('NORMAL');
        try {
          return await conn.transaction().execute(work);
        } finally {
          setSynchronous(DEFAULT_SYNCHRONOUS);
        }
      });
      await flush();
      return result;
    },
    unsynced,
    flush,
    relaxed(work) {
      // Inside another window (a batch between its statements) the setting is NORMAL already and
      // must stay so until that window closes it.
      if (synchronous === 'NORMAL') return work();
      setSynchronous('NORMAL');
      try {
        return work();
      } finally {
        // Restored synchronously: no other statement can run in between.
        setSynchronous(DEFAULT_SYNCHRONOUS);
      }
    },
    close() {
      if (walFd !== undefined) closeSync(walFd);
      walFd = undefined;
    },
  };
}

/** An in-memory SQLite database has no disk to wait for. */
function memoryDurability(kysely: Kysely<Database>): Durability {
  return {
    transaction: (work) => kysely.transaction().execute(work),
    unsynced: (work) => kysely.connection().execute(() => work()),
    flush: () => Promise.resolve(),
    relaxed: (work) => work(),
    close() {},
  };
}

function postgresDurability(kysely: Kysely<Database>): Durability {
  return {
    transaction: (work) => kysely.transaction().execute(work),
    unsynced: (work) => work(),
    flush: () => Promise.resolve(),
    relaxed: (work) => work(),
    close() {},
  };
}
