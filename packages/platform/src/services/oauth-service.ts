// Authorization codes, token issuance, refresh rotation and revocation (PRODUCT.md §5).
import type { Kysely, Transaction } from 'kysely';
import type { Config } from '../config.ts';
import { checkCode, decideRefresh } from '../domain/grants.ts';
import { formatScopes, type Scope } from '../domain/scopes.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import { deriveSuccessorPair, hashToken, looksLike, newFamilyId, newToken } from '../domain/tokens.ts';
import { InvalidGrant } from '../errors.ts';
import type { Db } from '../storage/db.ts';
import { transactorFor, type Transactor } from '../storage/group-commit.ts';
import { defineQuery, type QueryRunner } from '../storage/prepared-query.ts';
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
  private readonly tx: Transactor;
  private readonly queries: ReturnType<typeof grantQueries>;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly config: Pick<Config, 'accessTokenTtlSeconds' | 'refreshTokenTtlSeconds' | 'codeTtlSeconds' | 'refreshGraceSeconds'>,
    private readonly clock: Clock,
  ) {
    this.tx = transactorFor(db);
    this.queries = grantQueries(db.kysely);
  }

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
  async exchangeCode(input: { appId: number; storeId: number; storeName: string; code: string; redirectUri: string | undefined; codeVerifier: string | undefined }): Promise<TokenRecord> {
    if (!looksLike('code', input.code)) throw new InvalidGrant('authorization code is invalid');
    const codeHash = hashToken(input.code);
    const now = this.clock();
    const q = this.queries;
    const pair = { accessToken: newToken('access'), refreshToken: newToken('refresh') };
    type Outcome = { error: string } | { error?: undefined; expiresAt: number; scopes: string };
    const outcome = await this.tx.run(async (run): Promise<Outcome> => {
      const row = await run.first(q.codeByHash, { hash: codeHash });
      // A code of another store is as unknown here as a code that does not exist.
      const check = checkCode(row && row.store_id === input.storeId ? row : undefined, { appId: input.appId, redirectUri: input.redirectUri, codeVerifier: input.codeVerifier, now });
      if (!check.ok) {
        if (check.replay && row!.family_id) await this.revokeFamily(run, row!.family_id, now);
        return { error: check.reason };
      }
      const familyId = newFamilyId(now);
      // The guard `used_at IS NULL` makes redemption atomic: of concurrent requests, one updates the row.
      if ((await run.run(q.claimCode, { hash: codeHash, now, family: familyId })) !== 1) {
        const after = await run.first(q.codeByHash, { hash: codeHash });
        if (after?.family_id) await this.revokeFamily(run, after.family_id, now);
        return { error: 'authorization code was already used' };
      }
      const installation = await run.first(q.installation, { id: row!.installation_id });
      if (!installation || installation.uninstalled_at !== null) return { error: 'the app is not installed in this store' };
      await run.run(q.insertFamily, { id: familyId, installation: row!.installation_id, now });
      const expiresAt = await this.insertPair(run, pair, { familyId, installationId: row!.installation_id, storeId: row!.store_id, appId: row!.app_id, scopes: row!.scopes, now });
      return { expiresAt, scopes: row!.scopes };
    });
    if (outcome.error !== undefined) throw new InvalidGrant(outcome.error);
    return this.record(pair, outcome.expiresAt, input, outcome.scopes);
  }

  /** refresh_token grant with rotation, grace-window replay and family revocation on reuse. */
  async refresh(input: { appId: number; storeId: number; storeName: string; refreshToken: string }): Promise<TokenRecord> {
    if (!looksLike('refresh', input.refreshToken)) throw new InvalidGrant('refresh token is invalid');
    const tokenHash = hashToken(input.refreshToken);
    const now = this.clock();
    const graceMs = this.config.refreshGraceSeconds * 1000;
    const successor = deriveSuccessorPair(this.box.derivationKey, input.refreshToken);
    const q = this.queries;
    type Outcome = { error: string } | { error?: undefined; expiresAt: number; scopes: string };
    const outcome = await this.tx.run(async (run): Promise<Outcome> => {
      for (let attempt = 0; attempt < 2; attempt++) {
        const found = await run.first(q.refreshByHash, { hash: tokenHash });
        const row = found && found.store_id === input.storeId ? found : undefined;
        const decision = decideRefresh(row, { appId: input.appId, now, graceMs });
        if (decision.action === 'reject') return { error: decision.reason };
        if (decision.action === 'revoke-family') {
          await this.revokeFamily(run, row!.family_id, now);
          return { error: decision.reason };
        }
        if (decision.action === 'replay-successor') {
          const next = await run.first(q.successor, { hash: hashToken(successor.refreshToken) });
          if (!next || next.revoked_at !== null) return { error: 'refresh token has been revoked' };
          return { expiresAt: next.access_expires_at, scopes: row!.scopes };
        }
        // Lost a race with a concurrent refresh of the same token: read again and serve its successor.
        if ((await run.run(q.claimRefresh, { hash: tokenHash, now })) !== 1) continue;
        const expiresAt = await this.insertPair(run, successor, { familyId: row!.family_id, installationId: row!.installation_id, storeId: row!.store_id, appId: row!.app_id, scopes: row!.scopes, now });
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
    await this.tx.run(async (run) => {
      const row = await run.first(kind === 'refresh' ? this.queries.refreshOwner : this.queries.accessOwner, { hash });
      if (!row || row.app_id !== input.appId || row.store_id !== input.storeId) return;
      if (kind === 'refresh') await this.revokeFamily(run, row.family_id, now);
      else await run.run(this.queries.revokeAccess, { hash, now });
    });
  }

  /** Ends every token family of an installation (uninstall, scopes shrunk). */
  async revokeInstallation(trx: Trx, installationId: number, now: number): Promise<void> {
    await trx.updateTable('token_families').set({ revoked_at: now }).where('installation_id', '=', installationId).where('revoked_at', 'is', null).execute();
  }

  /** Ends a family: its tokens are refused from now on, as every lookup joins token_families. */
  private async revokeFamily(run: QueryRunner, familyId: string, now: number): Promise<void> {
    await run.run(this.queries.revokeFamily, { family: familyId, now });
  }

  private async insertPair(
    run: QueryRunner,
    pair: { accessToken: string; refreshToken: string },
    ctx: { familyId: string; installationId: number; storeId: number; appId: number; scopes: string; now: number },
  ): Promise<number> {
    const accessExpiresAt = ctx.now + this.config.accessTokenTtlSeconds * 1000;
    const common = { family: ctx.familyId, installation: ctx.installationId, store: ctx.storeId, app: ctx.appId, scopes: ctx.scopes, now: ctx.now };
    await run.run(this.queries.insertAccess, { ...common, hash: hashToken(pair.accessToken), expires: accessExpiresAt });
    await run.run(this.queries.insertRefresh, { ...common, hash: hashToken(pair.refreshToken), expires: ctx.now + this.config.refreshTokenTtlSeconds * 1000, accessExpires: accessExpiresAt });
    return accessExpiresAt;
  }

  private record(pair: { accessToken: string; refreshToken: string }, expiresAtMs: number, store: { storeId: number; storeName: string }, scopes: string): TokenRecord {
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

/** Every query of the token endpoint, compiled once per database. */
function grantQueries(k: Kysely<Database>) {
  return {
    codeByHash: defineQuery(k, (p) =>
      k.selectFrom('authorization_codes').select(['app_id', 'store_id', 'installation_id', 'redirect_uri', 'scopes', 'code_challenge', 'expires_at', 'used_at', 'family_id']).where('code_hash', '=', p('hash')),
    ),
    claimCode: defineQuery(k, (p) => k.updateTable('authorization_codes').set({ used_at: p('now'), family_id: p('family') }).where('code_hash', '=', p('hash')).where('used_at', 'is', null)),
    installation: defineQuery(k, (p) => k.selectFrom('installations').select(['id', 'uninstalled_at']).where('id', '=', p('id'))),
    insertFamily: defineQuery(k, (p) => k.insertInto('token_families').values({ id: p('id'), installation_id: p('installation'), created_at: p('now'), revoked_at: null })),
    insertAccess: defineQuery(k, (p) =>
      k.insertInto('access_tokens').values({
        token_hash: p('hash'),
        family_id: p('family'),
        installation_id: p('installation'),
        store_id: p('store'),
        app_id: p('app'),
        scopes: p('scopes'),
        expires_at: p('expires'),
        revoked_at: null,
        created_at: p('now'),
      }),
    ),
    insertRefresh: defineQuery(k, (p) =>
      k.insertInto('refresh_tokens').values({
        token_hash: p('hash'),
        family_id: p('family'),
        installation_id: p('installation'),
        store_id: p('store'),
        app_id: p('app'),
        scopes: p('scopes'),
        access_expires_at: p('accessExpires'),
        expires_at: p('expires'),
        rotated_at: null,
        revoked_at: null,
        created_at: p('now'),
      }),
    ),
    // A token counts as revoked when it or its family is (coalesce of the two).
    refreshByHash: defineQuery(k, (p) =>
      k
        .selectFrom('refresh_tokens as r')
        .innerJoin('token_families as f', 'f.id', 'r.family_id')
        .select(['r.family_id', 'r.installation_id', 'r.store_id', 'r.app_id', 'r.scopes', 'r.expires_at', 'r.rotated_at'])
        .select((eb) => eb.fn.coalesce('r.revoked_at', 'f.revoked_at').as('revoked_at'))
        .where('r.token_hash', '=', p('hash')),
    ),
    successor: defineQuery(k, (p) =>
      k
        .selectFrom('refresh_tokens as r')
        .innerJoin('token_families as f', 'f.id', 'r.family_id')
        .select('r.access_expires_at')
        .select((eb) => eb.fn.coalesce('r.revoked_at', 'f.revoked_at').as('revoked_at'))
        .where('r.token_hash', '=', p('hash')),
    ),
    claimRefresh: defineQuery(k, (p) => k.updateTable('refresh_tokens').set({ rotated_at: p('now') }).where('token_hash', '=', p('hash')).where('rotated_at', 'is', null).where('revoked_at', 'is', null)),
    refreshOwner: defineQuery(k, (p) => k.selectFrom('refresh_tokens').select(['family_id', 'app_id', 'store_id']).where('token_hash', '=', p('hash'))),
    accessOwner: defineQuery(k, (p) => k.selectFrom('access_tokens').select(['family_id', 'app_id', 'store_id']).where('token_hash', '=', p('hash'))),
    revokeAccess: defineQuery(k, (p) => k.updateTable('access_tokens').set({ revoked_at: p('now') }).where('token_hash', '=', p('hash')).where('revoked_at', 'is', null)),
    revokeFamily: defineQuery(k, (p) => k.updateTable('token_families').set({ revoked_at: p('now') }).where('id', '=', p('family')).where('revoked_at', 'is', null)),
  };
}
