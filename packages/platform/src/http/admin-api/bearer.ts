// Where the Admin API finds a call's token, and how its refusals say what was wrong (RFC 6750).
// The token comes in the Access-Token header, as clients of this platform family send it, or as
// `Authorization: Bearer <token>`, as standard OAuth clients do; both at once must agree. An
// Authorization header of another scheme carries no token here. Refusals keep their JSON body
// and add the RFC 6750 challenge: 401 `Bearer realm="<store base URL>"` (with
// `error="invalid_token"` when a token was sent), 403 for a missing scope
// `Bearer error="insufficient_scope", scope="<the scope>"`.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { storeBaseUrl, type Config } from '../../config.ts';
import { ConflictingTokens, ForbiddenError, UnauthorizedError } from '../../domain/errors.ts';

/** The token of an `Authorization: Bearer` header ('' when empty), or undefined for none or another scheme. */
function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  const m = /^Bearer(?:\s+(.*))?$/is.exec(authorization.trim());
  return m ? (m[1] ?? '').trim() : undefined;
}

/** The token a call presents; throws a 400 when the two headers disagree. */
export function presentedToken(req: FastifyRequest): string | undefined {
  const header = req.headers['access-token'];
  const accessToken = typeof header === 'string' ? header : undefined;
  const bearer = bearerToken(req.headers.authorization);
  if (accessToken !== undefined && bearer !== undefined && accessToken !== bearer) throw new ConflictingTokens();
  return accessToken ?? bearer;
}

/** Adds the RFC 6750 challenge to the Admin API's 400 (conflicting headers), 401 and scope 403 answers. */
export function registerBearerChallenges(api: FastifyInstance, config: Pick<Config, 'publicScheme' | 'storeDomain' | 'publicPort'>): void {
  api.addHook('onError', (req, reply, error, done) => {
    const store = req.store;
    if (store === undefined) return done();
    const realm = `realm="${storeBaseUrl(config, store.name)}"`;
    if (error instanceof UnauthorizedError) {
      const sent = (req.headers['access-token'] ?? '') !== '' || bearerToken(req.headers.authorization) !== undefined;
      reply.header('WWW-Authenticate', sent ? `Bearer ${realm}, error="invalid_token"` : `Bearer ${realm}`);
    } else if (error instanceof ForbiddenError && error.scope !== undefined) {
      reply.header('WWW-Authenticate', `Bearer error="insufficient_scope", scope="${error.scope}"`);
    } else if (error instanceof ConflictingTokens) {
      reply.header('WWW-Authenticate', `Bearer ${realm}, error="invalid_request"`);
    }
    done();
  });
}
