// Admin API authentication (seed §5.1): the Access-Token header, for public-app access tokens and
// private-app tokens alike. Every failure looks the same to the caller.
import type { CompiledQuery } from 'kysely';
import type { Scope } from '../domain/scopes.ts';
import { hashToken, looksLike } from '../domain/tokens.ts';
import type { Db } from '../storage/db.ts';
import type { Clock } from './clock.ts';

export interface ApiPrincipal {
  kind: 'app' | 'private';
  /** apps.id for public apps, private_apps.id for private ones. */
  id: number;
  storeId: number;
  scopes: Scope[];
  /** Identity of the caller for rate limits and webhook ownership: `app:12`, `private:3`. */
  owner: string;
}

type AccessRow = { app_id: number; store_id: number; scopes: string; expires_at: number; revoked_at: number | null };
type PrivateRow = { id: number; store_id: number; scopes: string; revoked_at: number | null };

export class ApiAuthService {
  // Every API request runs one of these: compiled once, run with a new parameter each time.
  private readonly accessQuery: CompiledQuery<AccessRow>;
  private readonly privateQuery: CompiledQuery<PrivateRow>;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    // Revoked when the token itself or its family is (uninstall, scope change, reuse detection).
    this.accessQuery = db.kysely
      .selectFrom('access_tokens as a')
      .innerJoin('token_families as f', 'f.id', 'a.family_id')
      .select(['a.app_id', 'a.store_id', 'a.scopes', 'a.expires_at'])
      .select((eb) => eb.fn.coalesce('a.revoked_at', 'f.revoked_at').as('revoked_at'))
      .where('a.token_hash', '=', '')
      .compile() as CompiledQuery<AccessRow>;
    this.privateQuery = db.kysely.selectFrom('private_apps').select(['id', 'store_id', 'scopes', 'revoked_at']).where('token_hash', '=', '').compile();
    // On SQLite the same compiled SQL runs as a synchronous prepared statement: the lookup is on
    // every API request, and Kysely's async path costs several times the query itself. A read on
    // the shared connection may see a write of a transaction still in flight; the only such writes
    // that matter here are revocations, and refusing a token a moment early is harmless.
    if (db.sqlite) {
      const access = db.sqlite.prepare(this.accessQuery.sql);
      const priv = db.sqlite.prepare(this.privateQuery.sql);
      this.lookupAccess = async (hash) => access.get(hash) as AccessRow | undefined;
      this.lookupPrivate = async (hash) => priv.get(hash) as PrivateRow | undefined;
    }
  }

  private lookupAccess = async (hash: string): Promise<AccessRow | undefined> => (await this.db.kysely.executeQuery<AccessRow>({ ...this.accessQuery, parameters: [hash] })).rows[0];
  private lookupPrivate = async (hash: string): Promise<PrivateRow | undefined> => (await this.db.kysely.executeQuery<PrivateRow>({ ...this.privateQuery, parameters: [hash] })).rows[0];

  // Looked-up rows by token hash, each with the database version it was read at (SQLite: see
  // PageCache). A row is reused only while the database is unchanged, so a revocation — a write —
  // takes effect on the next request; expiry is checked against the clock every time.
  private readonly rows = new Map<string, { version: string; row: AccessRow | PrivateRow | undefined }>();

  private async cached<R extends AccessRow | PrivateRow>(hash: string, version: string | undefined, lookup: (hash: string) => Promise<R | undefined>): Promise<R | undefined> {
    if (version === undefined) return lookup(hash);
    const hit = this.rows.get(hash);
    if (hit && hit.version === version) return hit.row as R | undefined;
    const row = await lookup(hash);
    if (this.rows.size >= 10_000) this.rows.delete(this.rows.keys().next().value!);
    this.rows.set(hash, { version, row });
    return row;
  }

  /**
   * The principal behind an Access-Token on `storeId`, or undefined. `version` (SQLite) is the
   * database version read when the request arrived; with it, unchanged lookups are reused.
   */
  async authenticate(token: string | undefined, storeId: number, version?: string): Promise<ApiPrincipal | undefined> {
    if (!token) return undefined;
    if (looksLike('access', token)) {
      const row = await this.cached(`a:${hashToken(token)}`, version, (h) => this.lookupAccess(h.slice(2)));
      if (!row || row.revoked_at !== null || row.expires_at <= this.clock() || row.store_id !== storeId) return undefined;
      return { kind: 'app', id: row.app_id, storeId, scopes: split(row.scopes), owner: `app:${row.app_id}` };
    }
    if (looksLike('private', token)) {
      const row = await this.cached(`p:${hashToken(token)}`, version, (h) => this.lookupPrivate(h.slice(2)));
      if (!row || row.revoked_at !== null || row.store_id !== storeId) return undefined;
      return { kind: 'private', id: row.id, storeId, scopes: split(row.scopes), owner: `private:${row.id}` };
    }
    return undefined;
  }
}

function split(scopes: string): Scope[] {
  return scopes.split(',').filter(Boolean) as Scope[];
}
