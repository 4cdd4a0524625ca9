// Authorization codes, token issuance, refresh rotation and revocation: the use cases of the
// token endpoint, each grant one atomic unit through the GrantStore.
import type { Config } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import { checkCode, decideRefresh, decideReplay, presentedChallenge } from '../domain/grants.ts';
import { covers, formatScopes, type Scope, storedScopes } from '../domain/scopes.ts';
import { deriveSuccessorPair, hashToken, looksLike, newFamilyId, newToken } from '../domain/tokens.ts';
import { InvalidGrant } from '../domain/errors.ts';
import type { AppRow } from '../storage/ports/rows.ts';
import type { Storage } from '../storage/ports/storage.ts';
import type { GrantQueries } from '../storage/ports/tokens.ts';
import { type ClientCheck, grantAsClient } from './client-auth.ts';
import type { LaunchTokens } from './launch-tokens.ts';

/** The store's own (offline) access: a pair that rotates. */
export interface TokenRecord {
  token_type: 'Bearer';
  access_token: string;
  refresh_token: string;
  expires_at: number;
  expires_in: number;
  scope: string;
  store_id: string;
  store_name: string;
  /** Set by a token exchange (RFC 8693 requires it there). */
  issued_token_type?: typeof ISSUED_ACCESS_TOKEN;
}

/** Access bound to one merchant: no refresh token; it ends at their logout or when it expires. */
export interface OnlineTokenRecord {
  token_type: 'Bearer';
  access_token: string;
  expires_at: number;
  expires_in: number;
  scope: string;
  store_id: string;
  store_name: string;
  issued_token_type?: typeof ISSUED_ACCESS_TOKEN;
  associated_user_scope: string;
  associated_user: { id: string; email: string };
}

export const ISSUED_ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';

/** The longest an online token lives; the merchant's logout ends it sooner. */
export const ONLINE_ACCESS_TTL_MS = 24 * 3600_000;

type Store = { storeId: number; storeName: string };
/** What one grant decided inside its transaction: a refusal, or what it issued. */
type Outcome = { error: string } | { error?: undefined; expiresAt: number; scopes: string; merchant?: { id: number; email: string } };

export class OAuthService {
  constructor(
    private readonly storage: Storage,
    /** Holds the key refresh successors are derived with (kept in the database, so it outlives a change of master key). */
    private readonly box: { readonly derivationKey: Buffer },
    private readonly config: Pick<Config, 'accessTokenTtlSeconds' | 'refreshTokenTtlSeconds' | 'codeTtlSeconds'>,
    private readonly clock: Clock,
    private readonly launchTokens: LaunchTokens,
  ) {}

