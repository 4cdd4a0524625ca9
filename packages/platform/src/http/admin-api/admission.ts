// The checks every Admin API call passes before its handler, in this order: version (404),
// Access-Token (401), rate limit (429), scope (403). A list page whose query is plain may be read
// together with its token (admitWithPage); its checks are the same, in the same order.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isApiVersion, SUPPORTED_VERSIONS, versionAtLeast } from '../../domain/api-versions.ts';
import { ForbiddenError, NotFoundError, TooManyRequestsError, UnauthorizedError } from '../../domain/errors.ts';
import type { BucketDecision } from '../../domain/leaky-bucket.ts';
import type { ResourceDef } from '../../domain/resources.ts';
import { allows } from '../../domain/scopes.ts';
import { routePattern } from '../../domain/api-health.ts';
import type { ApiPrincipal } from '../../services/api-auth.ts';
import type { RateLimiter } from '../../services/rate-limiter.ts';
import type { PlatformMetrics } from '../../services/metrics.ts';
import type { RenderedPage } from '../../services/resource-service.ts';
import type { Services } from '../../services/services.ts';
import { setRateLimitHeaders } from './api-headers.ts';
import { presentedToken } from './bearer.ts';
import { brownoutError } from './brownout.ts';
import { plainPageRequest } from './page-query.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** A list page read with the request's token, for its handler to send (undefined: read it there). */
    readPage: RenderedPage | undefined;
  }
}

/** What the rate limit needs: the limiter, the brown-out message's settings, the refusal counter. */
type LimitServices = Pick<Services, 'config' | 'rateLimiter' | 'metrics'>;
/** What is judged once the token is known: usage of deprecated versions, brown-outs, then the limit. */
type PrincipalServices = Pick<Services, 'apiUsage' | 'brownouts' | keyof LimitServices>;
/** Everything admission reads: the token (alone or with its list page), then the checks above. */
export type AdmissionServices = Pick<Services, 'apiAuth' | 'authenticatedPages' | keyof PrincipalServices>;

/**
 * Version (404), Access-Token (401), rate limit (429), scope (403), in that order. Returns a
 * promise only when the token must be read from the database or the limiter is remote.
 */
export function admit(services: AdmissionServices, req: FastifyRequest, reply: FastifyReply): Promise<void> | undefined {
  reply.header('X-Content-Type-Options', 'nosniff');
  const version = (req.params as { version?: string }).version ?? '';
  if (!isApiVersion(version))
    throw new NotFoundError(`Unknown API version "${version.slice(0, 20)}"; supported versions: ${SUPPORTED_VERSIONS.join(', ')}`);
  req.apiVersion = version;
  const since = req.routeOptions.config?.api?.since;
  if (since && !versionAtLeast(version, since))
    throw new NotFoundError(
      `${req.routeOptions.url?.replace(':version', since) ?? 'This path'} exists from API version ${since} on; not in ${version}`,
    );
  const token = presentedToken(req);
  const list = req.routeOptions.config?.api?.list;
  const together = list === undefined ? undefined : admitWithPage(services, req, reply, list, token);
  if (together !== undefined) return together;
  const principal = services.apiAuth.authenticate(token, req.store!.id);
  if (principal instanceof Promise) return principal.then((p) => admitPrincipal(services, req, reply, p));
  return admitPrincipal(services, req, reply, principal);
}

/**
 * A list page whose query holds only valid page parameters, read with the token where storage
 * reads both at once: the token is judged, then the rate limit and the scope, exactly as below,
 * and the page waits on the request for its handler, which sends it only if all of them pass.
 * Undefined where this does not apply: then the checks run alone and the handler reads the page.
 */
function admitWithPage(
  services: Pick<Services, 'authenticatedPages' | keyof PrincipalServices>,
  req: FastifyRequest,
  reply: FastifyReply,
  def: ResourceDef,
  token: string | undefined,
): Promise<void> | undefined {
  // Where storage reads no page with its token (SQLite), nothing here costs more than this call.
  if (!services.authenticatedPages.serves(def)) return undefined;
  const page = plainPageRequest(req.query, req.apiVersion!);
  const read = page && services.authenticatedPages.read(def, req.store!.id, token, page);
  if (read === undefined) return undefined;
  return read.then(({ principal, page }) => {
    req.readPage = page;
    return admitPrincipal(services, req, reply, principal);
  });
}

function admitPrincipal(
  services: PrincipalServices,
  req: FastifyRequest,
  reply: FastifyReply,
  principal: ApiPrincipal | undefined,
): Promise<void> | undefined {
  if (!principal) throw new UnauthorizedError();
  req.principal = principal;
  const version = req.apiVersion!;
  // Only a deprecated version pays for API health: its calls are counted, and it may be browned out.
  if (Object.hasOwn(services.config.apiDeprecations, version)) {
    services.apiUsage.record(
      principal.kind,
      principal.id,
      principal.storeId,
      version,
      routePattern(req.method, req.routeOptions.url ?? req.url),
    );
    const gone = services.brownouts.active(version);
    if (gone instanceof Promise) return gone.then((w) => admitLimit(services, req, reply, principal, w));
    return admitLimit(services, req, reply, principal, gone);
  }
  return admitLimit(services, req, reply, principal, undefined);
}

function admitLimit(
  services: LimitServices,
  req: FastifyRequest,
  reply: FastifyReply,
  principal: ApiPrincipal,
  brownout: { endsAt: number } | undefined,
): Promise<void> | undefined {
  if (brownout) throw brownoutError(services, req.apiVersion!, brownout.endsAt);
  const limiter = services.rateLimiter;
  if (!limiter) return checkScope(req, principal);
  const decision = limiter.take(`${principal.storeId}:${principal.owner}`);
  if (decision instanceof Promise) return decision.then((d) => admitRate(services.metrics, limiter, req, reply, principal, d));
  return admitRate(services.metrics, limiter, req, reply, principal, decision);
}

function admitRate(
  metrics: PlatformMetrics,
  limiter: RateLimiter,
  req: FastifyRequest,
  reply: FastifyReply,
  principal: ApiPrincipal,
  decision: BucketDecision,
): undefined {
  setRateLimitHeaders(reply, limiter, decision);
  if (!decision.allowed) {
    metrics.rateLimited('admin_api');
    reply.header('Retry-After', String(decision.retryAfterSeconds));
    throw new TooManyRequestsError(`Rate limit exceeded; retry after ${decision.retryAfterSeconds} s`);
  }
  return checkScope(req, principal);
}

function checkScope(req: FastifyRequest, principal: ApiPrincipal): undefined {
  const need = req.routeOptions.config?.api;
  if (need?.resource && need.access && !allows(principal.scopes, need.access, need.resource)) {
    throw new ForbiddenError(
      `This request needs the ${need.access}_${need.resource} scope${need.access === 'read' ? ` (or write_${need.resource})` : ''}`,
      `${need.access}_${need.resource}`,
    );
  }
  return undefined;
}
