// Transactions for the token endpoint.
//
// SQLite (one connection, every commit fsynced): concurrent grants are gathered and run one after
// another inside ONE transaction, each under its own savepoint, and answered only after the one
// COMMIT — so N grants share one fsync instead of paying N (group commit). Each grant still sees
// the effects of those before it, so single use of codes and rotation of refresh tokens stay
// exactly as atomic as with a transaction each. A grant that throws is rolled back to its savepoint
// alone; a failed COMMIT fails the whole batch.
//
// The batch commits with synchronous=NORMAL (the WAL frames are written, not yet flushed) and its
// grants are answered only after an fdatasync of the WAL file, run on libuv's thread pool: the
// same guarantee as synchronous=FULL — no answered grant can be lost in a crash — but the event
// loop keeps serving requests (and gathering the next batch) while the disk flushes.
//
// PostgreSQL: one transaction per grant on the pool; the server does its own group commit.
import { KyselyRunner, SqliteRunner, type QueryRunner } from './prepared-query.ts';
import type { Db } from './db.ts';

export interface Transactor {
  run<T>(work: (q: QueryRunner) => Promise<T>): Promise<T>;
}

interface Pending {
  work: (q: QueryRunner) => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export class SqliteGroupCommit implements Transactor {
  private queue: Pending[] = [];
  private flushing = false;
  private readonly runner: SqliteRunner;

  constructor(
    private readonly db: Db,
    private readonly maxBatch = 256,
  ) {
    this.runner = new SqliteRunner(db);
  }

  run<T>(work: (q: QueryRunner) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
      if (!this.flushing) {
        this.flushing = true;
        // Let the requests already read from the sockets join this batch.
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        await this.commitBatch(batch);
      }
    } finally {
      this.flushing = false;
    }
  }

  private async commitBatch(batch: Pending[]): Promise<void> {
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      // Holding Kysely's connection keeps every other user of the connection out meanwhile.
      await this.db.kysely.connection().execute(async () => {
        const sqlite = this.db.sqlite!;
        if (!sqlite.memory) sqlite.exec('PRAGMA synchronous = NORMAL');
        sqlite.exec('BEGIN IMMEDIATE');
        try {
          // Prepared (and cached by the handle) rather than exec'd: parsed once, not per grant.
          const savepoint = sqlite.prepare('SAVEPOINT grant_step');
          const release = sqlite.prepare('RELEASE grant_step');
          for (const p of batch) {
            savepoint.run();
            try {
              outcomes.push({ ok: true, value: await p.work(this.runner) });
              release.run();
            } catch (error) {
              sqlite.exec('ROLLBACK TO grant_step');
              release.run();
              outcomes.push({ ok: false, error });
            }
          }
          sqlite.exec('COMMIT');
        } catch (error) {
          if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
          throw error;
        } finally {
          if (!sqlite.memory) sqlite.exec('PRAGMA synchronous = FULL');
        }
      });
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    const answer = () =>
      batch.forEach((p, i) => {
        const o = outcomes[i]!;
        if (o.ok) p.resolve(o.value);
        else p.reject(o.error);
      });
    // Not awaited: the next batch may run while this one's flush is on the disk.
    this.db.flushWal().then(answer, (error: unknown) => {
      for (const p of batch) p.reject(error);
    });
  }
}

export class PerRequestTransactions implements Transactor {
  constructor(private readonly db: Db) {}
  run<T>(work: (q: QueryRunner) => Promise<T>): Promise<T> {
    return this.db.kysely.transaction().execute((trx) => work(new KyselyRunner(trx)));
  }
}

export function transactorFor(db: Db): Transactor {
  return db.dialect === 'sqlite' ? new SqliteGroupCommit(db) : new PerRequestTransactions(db);
}
