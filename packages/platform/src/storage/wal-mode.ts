// Switching a SQLite file to WAL when several processes open it at once (a server and
// administrative commands started together on a new file).
import type SQLite from 'better-sqlite3';
import { databaseFault } from './database-faults.ts';

const RETRY_MS = 10;

/**
 * `journal_mode = WAL`, tried again until `timeoutMs` has passed while another connection holds a
 * lock. A new file starts in rollback-journal mode, where SQLite answers SQLITE_BUSY at once,
 * without calling the busy handler, when waiting could deadlock: this connection needs an exclusive
 * lock to change the mode while another process holds the reserved lock of its own first write
 * (or is switching the mode itself). That process lets go within moments, so waiting is right.
 * The wait blocks the thread, as the busy handler would: it happens once, while the database opens.
 */
export function enableWal(sqlite: SQLite.Database, timeoutMs: number): void {
  const deadline = Date.now() + timeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      sqlite.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if (databaseFault(err) !== 'busy' || Date.now() >= deadline) throw err;
    }
    Atomics.wait(pause, 0, 0, RETRY_MS);
  }
}
