// Authorization codes, token issuance, refresh rotation and revocation: the use cases of the
// token endpoint, each grant one atomic unit through the GrantStore.
import type { Config } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import { checkCode, decideRefresh, decideReplay, isPkceVerifier, pkceChallenge } from '../domain/grants.ts';
import { covers, formatScopes, type Scope, storedScopes } from '../domain/scopes.ts';
import { deriveSuccessorPair, hashToken, looksLike, newFamilyId, newToken } from '../domain/tokens.ts';
import { InvalidGrant } from '../domain/errors.ts';
import type { AppRow, ClientCheck, GrantQueries, Storage } from '../storage/ports.ts';

export interface TokenRecord {
  token_type: 'Bearer';
  access_token: string;
  refresh_token: string;
  expires_at: number;
  expires_in: number;
  scope: string;
  store_id: string;
  store_name: string;
}

export class OAuthService {
  constructor(
    private readonly storage: Storage,
    /** Holds the key refresh successors are derived with (kept in the database, so it outlives a change of master key). */
    private readonly box: { readonly derivationKey: Buffer },
    private readonly config: Pick<Config, 'accessTokenTtlSeconds' | 'refreshTokenTtlSeconds' | 'codeTtlSeconds'>,
    private readonly clock: Clock,
  ) {}

  /** Issues a single-use authorization code for an installation; returns the plaintext code. */
  async issueCode(input: {
    appId: number;
    storeId: number;
    installationId: number;
    redirectUri: string;
    scopes: readonly Scope[];
    codeChallenge: string | null;
  }): Promise<string> {
    const code = newToken('code');
    const now = this.clock();
    await this.storage.tokens.insertCode({
      codeHash: hashToken(code),
      appId: input.appId,
      storeId: input.storeId,
      installationId: input.installationId,
      redirectUri: input.redirectUri,
      scopes: formatScopes(input.scopes),
      codeChallenge: input.codeChallenge,
      expiresAt: now + this.config.codeTtlSeconds * 1000,
      now,
    });
    return code;
  }

  /** authorization_code grant: atomically single-use; a replay revokes what the code issued. */
  async exchangeCode(input: {
    /** The client presenting the code: authenticated before anything else is judged. */
    client: ClientCheck;
    storeId: number;
    storeName: string;
    code: string;
    redirectUri: string | undefined;
    codeVerifier: string | undefined;
  }): Promise<TokenRecord> {
    if (!looksLike('code', input.code)) {
      await this.authenticate(input.client);
      throw new InvalidGrant('authorization code is invalid');
    }
    const codeHash = hashToken(input.code);
    const now = this.clock();
    const pair = { accessToken: newToken('access'), refreshToken: newToken('refresh') };
    const verifier = input.codeVerifier;
    const { app, redeemed } = await this.storage.grants.redeemCode(input.client, {
      ...this.pairRow(pair, input.storeId, now),
      codeHash,
      familyId: newFamilyId(now),
      redirectUri: input.redirectUri ?? null,
      codeChallenge: verifier !== undefined && isPkceVerifier(verifier) ? pkceChallenge(verifier) : null,
    });
    if (redeemed) return this.record(pair, now + this.config.accessTokenTtlSeconds * 1000, input, redeemed.scopes);
    // Anything but the usual redemption (a replay, an expiry, a wrong verifier, a changed grant):
    // nothing was changed; decided here in full.
    type Outcome = { error: string } | { error?: undefined; expiresAt: number; scopes: string };
    const outcome = await this.storage.grants.run(async (q): Promise<Outcome> => {
      const row = await q.codeByHash(input.storeId, codeHash);
      // A code of another store is as unknown here as a code that does not exist.
      const check = checkCode(row && row.store_id === input.storeId ? row : undefined, {
        appId: app.id,
        redirectUri: input.redirectUri,
        codeVerifier: input.codeVerifier,
        now,
      });
      if (!check.ok) {
        if (check.replay && row!.family_id) await q.revokeFamily(input.storeId, row!.family_id, now);
        return { error: check.reason };
      }
      const familyId = newFamilyId(now);
      if (!(await q.claimCode(input.storeId, codeHash, familyId, now))) {
        const after = await q.codeByHash(input.storeId, codeHash);
        if (after?.family_id) await q.revokeFamily(input.storeId, after.family_id, now);
        return { error: 'authorization code was already used' };
      }
      const installation = await q.installation(input.storeId, row!.installation_id);
      if (!installation || installation.uninstalled_at !== null) return { error: 'the app is not installed in this store' };
      // Read in this grant, after the claim: a change of the grant that committed since the code
      // was issued is seen here, so the tokens never carry more than the installation holds now.
      if (!covers(storedScopes(installation.scopes), storedScopes(row!.scopes)))
        return { error: 'authorization code asks for scopes the app no longer holds' };
      await q.insertFamily(input.storeId, familyId, row!.installation_id, now);
      const expiresAt = await this.insertPair(q, pair, {
        familyId,
        installationId: row!.installation_id,
        storeId: row!.store_id,
        appId: row!.app_id,
        scopes: row!.scopes,
        now,
      });
      return { expiresAt, scopes: row!.scopes };
    });
    if (outcome.error !== undefined) throw new InvalidGrant(outcome.error);
    return this.record(pair, outcome.expiresAt, input, outcome.scopes);
  }

