// A list page written by the database and the Access-Token of the request that asks for it, read
// by one statement: on PostgreSQL each statement is a round trip, and a warm Admin API page would
// otherwise cost two (the token, then the page). The statement is
//
//   with token as (the token's row), page as (the page's rows), agg as (the page written as JSON)
//   select agg.*, token.* from agg left join token on true
//
// where the token's row is read by the very query findAccessToken or findPrivateToken runs alone
// (prepared-statements.ts) and the page by the parts of jsonPage's statement (json-page.ts), so
// neither can drift from its single-statement form. One statement reads one snapshot taken when
// it starts, after the request arrived: a revocation committed before the request is seen.
//
// Whether the token admits the request is not judged here: the row goes back to the service that
// judges every token row alike. The page is read only when the store holds a token of that hash
// (a condition PostgreSQL checks once, before the scan), so an unknown token costs the token's
// index probe and no page.
import { type Kysely, sql } from 'kysely';
import { RESOURCE_DEFS, type ResourceName } from '../../domain/resources.ts';
import { defineQuery, type PreparedQuery } from '../prepared-query.ts';
import type { JsonPageQuery } from '../ports/json-page.ts';
import type { AccessTokenLookup, Issued, TokenAndPage, TokenKey } from '../ports/tokens.ts';
import type { PrivateTokenRow } from '../ports/rows.ts';
import type { Database } from '../schema.ts';
import type { Executor } from './executor.ts';
import { type PageRow, pageOf, pageParts } from './json-page.ts';
import { accessTokenQuery, privateTokenQuery } from './prepared-statements.ts';

/** The aggregate's columns, whether a token row was found, and the token row's own columns. */
type CombinedRow = PageRow & { token_found: boolean; [column: string]: unknown };

// By token kind, table, side and whether the page starts at a cursor; each a named statement on
// PostgreSQL from its first run.
const statements = new Map<string, PreparedQuery<CombinedRow>>();

/** The statement of one token kind and page shape; undefined for a resource whose pages the database does not write. */
export function tokenPageStatement(
  k: Kysely<Database>,
  kind: TokenKey['kind'],
  resource: ResourceName,
  side: 'after' | 'before',
  from: boolean,
): PreparedQuery<CombinedRow> | undefined {
  const key = `${kind}|${resource}|${side}|${from}`;
  const known = statements.get(key);
  if (known) return known;
  const def = RESOURCE_DEFS.find((d) => d.name === resource);
  if (!def?.jsonFields) return undefined;
  const fields = def.jsonFields;
  const statement = defineQuery<CombinedRow>((p) => {
    const store = p<number>('tokenStore');
    const token = kind === 'access' ? accessTokenQuery(k, store, p('hash')) : privateTokenQuery(k, store, p('hash'));
    const { page, aggregate } = pageParts('postgres', def.table, fields, side, from, p, sql`and exists (select from token)`);
    const query = sql<CombinedRow>`with token as (${token}), page as (${page}), agg as (${aggregate})
      select agg.*, token.store_id is not null as token_found, token.* from agg left join token on true`;
    return { compile: () => query.compile(k) };
  });
  statements.set(key, statement);
  return statement;
}

/** The token of `key` in the store of `q`, and the page `q` of `resource`, by one statement (PostgreSQL). */
export async function pageWithToken(
  x: Pick<Executor, 'k' | 'runner'>,
  key: TokenKey,
  resource: ResourceName,
  q: JsonPageQuery,
): Promise<TokenAndPage> {
  const statement = tokenPageStatement(x.k as Kysely<Database>, key.kind, resource, q.side, q.from !== undefined);
  if (!statement) throw new Error(`${resource} has no page written by the database`);
  const params = { store: [q.storeId], tokenStore: q.storeId, hash: key.hash, from: q.from, limit: q.limit };
  const row = await x.runner.first(statement, params);
  if (row === undefined) throw new Error('an aggregate answered no row');
  const { objects, n, lo, hi, ok, more, behind, token_found: found, ...token } = row;
  if (!found) return { token: undefined, page: undefined };
  return {
    token: token as unknown as AccessTokenLookup | Issued<PrivateTokenRow>,
    page: pageOf({ objects, n, lo, hi, ok, more, behind }),
  };
}
