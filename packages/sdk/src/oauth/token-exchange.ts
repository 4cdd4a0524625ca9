// Token exchange (RFC 8693): a verified launch token traded at the store's token endpoint for the
// shop's offline token or the merchant's online token, stored as a session. The token is verified
// here first, so the client secret is only ever posted to the store the token names, and only for
// a token this app's secret signed.
import type { ResolvedConfig } from '../config/app-config.ts';
import { LaunchTokenError, NetworkError, TokenExchangeError } from '../errors.ts';
import type { SdkLogger } from '../logging/redacting-logger.ts';
import type { Session } from '../session/session.ts';
import { verifyLaunchToken, type VerifiedLaunchToken } from './launch-token.ts';
import { ID_TOKEN_TYPE, postTokenRequestWithRetries, REQUESTED_TOKEN_TYPES, TOKEN_EXCHANGE_GRANT } from './token-endpoint.ts';

/** Options of `auth.tokenExchange`. */
export interface TokenExchangeOptions {
  /** The launch token: the `id_token` of the App-URL request (`InstallRequest.idToken`). */
  idToken: string;
  /**
   * `true`: the merchant's online token (per user, at most 24 h, never refreshed), stored apart
   * from the shop's offline session. Default `false`: the shop's offline token pair.
   */
  online?: boolean;
  /** When given, the token must be for this shop (e.g. the `shop` of the verified App-URL request). */
  shop?: string;
}

/** Verifies a launch token with the app's settings (both secrets during a rotation, the API origin as issuer). */
export function verifyAppLaunchToken(c: ResolvedConfig, log: SdkLogger, idToken: unknown): Promise<VerifiedLaunchToken> {
  if (typeof idToken === 'string') log.addSecret(idToken);
  return verifyLaunchToken(idToken, {
    clientId: c.clientId,
    secret: c.clientSecrets,
    storeDomain: c.storeDomain,
    now: () => c.clock.now(),
    expectedIssuer: c.apiOrigin,
  });
}

/**
 * Verifies the launch token, exchanges it (with the app's retries: a launch token is single use, so
 * a retry after an answer that was lost is refused with `invalid_grant` rather than served twice),
 * checks that the answer is the kind of token asked for, stores it and returns the session.
 */
export async function exchangeLaunchToken(c: ResolvedConfig, log: SdkLogger, options: TokenExchangeOptions): Promise<Session> {
  const launch = await verifyAppLaunchToken(c, log, options.idToken);
  const { shop } = launch;
  if (options.shop !== undefined && options.shop !== shop)
    throw new LaunchTokenError('LAUNCH_TOKEN_ISSUER_INVALID', `the launch token is for ${shop}, not for ${options.shop}`, 'iss');
  const online = options.online === true;
  const kind = online ? 'online' : 'offline';
  let result: Awaited<ReturnType<typeof postTokenRequestWithRetries>>;
  try {
    result = await postTokenRequestWithRetries(
      c,
      log,
      shop,
      {
        grant_type: TOKEN_EXCHANGE_GRANT,
        subject_token: options.idToken,
        subject_token_type: ID_TOKEN_TYPE,
        requested_token_type: REQUESTED_TOKEN_TYPES[kind],
      },
      'token exchange',
    );
  } catch (error) {
    if (error instanceof NetworkError)
      throw new TokenExchangeError(`token exchange with ${shop} got no answer: ${error.message}`, { cause: error });
    throw error;
  }
  if (!result.ok) {
    const hint =
      result.oauthError === 'invalid_grant'
        ? ' (the launch token was already exchanged, has expired, or the app is not installed in the store: open the app again)'
        : '';
    throw new TokenExchangeError(
      `token exchange with ${shop} failed with ${result.status}${result.oauthError ? ` ${result.oauthError}` : ''}` +
        `${result.description ? `: ${result.description}` : ''}${hint}`,
      { status: result.status, oauthError: result.oauthError },
    );
  }
  const session = result.session;
  log.addSecret(session.accessToken);
  log.addSecret(session.refreshToken);
  if (online && (!session.online || session.associatedUser?.id !== launch.userId))
    throw new TokenExchangeError(`token exchange with ${shop} answered no online token for user ${launch.userId}`, { status: 200 });
  if (!online && session.online)
    throw new TokenExchangeError(`token exchange with ${shop} answered an online token to a request for the offline one`, { status: 200 });
  await c.sessionStorage.set(session);
  log.info('launch token exchanged; session stored', { shop, online, scope: session.scope, expiresAt: session.expiresAt });
  return session;
}
