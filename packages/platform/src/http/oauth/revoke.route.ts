// POST {base_url}/admin/oauth/revoke (RFC 7009): 200 whether or not the token was known.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/services.ts';
import { InvalidRequest, OAuthError } from '../../domain/errors.ts';
import { bodyParams, clientCredentials } from './client-credentials.ts';

export function registerRevokeRoute(app: FastifyInstance, services: Pick<Services, 'apps' | 'oauth'>): void {
  app.post('/admin/oauth/revoke', { config: { oauth: true, helmet: { skipRoute: true } }, bodyLimit: 16 * 1024 }, async (req, reply) => {
    reply.header('X-Content-Type-Options', 'nosniff');
    const params = bodyParams(req);
    const { clientId, clientSecret } = clientCredentials(req, params);
    const client = await services.apps.authenticateClient(clientId, clientSecret);
    if (!params.token) throw new InvalidRequest('token is required');
    const hint = params.token_type_hint;
    if (hint !== undefined && hint !== 'access_token' && hint !== 'refresh_token') {
      throw new OAuthError('unsupported_token_type', 'token_type_hint must be access_token or refresh_token');
    }
    await services.oauth.revoke({ appId: client.id, storeId: req.store!.id, token: params.token });
    return reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache').send({});
  });
}
