// The usual refresh and code grants in as few statements as each database allows. Each claims its
// token or code with one guarded UPDATE that matches only when every check of the grant holds (so
// a grant that is anything but the usual one matches no row and changes nothing, and the service
// then decides it in full), and stores the new pair with what the claim returned:
// - PostgreSQL: one statement, the inserts as data-modifying CTEs over the claim, committed on its
//   own: one round trip per grant;
// - SQLite: the claim (UPDATE … FROM … RETURNING), then the inserts, inside the group commit.
// On PostgreSQL each grant also comes in a form for a client checked on a copy of its app kept in
// memory: the same statement, which changes nothing unless the app row is still that copy, and
// tells that case apart from a grant that is not the usual one.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { defineQuery, type QueryRunner } from '../prepared-query.ts';
import type { AppRow } from '../ports/rows.ts';
import type { CodeRedemption, RefreshRotation } from '../ports/tokens.ts';
import type { Database } from '../schema.ts';
import { APP_COLUMNS, type PreparedStatements } from './prepared-statements.ts';

type Param = <T = string>(name: string) => T;
const compilable = <R>(k: Kysely<Database>, raw: RawBuilder<R>) => ({ compile: () => raw.compile(k) });

// The claims' conditions, shared by both dialects: in SQL, the rules rotatesInOneStep and
// redeemsInOneStep state in the domain (what decideRefresh and checkCode accept; for a code also
// an active installation holding exactly its scopes, and no merchant: an online code issues no
// refresh token, so the service redeems it in full). grant-rules-agree.test.ts feeds both the same
// rows on every database and requires the same verdict: change one rule and the other with it.
const liveRefresh = (p: Param) => sql`r.store_id = ${p<number>('store')} and r.token_hash = ${p('hash')}
    and r.app_id = ${p<number>('app')} and r.rotated_at is null and r.revoked_at is null and r.expires_at > ${p<number>('now')}
    and f.store_id = r.store_id and f.id = r.family_id and f.revoked_at is null`;
