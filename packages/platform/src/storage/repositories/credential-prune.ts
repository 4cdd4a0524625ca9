// The batched deletes of the credential maintenance round (the rules are in
// domain/credential-retention.ts). Each statement deletes at most `limit` rows, named by their
// primary key as a subquery picks them: `(store_id, key) in (select … limit n)`, a bounded delete
// both databases accept (PostgreSQL has no DELETE … LIMIT, SQLite only when built with it), and
// with store_id in it a lookup of one partition's key in the partitioned layout. On PostgreSQL the pick skips rows
// another transaction holds, so workers pruning at the same moment share the work instead of
// waiting on each other. The token tables hold the rows of every store, so those statements are
// marked fleet-wide; every join and subquery stays within the row's own store.
import { type Expression, type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { PruneStep, RetentionCutoffs } from '../../domain/credential-retention.ts';
import { fleetWide } from '../fleet-wide.ts';
import type { CredentialPruneRepository } from '../ports/credential-prune.ts';
import type { Database } from '../schema.ts';

type Table =
  | 'refresh_tokens'
  | 'token_families'
  | 'access_tokens'
  | 'authorization_codes'
  | 'web_sessions'
  | 'one_time_reveals'
  | 'launch_token_uses';

/** Each table's primary key, store_id first where the table belongs to a store. */
const KEYS: Record<Table, readonly string[]> = {
  refresh_tokens: ['store_id', 'token_hash'],
  token_families: ['store_id', 'id'],
  access_tokens: ['store_id', 'token_hash'],
  authorization_codes: ['store_id', 'code_hash'],
  web_sessions: ['id_hash'],
  one_time_reveals: ['id_hash'],
  launch_token_uses: ['store_id', 'jti'],
};

/** Tables whose rows belong to stores: their deletes read every store on purpose. */
const STORE_TABLES: ReadonlySet<Table> = new Set([
  'refresh_tokens',
  'token_families',
  'access_tokens',
  'authorization_codes',
  'launch_token_uses',
]);

export class SqlCredentialPrune implements CredentialPruneRepository {
  constructor(
    private readonly k: Kysely<Database>,
    private readonly dialect: 'sqlite' | 'postgres',
  ) {}

  async pruneBatch(step: PruneStep, c: RetentionCutoffs, limit: number): Promise<number> {
    const [table, candidates] = this.pick(step, c, limit);
    const columns = sql.join(KEYS[table].map((column) => sql.ref(column)));
    const mark = STORE_TABLES.has(table) ? fleetWide('credential-prune') : sql``;
    const result = await sql`delete from ${sql.table(table)} where (${columns}) in (${candidates}) ${mark}`.execute(this.k);
    return Number(result.numAffectedRows ?? 0);
  }

  /** The table a step deletes from, and the query picking its rows (their keys, in KEYS order). */
  private pick(step: PruneStep, c: RetentionCutoffs, limit: number): [Table, Expression<unknown>] {
    const k = this.k;
    // At most `limit` of the rows a query picks; on PostgreSQL none that another transaction holds.
    const bounded = <DB, TB extends keyof DB, O>(q: SelectQueryBuilder<DB, TB, O>): Expression<O> => {
      const limited = q.limit(limit);
      return this.dialect === 'postgres' ? limited.forUpdate().skipLocked() : limited;
    };
    // Ended families: revoked before the cutoff; or not revoked, old enough to have run out, and
    // without a refresh token that expires at or after the family cutoff.
    const revokedFamily = k
      .selectFrom('token_families as f')
      .where('f.revoked_at', 'is not', null)
      .where('f.revoked_at', '<', c.endedBefore);
    const runOutFamily = k
      .selectFrom('token_families as f')
      .where('f.revoked_at', 'is', null)
      .where('f.created_at', '<', c.familiesCreatedBefore)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('refresh_tokens as l')
              .select('l.token_hash')
              .whereRef('l.store_id', '=', 'f.store_id')
              .whereRef('l.family_id', '=', 'f.id')
              .where('l.expires_at', '>=', c.familyRefreshExpiredBefore),
          ),
        ),
      );
    // A family row goes once none of its refresh tokens is left (those go first, in batches).
    const noRefreshLeft = (families: typeof revokedFamily) =>
      families.where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('refresh_tokens as r')
              .select('r.token_hash')
              .whereRef('r.store_id', '=', 'f.store_id')
              .whereRef('r.family_id', '=', 'f.id'),
          ),
        ),
      );
    const familyTokens = (families: typeof revokedFamily) =>
      families.innerJoin('refresh_tokens as r', (j) => j.onRef('r.store_id', '=', 'f.store_id').onRef('r.family_id', '=', 'f.id'));
    switch (step) {
      case 'revoked-family-refresh-tokens':
        return ['refresh_tokens', bounded(familyTokens(revokedFamily).select(['r.store_id', 'r.token_hash']))];
      case 'revoked-families':
        return ['token_families', bounded(noRefreshLeft(revokedFamily).select(['f.store_id', 'f.id']))];
      case 'expired-family-refresh-tokens':
        return ['refresh_tokens', bounded(familyTokens(runOutFamily).select(['r.store_id', 'r.token_hash']))];
      case 'expired-families':
        return ['token_families', bounded(noRefreshLeft(runOutFamily).select(['f.store_id', 'f.id']))];
      case 'access-tokens':
        return ['access_tokens', bounded(this.accessTokens(c))];
      case 'codes':
        return ['authorization_codes', bounded(this.codes(c))];
      case 'sessions':
        return ['web_sessions', bounded(k.selectFrom('web_sessions').select('id_hash').where('expires_at', '<', c.endedBefore))];
      case 'reveals':
        return ['one_time_reveals', bounded(k.selectFrom('one_time_reveals').select('id_hash').where('expires_at', '<', c.endedBefore))];
      case 'launch-tokens':
        return [
          'launch_token_uses',
          bounded(k.selectFrom('launch_token_uses').select(['store_id', 'jti']).where('expires_at', '<', c.endedBefore)),
        ];
    }
  }

  /**
   * Expired access tokens, except the one issued with the newest refresh token of a family that
   * lives: a rotated refresh token presented again is judged by whether that one was used. An access
   * token is not that one when a refresh token of its family was issued after it, or when its
   * family has no refresh token at all (online access: nothing can be presented again).
   */
  private accessTokens(c: RetentionCutoffs) {
    return this.k
      .selectFrom('access_tokens as a')
      .select(['a.store_id', 'a.token_hash'])
      .where('a.expires_at', '<', c.endedBefore)
      .where(({ or, not, exists, selectFrom, eb }) =>
        or([
          not(
            exists(
              selectFrom('token_families as f')
                .select('f.id')
                .whereRef('f.store_id', '=', 'a.store_id')
                .whereRef('f.id', '=', 'a.family_id')
                .where('f.revoked_at', 'is', null),
            ),
          ),
          exists(
            selectFrom('refresh_tokens as r')
              .select('r.token_hash')
              .whereRef('r.store_id', '=', 'a.store_id')
              .whereRef('r.family_id', '=', 'a.family_id')
              // Only narrows the index range to the refresh tokens that can be newer (each lives
              // refreshTtl); the condition after it is the rule, so a lifetime changed since can
              // only keep more.
              .where('r.expires_at', '>', eb('a.created_at', '+', c.refreshTtlMs))
              .whereRef('r.created_at', '>', 'a.created_at'),
          ),
          not(
            exists(
              selectFrom('refresh_tokens as o')
                .select('o.token_hash')
                .whereRef('o.store_id', '=', 'a.store_id')
                .whereRef('o.family_id', '=', 'a.family_id'),
            ),
          ),
        ]),
      );
  }

  /** Expired codes, except a used one whose family lives: presenting it again revokes that family. */
  private codes(c: RetentionCutoffs) {
    return this.k
      .selectFrom('authorization_codes as c')
      .select(['c.store_id', 'c.code_hash'])
      .where('c.expires_at', '<', c.endedBefore)
      .where(({ or, not, exists, selectFrom, eb }) =>
        or([
          eb('c.used_at', 'is', null),
          eb('c.family_id', 'is', null),
          not(
            exists(
              selectFrom('token_families as f')
                .select('f.id')
                .whereRef('f.store_id', '=', 'c.store_id')
                .whereRef('f.id', '=', 'c.family_id')
                .where('f.revoked_at', 'is', null),
            ),
          ),
        ]),
      );
  }
}
