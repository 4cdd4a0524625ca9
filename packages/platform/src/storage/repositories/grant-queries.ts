// The statements of one token grant, as prepared statements on whatever runner the grant runs on.
// Every one names the store the grant is for.
import type { QueryRunner } from '../prepared-query.ts';
import type { CodeRow, RefreshRow, SuccessorRow, TokenOwner } from '../ports/rows.ts';
import type { GrantQueries, NewOnlineAccess, NewTokenPair } from '../ports/tokens.ts';
import type { PreparedStatements } from './prepared-statements.ts';

export class PreparedGrantQueries implements GrantQueries {
  constructor(
    private readonly run: QueryRunner,
    private readonly q: PreparedStatements,
  ) {}

  codeByHash(storeId: number, hash: string): Promise<CodeRow | undefined> {
    return this.run.first(this.q.codeByHash, { store: storeId, hash });
  }
  async claimCode(storeId: number, hash: string, familyId: string, now: number): Promise<boolean> {
    // The guard `used_at IS NULL` makes redemption atomic: of concurrent requests, one updates the row.
    return (await this.run.run(this.q.claimCode, { store: storeId, hash, now, family: familyId })) === 1;
  }
  installation(storeId: number, id: number): Promise<{ id: number; uninstalled_at: number | null; scopes: string } | undefined> {
    return this.run.first(this.q.installation, { store: storeId, id });
  }
  async insertFamily(storeId: number, id: string, installationId: number, now: number): Promise<void> {
    await this.run.run(this.q.insertFamily, { store: storeId, id, installation: installationId, now });
  }
  async insertPair(p: NewTokenPair): Promise<void> {
    const common = { family: p.familyId, installation: p.installationId, store: p.storeId, app: p.appId, scopes: p.scopes, now: p.now };
    await this.run.run(this.q.insertAccess, { ...common, hash: p.accessHash, expires: p.accessExpiresAt });
    await this.run.run(this.q.insertRefresh, {
      ...common,
      hash: p.refreshHash,
      expires: p.refreshExpiresAt,
      accessExpires: p.accessExpiresAt,
    });
  }
  async insertOnlineAccess(a: NewOnlineAccess): Promise<void> {
    const common = { installation: a.installationId, store: a.storeId, now: a.now };
    await this.run.run(this.q.insertOnlineFamily, { ...common, id: a.familyId, merchant: a.merchantId });
    await this.run.run(this.q.insertAccess, {
      ...common,
      family: a.familyId,
      app: a.appId,
      scopes: a.scopes,
      hash: a.accessHash,
      expires: a.accessExpiresAt,
    });
  }
  async useLaunchToken(storeId: number, jti: string, expiresAt: number, now: number): Promise<boolean> {
    return (await this.run.run(this.q.useLaunchToken, { store: storeId, jti, expires: expiresAt, now })) === 1;
  }
  liveInstallation(storeId: number, appId: number): Promise<{ id: number; scopes: string } | undefined> {
    return this.run.first(this.q.liveInstallation, { store: storeId, app: appId });
  }
  storeMerchant(storeId: number, merchantId: number): Promise<{ id: number; email: string } | undefined> {
    return this.run.first(this.q.storeMerchant, { store: storeId, merchant: merchantId });
  }
  refreshByHash(storeId: number, hash: string): Promise<RefreshRow | undefined> {
    return this.run.first(this.q.refreshByHash, { store: storeId, hash });
  }
  successor(storeId: number, refreshHash: string, accessHash: string): Promise<SuccessorRow | undefined> {
    return this.run.first(this.q.successor, { store: storeId, refreshHash, accessHash });
  }
  async markAccessUsed(storeId: number, hash: string, now: number): Promise<boolean> {
    return (await this.run.run(this.q.markAccessUsed, { store: storeId, hash, now })) === 1;
  }
  async claimRefresh(storeId: number, hash: string, now: number): Promise<boolean> {
    return (await this.run.run(this.q.claimRefresh, { store: storeId, hash, now })) === 1;
  }
  refreshOwner(storeId: number, hash: string): Promise<TokenOwner | undefined> {
    return this.run.first(this.q.refreshOwner, { store: storeId, hash });
  }
  accessOwner(storeId: number, hash: string): Promise<TokenOwner | undefined> {
    return this.run.first(this.q.accessOwner, { store: storeId, hash });
  }
  async revokeAccess(storeId: number, hash: string, now: number): Promise<void> {
    await this.run.run(this.q.revokeAccess, { store: storeId, hash, now });
  }
  async revokeFamily(storeId: number, familyId: string, now: number): Promise<void> {
    await this.run.run(this.q.revokeFamily, { store: storeId, family: familyId, now });
  }
}
