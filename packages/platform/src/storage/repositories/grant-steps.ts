// The usual refresh and code grants in as few statements as each database allows. Each claims its
// token or code with one guarded UPDATE that matches only when every check of the grant holds (so
// a grant that is anything but the usual one matches no row and changes nothing, and the service
// then decides it in full), and stores the new pair with what the claim returned:
// - PostgreSQL: one statement, the inserts as data-modifying CTEs over the claim, committed on its
//   own: one round trip per grant;
// - SQLite: the claim (UPDATE … FROM … RETURNING), then the inserts, inside the group commit.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { defineQuery, type QueryRunner } from '../prepared-query.ts';
import type { CodeRedemption, RefreshRotation } from '../ports.ts';
import type { Database } from '../schema.ts';
import type { PreparedStatements } from './prepared-statements.ts';

type Param = <T = string>(name: string) => T;
const compilable = <R>(k: Kysely<Database>, raw: RawBuilder<R>) => ({ compile: () => raw.compile(k) });

// The claims' conditions, shared by both dialects: what decideRefresh and checkCode accept, and an
// active installation holding exactly the code's scopes (a change of the grant ends its codes).
const liveRefresh = (p: Param) => sql`r.store_id = ${p<number>('store')} and r.token_hash = ${p('hash')}
    and r.app_id = ${p<number>('app')} and r.rotated_at is null and r.revoked_at is null and r.expires_at > ${p<number>('now')}
    and f.store_id = r.store_id and f.id = r.family_id and f.revoked_at is null`;
const liveCode = (p: Param) => sql`c.store_id = ${p<number>('store')} and c.code_hash = ${p('hash')}
    and c.app_id = ${p<number>('app')} and c.used_at is null and c.expires_at > ${p<number>('now')}
    and c.redirect_uri = ${p('redirect')} and (c.code_challenge is null or c.code_challenge = ${p('challenge')})
    and i.store_id = c.store_id and i.id = c.installation_id and i.uninstalled_at is null and i.scopes = c.scopes`;

// Parameters in a SELECT list have no type PostgreSQL could infer: each is cast to its column's.
const big = (p: Param, name: string) => sql`cast(${p<number>(name)} as bigint)`;
const text = (p: Param, name: string) => sql`cast(${p(name)} as text)`;
const ACCESS_COLUMNS = sql.raw(
  'token_hash, family_id, installation_id, store_id, app_id, scopes, expires_at, revoked_at, created_at, used_at',
);
const REFRESH_COLUMNS = sql.raw(
  'token_hash, family_id, installation_id, store_id, app_id, scopes, expires_at, revoked_at, created_at, access_expires_at, rotated_at',
);

function postgresStatements(k: Kysely<Database>) {
  const pair = (p: Param, family: RawBuilder<unknown>) => ({
    access: sql`insert into access_tokens (${ACCESS_COLUMNS})
      select ${text(p, 'accessHash')}, ${family}, installation_id, ${big(p, 'store')}, ${big(p, 'app')}, scopes,
        ${big(p, 'accessExpires')}, null, ${big(p, 'now')}, null from claimed`,
    refresh: sql`insert into refresh_tokens (${REFRESH_COLUMNS})
      select ${text(p, 'refreshHash')}, ${family}, installation_id, ${big(p, 'store')}, ${big(p, 'app')}, scopes,
        ${big(p, 'refreshExpires')}, null, ${big(p, 'now')}, ${big(p, 'accessExpires')}, null from claimed`,
  });
  return {
    rotateRefresh: defineQuery<{ scopes: string }>((p) => {
      const { access, refresh } = pair(p, sql`family_id`);
      return compilable(
        k,
        sql<{ scopes: string }>`with claimed as (
          update refresh_tokens as r set rotated_at = ${big(p, 'now')} from token_families as f
          where ${liveRefresh(p)}
          returning r.family_id, r.installation_id, r.scopes
        ), access as (${access})
        ${refresh} returning scopes`,
      );
    }),
    redeemCode: defineQuery<{ scopes: string; installation_id: number }>((p) => {
      const { access, refresh } = pair(p, text(p, 'family'));
      return compilable(
        k,
        sql<{ scopes: string; installation_id: number }>`with claimed as (
          update authorization_codes as c set used_at = ${big(p, 'now')}, family_id = ${text(p, 'family')} from installations as i
          where ${liveCode(p)}
          returning c.installation_id, c.scopes
        ), family as (
          insert into token_families (id, installation_id, store_id, created_at, revoked_at)
          select ${text(p, 'family')}, installation_id, ${big(p, 'store')}, ${big(p, 'now')}, null from claimed
        ), access as (${access})
        ${refresh} returning installation_id, scopes`,
      );
    }),
  };
}

