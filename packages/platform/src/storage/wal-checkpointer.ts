// WAL checkpoints on a worker thread with its own connection. A checkpoint copies pages into the
// database file and fsyncs it; done on the serving thread (SQLite's automatic checkpoint runs
// inside a COMMIT) it stalls every request for milliseconds. Here the serving connection only
// checkpoints as a backstop when the WAL has grown very large.
//
// The thread exists only while there is something to checkpoint: the first write starts it, and
// once no write has come for `idleMs` it checkpoints one last time and ends. A thread is a V8
// isolate of its own plus a connection (several megabytes resident), which a node that only reads,
// or sits idle, has no use for.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const require = createRequire(import.meta.url);

const SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 1000');
let stopped = false;
const checkpoint = () => { try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {} };
const tick = () => {
  if (stopped) return;
  checkpoint();
  setTimeout(tick, workerData.intervalMs);
};
parentPort.on('message', (m) => {
  if (stopped) return;
  stopped = true;
  if (m === 'retire') checkpoint();
  db.close();
  parentPort.close();
});
setTimeout(tick, workerData.intervalMs);
`;

export interface WalCheckpointer {
  /** A write committed: the WAL grew. Starts the checkpointing thread when none runs. */
  wrote(): void;
  /** Whether a checkpointing thread runs now. */
  readonly running: boolean;
  stop(): Promise<void>;
}

export interface WalCheckpointerOptions {
  /** Time between two checkpoints while the thread runs. */
  intervalMs?: number;
  /** The thread ends after this long without a write (checked this often). */
  idleMs?: number;
}

export function startWalCheckpointer(file: string, options: WalCheckpointerOptions = {}): WalCheckpointer {
  const intervalMs = options.intervalMs ?? 250;
  const idleMs = options.idleMs ?? 15_000;
  const driver = require.resolve('better-sqlite3');
  let worker: Worker | undefined;
  let idleCheck: NodeJS.Timeout | undefined;
  let wroteSinceCheck = false;
  let stopped = false;

  const end = async (w: Worker, message: 'retire' | 'stop') => {
    const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
    w.postMessage(message);
    await Promise.race([exited, new Promise((r) => setTimeout(r, 1000))]);
    await w.terminate();
  };
  const retireIfIdle = () => {
    if (wroteSinceCheck || !worker) {
      wroteSinceCheck = false;
      return;
    }
    const w = worker;
    worker = undefined;
    clearInterval(idleCheck);
    idleCheck = undefined;
    void end(w, 'retire');
  };
  return {
    wrote() {
      wroteSinceCheck = true;
      if (worker || stopped) return;
      worker = new Worker(SOURCE, { eval: true, workerData: { file, intervalMs, driver } });
      // Never keeps a process alive (short CLI commands open the database too).
      worker.unref();
      worker.on('error', () => {});
      idleCheck = setInterval(retireIfIdle, idleMs);
      idleCheck.unref();
    },
    get running() {
      return worker !== undefined;
    },
    async stop() {
      stopped = true;
      clearInterval(idleCheck);
      const w = worker;
      worker = undefined;
      if (w) await end(w, 'stop');
    },
  };
}
