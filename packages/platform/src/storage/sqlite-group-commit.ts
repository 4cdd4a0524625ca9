// How token grants commit on SQLite (one connection; PostgreSQL's are in pg-grants.ts): concurrent
// grants are gathered and run one after another inside ONE transaction, each under its own
// savepoint, and answered only after the one commit is on disk, so N grants share one sync
// instead of paying N (group commit). Each grant still sees the effects of those before it, so
// single use of codes and rotation of refresh tokens stay exactly as atomic as with a transaction
// each. A grant that throws is rolled back to its savepoint alone; a failed COMMIT fails the whole
// batch. When the batch reaches the disk is decided by the durability policy (durability.ts).
// Nothing a batch entry runs judges a client or calls back into the services: the usual grants
// compare the app row with the one the service approved, and only read otherwise.
import type { Durability } from './durability.ts';
import { type QueryRunner, queryRunner, type StatementTarget } from './prepared-query.ts';
import { AppRowCache, sameApp } from './app-row-cache.ts';
import type { AppRow } from './ports/rows.ts';
import type { CodeRedemption, GrantClient, GrantOutcome, GrantQueries, GrantStore, RefreshRotation } from './ports/tokens.ts';
import { PreparedGrantQueries } from './repositories/grant-queries.ts';
import { type GrantSteps, sqliteGrantSteps } from './repositories/grant-steps.ts';
import type { PreparedStatements } from './repositories/prepared-statements.ts';
import type { SqliteHandle } from './sqlite-handle.ts';

interface Pending {
  work: (q: GrantQueries) => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export class SqliteGroupCommit implements GrantStore {
  private queue: Pending[] = [];
  private flushing = false;
  private readonly queries: PreparedGrantQueries;
  // On the connection this batcher holds inside its own BEGIN … COMMIT: every statement at once.
  private readonly runner: QueryRunner;
  private readonly steps: GrantSteps;
  private readonly sqlite: SqliteHandle;
  /** The apps read by grants, by client_id: the copies services judge the next grant's client on. */
  private readonly apps = new AppRowCache();

  constructor(
    db: StatementTarget,
    private readonly durability: Durability,
    private readonly prepared: PreparedStatements,
    private readonly maxBatch = 256,
  ) {
    if (!db.sqlite) throw new Error('group commit runs on SQLite only');
    this.sqlite = db.sqlite;
    this.runner = queryRunner(db);
    this.queries = new PreparedGrantQueries(this.runner, prepared);
    this.steps = sqliteGrantSteps(db.kysely, prepared);
  }

  knownApp(clientId: string): AppRow | undefined {
    return this.apps.get(clientId);
  }

  // The client's app is read inside the batch too: a read outside a transaction costs SQLite a
  // read transaction of its own (WAL locks taken and released), several times the read itself.
  // The service judged the client on a row it had before; the grant runs only if the app is still
  // that row, so a change committed since (on this node or another) is judged before it grants.
  rotateRefresh(client: GrantClient, r: RefreshRotation) {
    return this.run(
      (): Promise<GrantOutcome<{ scopes: string }>> => this.onApproved(client, (app) => this.steps.rotateRefresh(this.runner, app.id, r)),
    );
  }

  redeemCode(client: GrantClient, r: CodeRedemption) {
    return this.run(
      (): Promise<GrantOutcome<{ scopes: string; installationId: number }>> =>
        this.onApproved(client, (app) => this.steps.redeemCode(this.runner, app.id, r)),
    );
  }

  private async onApproved<T>(client: GrantClient, step: (app: AppRow) => Promise<T | undefined>): Promise<GrantOutcome<T>> {
    const found = await this.runner.first(this.prepared.appByClientId, { id: client.lookupId });
    const approved = client.approved;
    if (found && approved && sameApp(found, approved)) return { ran: true, app: approved, granted: await step(approved) };
    this.apps.set(client.lookupId, found);
    return { ran: false, app: found };
  }

  run<T>(work: (q: GrantQueries) => Promise<T>): Promise<T> {
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
    const sqlite = this.sqlite;
    try {
      await this.durability.unsynced(async () => {
        sqlite.exec('BEGIN IMMEDIATE');
        try {
          // Prepared (and cached by the handle) rather than exec'd: parsed once, not per grant.
          const savepoint = sqlite.prepare('SAVEPOINT grant_step');
          const release = sqlite.prepare('RELEASE grant_step');
          for (const p of batch) {
            savepoint.run();
            try {
              outcomes.push({ ok: true, value: await p.work(this.queries) });
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
    this.durability.flush().then(answer, (error: unknown) => {
      for (const p of batch) p.reject(error);
    });
  }
}
