// Every query on a hot path (token grants, client lookup, Access-Token lookup), compiled once per
// database and run as prepared statements. Each query of a store's token, code, family or
// installation names the store (the request's Host gives it), so on a database split by store_id
// it reads one partition; the joins carry store_id too, for the same reason.
import type { Kysely } from 'kysely';
import { defineQuery } from '../prepared-query.ts';
import type { AppRow, CodeRow, PrivateTokenRow, RefreshRow, SuccessorRow, TokenOwner } from '../ports/rows.ts';
import type { AccessTokenLookup, Issued } from '../ports/tokens.ts';
import type { Database } from '../schema.ts';

/** The columns of an app as the services see it (`AppRow`). */
export const APP_COLUMNS = [
  'id',
  'client_id',
  'partner_id',
  'name',
  'app_url',
  'redirect_uri',
  'scopes',
  'client_secret_enc',
  'previous_secret_enc',
  'previous_secret_expires_at',
  'privacy_webhook_url',
  'authorization_iss',
  'managed_install',
  'webhook_signature_ed25519',
] as const;

export type PreparedStatements = ReturnType<typeof preparedStatements>;

/**
 * An Access-Token's row as the Admin API judges it, by store and hash: alone, and inside the
 * statement that reads a list page with it (token-page.ts), so both read exactly the same row.
 * An access token counts as revoked when it or its family is (uninstall, scope change, reuse).
 */
export function accessTokenQuery(k: Kysely<Database>, store: number, hash: string) {
  return k
    .selectFrom('access_tokens as a')
    .innerJoin('token_families as f', (j) => j.onRef('f.store_id', '=', 'a.store_id').onRef('f.id', '=', 'a.family_id'))
    .select(['a.app_id', 'a.store_id', 'a.scopes', 'a.expires_at', 'a.used_at', 'a.created_at', 'f.merchant_id'])
    .select((eb) => eb.fn.coalesce('a.revoked_at', 'f.revoked_at').as('revoked_at'))
    .where('a.store_id', '=', store)
    .where('a.token_hash', '=', hash);
}

/** A private app's token row, by store and hash (read alone, or with a list page as above). */
export function privateTokenQuery(k: Kysely<Database>, store: number, hash: string) {
  return k
    .selectFrom('private_apps')
    .select(['id', 'store_id', 'scopes', 'revoked_at', 'created_at'])
    .where('store_id', '=', store)
    .where('token_hash', '=', hash);
}

