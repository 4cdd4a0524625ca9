// The statements of one token grant, as prepared statements on whatever runner the grant runs on.
import type { QueryRunner } from '../prepared-query.ts';
import type { CodeRow, GrantQueries, NewTokenPair, RefreshRow, SuccessorRow, TokenOwner } from '../ports.ts';
import type { PreparedStatements } from './prepared-statements.ts';

export class PreparedGrantQueries implements GrantQueries {
  constructor(
    private readonly run: QueryRunner,
    private readonly q: PreparedStatements,
  ) {}

  codeByHash(hash: string): Promise<CodeRow | undefined> {
    return this.run.first(this.q.codeByHash, { hash });
  }
  async claimCode(hash: string, familyId: string, now: number): Promise<boolean> {
    // The guard `used_at IS NULL` makes redemption atomic: of concurrent requests, one updates the row.
    return (await this.run.run(this.q.claimCode, { hash, now, family: familyId })) === 1;
  }
  installation(id: number): Promise<{ id: number; uninstalled_at: number | null; scopes: string } | undefined> {
    return this.run.first(this.q.installation, { id });
  }
  async insertFamily(id: string, installationId: number, now: number): Promise<void> {
    await this.run.run(this.q.insertFamily, { id, installation: installationId, now });
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
  refreshByHash(hash: string): Promise<RefreshRow | undefined> {
    return this.run.first(this.q.refreshByHash, { hash });
  }
  successor(refreshHash: string, accessHash: string): Promise<SuccessorRow | undefined> {
    return this.run.first(this.q.successor, { refreshHash, accessHash });
  }
  async markAccessUsed(hash: string, now: number): Promise<boolean> {
    return (await this.run.run(this.q.markAccessUsed, { hash, now })) === 1;
  }
  async claimRefresh(hash: string, now: number): Promise<boolean> {
    return (await this.run.run(this.q.claimRefresh, { hash, now })) === 1;
  }
  refreshOwner(hash: string): Promise<TokenOwner | undefined> {
    return this.run.first(this.q.refreshOwner, { hash });
  }
  accessOwner(hash: string): Promise<TokenOwner | undefined> {
    return this.run.first(this.q.accessOwner, { hash });
  }
  async revokeAccess(hash: string, now: number): Promise<void> {
    await this.run.run(this.q.revokeAccess, { hash, now });
  }
  async revokeFamily(familyId: string, now: number): Promise<void> {
    await this.run.run(this.q.revokeFamily, { family: familyId, now });
  }
}