const liveCode = (p: Param) => sql`c.store_id = ${p<number>('store')} and c.code_hash = ${p('hash')}
    and c.app_id = ${p<number>('app')} and c.used_at is null and c.expires_at > ${p<number>('now')}
    and c.redirect_uri = ${p('redirect')} and (c.code_challenge is null or c.code_challenge = ${p('challenge')})
    and c.merchant_id is null
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

// The app as the client was checked on: its row must not have been written since that copy was
// read. PostgreSQL stamps every row version with the transaction that wrote it (`xmin`), and any
// write of the row (any column, or a delete and a new row) makes a new version with a newer
// transaction id; the copy carries the stamp it was read with. One parameter instead of every
// column the services see: cheaper to encode and to compare. (A stamp comes back only after 2^32
// transactions, and then only if the row was rewritten by exactly that one.) `apps` is one
// table, not split by store.
const checkedApp = (p: Param) => sql`select 1 from apps where id = ${p<number>('app')} and xmin::text = ${p('appVersion')}`;

/** An app's row as read for the checked grants: its columns and the stamp of its version. */
export const appWithVersion = (k: Kysely<Database>) =>
  defineQuery<AppRow & { row_version: string }, { id: string }>((p) =>
    k
      .selectFrom('apps')
      .select([...APP_COLUMNS])
      .select(sql<string>`xmin::text`.as('row_version'))
      .where('client_id', '=', p('id')),
  );

/**
 * A PostgreSQL grant in parts: the claim (given what else it must require), the CTEs that store
 * what it claimed (the last one, `issued`, returning the new refresh token's row), and the columns
 * of that row the grant answers with.
 */
interface GrantParts {
  claim(p: Param, require: RawBuilder<unknown>): RawBuilder<unknown>;
  store(p: Param): RawBuilder<unknown>;
  answer: RawBuilder<unknown>;
}

const storePair = (p: Param, family: RawBuilder<unknown>) => sql`access as (insert into access_tokens (${ACCESS_COLUMNS})
      select ${text(p, 'accessHash')}, ${family}, installation_id, ${big(p, 'store')}, ${big(p, 'app')}, scopes,
        ${big(p, 'accessExpires')}, null, ${big(p, 'now')}, null from claimed
    ), issued as (insert into refresh_tokens (${REFRESH_COLUMNS})
      select ${text(p, 'refreshHash')}, ${family}, installation_id, ${big(p, 'store')}, ${big(p, 'app')}, scopes,
        ${big(p, 'refreshExpires')}, null, ${big(p, 'now')}, ${big(p, 'accessExpires')}, null from claimed
      returning installation_id, scopes)`;

const REFRESH_GRANT: GrantParts = {
  claim: (p, require) => sql`update refresh_tokens as r set rotated_at = ${big(p, 'now')} from token_families as f
    where ${liveRefresh(p)} ${require}
    returning r.family_id, r.installation_id, r.scopes`,
  store: (p) => storePair(p, sql`family_id`),
  answer: sql`scopes`,
};

const CODE_GRANT: GrantParts = {
  claim: (p, require) => sql`update authorization_codes as c set used_at = ${big(p, 'now')}, family_id = ${text(p, 'family')}
    from installations as i
    where ${liveCode(p)} ${require}
    returning c.installation_id, c.scopes`,
  store: (p) => sql`family as (
      insert into token_families (id, installation_id, store_id, created_at, revoked_at)
      select ${text(p, 'family')}, installation_id, ${big(p, 'store')}, ${big(p, 'now')}, null from claimed
    ), ${storePair(p, text(p, 'family'))}`,
  answer: sql`installation_id, scopes`,
};

/** The grant as one statement: a row when it was the usual grant, none otherwise. */
const plainGrant = <R>(k: Kysely<Database>, g: GrantParts) =>
  defineQuery<R>((p) => compilable(k, sql<R>`with claimed as (${g.claim(p, sql``)}), ${g.store(p)} select ${g.answer} from issued`));

/** The answer of a checked grant: the grant's columns are null when it was not the usual one. */
type CheckedRow<R> = { app_unchanged: boolean } & { [K in keyof R]: R[K] | null };

/**
 * The grant as one statement that also requires the app row to be the copy the client was checked
 * on (its version stamp, `appVersion`): always one row, whose `app_unchanged` tells a changed or missing app
 * (nothing changed) from a grant that is simply not the usual one.
 */
const checkedGrant = <R>(k: Kysely<Database>, g: GrantParts) =>
  defineQuery<CheckedRow<R>>((p) =>
    compilable(
      k,
      sql<CheckedRow<R>>`with checked_app as (${checkedApp(p)}),
        claimed as (${g.claim(p, sql`and exists (select from checked_app)`)}), ${g.store(p)}
        select exists (select from checked_app) as app_unchanged, issued.*
        from (select) as one left join (select ${g.answer} from issued) as issued on true`,
    ),
  );

function postgresStatements(k: Kysely<Database>) {
  return {
    rotateRefresh: plainGrant<{ scopes: string }>(k, REFRESH_GRANT),
    redeemCode: plainGrant<{ scopes: string; installation_id: number }>(k, CODE_GRANT),
    rotateRefreshChecked: checkedGrant<{ scopes: string }>(k, REFRESH_GRANT),
    redeemCodeChecked: checkedGrant<{ scopes: string; installation_id: number }>(k, CODE_GRANT),
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

/**
 * A grant run for a client checked on a copy of its app: `appChanged` when the app row is no
 * longer that copy (or is gone), and nothing was changed; else what the plain grant answers.
 */
export type CheckedGrant<T> = { appChanged: true } | { appChanged: false; granted: T | undefined };

export interface CheckedGrantSteps extends GrantSteps {
  /** `version`: the app row's version stamp as read with the copy `app` (see appWithVersion). */
  rotateRefreshChecked(run: QueryRunner, app: AppRow, version: string, r: RefreshRotation): Promise<CheckedGrant<{ scopes: string }>>;
  redeemCodeChecked(
    run: QueryRunner,
    app: AppRow,
    version: string,
    r: CodeRedemption,
  ): Promise<CheckedGrant<{ scopes: string; installationId: number }>>;
}

export function postgresGrantSteps(k: Kysely<Database>): CheckedGrantSteps {
  const q = postgresStatements(k);
  const code = (row: { scopes: string; installation_id: number }) => ({ scopes: row.scopes, installationId: row.installation_id });
  return {
    rotateRefresh: (run, appId, r) => run.first(q.rotateRefresh, { ...pairParams(appId, r), hash: r.tokenHash }),
    async redeemCode(run, appId, r) {
      const row = await run.first(q.redeemCode, codeParams(appId, r));
      return row && code(row);
    },
    async rotateRefreshChecked(run, app, version, r) {
      const row = await run.first(q.rotateRefreshChecked, { ...pairParams(app.id, r), appVersion: version, hash: r.tokenHash });
      if (!row?.app_unchanged) return { appChanged: true };
      return { appChanged: false, granted: row.scopes === null ? undefined : { scopes: row.scopes } };
    },
    async redeemCodeChecked(run, app, version, r) {
      const row = await run.first(q.redeemCodeChecked, { ...codeParams(app.id, r), appVersion: version });
      if (!row?.app_unchanged) return { appChanged: true };
      const { scopes, installation_id } = row;
      return { appChanged: false, granted: scopes === null || installation_id === null ? undefined : code({ scopes, installation_id }) };
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