export function preparedStatements(k: Kysely<Database>) {
  return {
    appByClientId: defineQuery<AppRow, { id: string }>((p) =>
      k
        .selectFrom('apps')
        .select([...APP_COLUMNS])
        .where('client_id', '=', p('id')),
    ),
    accessToken: defineQuery<AccessTokenLookup, { store: number; hash: string }>((p) => accessTokenQuery(k, p('store'), p('hash'))),
    privateToken: defineQuery<Issued<PrivateTokenRow>, { store: number; hash: string }>((p) => privateTokenQuery(k, p('store'), p('hash'))),
    codeByHash: defineQuery<CodeRow, { store: number; hash: string }>((p) =>
      k
        .selectFrom('authorization_codes')
        .select([
          'app_id',
          'store_id',
          'installation_id',
          'redirect_uri',
          'scopes',
          'code_challenge',
          'expires_at',
          'used_at',
          'family_id',
          'merchant_id',
        ])
        .where('store_id', '=', p('store'))
        .where('code_hash', '=', p('hash')),
    ),
    claimCode: defineQuery<unknown, { now: number; family: string; store: number; hash: string }>((p) =>
      k
        .updateTable('authorization_codes')
        .set({ used_at: p('now'), family_id: p('family') })
        .where('store_id', '=', p('store'))
        .where('code_hash', '=', p('hash'))
        .where('used_at', 'is', null),
    ),
    installation: defineQuery<{ id: number; uninstalled_at: number | null; scopes: string }, { store: number; id: number }>((p) =>
      k.selectFrom('installations').select(['id', 'uninstalled_at', 'scopes']).where('store_id', '=', p('store')).where('id', '=', p('id')),
    ),
    insertFamily: defineQuery<unknown, { id: string; installation: number; store: number; now: number }>((p) =>
      k.insertInto('token_families').values({
        id: p('id'),
        installation_id: p('installation'),
        store_id: p('store'),
        created_at: p('now'),
        revoked_at: null,
      }),
    ),
    insertOnlineFamily: defineQuery<unknown, { id: string; installation: number; store: number; now: number; merchant: number }>((p) =>
      k.insertInto('token_families').values({
        id: p('id'),
        installation_id: p('installation'),
        store_id: p('store'),
        created_at: p('now'),
        revoked_at: null,
        merchant_id: p('merchant'),
      }),
    ),
    // A launch token's id, once: a second exchange of it inserts nothing.
    useLaunchToken: defineQuery<unknown, { store: number; jti: string; expires: number; now: number }>((p) =>
      k
        .insertInto('launch_token_uses')
        .values({ store_id: p('store'), jti: p('jti'), expires_at: p('expires'), created_at: p('now') })
        .onConflict((oc) => oc.columns(['store_id', 'jti']).doNothing()),
    ),
    liveInstallation: defineQuery<{ id: number; scopes: string }, { store: number; app: number }>((p) =>
      k
        .selectFrom('installations')
        .select(['id', 'scopes'])
        .where('store_id', '=', p('store'))
        .where('app_id', '=', p('app'))
        .where('uninstalled_at', 'is', null),
    ),
    // A merchant of the store: its owner (the only merchant a store has).
    storeMerchant: defineQuery<{ id: number; email: string }, { store: number; merchant: number }>((p) =>
      k
        .selectFrom('stores as s')
        .innerJoin('merchants as m', 'm.id', 's.owner_merchant_id')
        .select(['m.id', 'm.email'])
        .where('s.id', '=', p('store'))
        .where('m.id', '=', p('merchant')),
    ),
    insertAccess: defineQuery<
      unknown,
      { hash: string; family: string; installation: number; store: number; app: number; scopes: string; expires: number; now: number }
    >((p) =>
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
        used_at: null,
      }),
    ),
    insertRefresh: defineQuery<
      unknown,
      {
        hash: string;
        family: string;
        installation: number;
        store: number;
        app: number;
        scopes: string;
        accessExpires: number;
        expires: number;
        now: number;
      }
    >((p) =>
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
    refreshByHash: defineQuery<RefreshRow, { store: number; hash: string }>((p) =>
      k
        .selectFrom('refresh_tokens as r')
        .innerJoin('token_families as f', (j) => j.onRef('f.store_id', '=', 'r.store_id').onRef('f.id', '=', 'r.family_id'))
        .select(['r.family_id', 'r.installation_id', 'r.store_id', 'r.app_id', 'r.scopes', 'r.expires_at', 'r.rotated_at'])
        .select((eb) => eb.fn.coalesce('r.revoked_at', 'f.revoked_at').as('revoked_at'))
        .where('r.store_id', '=', p('store'))
        .where('r.token_hash', '=', p('hash')),
    ),
    // Both tokens of the pair a rotation issued, in one read: a left join, so a successor whose access
    // token row is missing still answers (and counts as unused only if both columns are null).
    successor: defineQuery<SuccessorRow, { accessHash: string; store: number; refreshHash: string }>((p) =>
      k
        .selectFrom('refresh_tokens as r')
        .innerJoin('token_families as f', (j) => j.onRef('f.store_id', '=', 'r.store_id').onRef('f.id', '=', 'r.family_id'))
        .leftJoin('access_tokens as a', (j) =>
          j.onRef('a.store_id', '=', 'r.store_id').onRef('a.family_id', '=', 'r.family_id').on('a.token_hash', '=', p('accessHash')),
        )
        .select(['r.access_expires_at', 'r.rotated_at', 'a.used_at as access_used_at', 'a.revoked_at as access_revoked_at'])
        .select((eb) => eb.fn.coalesce('r.revoked_at', 'f.revoked_at').as('revoked_at'))
        .where('r.store_id', '=', p('store'))
        .where('r.token_hash', '=', p('refreshHash')),
    ),
    // Guarded by `used_at IS NULL`: of concurrent first uses (on any node) one writes, the rest change nothing.
    markAccessUsed: defineQuery<unknown, { now: number; store: number; hash: string }>((p) =>
      k
        .updateTable('access_tokens')
        .set({ used_at: p('now') })
        .where('store_id', '=', p('store'))
        .where('token_hash', '=', p('hash'))
        .where('used_at', 'is', null),
    ),
    claimRefresh: defineQuery<unknown, { now: number; store: number; hash: string }>((p) =>
      k
        .updateTable('refresh_tokens')
        .set({ rotated_at: p('now') })
        .where('store_id', '=', p('store'))
        .where('token_hash', '=', p('hash'))
        .where('rotated_at', 'is', null)
        .where('revoked_at', 'is', null),
    ),
    refreshOwner: defineQuery<TokenOwner, { store: number; hash: string }>((p) =>
      k
        .selectFrom('refresh_tokens')
        .select(['family_id', 'app_id', 'store_id'])
        .where('store_id', '=', p('store'))
        .where('token_hash', '=', p('hash')),
    ),
    accessOwner: defineQuery<TokenOwner, { store: number; hash: string }>((p) =>
      k
        .selectFrom('access_tokens')
        .select(['family_id', 'app_id', 'store_id'])
        .where('store_id', '=', p('store'))
        .where('token_hash', '=', p('hash')),
    ),
    revokeAccess: defineQuery<unknown, { now: number; store: number; hash: string }>((p) =>
      k
        .updateTable('access_tokens')
        .set({ revoked_at: p('now') })
        .where('store_id', '=', p('store'))
        .where('token_hash', '=', p('hash'))
        .where('revoked_at', 'is', null),
    ),
    revokeFamily: defineQuery<unknown, { now: number; store: number; family: string }>((p) =>
      k
        .updateTable('token_families')
        .set({ revoked_at: p('now') })
        .where('store_id', '=', p('store'))
        .where('id', '=', p('family'))
        .where('revoked_at', 'is', null),
    ),
  };
}