function sqliteStatements(k: Kysely<Database>) {
  // RETURNING names the updated table's columns unqualified: SQLite allows no other there.
  return {
    claimRefresh: defineQuery<{ family_id: string; installation_id: number; scopes: string }>((p) =>
      compilable(
        k,
        sql<{ family_id: string; installation_id: number; scopes: string }>`update refresh_tokens as r
          set rotated_at = ${p<number>('now')} from token_families as f
          where ${liveRefresh(p)}
          returning family_id, installation_id, scopes`,
      ),
    ),
    claimCode: defineQuery<{ installation_id: number; scopes: string }>((p) =>
      compilable(
        k,
        sql<{ installation_id: number; scopes: string }>`update authorization_codes as c
          set used_at = ${p<number>('now')}, family_id = ${p('family')} from installations as i
          where ${liveCode(p)}
          returning installation_id, scopes`,
      ),
    ),
  };
}

export interface GrantSteps {
  /** The texts of its statements (to be prepared once per connection). */
  readonly statements: readonly string[];
  rotateRefresh(run: QueryRunner, appId: number, r: RefreshRotation): Promise<{ scopes: string } | undefined>;
  redeemCode(run: QueryRunner, appId: number, r: CodeRedemption): Promise<{ scopes: string; installationId: number } | undefined>;
}

const pairParams = (appId: number, r: RefreshRotation | CodeRedemption) => ({
  store: r.storeId,
  app: appId,
  now: r.now,
  accessHash: r.accessHash,
  refreshHash: r.refreshHash,
  accessExpires: r.accessExpiresAt,
  refreshExpires: r.refreshExpiresAt,
});
const codeParams = (appId: number, r: CodeRedemption) => ({
  ...pairParams(appId, r),
  hash: r.codeHash,
  family: r.familyId,
  redirect: r.redirectUri,
  challenge: r.codeChallenge,
});

export function postgresGrantSteps(k: Kysely<Database>): GrantSteps {
  const q = postgresStatements(k);
  return {
    statements: Object.values(q).map((s) => s.compiled.sql),
    rotateRefresh: (run, appId, r) => run.first(q.rotateRefresh, { ...pairParams(appId, r), hash: r.tokenHash }),
    async redeemCode(run, appId, r) {
      const row = await run.first(q.redeemCode, codeParams(appId, r));
      return row && { scopes: row.scopes, installationId: row.installation_id };
    },
  };
}

export function sqliteGrantSteps(k: Kysely<Database>, prepared: PreparedStatements): GrantSteps {
  const q = sqliteStatements(k);
  const insertPair = async (
    run: QueryRunner,
    appId: number,
    r: RefreshRotation | CodeRedemption,
    claimed: { family_id: string; installation_id: number; scopes: string },
  ) => {
    const common = { family: claimed.family_id, installation: claimed.installation_id, store: r.storeId, app: appId };
    const row = { ...common, scopes: claimed.scopes, now: r.now };
    await run.run(prepared.insertAccess, { ...row, hash: r.accessHash, expires: r.accessExpiresAt });
    await run.run(prepared.insertRefresh, {
      ...row,
      hash: r.refreshHash,
      expires: r.refreshExpiresAt,
      accessExpires: r.accessExpiresAt,
    });
  };
  return {
    statements: Object.values(q).map((s) => s.compiled.sql),
    async rotateRefresh(run, appId, r) {
      const claimed = await run.first(q.claimRefresh, { store: r.storeId, hash: r.tokenHash, app: appId, now: r.now });
      if (!claimed) return undefined;
      await insertPair(run, appId, r, claimed);
      return { scopes: claimed.scopes };
    },
    async redeemCode(run, appId, r) {
      const claimed = await run.first(q.claimCode, codeParams(appId, r));
      if (!claimed) return undefined;
      await run.run(prepared.insertFamily, { store: r.storeId, id: r.familyId, installation: claimed.installation_id, now: r.now });
      await insertPair(run, appId, r, { ...claimed, family_id: r.familyId });
      return { scopes: claimed.scopes, installationId: claimed.installation_id };
    },
  };
}
