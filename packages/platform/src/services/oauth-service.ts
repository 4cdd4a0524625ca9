// Authorization codes, token issuance, refresh rotation and revocation (PRODUCT.md §5).
import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Config } from '../config.ts';
import { checkCode, decideRefresh } from '../domain/grants.ts';
import { formatScopes, type Scope } from '../domain/scopes.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import { deriveSuccessorPair, hashToken, looksLike, newToken } from '../domain/tokens.ts';
import { InvalidGrant } from '../errors.ts';
import type { Db } from '../storage/db.ts';
import type { Database } from '../storage/schema.ts';
import type { Clock } from './clock.ts';

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

type Trx = Transaction<Database> | Kysely<Database>;

export class OAuthService {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly config: Pick<Config, 'accessTokenTtlSeconds' | 'refreshTokenTtlSeconds' | 'codeTtlSeconds' | 'refreshGraceSeconds'>,
    private readonly clock: Clock,
  ) {}

  /** Issues a single-use authorization code for an installation; returns the plaintext code. */
  async issueCode(input: { appId: number; storeId: number; installationId: number; redirectUri: string; scopes: readonly Scope[]; codeChallenge: string | null }): Promise<string> {
    const code = newToken('code');
    const now = this.clock();
    await this.db.kysely
      .insertInto('authorization_codes')
      .values({
        code_hash: hashToken(code),
        app_id: input.appId,
        store_id: input.storeId,
        installation_id: input.installationId,
        redirect_uri: input.redirectUri,
        scopes: formatScopes(input.scopes),
        code_challenge: input.codeChallenge,
        expires_at: now + this.config.codeTtlSeconds * 1000,
        used_at: null,
        family_id: null,
        created_at: now,
      })
      .execute();
    return code;
  }

  /** authorization_code grant: atomically single-use; a replay revokes what the code issued. */
  async exchangeCode(input: { appId: number; code: string; redirectUri: string | undefined; codeVerifier: string | undefined }): Promise<TokenRecord> {
    if (!looksLike('code', input.code)) throw new InvalidGrant('authorization code is invalid');
    const codeHash = hashToken(input.code);
    const now = this.clock();
    type Outcome = { error: string; replay: boolean } | { error?: undefined; pair: { accessToken: string; refreshToken: string }; expiresAt: number; storeId: number; scopes: string };
    const outcome = await this.db.kysely.transaction().execute(async (trx): Promise<Outcome> => {
      const row = await trx.selectFrom('authorization_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
      const check = checkCode(row, { appId: input.appId, redirectUri: input.redirectUri, codeVerifier: input.codeVerifier, now });
      if (!check.ok) return { error: check.reason, replay: check.replay === true };
      const familyId = randomUUID();
      // The guard `used_at IS NULL` makes redemption atomic: of concurrent requests, one updates the row.
      const claimed = await trx
        .updateTable('authorization_codes')
        .set({ used_at: now, family_id: familyId })
        .where('code_hash', '=', codeHash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) !== 1) return { error: 'authorization code was already used', replay: true };
      const installation = await trx.selectFrom('installations').select(['id', 'uninstalled_at']).where('id', '=', row!.installation_id).executeTakeFirst();
      if (!installation || installation.uninstalled_at !== null) return { error: 'the app is not installed in this store', replay: false };
      await trx.insertInto('token_families').values({ id: familyId, installation_id: row!.installation_id, created_at: now, revoked_at: null }).execute();
      const pair = { accessToken: newToken('access'), refreshToken: newToken('refresh') };
      const expiresAt = await this.insertPair(trx, pair, { familyId, installationId: row!.installation_id, storeId: row!.store_id, appId: row!.app_id, scopes: row!.scopes, now });
      return { pair, expiresAt, storeId: row!.store_id, scopes: row!.scopes };
    });
    if (outcome.error !== undefined) {
      if (outcome.replay) await this.revokeIssuedFromCode(codeHash, input.appId);
      throw new InvalidGrant(outcome.error);
    }
    return this.record(outcome.pair, outcome.expiresAt, outcome.storeId, outcome.scopes);
  }

  /** refresh_token grant with rotation, grace-window replay and family revocation on reuse. */
  async refresh(input: { appId: number; refreshToken: string }): Promise<TokenRecord> {
    if (!looksLike('refresh', input.refreshToken)) throw new InvalidGrant('refresh token is invalid');
    const tokenHash = hashToken(input.refreshToken);
    const now = this.clock();
    const graceMs = this.config.refreshGraceSeconds * 1000;
    const successor = deriveSuccessorPair(this.box.derivationKey, input.refreshToken);
    type Outcome = { error: string } | { error?: undefined; expiresAt: number; storeId: number; scopes: string };
    const outcome = await this.db.kysely.transaction().execute(async (trx): Promise<Outcome> => {
      for (let attempt = 0; attempt < 2; attempt++) {
        const row = await trx.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
        const decision = decideRefresh(row, { appId: input.appId, now, graceMs });
        if (decision.action === 'reject') return { error: decision.reason };
        if (decision.action === 'revoke-family') {
          await this.revokeFamily(trx, row!.family_id, now);
          return { error: decision.reason };
        }
        if (decision.action === 'replay-successor') {
          const next = await trx.selectFrom('refresh_tokens').select(['access_expires_at', 'revoked_at']).where('token_hash', '=', hashToken(successor.refreshToken)).executeTakeFirst();
          if (!next || next.revoked_at !== null) return { error: 'refresh token has been revoked' };
          return { expiresAt: next.access_expires_at, storeId: row!.store_id, scopes: row!.scopes };
        }
        const claimed = await trx
          .updateTable('refresh_tokens')
          .set({ rotated_at: now })
          .where('token_hash', '=', tokenHash)
          .where('rotated_at', 'is', null)
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        // Lost a race with a concurrent refresh of the same token: read again and serve its successor.
        if (Number(claimed.numUpdatedRows) !== 1) continue;
        const expiresAt = await this.insertPair(trx, successor, { familyId: row!.family_id, installationId: row!.installation_id, storeId: row!.store_id, appId: row!.app_id, scopes: row!.scopes, now });
        return { expiresAt, storeId: row!.store_id, scopes: row!.scopes };
      }
      return { error: 'refresh token is invalid' };
    });
    if (outcome.error !== undefined) throw new InvalidGrant(outcome.error);
    return this.record(successor, outcome.expiresAt, outcome.storeId, outcome.scopes);
  }

  /**
   * RFC 7009: revokes an access or refresh token of this client. A refresh token takes its whole
   * family with it. Unknown tokens are not an error (the endpoint answers 200 either way).
   */
  async revoke(input: { appId: number; token: string }): Promise<void> {
    const table = looksLike('refresh', input.token) ? 'refresh_tokens' : looksLike('access', input.token) ? 'access_tokens' : undefined;
    if (!table) return;
    const now = this.clock();
    await this.db.kysely.transaction().execute(async (trx) => {
      const row = await trx.selectFrom(table).select(['family_id', 'app_id']).where('token_hash', '=', hashToken(input.token)).executeTakeFirst();
      if (!row || row.app_id !== input.appId) return;
      if (table === 'refresh_tokens') await this.revokeFamily(trx, row.family_id, now);
      else await trx.updateTable('access_tokens').set({ revoked_at: now }).where('token_hash', '=', hashToken(input.token)).where('revoked_at', 'is', null).execute();
    });
  }

  /** Ends every token family of an installation (uninstall, scopes shrunk). */
  async revokeInstallation(trx: Trx, installationId: number, now: number): Promise<void> {
    await trx.updateTable('token_families').set({ revoked_at: now }).where('installation_id', '=', installationId).where('revoked_at', 'is', null).execute();
    for (const table of ['access_tokens', 'refresh_tokens'] as const) {
      await trx.updateTable(table).set({ revoked_at: now }).where('installation_id', '=', installationId).where('revoked_at', 'is', null).execute();
    }
  }

  private async revokeIssuedFromCode(codeHash: string, appId: number): Promise<void> {
    const now = this.clock();
    await this.db.kysely.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('authorization_codes').select(['family_id', 'app_id']).where('code_hash', '=', codeHash).executeTakeFirst();
      if (row?.family_id && row.app_id === appId) await this.revokeFamily(trx, row.family_id, now);
    });
  }

  private async revokeFamily(trx: Trx, familyId: string, now: number): Promise<void> {
    await trx.updateTable('token_families').set({ revoked_at: now }).where('id', '=', familyId).where('revoked_at', 'is', null).execute();
    for (const table of ['access_tokens', 'refresh_tokens'] as const) {
      await trx.updateTable(table).set({ revoked_at: now }).where('family_id', '=', familyId).where('revoked_at', 'is', null).execute();
    }
  }

  private async insertPair(
    trx: Trx,
    pair: { accessToken: string; refreshToken: string },
    ctx: { familyId: string; installationId: number; storeId: number; appId: number; scopes: string; now: number },
  ): Promise<number> {
    const accessExpiresAt = ctx.now + this.config.accessTokenTtlSeconds * 1000;
    const common = { family_id: ctx.familyId, installation_id: ctx.installationId, store_id: ctx.storeId, app_id: ctx.appId, scopes: ctx.scopes, revoked_at: null, created_at: ctx.now };
    await trx.insertInto('access_tokens').values({ ...common, token_hash: hashToken(pair.accessToken), expires_at: accessExpiresAt }).execute();
    await trx
      .insertInto('refresh_tokens')
      .values({ ...common, token_hash: hashToken(pair.refreshToken), expires_at: ctx.now + this.config.refreshTokenTtlSeconds * 1000, access_expires_at: accessExpiresAt, rotated_at: null })
      .execute();
    return accessExpiresAt;
  }

  private async record(pair: { accessToken: string; refreshToken: string }, expiresAtMs: number, storeId: number, scopes: string): Promise<TokenRecord> {
    const store = await this.db.kysely.selectFrom('stores').select(['name']).where('id', '=', storeId).executeTakeFirstOrThrow();
    const expiresAt = Math.floor(expiresAtMs / 1000);
    return {
      token_type: 'Bearer',
      access_token: pair.accessToken,
      refresh_token: pair.refreshToken,
      expires_at: expiresAt,
      expires_in: Math.max(0, expiresAt - Math.floor(this.clock() / 1000)),
      scope: scopes.split(',').join(' '),
      store_id: String(storeId),
      store_name: store.name,
    };
  }
}
