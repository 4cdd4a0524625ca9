// POST {base_url}/admin/oauth/token: the OAuth 2.0 token endpoint of apps. An authorization code
// (with its PKCE verifier when the authorization asked for one) or a refresh token is exchanged for
// a new access token and refresh token; the client authenticates with its client_id and secret.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services/services.ts';
import type { TokenRecord } from '../../services/oauth-service.ts';
import { InvalidGrant, InvalidRequest, OAuthError, PlatformError, UnsupportedGrantType } from '../../domain/errors.ts';
import { bodyParams, clientCredentials } from './client-credentials.ts';

export function registerTokenRoute(app: FastifyInstance, services: Services): void {
  app.post('/admin/oauth/token', { config: { oauth: true, helmet: { skipRoute: true } }, bodyLimit: 16 * 1024 }, async (req, reply) => {
    reply.header('X-Content-Type-Options', 'nosniff');
    let params: Record<string, string> = {};
    try {
      params = bodyParams(req);
      const record = await grant(req, params, services);
      services.metrics.tokenGrant(params.grant_type, 'issued');
      return reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache').send(record);
    } catch (err) {
      services.metrics.tokenGrant(params.grant_type, grantOutcome(err));
      throw err;
    }
  });
}

/**
 * Authenticates the client and runs the grant; every refusal is an OAuth error. The client is
 * judged first, then what depends on it (the redirect URI it registered) and the parameters the
 * grant needs, then the grant: the grant looks the client's app up itself, and runs these checks
 * on it before changing anything.
 */
async function grant(req: FastifyRequest, params: Record<string, string>, services: Services): Promise<TokenRecord> {
  const grantType = params.grant_type;
  if (!grantType) throw new InvalidRequest('grant_type is required');
  if (grantType !== 'authorization_code' && grantType !== 'refresh_token') throw new UnsupportedGrantType();
  const { clientId, clientSecret } = clientCredentials(req, params);
  const client = services.apps.clientCheck(clientId, clientSecret, (app) => {
    if (params.redirect_uri !== undefined && params.redirect_uri !== app.redirect_uri) {
      throw new InvalidGrant('redirect_uri does not match the registered redirect URL');
    }
    if (grantType === 'authorization_code') {
      if (!params.code) throw new InvalidRequest('code is required');
      if (!params.redirect_uri) throw new InvalidRequest('redirect_uri is required');
    } else if (!params.refresh_token) throw new InvalidRequest('refresh_token is required');
  });
  if (grantType === 'authorization_code') {
    return services.oauth.exchangeCode({
      client,
      storeId: req.store!.id,
      storeName: req.store!.name,
      code: params.code ?? '',
      redirectUri: params.redirect_uri,
      codeVerifier: params.code_verifier,
    });
  }
  return services.oauth.refresh({
    client,
    storeId: req.store!.id,
    storeName: req.store!.name,
    refreshToken: params.refresh_token ?? '',
  });
}

/** A refusal as the metrics name it: the OAuth `error` the client was answered with. */
function grantOutcome(err: unknown): string {
  if (err instanceof OAuthError) return err.error;
  if (err instanceof PlatformError && err.statusCode === 503) return 'temporarily_unavailable';
  if (err instanceof PlatformError && err.statusCode < 500) return 'invalid_request';
  return 'server_error';
}
