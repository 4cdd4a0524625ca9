// Admin API authentication: the token of the Access-Token header (or of Authorization: Bearer), for
// public-app access tokens and private-app tokens alike. Every failure looks the same to the
// caller. The first call an access token authenticates is recorded in the database (a rotated
// refresh token presented again may get the same pair only while neither token has been used);
// every later call only reads. Token introspection asks the same question through `inspect`, and
// a list page read with its token in one statement through `authenticateRow`, so the rules of a
// live token are written once (`live`, `admit`); introspection records no use.
//
// Looked-up rows are reused only while storage's change stamp is unchanged (SQLite: any write, on
// this connection or by another process, changes it; a revocation is a write), so a revoked,
// uninstalled or narrowed token is refused on the very next request. Where storage has no stamp
// (PostgreSQL, possibly several nodes) nothing is reused: every call reads its token row, which is
// what keeps a revocation on one node seen by all the others at once (docs/admin-api-performance.md).
import type { Clock } from '../domain/clock.ts';
import type { Scope } from '../domain/scopes.ts';
import { hashToken, looksLike } from '../domain/tokens.ts';
import type { PrivateTokenRow } from '../storage/ports/rows.ts';
import type { AccessTokenLookup, GrantStore, Issued, TokenKey, TokenRepository } from '../storage/ports/tokens.ts';

export interface ApiPrincipal {
  kind: 'app' | 'private';
  /** apps.id for public apps, private_apps.id for private ones. */
  id: number;
  storeId: number;
  scopes: Scope[];
  /** Identity of the caller for rate limits and webhook ownership: `app:12`, `private:3`. */
  owner: string;
}

export type TokenRow = AccessTokenLookup | Issued<PrivateTokenRow>;

/** A looked-up row, the change stamp it was read at, and the principal it gives (built once). */
interface Entry {
  version: string;
  row: TokenRow | undefined;
  principal: ApiPrincipal | undefined;
}

/** A token's entry and its hash, as found by `find`. */
interface Found {
  entry: Entry;
  hash: string;
}

/** A token that is live now, as token introspection describes it. */
export interface LiveToken {
  row: TokenRow;
  principal: ApiPrincipal;
}

const MAX_ENTRIES = 10_000;

export class ApiAuthService {
  constructor(
    private readonly tokens: TokenRepository,
    private readonly clock: Clock,
    /** Storage's change stamp (see Storage.changeStamp): lookups are reused while it is unchanged. */
    private readonly changeStamp: () => string | undefined,
    private readonly grants: GrantStore,
  ) {}

  // First uses being recorded, by token hash: concurrent first calls on this node share one write.
  private readonly marking = new Map<string, Promise<void>>();
  // By kind, store and token hash.
  private readonly rows = new Map<string, Entry>();

  /**
   * Records the first use of an access token before the call it authenticates goes on, so that once
   * an app has seen an answer to that call, presenting the refresh token it came from again is
   * reuse. The write is guarded (`used_at IS NULL`), so first calls on several nodes at once change
   * the row once; a row read as used never writes again.
   */
  private markUsed(storeId: number, hash: string, row: AccessTokenLookup): Promise<void> {
    const pending = this.marking.get(hash);
    if (pending) return pending;
    const now = this.clock();
    const write = this.grants
      .run((q) => q.markAccessUsed(storeId, hash, now))
      .then(() => {
        row.used_at ??= now;
      })
      .finally(() => this.marking.delete(hash));
    this.marking.set(hash, write);
    return write;
  }

  /**
   * The principal behind an Access-Token on `storeId`, or undefined. Answered synchronously (no
   * promise) when the token's row is known at the current change stamp and needs no write.
   */
  authenticate(token: string | undefined, storeId: number): ApiPrincipal | undefined | Promise<ApiPrincipal | undefined> {
    const found = this.find(token, storeId);
    if (found instanceof Promise) return found.then((f) => f && this.admit(f, storeId));
    return found && this.admit(found, storeId);
  }

