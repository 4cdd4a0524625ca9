// Authorization codes as they are issued (and ended early), token lookups of the Admin API, and
// ending every token of an installation. (Grants themselves run through the GrantStore.)
import type { PrivateTokenRow, RefreshRow } from '../ports/rows.ts';
import type { AccessTokenLookup, Issued, NewCode, TokenRepository } from '../ports/tokens.ts';
import type { PageWithToken } from '../ports/tokens.ts';
import type { Executor } from './executor.ts';
import { pageWithToken } from './token-page.ts';

export class SqlTokenRepository implements TokenRepository {
  // PostgreSQL only: there the token's own read is a round trip, which reading it with the page
  // saves. On SQLite statements are synchronous calls and the service reuses token rows while the
  // change stamp stands, so a page read with its token would only add work.
  readonly pageWithToken: PageWithToken | undefined;

  constructor(private readonly x: Executor) {
    this.pageWithToken = x.dialect === 'postgres' ? (key, resource, q) => pageWithToken(x, key, resource, q) : undefined;
  }

  async insertCode(c: NewCode): Promise<void> {
    await this.x.k
      .insertInto('authorization_codes')
      .values({
        code_hash: c.codeHash,
        app_id: c.appId,
        store_id: c.storeId,
        installation_id: c.installationId,
        redirect_uri: c.redirectUri,
        scopes: c.scopes,
        code_challenge: c.codeChallenge,
        expires_at: c.expiresAt,
        used_at: null,
        family_id: null,
        created_at: c.now,
        merchant_id: c.merchantId ?? null,
      })
      .execute();
  }

  async revokeMerchantAccess(storeId: number, merchantId: number, now: number): Promise<number> {
    const res = await this.x.k
      .updateTable('token_families')
      .set({ revoked_at: now })
      .where('store_id', '=', storeId)
      .where('merchant_id', '=', merchantId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  async revokeInstallation(storeId: number, installationId: number, now: number): Promise<void> {
    await this.x.k
      .updateTable('token_families')
      .set({ revoked_at: now })
      .where('store_id', '=', storeId)
      .where('installation_id', '=', installationId)
      .where('revoked_at', 'is', null)
      .execute();
  }

  async expireCodes(storeId: number, installationId: number, now: number): Promise<number> {
    // Expired rather than marked used: a used code presented again counts as a replay (and revokes
    // what it issued), while this one simply stops being redeemable.
    const res = await this.x.k
      .updateTable('authorization_codes')
      .set({ expires_at: now })
      .where('store_id', '=', storeId)
      .where('installation_id', '=', installationId)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  // On SQLite these run as synchronous prepared statements on the shared connection. Such a read
  // may see a write of a transaction still in flight; the only writes that matter here are
  // revocations, and refusing a token a moment early is harmless.
  findAccessToken(storeId: number, hash: string): Promise<AccessTokenLookup | undefined> {
    return this.x.runner.first(this.x.prepared.accessToken, { store: storeId, hash });
  }

  findPrivateToken(storeId: number, hash: string): Promise<Issued<PrivateTokenRow> | undefined> {
    return this.x.runner.first(this.x.prepared.privateToken, { store: storeId, hash });
  }

  findRefreshToken(storeId: number, hash: string): Promise<RefreshRow | undefined> {
    return this.x.runner.first(this.x.prepared.refreshByHash, { store: storeId, hash });
  }
}
