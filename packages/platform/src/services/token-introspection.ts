// Token introspection (RFC 7662) for the operator's resource servers: whether a token of a store is
// live now, and what it allows. Access tokens and private-app tokens are judged by the Admin API's
// own rules (ApiAuthService.inspect: revoked, expired, uninstalled, scopes narrowed, another store),
// refresh tokens by the token endpoint's (decideRefresh: only a token it would rotate is live).
// Anything else, a malformed string included, is just inactive: the answer never says why.
import type { Clock } from '../domain/clock.ts';
import { decideRefresh } from '../domain/grants.ts';
import type { BucketLimit } from '../domain/leaky-bucket.ts';
import { hashToken, looksLike } from '../domain/tokens.ts';
import type { AppRepository } from '../storage/ports/apps.ts';
import type { TokenRepository } from '../storage/ports/tokens.ts';
import type { ApiAuthService } from './api-auth.ts';
import type { RateLimiter } from './rate-limiter.ts';

/** The answer about an active token; every other answer is `{"active": false}` alone. */
export interface ActiveToken {
  active: true;
  /** Space-separated, as granted now. */
  scope: string;
  /** The public app the token was issued to; absent for a private app's token. */
  client_id?: string;
  /** The private app whose token it is (its id in the store); absent for a public app's token. */
  private_app_id?: string;
  /** Online access only: the id of the merchant it acts for (a decimal string, as a launch token's `sub`). */
  sub?: string;
  /** `Bearer` for tokens the Admin API takes (access and private-app tokens), `refresh_token` for a refresh token. */
  token_type: 'Bearer' | 'refresh_token';
  /** Unix seconds; absent for a private app's token, which lives until the app is revoked. */
  exp?: number;
  /** Unix seconds; absent for a refresh token. */
  iat?: number;
  /** The store's base URL: the issuer of the token. */
  iss: string;
  /** The store's name. */
  store: string;
}

export type IntrospectionAnswer = ActiveToken | { active: false };

const INACTIVE: IntrospectionAnswer = Object.freeze({ active: false });

export type IntrospectionAdmission = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class TokenIntrospection {
  constructor(
    private readonly apiAuth: Pick<ApiAuthService, 'inspect'>,
    private readonly tokens: Pick<TokenRepository, 'findRefreshToken'>,
    private readonly apps: Pick<AppRepository, 'findById'>,
    private readonly clock: Clock,
    /** The platform's limiter and the bucket of each resource server; none when off. */
    private readonly limits: { limiter: RateLimiter; limit: BucketLimit } | undefined,
  ) {}

  /** Counts one request of an authenticated resource server; over its bucket, when to come back. */
  async admit(clientId: string): Promise<IntrospectionAdmission> {
    if (!this.limits) return { allowed: true };
    const decision = await this.limits.limiter.take(`introspect:${clientId}`, this.limits.limit);
    return decision.allowed ? { allowed: true } : { allowed: false, retryAfterSeconds: decision.retryAfterSeconds };
  }

  /** Closes the limiter (a no-op when another user of it closed it first). */
  async close(): Promise<void> {
    await this.limits?.limiter.close();
  }

  /** What the store (by id, name and base URL) knows of `token` now. */
  async introspect(token: string, store: { id: number; name: string; issuer: string }): Promise<IntrospectionAnswer> {
    const about = { iss: store.issuer, store: store.name };
    if (looksLike('refresh', token)) return this.refreshToken(token, store.id, about);
    const live = await this.apiAuth.inspect(token, store.id);
    if (!live) return INACTIVE;
    const { row, principal } = live;
    const scope = principal.scopes.join(' ');
    if (!('expires_at' in row)) {
      return { active: true, scope, private_app_id: String(principal.id), token_type: 'Bearer', iat: seconds(row.created_at), ...about };
    }
    const app = await this.apps.findById(row.app_id);
    if (!app) return INACTIVE;
    const times = { exp: seconds(row.expires_at), iat: seconds(row.created_at) };
    const merchant = row.merchant_id === null ? {} : { sub: String(row.merchant_id) };
    return { active: true, scope, client_id: app.client_id, ...merchant, token_type: 'Bearer', ...times, ...about };
  }

  private async refreshToken(token: string, storeId: number, about: { iss: string; store: string }): Promise<IntrospectionAnswer> {
    const row = await this.tokens.findRefreshToken(storeId, hashToken(token));
    // Live is what the token endpoint would rotate: unrevoked (its family too), unrotated, unexpired.
    if (!row || row.store_id !== storeId || decideRefresh(row, { appId: row.app_id, now: this.clock() }).action !== 'rotate')
      return INACTIVE;
    const app = await this.apps.findById(row.app_id);
    if (!app) return INACTIVE;
    const scope = row.scopes.split(',').filter(Boolean).join(' ');
    return { active: true, scope, client_id: app.client_id, token_type: 'refresh_token', exp: seconds(row.expires_at), ...about };
  }
}

function seconds(ms: number): number {
  return Math.floor(ms / 1000);
}
