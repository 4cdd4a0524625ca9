// How token grants commit.
//
// SQLite (one connection): concurrent grants are gathered and run one after another inside ONE
// transaction, each under its own savepoint, and answered only after the one commit is on disk,
// so N grants share one sync instead of paying N (group commit). Each grant still sees the
// effects of those before it, so single use of codes and rotation of refresh tokens stay exactly
// as atomic as with a transaction each. A grant that throws is rolled back to its savepoint
// alone; a failed COMMIT fails the whole batch. When the batch reaches the disk is decided by
// the durability policy (durability.ts).
//
// PostgreSQL: one transaction per grant on the pool, and the usual grants as one statement each
// (grant-steps.ts); the server groups its own commits. The client is checked on the app as this
// process last read it, and the grant's statement changes nothing unless the app row is still
// that one: one round trip per grant while the app stays as it was.
import type SQLite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { AppRowCache, sameApp } from './app-row-cache.ts';
import type { Durability } from './durability.ts';
import { KyselyRunner, SqliteRunner } from './prepared-query.ts';
import type { AppRow, ClientCheck, CodeRedemption, GrantQueries, GrantStore, RefreshRotation } from './ports.ts';
import { PreparedGrantQueries } from './repositories/grant-queries.ts';
import {
  type CheckedGrant,
  type CheckedGrantSteps,
  type GrantSteps,
  postgresGrantSteps,
  sqliteGrantSteps,
} from './repositories/grant-steps.ts';
import type { PreparedStatements } from './repositories/prepared-statements.ts';
import type { Database } from './schema.ts';

interface Pending {
  work: (q: GrantQueries) => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export class SqliteGroupCommit implements GrantStore {
  private queue: Pending[] = [];
  private flushing = false;
  private readonly queries: PreparedGrantQueries;
  private readonly runner: SqliteRunner;
  private readonly steps: GrantSteps;

  constructor(
    private readonly sqlite: SQLite.Database,
    private readonly durability: Durability,
    kysely: Kysely<Database>,
    private readonly prepared: PreparedStatements,
    private readonly maxBatch = 256,
  ) {
    this.runner = new SqliteRunner(sqlite);
    this.queries = new PreparedGrantQueries(this.runner, prepared);
    this.steps = sqliteGrantSteps(kysely, prepared);
  }

  get statements(): readonly string[] {
    return this.steps.statements;
  }

  // The client's app is read inside the batch too: a read outside a transaction costs SQLite a
  // read transaction of its own (WAL locks taken and released), several times the read itself.
  rotateRefresh(client: ClientCheck, r: RefreshRotation) {
    return this.run(async () => {
      const app = client.check(await this.clientApp(client));
      return { app, rotated: await this.steps.rotateRefresh(this.runner, app.id, r) };
    });
  }

  redeemCode(client: ClientCheck, r: CodeRedemption) {
    return this.run(async () => {
      const app = client.check(await this.clientApp(client));
      return { app, redeemed: await this.steps.redeemCode(this.runner, app.id, r) };
    });
  }

  private async clientApp(client: ClientCheck): Promise<AppRow | undefined> {
    return client.lookupId === undefined ? undefined : this.runner.first(this.prepared.appByClientId, { id: client.lookupId });
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

export class PerGrantTransactions implements GrantStore {
  private readonly steps: CheckedGrantSteps;
  private readonly runner: KyselyRunner;
  private readonly apps = new AppRowCache();

  constructor(
    private readonly kysely: Kysely<Database>,
    private readonly prepared: PreparedStatements,
  ) {
    this.steps = postgresGrantSteps(kysely);
    this.runner = new KyselyRunner(kysely);
  }

  get statements(): readonly string[] {
    return this.steps.statements;
  }

  async rotateRefresh(client: ClientCheck, r: RefreshRotation) {
    const { app, granted } = await this.grant(
      client,
      (copy) => this.steps.rotateRefreshChecked(this.runner, copy, r),
      (fresh) => this.steps.rotateRefresh(this.runner, fresh.id, r),
    );
    return { app, rotated: granted };
  }

  async redeemCode(client: ClientCheck, r: CodeRedemption) {
    const { app, granted } = await this.grant(
      client,
      (copy) => this.steps.redeemCodeChecked(this.runner, copy, r),
      (fresh) => this.steps.redeemCode(this.runner, fresh.id, r),
    );
    return { app, redeemed: granted };
  }

  /**
   * The client checked, then its grant as one statement committed on its own (no transaction
   * around them). With the app in the cache: the check on that copy, and the statement that
   * requires the row to be unchanged. Neither a refusal on the copy (the secret or the redirect
   * URI may have changed since, on any node) nor a row found changed is final: the grant then runs
   * as it does without a copy, on the app read afresh, checked, and only then the grant.
   */
  private async grant<T>(
    client: ClientCheck,
    onCopy: (app: AppRow) => Promise<CheckedGrant<T>>,
    onFresh: (app: AppRow) => Promise<T | undefined>,
  ): Promise<{ app: AppRow; granted: T | undefined }> {
    const copy = client.lookupId === undefined ? undefined : this.apps.get(client.lookupId);
    if (copy) {
      let app: AppRow;
      try {
        app = client.check(copy);
      } catch (refusal) {
        const fresh = await this.clientApp(client);
        // Refused on this very row already: the same answer, without running the check twice.
        if (fresh && sameApp(fresh, copy)) throw refusal;
        return this.grantOn(client, fresh, onFresh);
      }
      const outcome = await onCopy(app);
      if (!outcome.appChanged) return { app, granted: outcome.granted };
    }
    return this.grantOn(client, await this.clientApp(client), onFresh);
  }

  private async grantOn<T>(client: ClientCheck, found: AppRow | undefined, onFresh: (app: AppRow) => Promise<T | undefined>) {
    const app = client.check(found);
    return { app, granted: await onFresh(app) };
  }

  /** The app as it is now, kept for the next grant of this client (forgotten when there is none). */
  private async clientApp(client: ClientCheck): Promise<AppRow | undefined> {
    if (client.lookupId === undefined) return undefined;
    const row = await this.runner.first(this.prepared.appByClientId, { id: client.lookupId });
    this.apps.set(client.lookupId, row);
    return row;
  }

  run<T>(work: (q: GrantQueries) => Promise<T>): Promise<T> {
    return this.kysely.transaction().execute((trx) => work(new PreparedGrantQueries(new KyselyRunner(trx), this.prepared)));
  }
}
