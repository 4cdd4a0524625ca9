// POST {base_url}/admin/oauth/introspect (RFC 7662): the operator's resource servers ask whether a
// token of this store is live and what it allows. Only a resource-server credential authenticates
// (HTTP Basic, or client_id and client_secret in the body); an app's is refused like a wrong
// secret. Each credential's requests are counted in a bucket of its own once it authenticated, so
// a wrong secret spends nothing. Looking a token up never counts as using it.
import type { FastifyInstance } from 'fastify';
import { storeBaseUrl } from '../../config.ts';
import { IntrospectionRateLimited, InvalidClient, InvalidRequest, OAuthError } from '../../domain/errors.ts';
import type { IntrospectionOutcome } from '../../services/metrics.ts';
import type { Services } from '../../services/services.ts';
import { oauthErrorCode } from '../plugins/error-handler.ts';
import { bodyParams, clientCredentials } from './client-credentials.ts';
import { INTROSPECTION_SCHEMA } from './introspect-schema.ts';

const HINTS = ['access_token', 'refresh_token'];

export function registerIntrospectRoute(
  app: FastifyInstance,
  services: Pick<Services, 'config' | 'introspection' | 'metrics' | 'resourceServers'>,
): void {
  app.post(
    '/admin/oauth/introspect',
    {
      config: { oauth: true, helmet: { skipRoute: true } },
      bodyLimit: 16 * 1024,
      schema: INTROSPECTION_SCHEMA,
      // The body schema documents the parameters; they are checked below, so that every refusal
      // is an OAuth error (a schema's would be a 422 of another shape).
      validatorCompiler: () => () => true,
    },
    async (req, reply) => {
      reply.header('X-Content-Type-Options', 'nosniff');
      try {
        const params = bodyParams(req);
        const { clientId, clientSecret } = clientCredentials(req, params);
        const server = await services.resourceServers.authenticate(clientId, clientSecret);
        const admission = await services.introspection.admit(server.client_id);
        if (!admission.allowed) {
          reply.header('Retry-After', String(admission.retryAfterSeconds));
          services.metrics.rateLimited('introspection');
          throw new IntrospectionRateLimited(admission.retryAfterSeconds);
        }
        if (!params.token) throw new InvalidRequest('token is required');
        const hint = params.token_type_hint;
        if (hint !== undefined && !HINTS.includes(hint)) throw new InvalidRequest('token_type_hint must be access_token or refresh_token');
        const store = req.store!;
        const answer = await services.introspection.introspect(params.token, {
          id: store.id,
          name: store.name,
          issuer: storeBaseUrl(services.config, store.name),
        });
        services.metrics.introspection(answer.active ? 'active' : 'inactive');
        return reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache').send(answer);
      } catch (err) {
        services.metrics.introspection(outcomeOf(err));
        throw err;
      }
    },
  );
}

function outcomeOf(err: unknown): IntrospectionOutcome {
  if (err instanceof IntrospectionRateLimited) return 'rate_limited';
  if (err instanceof InvalidClient) return 'invalid_client';
  // Every other refusal is the client's request; what the answer calls a server fault is an error.
  return err instanceof OAuthError || oauthErrorCode(err) === 'invalid_request' ? 'invalid_request' : 'error';
}