  /**
   * refresh_token grant with rotation. A rotated token presented again gets the same successor pair
   * while neither of its tokens has been used; after that it revokes the family.
   */
  async refresh(input: { client: ClientCheck; storeId: number; storeName: string; refreshToken: string }): Promise<TokenRecord> {
    if (!looksLike('refresh', input.refreshToken)) {
      await this.authenticate(input.client);
      throw new InvalidGrant('refresh token is invalid');
    }
    const tokenHash = hashToken(input.refreshToken);
    const now = this.clock();
    // Derived, not drawn: a retry gets the same pair without the pair being stored anywhere.
    const successor = deriveSuccessorPair(this.box.derivationKey, input.refreshToken);
    const { app, rotated } = await this.storage.grants.rotateRefresh(input.client, {
      ...this.pairRow(successor, input.storeId, now),
      tokenHash,
    });
    if (rotated) return this.record(successor, now + this.config.accessTokenTtlSeconds * 1000, input, rotated.scopes);
    // Anything but a fresh token's rotation (a retry, a reuse, an expiry, a revocation): nothing was
    // changed; decided here in full.
    type Outcome = { error: string } | { error?: undefined; expiresAt: number; scopes: string };
    const outcome = await this.storage.grants.run(async (q): Promise<Outcome> => {
      for (let attempt = 0; attempt < 2; attempt++) {
        const found = await q.refreshByHash(input.storeId, tokenHash);
        const row = found && found.store_id === input.storeId ? found : undefined;
        const decision = decideRefresh(row, { appId: app.id, now });
        if (decision.action === 'reject') return { error: decision.reason };
        if (decision.action === 'check-successor') {
          const next = await q.successor(input.storeId, hashToken(successor.refreshToken), hashToken(successor.accessToken));
          const replay = decideReplay(row!, next, now);
          if (replay.action === 'reject') return { error: replay.reason };
          if (replay.action === 'revoke-family') {
            await q.revokeFamily(input.storeId, row!.family_id, now);
            return { error: replay.reason };
          }
          return { expiresAt: next!.access_expires_at, scopes: row!.scopes };
        }
        // Lost a race with a concurrent refresh of the same token: read again and serve its successor.
        if (!(await q.claimRefresh(input.storeId, tokenHash, now))) continue;
        const expiresAt = await this.insertPair(q, successor, {
          familyId: row!.family_id,
          installationId: row!.installation_id,
          storeId: row!.store_id,
          appId: row!.app_id,
          scopes: row!.scopes,
          now,
        });
        return { expiresAt, scopes: row!.scopes };
      }
      return { error: 'refresh token is invalid' };
    });
    if (outcome.error !== undefined) throw new InvalidGrant(outcome.error);
    return this.record(successor, outcome.expiresAt, input, outcome.scopes);
  }

  /**
   * RFC 7009: revokes an access or refresh token of this client. A refresh token takes its whole
   * family with it. Unknown tokens are not an error (the endpoint answers 200 either way).
   */
  async revoke(input: { appId: number; storeId: number; token: string }): Promise<void> {
    const kind = looksLike('refresh', input.token) ? 'refresh' : looksLike('access', input.token) ? 'access' : undefined;
    if (!kind) return;
    const now = this.clock();
    const hash = hashToken(input.token);
    await this.storage.grants.run(async (q) => {
      const row = kind === 'refresh' ? await q.refreshOwner(input.storeId, hash) : await q.accessOwner(input.storeId, hash);
      if (!row || row.app_id !== input.appId || row.store_id !== input.storeId) return;
      // A refresh token takes its whole family along: every token of the family is refused from now on.
      if (kind === 'refresh') await q.revokeFamily(input.storeId, row.family_id, now);
      else await q.revokeAccess(input.storeId, hash, now);
    });
  }

  /** The client's app as it is now, checked; for refusals that must not come before the client's own. */
  private async authenticate(client: ClientCheck): Promise<AppRow> {
    return client.check(client.lookupId === undefined ? undefined : await this.storage.apps.findByClientId(client.lookupId));
  }

  /** The stored form of a new pair: its hashes and expiries. */
  private pairRow(pair: { accessToken: string; refreshToken: string }, storeId: number, now: number) {
    return {
      storeId,
      accessHash: hashToken(pair.accessToken),
      refreshHash: hashToken(pair.refreshToken),
      accessExpiresAt: now + this.config.accessTokenTtlSeconds * 1000,
      refreshExpiresAt: now + this.config.refreshTokenTtlSeconds * 1000,
      now,
    };
  }

  private async insertPair(
    q: GrantQueries,
    pair: { accessToken: string; refreshToken: string },
    ctx: { familyId: string; installationId: number; storeId: number; appId: number; scopes: string; now: number },
  ): Promise<number> {
    const accessExpiresAt = ctx.now + this.config.accessTokenTtlSeconds * 1000;
    await q.insertPair({
      ...ctx,
      accessHash: hashToken(pair.accessToken),
      refreshHash: hashToken(pair.refreshToken),
      accessExpiresAt,
      refreshExpiresAt: ctx.now + this.config.refreshTokenTtlSeconds * 1000,
    });
    return accessExpiresAt;
  }

  private record(
    pair: { accessToken: string; refreshToken: string },
    expiresAtMs: number,
    store: { storeId: number; storeName: string },
    scopes: string,
  ): TokenRecord {
    const expiresAt = Math.floor(expiresAtMs / 1000);
    return {
      token_type: 'Bearer',
      access_token: pair.accessToken,
      refresh_token: pair.refreshToken,
      expires_at: expiresAt,
      expires_in: Math.max(0, expiresAt - Math.floor(this.clock() / 1000)),
      scope: scopes.split(',').join(' '),
      store_id: String(store.storeId),
      store_name: store.storeName,
    };
  }
}
