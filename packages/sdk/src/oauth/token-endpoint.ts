// The platform's token endpoint, used for the code exchange after an install and for every refresh:
// POST {origin}/admin/oauth/token with a JSON body; a success answers with a token record
// (access_token, refresh_token, expires_at or expires_in, scope, store_id, store_name).
import { exchange, parseJsonBody } from '../api/http-transport.ts';
import type { ResolvedConfig } from '../config/app-config.ts';
import type { Session } from '../session/session.ts';

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

/** Turns a token record (the token endpoint's success body) into a session; `undefined` when it lacks an access token. */
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
  return {
    shop,
    accessToken,
    refreshToken: str(r['refresh_token']) ?? null,
    expiresAt,
    scope: str(r['scope']) ?? requestedScopes.join(' '),
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
  grant: { grant_type: 'authorization_code'; code: string } | { grant_type: 'refresh_token'; refresh_token: string },
  signal?: AbortSignal,
): Promise<TokenGrant | TokenFailure> {
  const body = JSON.stringify({
    client_id: config.clientId,
    client_secret: config.clientSecrets[0],
    ...grant,
    redirect_uri: config.redirectUri,
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