  /**
   * Issues a single-use authorization code for an installation; returns the plaintext code. With a
   * merchant, the code yields online access bound to them instead of the store's own.
   */
  async issueCode(input: {
    appId: number;
    storeId: number;
    installationId: number;
    redirectUri: string;
    scopes: readonly Scope[];
    codeChallenge: string | null;
    merchantId?: number;
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
      merchantId: input.merchantId ?? null,
    });
    return code;
  }

  /**
   * Token exchange (RFC 8693) of a launch token the platform issued when the merchant opened the
   * app: the client is authenticated, the token checked against that app and this store, and, in
   * one grant, its id recorded (so it is exchanged once), the app's installation and the merchant
   * checked as they are now, and the access issued: the store's own pair, or online access bound
   * to the merchant.
   */
  async exchangeLaunchToken(input: {
    client: ClientCheck;
    storeId: number;
    storeName: string;
    /** The store's base URL: the launch token's issuer. */
    issuer: string;
    subjectToken: string;
    online: boolean;
  }): Promise<TokenRecord | OnlineTokenRecord> {
    const app = await this.authenticate(input.client);
    const claims = await this.launchTokens.verify(app, input.issuer, input.subjectToken);
    const now = this.clock();
    const pair = { accessToken: newToken('access'), refreshToken: newToken('refresh') };
    const outcome = await this.storage.grants.run(async (q): Promise<Outcome> => {
      const installation = await q.liveInstallation(input.storeId, app.id);
      if (!installation) return { error: 'the app is not installed in this store' };
      const merchant = await q.storeMerchant(input.storeId, claims.merchantId);
      if (!merchant) return { error: 'the launch token names no merchant of this store' };
      if (!(await q.useLaunchToken(input.storeId, claims.jti, claims.expiresAt, now)))
        return { error: 'launch token was already exchanged' };
      const grant = { familyId: newFamilyId(now), installationId: installation.id, storeId: input.storeId, appId: app.id };
      if (input.online) {
        const expiresAt = now + ONLINE_ACCESS_TTL_MS;
        await q.insertOnlineAccess({
          ...grant,
          merchantId: merchant.id,
          scopes: installation.scopes,
          accessHash: hashToken(pair.accessToken),
          accessExpiresAt: expiresAt,
          now,
        });
        return { expiresAt, scopes: installation.scopes, merchant };
      }
      await q.insertFamily(input.storeId, grant.familyId, installation.id, now);
      const expiresAt = await this.insertPair(q, pair, { ...grant, scopes: installation.scopes, now });
      return { expiresAt, scopes: installation.scopes };
    });
    if (outcome.error !== undefined) throw new InvalidGrant(outcome.error);
    return { ...this.answer(pair, outcome, input), issued_token_type: ISSUED_ACCESS_TOKEN };
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
  }): Promise<TokenRecord | OnlineTokenRecord> {
    if (!looksLike('code', input.code)) {
      await this.authenticate(input.client);
      throw new InvalidGrant('authorization code is invalid');
    }
    const codeHash = hashToken(input.code);
    const now = this.clock();
    const pair = { accessToken: newToken('access'), refreshToken: newToken('refresh') };
    const redemption = {
      ...this.pairRow(pair, input.storeId, now),
      codeHash,
      familyId: newFamilyId(now),
      redirectUri: input.redirectUri ?? null,
      codeChallenge: presentedChallenge(input.codeVerifier),
    };
    const { app, granted: redeemed } = await grantAsClient(input.client, {
      known: (id) => this.storage.grants.knownApp(id),
      run: (client) => this.storage.grants.redeemCode(client, redemption),
    });
    if (redeemed) return this.record(pair, now + this.config.accessTokenTtlSeconds * 1000, input, redeemed.scopes);
    // Anything but the usual redemption (a replay, an expiry, a wrong verifier, a changed grant, an
    // online code): nothing was changed; decided here in full.
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
      if (row!.merchant_id !== null) {
        const merchant = await q.storeMerchant(input.storeId, row!.merchant_id);
        if (!merchant) return { error: 'the merchant who consented is no longer a merchant of this store' };
        const expiresAt = now + ONLINE_ACCESS_TTL_MS;
        await q.insertOnlineAccess({
          familyId,
          installationId: row!.installation_id,
          storeId: row!.store_id,
          appId: row!.app_id,
          merchantId: merchant.id,
          scopes: row!.scopes,
          accessHash: hashToken(pair.accessToken),
          accessExpiresAt: expiresAt,
          now,
        });
        return { expiresAt, scopes: row!.scopes, merchant };
      }
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
    return this.answer(pair, outcome, input);
  }

  /** Ends the online access the merchant holds in the store: at their logout. */
  async endMerchantAccess(storeId: number, merchantId: number): Promise<void> {
    await this.storage.tokens.revokeMerchantAccess(storeId, merchantId, this.clock());
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
    const rotation = { ...this.pairRow(successor, input.storeId, now), tokenHash };
    const { app, granted: rotated } = await grantAsClient(input.client, {
      known: (id) => this.storage.grants.knownApp(id),
      run: (client) => this.storage.grants.rotateRefresh(client, rotation),
    });
    if (rotated) return this.record(successor, now + this.config.accessTokenTtlSeconds * 1000, input, rotated.scopes);
    // Anything but a fresh token's rotation (a retry, a reuse, an expiry, a revocation): nothing was
    // changed; decided here in full.
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

  /** The answer to a grant that issued access: online when it is bound to a merchant. */
  private answer(
    pair: { accessToken: string; refreshToken: string },
    issued: { expiresAt: number; scopes: string; merchant?: { id: number; email: string } },
    store: Store,
  ): TokenRecord | OnlineTokenRecord {
    const record = this.record(pair, issued.expiresAt, store, issued.scopes);
    if (!issued.merchant) return record;
    const { refresh_token: _offlineOnly, ...online } = record;
    return {
      ...online,
      associated_user_scope: record.scope,
      associated_user: { id: String(issued.merchant.id), email: issued.merchant.email },
    };
  }

  private record(pair: { accessToken: string; refreshToken: string }, expiresAtMs: number, store: Store, scopes: string): TokenRecord {
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
