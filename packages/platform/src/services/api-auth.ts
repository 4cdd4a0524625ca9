// Admin API authentication (seed §5.1): the Access-Token header, for public-app access tokens and
// private-app tokens alike. Every failure looks the same to the caller.
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

export class ApiAuthService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async authenticate(token: string | undefined, storeId: number): Promise<ApiPrincipal | undefined> {
    if (!token) return undefined;
    if (looksLike('access', token)) {
      const row = await this.db.kysely
        .selectFrom('access_tokens')
        .select(['app_id', 'store_id', 'scopes', 'expires_at', 'revoked_at'])
        .where('token_hash', '=', hashToken(token))
        .executeTakeFirst();
      if (!row || row.revoked_at !== null || row.expires_at <= this.clock() || row.store_id !== storeId) return undefined;
      return { kind: 'app', id: row.app_id, storeId, scopes: split(row.scopes), owner: `app:${row.app_id}` };
    }
    if (looksLike('private', token)) {
      const row = await this.db.kysely.selectFrom('private_apps').select(['id', 'store_id', 'scopes', 'revoked_at']).where('token_hash', '=', hashToken(token)).executeTakeFirst();
      if (!row || row.revoked_at !== null || row.store_id !== storeId) return undefined;
      return { kind: 'private', id: row.id, storeId, scopes: split(row.scopes), owner: `private:${row.id}` };
    }
    return undefined;
  }
}

function split(scopes: string): Scope[] {
  return scopes.split(',').filter(Boolean) as Scope[];
}
