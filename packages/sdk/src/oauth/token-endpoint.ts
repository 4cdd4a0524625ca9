// The platform's token endpoint, used for the code exchange after an install, for every refresh and
// for the exchange of a launch token (RFC 8693): POST {origin}/admin/oauth/token with a JSON body; a
// success answers with a token record (access_token, refresh_token, expires_at or expires_in, scope,
// store_id, store_name), and an online token's record names its merchant (associated_user) instead
// of carrying a refresh token.
import { exchange, parseJsonBody } from '../api/http-transport.ts';
import { backoffDelayMs } from '../api/retry-policy.ts';
import type { ResolvedConfig } from '../config/app-config.ts';
import { AbortedError, NetworkError } from '../errors.ts';
import type { SdkLogger } from '../logging/redacting-logger.ts';
import { offlineSessionId, onlineSessionId, type AssociatedUser, type Session } from '../session/session.ts';

/** The grant type of a token exchange (RFC 8693 section 2.1). */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** The subject token type of a launch token. */
export const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
/** The requested token types of a token exchange: the shop's offline token, or a merchant's online token. */
export const REQUESTED_TOKEN_TYPES = {
  offline: 'urn:storegate:params:oauth:token-type:offline-access-token',
  online: 'urn:storegate:params:oauth:token-type:online-access-token',
} as const;

/** One grant posted to the token endpoint. */
export type TokenRequestGrant =
  | { grant_type: 'authorization_code'; code: string }
  | { grant_type: 'refresh_token'; refresh_token: string }
  | {
      grant_type: typeof TOKEN_EXCHANGE_GRANT;
      subject_token: string;
      subject_token_type: typeof ID_TOKEN_TYPE;
      requested_token_type: (typeof REQUESTED_TOKEN_TYPES)[keyof typeof REQUESTED_TOKEN_TYPES];
    };

/** A successful token response, as a session. */
export interface TokenGrant {
  ok: true;
  session: Session;
}

/** An error answer of the token endpoint (`error`, `error_description`: RFC 6749 section 5.2). */
export interface TokenFailure {
  ok: false;
  status: number;
  oauthError: string | undefined;
  description: string | undefined;
}

function str(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

function associatedUserOf(value: unknown): AssociatedUser | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const user = value as Record<string, unknown>;
  const id = str(user['id']);
  if (id === undefined) return undefined;
  return { id, email: str(user['email']) ?? '' };
}

/**
 * Turns a token record (the token endpoint's success body) into a session; `undefined` when it lacks
 * an access token. A record naming its merchant (`associated_user`) is an online session, stored
 * under its own id and never refreshed (any refresh token in it is dropped).
 */
export function sessionFromTokenRecord(
  shop: string,
  record: unknown,
  nowMs: number,
  requestedScopes: readonly string[],
): Session | undefined {
  if (record === null || typeof record !== 'object') return undefined;
  const r = record as Record<string, unknown>;
  const accessToken = str(r['access_token']);
  if (!accessToken) return undefined;
  let expiresAt: number | null = null;
  const expiresAtField = r['expires_at'];
  if (typeof expiresAtField === 'number' || (typeof expiresAtField === 'string' && /^\d+$/.test(expiresAtField)))
    expiresAt = Number(expiresAtField);
  else if (typeof r['expires_in'] === 'number') expiresAt = Math.floor(nowMs / 1000) + (r['expires_in'] as number);
  const scope = str(r['scope']) ?? requestedScopes.join(' ');
  const user = associatedUserOf(r['associated_user']);
  if (user) {
    return {
      id: onlineSessionId(shop, user.id),
      shop,
      accessToken,
      refreshToken: null,
      expiresAt,
      scope,
      storeId: str(r['store_id']),
      storeName: str(r['store_name']),
      online: true,
      associatedUser: user,
      associatedUserScope: str(r['associated_user_scope']) ?? scope,
    };
  }
  return {
    id: offlineSessionId(shop),
    shop,
    accessToken,
    refreshToken: str(r['refresh_token']) ?? null,
    expiresAt,
    scope,
    storeId: str(r['store_id']),
    storeName: str(r['store_name']),
  };
}

/**
 * Posts one grant to the token endpoint. Network failures throw (NetworkError, TimeoutError,
 * AbortedError); HTTP answers come back as {@link TokenGrant} or {@link TokenFailure}.
 */
export async function postTokenRequest(
  config: ResolvedConfig,
  shop: string,
  grant: TokenRequestGrant,
  signal?: AbortSignal,
): Promise<TokenGrant | TokenFailure> {
  const body = JSON.stringify({
    client_id: config.clientId,
    client_secret: config.clientSecrets[0],
    ...grant,
    // The redirect URI belongs to the grants that started with a redirect; a token exchange had none.
    ...(grant.grant_type === TOKEN_EXCHANGE_GRANT ? {} : { redirect_uri: config.redirectUri }),
  });
  const result = await exchange(config.fetch, {
    url: `${config.apiOrigin(shop)}/admin/oauth/token`,
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body,
    timeoutMs: config.requestTimeoutMs,
    signal,
  });
  const parsed = parseJsonBody(result.text);
  if (result.status >= 200 && result.status < 300) {
    const session = sessionFromTokenRecord(shop, parsed, config.clock.now(), config.scopes);
    if (session) return { ok: true, session };
    return { ok: false, status: result.status, oauthError: undefined, description: 'token response has no access_token' };
  }
  const b = (parsed !== null && typeof parsed === 'object' ? parsed : {}) as Record<string, unknown>;
  return { ok: false, status: result.status, oauthError: str(b['error']), description: str(b['error_description']) ?? str(b['message']) };
}

/**
 * Posts a grant that may be repeated safely, with the app's retry policy: again after a network
 * failure, a 5xx, 429 or 408 (with backoff), never after another answer. Returns the last answer;
 * throws the last network error when no attempt got one, and at once an abort or anything else.
 */
export async function postTokenRequestWithRetries(
  config: ResolvedConfig,
  log: SdkLogger,
  shop: string,
  grant: TokenRequestGrant,
  what: string,
): Promise<TokenGrant | TokenFailure> {
  const retry = config.retry;
  let last: TokenGrant | TokenFailure | undefined;
  let lastError: unknown;
  for (let attempt = 0; attempt <= retry.maxRetries; attempt++) {
    if (attempt > 0) {
      const delay = backoffDelayMs(attempt - 1, retry, config.randomBytes);
      log.warn(`${what} failed; retrying`, { shop, attempt, delayMs: delay, status: last?.ok === false ? last.status : undefined });
      await config.sleep(delay);
    }
    last = undefined;
    try {
      last = await postTokenRequest(config, shop, grant);
      if (last.ok || (last.status < 500 && last.status !== 429 && last.status !== 408)) return last;
    } catch (error) {
      if (error instanceof AbortedError || !(error instanceof NetworkError)) throw error;
      lastError = error;
    }
  }
  if (last) return last;
  throw lastError;
}