  /**
   * The same judgement as `authenticate`, for token introspection: the live token's row and
   * principal, or undefined. Looking is not using: the first use of an access token stays unrecorded.
   */
  async inspect(token: string, storeId: number): Promise<LiveToken | undefined> {
    const found = await this.find(token, storeId);
    if (!found || !this.live(found.entry, storeId)) return undefined;
    return { row: found.entry.row!, principal: found.entry.principal! };
  }

  /**
   * What storage looks a presented token up by: its kind and hash; undefined when it cannot be a
   * token of either kind (then it authenticates nothing, and no row need be read).
   */
  keyOf(token: string | undefined): TokenKey | undefined {
    if (!token) return undefined;
    const kind = looksLike('access', token) ? 'access' : looksLike('private', token) ? 'private' : undefined;
    return kind === undefined ? undefined : { kind, hash: hashToken(token) };
  }

  /**
   * The same judgement as `authenticate`, on the token's row as storage read it together with
   * something else (a list page, in one statement; `undefined`: no such token in the store). The
   * row is not kept for reuse: it was read at no change stamp.
   */
  authenticateRow(key: TokenKey, storeId: number, row: TokenRow | undefined): ApiPrincipal | undefined | Promise<ApiPrincipal | undefined> {
    return this.admit({ entry: { version: '', row, principal: principalOf(row, storeId) }, hash: key.hash }, storeId);
  }

  private find(token: string | undefined, storeId: number): Found | undefined | Promise<Found> {
    const key = this.keyOf(token);
    if (key === undefined) return undefined;
    const { kind, hash } = key;
    const cacheKey = `${kind}:${storeId}:${hash}`;
    const version = this.changeStamp();
    const hit = version === undefined ? undefined : this.rows.get(cacheKey);
    if (hit !== undefined && hit.version === version) return { entry: hit, hash };
    return this.lookUp(kind, cacheKey, version, storeId, hash).then((entry) => ({ entry, hash }));
  }

  private async lookUp(kind: TokenKey['kind'], key: string, version: string | undefined, storeId: number, hash: string): Promise<Entry> {
    const row = kind === 'access' ? await this.tokens.findAccessToken(storeId, hash) : await this.tokens.findPrivateToken(storeId, hash);
    const entry: Entry = { version: version ?? '', row, principal: principalOf(row, storeId) };
    if (version !== undefined) {
      if (this.rows.size >= MAX_ENTRIES) this.rows.delete(this.rows.keys().next().value!);
      this.rows.set(key, entry);
    }
    return entry;
  }

  /** Revocation and store are fixed by the row; expiry is checked against the clock every time. */
  private live(entry: Entry, storeId: number): boolean {
    const { row, principal } = entry;
    if (!row || !principal || row.revoked_at !== null || row.store_id !== storeId) return false;
    return !('expires_at' in row) || row.expires_at > this.clock();
  }

  /** A live token authenticates the call; an access token's first use is recorded first. */
  private admit({ entry, hash }: Found, storeId: number): ApiPrincipal | undefined | Promise<ApiPrincipal | undefined> {
    if (!this.live(entry, storeId)) return undefined;
    const { row, principal } = entry;
    if (row && 'expires_at' in row && row.used_at === null) return this.markUsed(storeId, hash, row).then(() => principal);
    return principal;
  }
}

function principalOf(row: TokenRow | undefined, storeId: number): ApiPrincipal | undefined {
  if (!row) return undefined;
  // Shared by every request the row authenticates, so nobody may change it.
  const scopes = Object.freeze(row.scopes.split(',').filter(Boolean)) as Scope[];
  if ('app_id' in row) return Object.freeze({ kind: 'app', id: row.app_id, storeId, scopes, owner: `app:${row.app_id}` });
  return Object.freeze({ kind: 'private', id: row.id, storeId, scopes, owner: `private:${row.id}` });
}
