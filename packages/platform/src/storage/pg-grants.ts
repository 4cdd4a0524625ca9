// How token grants commit on PostgreSQL (SQLite's are in sqlite-group-commit.ts): one transaction
// per grant on the pool, and the usual grants as one statement each (grant-steps.ts); the server
// groups its own commits. The service judges the client on the app as this process last read it
// (knownApp), and the grant's statement changes nothing unless the app row is still that version:
// one round trip per grant while the app stays as it was.
import { AppRowCache, sameApp } from './app-row-cache.ts';
import { type PreparedQuery, type QueryRunner, queryRunner, type StatementTarget } from './prepared-query.ts';
import type { AppRow } from './ports/rows.ts';
import type { CodeRedemption, GrantClient, GrantOutcome, GrantQueries, GrantStore, RefreshRotation } from './ports/tokens.ts';
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

  knownApp(clientId: string): AppRow | undefined {
    return this.apps.get(clientId);
  }

  rotateRefresh(client: GrantClient, r: RefreshRotation) {
    return this.onApproved(client, (app, version) => this.steps.rotateRefreshChecked(this.runner, app, version, r));
  }

  redeemCode(client: GrantClient, r: CodeRedemption) {
    return this.onApproved(client, (app, version) => this.steps.redeemCodeChecked(this.runner, app, version, r));
  }

  /**
   * The grant as one statement committed on its own (no transaction around it), which changes
   * nothing unless the app row still has the version stamp the approved copy was read with. Found
   * changed (on any node), the app is read afresh and handed back for the service to judge again.
   */
  private async onApproved<T>(
    client: GrantClient,
    step: (app: AppRow, version: string) => Promise<CheckedGrant<T>>,
  ): Promise<GrantOutcome<T>> {
    let app = client.approved;
    if (!app) return { ran: false, app: await this.clientApp(client.lookupId) };
    let version = app.client_id === client.lookupId ? this.versions.get(app) : undefined;
    if (version === undefined) {
      // A row this store did not read (or of another client_id): its stamp is the one of the row
      // as it is now, if equal.
      const fresh = await this.clientApp(client.lookupId);
      if (!fresh || !sameApp(fresh, app)) return { ran: false, app: fresh };
      app = fresh;
      version = this.versions.get(fresh)!;
    }
    const outcome = await step(app, version);
    if (!outcome.appChanged) return { ran: true, app, granted: outcome.granted };
    return { ran: false, app: await this.clientApp(client.lookupId) };
  }

  /** The app as it is now, kept for the next grant of this client (forgotten when there is none). */
  private async clientApp(clientId: string): Promise<AppRow | undefined> {
    const found = await this.runner.first(this.appWithVersion, { id: clientId });
    if (!found) {
      this.apps.set(clientId, undefined);
      return undefined;
    }
    const { row_version, ...row } = found;
    this.versions.set(row, row_version);
    this.apps.set(clientId, row);
    return row;
  }

  run<T>(work: (q: GrantQueries) => Promise<T>): Promise<T> {
    return this.db.kysely
      .transaction()
      .execute((trx) => work(new PreparedGrantQueries(queryRunner(this.db, { scope: trx }), this.prepared)));
  }
}
