// Admin API authentication: the Access-Token header, for public-app access tokens and private-app
// tokens alike. Every failure looks the same to the caller. The first call an access token
// authenticates is recorded in the database (a rotated refresh token presented again may get the
// same pair only while neither token has been used); every later call only reads.
import type { Clock } from '../domain/clock.ts';
import type { Scope } from '../domain/scopes.ts';
import { hashToken, looksLike } from '../domain/tokens.ts';
import type { AccessTokenRow, GrantStore, PrivateTokenRow, TokenRepository } from '../storage/ports.ts';

export interface ApiPrincipal {
  kind: 'app' | 'private';
  /** apps.id for public apps, private_apps.id for private ones. */
  id: number;
  storeId: number;
  scopes: Scope[];
  /** Identity of the caller for rate limits and webhook ownership: `app:12`, `private:3`. */
  owner: string;
}

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

  /**
   * Records the first use of an access token before the call it authenticates goes on, so that once
   * an app has seen an answer to that call, presenting the refresh token it came from again is
   * reuse. The write is guarded (`used_at IS NULL`), so first calls on several nodes at once change
   * the row once; a row read as used never writes again.
   */
  private markUsed(storeId: number, hash: string, row: AccessTokenRow): Promise<void> {
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

  // Looked-up rows by token hash, each with the change stamp it was read at. A row is reused only
  // while the database is unchanged, so a revocation (a write) takes effect on the next request;
  // expiry is checked against the clock every time.
  private readonly rows = new Map<string, { version: string; row: AccessTokenRow | PrivateTokenRow | undefined }>();

  private async cached<R extends AccessTokenRow | PrivateTokenRow>(
    key: string,
    lookup: () => Promise<R | undefined>,
  ): Promise<R | undefined> {
    const version = this.changeStamp();
    if (version === undefined) return lookup();
    const hit = this.rows.get(key);
    if (hit && hit.version === version) return hit.row as R | undefined;
    const row = await lookup();
    if (this.rows.size >= 10_000) this.rows.delete(this.rows.keys().next().value!);
    this.rows.set(key, { version, row });
    return row;
  }

  /** The principal behind an Access-Token on `storeId`, or undefined. */
  async authenticate(token: string | undefined, storeId: number): Promise<ApiPrincipal | undefined> {
    if (!token) return undefined;
    if (looksLike('access', token)) {
      const hash = hashToken(token);
      const row = await this.cached(`a:${storeId}:${hash}`, () => this.tokens.findAccessToken(storeId, hash));
      if (!row || row.revoked_at !== null || row.expires_at <= this.clock() || row.store_id !== storeId) return undefined;
      if (row.used_at === null) await this.markUsed(storeId, hash, row);
      return { kind: 'app', id: row.app_id, storeId, scopes: split(row.scopes), owner: `app:${row.app_id}` };
    }
    if (looksLike('private', token)) {
      const hash = hashToken(token);
      const row = await this.cached(`p:${storeId}:${hash}`, () => this.tokens.findPrivateToken(storeId, hash));
      if (!row || row.revoked_at !== null || row.store_id !== storeId) return undefined;
      return { kind: 'private', id: row.id, storeId, scopes: split(row.scopes), owner: `private:${row.id}` };
    }
    return undefined;
  }
}

function split(scopes: string): Scope[] {
  return scopes.split(',').filter(Boolean) as Scope[];
}
