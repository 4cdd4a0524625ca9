// POST {base_url}/admin/oauth/token: the OAuth 2.0 token endpoint of apps. An authorization code
// (with its PKCE verifier when the authorization asked for one) or a refresh token is exchanged for
// a new access token and refresh token, or a launch token for access without any redirect (RFC
// 8693 token exchange); the client authenticates with its client_id and secret.
// Grants of an authenticated client are counted against its limits (per client in the store, per
// store) before any work is done; over a limit: 429 with Retry-After, and nothing changed.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services/services.ts';
import type { GrantAdmission } from '../../services/grant-limits.ts';
import type { OnlineTokenRecord, TokenRecord } from '../../services/oauth-service.ts';
import { storeBaseUrl } from '../../config.ts';
import { GrantRateLimited, InvalidClient, InvalidRequest, OAuthError, PlatformError, UnsupportedGrantType } from '../../domain/errors.ts';
import { oauthErrorCode } from '../plugins/error-handler.ts';
import { bodyParams, clientCredentials } from './client-credentials.ts';
import { TOKEN_ROUTE_SCHEMA } from './token-schema.ts';

/** What the token endpoint uses: the client check, the grant limits, the grants, the refusal counters. */
export type TokenRouteServices = Pick<Services, 'apps' | 'config' | 'grantLimits' | 'metrics' | 'oauth'>;

export function registerTokenRoute(app: FastifyInstance, services: TokenRouteServices): void {
  const documentedOnly = {
    schema: TOKEN_ROUTE_SCHEMA,
    validatorCompiler: () => () => true,
    serializerCompiler: () => (data: unknown) => JSON.stringify(data),
  };
  const options = { config: { oauth: true, helmet: { skipRoute: true } }, bodyLimit: 16 * 1024, ...documentedOnly };
  app.post('/admin/oauth/token', options, async (req, reply) => {
    reply.header('X-Content-Type-Options', 'nosniff');
    let params: Record<string, string> = {};
    try {
      params = bodyParams(req);
      const record = await grant(req, reply, params, services);
      services.metrics.tokenGrant(params.grant_type, 'issued');
      return reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache').send(record);
    } catch (err) {
      services.metrics.tokenGrant(params.grant_type, grantOutcome(err));
      throw err;
    }
  });
}

type Answer = TokenRecord | OnlineTokenRecord;

/** RFC 8693's grant type, and the token types of its exchange here. */
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
export const OFFLINE_ACCESS_TOKEN = 'urn:storegate:params:oauth:token-type:offline-access-token';
export const ONLINE_ACCESS_TOKEN = 'urn:storegate:params:oauth:token-type:online-access-token';
const GRANT_TYPES = ['authorization_code', 'refresh_token', TOKEN_EXCHANGE];

/**
 * Validates the request and runs the grant; every refusal is an OAuth error. The route only reads
 * parameters: what they lack becomes the refusal the client check answers with. The client is
 * judged first, then what depends on it (the redirect URI it registered), then the parameters the
 * grant needs, then the grant: the service judges the client on the app row storage read, and
 * storage runs the grant only while the app is still that row, so nothing changes before the checks.
 */
async function grant(
  req: FastifyRequest,
  reply: FastifyReply,
  params: Record<string, string>,
  services: TokenRouteServices,
): Promise<Answer> {
  const grantType = params.grant_type;
  if (!grantType) throw new InvalidRequest('grant_type is required');
  if (!GRANT_TYPES.includes(grantType)) throw new UnsupportedGrantType(`grant_type must be one of ${GRANT_TYPES.join(', ')}`);
  const { clientId, clientSecret } = clientCredentials(req, params);
  // Judged here, answered only once the client is authenticated (a stranger learns nothing).
  const client = services.apps.clientCheck(clientId, clientSecret, {
    redirectUri: params.redirect_uri,
    refusal: missingParameter(grantType, params),
  });
  // clientCheck refused a missing client_id or secret: both are here.
  const admission = await admit(req, reply, services, clientId!, clientSecret!);
  try {
    return await run(req, params, services, client);
  } catch (err) {
    if (admission && didNothing(err)) {
      await admission.release();
      if (err instanceof InvalidClient) services.grantLimits?.forget(clientId!, clientSecret!);
    }
    throw err;
  }
}

/** Counts the grant against the limits; undefined when they are off. Throws the 429 when over one. */
async function admit(
  req: FastifyRequest,
  reply: FastifyReply,
  services: Pick<Services, 'grantLimits' | 'metrics'>,
  clientId: string,
  clientSecret: string,
): Promise<Extract<GrantAdmission, { allowed: true }> | undefined> {
  const limits = services.grantLimits;
  if (!limits) return undefined;
  const admission = await limits.admit(req.store!.name, clientId, clientSecret);
  if (admission.allowed) return admission;
  services.metrics.rateLimited(admission.limit === 'per_client' ? 'token_client' : 'token_store');
  reply.header('Retry-After', String(admission.retryAfterSeconds));
  throw new GrantRateLimited(admission.limit === 'per_client', admission.retryAfterSeconds);
}

/**
 * Whether a grant refused with `err` did no work the client should pay for: its client failed
 * authentication after all (credentials remembered from before a rotation), or the platform
 * failed (the database away).
 */
function didNothing(err: unknown): boolean {
  if (err instanceof InvalidClient) return true;
  if (err instanceof OAuthError) return false;
  return !(err instanceof PlatformError) || err.statusCode >= 500;
}

/** What the grant's request lacks or gets wrong, as the refusal to answer; undefined when nothing. */
function missingParameter(grantType: string, params: Record<string, string>): InvalidRequest | undefined {
  if (grantType === 'authorization_code') {
    if (!params.code) return new InvalidRequest('code is required');
    if (!params.redirect_uri) return new InvalidRequest('redirect_uri is required');
    return undefined;
  }
  if (grantType === TOKEN_EXCHANGE) return exchangeProblem(params);
  return params.refresh_token ? undefined : new InvalidRequest('refresh_token is required');
}

/** The parameters of a token exchange: a launch token in, an access token out. */
function exchangeProblem(params: Record<string, string>): InvalidRequest | undefined {
  if (!params.subject_token) return new InvalidRequest('subject_token is required');
  if (params.subject_token_type !== ID_TOKEN) return new InvalidRequest(`subject_token_type must be ${ID_TOKEN}`);
  const wanted = params.requested_token_type;
  if (wanted !== undefined && wanted !== OFFLINE_ACCESS_TOKEN && wanted !== ONLINE_ACCESS_TOKEN)
    return new InvalidRequest(`requested_token_type must be ${OFFLINE_ACCESS_TOKEN} or ${ONLINE_ACCESS_TOKEN}`);
  return undefined;
}

async function run(
  req: FastifyRequest,
  params: Record<string, string>,
  services: Pick<Services, 'config' | 'oauth'>,
  client: ReturnType<Services['apps']['clientCheck']>,
): Promise<Answer> {
  if (params.grant_type === TOKEN_EXCHANGE) {
    return services.oauth.exchangeLaunchToken({
      client,
      storeId: req.store!.id,
      storeName: req.store!.name,
      issuer: storeBaseUrl(services.config, req.store!.name),
      subjectToken: params.subject_token ?? '',
      online: params.requested_token_type === ONLINE_ACCESS_TOKEN,
    });
  }
  if (params.grant_type === 'authorization_code') {
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
  return err instanceof GrantRateLimited ? 'rate_limited' : oauthErrorCode(err);
}
