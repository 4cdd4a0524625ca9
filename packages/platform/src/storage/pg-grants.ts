// How token grants commit on PostgreSQL (SQLite's are in sqlite-group-commit.ts): one transaction
// per grant on the pool, and the usual grants as one statement each (grant-steps.ts); the server
// groups its own commits. The client is checked on the app as this process last read it, and the
// grant's statement changes nothing unless the app row is still that version: one round trip per
// grant while the app stays as it was.
import { AppRowCache, sameApp } from './app-row-cache.ts';
import { type PreparedQuery, type QueryRunner, queryRunner, type StatementTarget } from './prepared-query.ts';
import type { AppRow, ClientCheck, CodeRedemption, GrantQueries, GrantStore, RefreshRotation } from './ports.ts';
import { PreparedGrantQueries } from './repositories/grant-queries.ts';
import { appWithVersion, type CheckedGrant, type CheckedGrantSteps, postgresGrantSteps } from './repositories/grant-steps.ts';
import type { PreparedStatements } from './repositories/prepared-statements.ts';

export class PerGrantTransactions implements GrantStore {
  private readonly steps: CheckedGrantSteps;
  private readonly runner: QueryRunner;
  private readonly apps = new AppRowCache();
  /** The version stamp each cached row was read with (the checked grants compare it). */
  private readonly versions = new WeakMap<AppRow, string>();
  private readonly appWithVersion: PreparedQuery<AppRow & { row_version: string }, { id: string }>;

  constructor(
    private readonly db: StatementTarget,
    private readonly prepared: PreparedStatements,
  ) {
    this.steps = postgresGrantSteps(db.kysely);
    this.appWithVersion = appWithVersion(db.kysely);
    this.runner = queryRunner(db);
  }

  async rotateRefresh(client: ClientCheck, r: RefreshRotation) {
    const { app, granted } = await this.grant(
      client,
      (copy, version) => this.steps.rotateRefreshChecked(this.runner, copy, version, r),
      (fresh) => this.steps.rotateRefresh(this.runner, fresh.id, r),
    );
    return { app, rotated: granted };
  }

  async redeemCode(client: ClientCheck, r: CodeRedemption) {
    const { app, granted } = await this.grant(
      client,
      (copy, version) => this.steps.redeemCodeChecked(this.runner, copy, version, r),
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
    onCopy: (app: AppRow, version: string) => Promise<CheckedGrant<T>>,
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
      const outcome = await onCopy(app, this.versions.get(copy)!);
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
    const found = await this.runner.first(this.appWithVersion, { id: client.lookupId });
    if (!found) {
      this.apps.set(client.lookupId, undefined);
      return undefined;
    }
    const { row_version, ...row } = found;
    this.versions.set(row, row_version);
    this.apps.set(client.lookupId, row);
    return row;
  }

  run<T>(work: (q: GrantQueries) => Promise<T>): Promise<T> {
    return this.db.kysely
      .transaction()
      .execute((trx) => work(new PreparedGrantQueries(queryRunner(this.db, { scope: trx }), this.prepared)));
  }
}
