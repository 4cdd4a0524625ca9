// WAL checkpoints on a worker thread with its own connection. A checkpoint copies pages into the
// database file and fsyncs it; done on the serving thread (SQLite's automatic checkpoint runs
// inside a COMMIT) it stalls every request for milliseconds. Here the serving connection only
// checkpoints as a backstop when the WAL has grown very large.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const require = createRequire(import.meta.url);

const SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 1000');
let stopped = false;
const tick = () => {
  if (stopped) return;
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
  setTimeout(tick, workerData.intervalMs);
};
parentPort.on('message', (m) => { if (m === 'stop') { stopped = true; db.close(); parentPort.close(); } });
setTimeout(tick, workerData.intervalMs);
`;

export interface WalCheckpointer {
  stop(): Promise<void>;
}

export function startWalCheckpointer(file: string, intervalMs = 250): WalCheckpointer {
  const worker = new Worker(SOURCE, { eval: true, workerData: { file, intervalMs, driver: require.resolve('better-sqlite3') } });
  // Never keeps a process alive (short CLI commands open the database too).
  worker.unref();
  worker.on('error', () => {});
  return {
    async stop() {
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage('stop');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 1000))]);
      await worker.terminate();
    },
  };
}
