// Response fields of every Admin API answer that are about the call rather than its body: the
// version that answered, the lifecycle of a deprecated version (RFC 9745 `Deprecation`, RFC 8594
// `Sunset`, and a `Link` to the docs), and the rate limit in the family's form and the IETF one.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { platformBaseUrl } from '../../config.ts';
import { type ApiVersion, isApiVersion } from '../../domain/api-versions.ts';
import type { BucketDecision } from '../../domain/leaky-bucket.ts';
import { rateLimitField, rateLimitPolicyField } from '../../domain/rate-limit-fields.ts';
import type { RateLimiter } from '../../services/rate-limiter.ts';
import type { Services } from '../../services/services.ts';

/** The rate-limit fields of one call; on the 429 as well, where `r` is 0. */
export function setRateLimitHeaders(reply: FastifyReply, limiter: RateLimiter, decision: BucketDecision): void {
  reply.header('X-Service-Api-Call-Limit', `${decision.used}/${limiter.bucket}`);
  reply.header('RateLimit-Policy', rateLimitPolicyField(limiter.bucket, limiter.perSecond));
  reply.header('RateLimit', rateLimitField(decision, limiter.bucket, limiter.perSecond));
}

const VERSION_IN_PATH = /^\/openapi\/([^/?#]+)(?:[/?#]|$)/;

/** The supported API version a request path is under (`/openapi/2026-01/…`), if any. */
export function apiVersionOfPath(url: string): ApiVersion | undefined {
  const segment = VERSION_IN_PATH.exec(url)?.[1];
  return segment !== undefined && isApiVersion(segment) ? segment : undefined;
}

/**
 * Adds the version fields on send to every answer under `/openapi/{version}/`, registered on the
 * whole server so that answers no Admin API route gives (the 404 of an unknown path, a refused
 * Host) carry them too; an unknown version gets none. `Link` is appended to, never replaced: list
 * pages may carry their own links.
 */
export function registerVersionHeaders(app: FastifyInstance, services: Pick<Services, 'config'>): void {
  const docs = `<${platformBaseUrl(services.config)}/docs#deprecation>; rel="deprecation"; type="text/html"`;
  // Callback style (no promise per call): this runs on every answer.
  app.addHook('onSend', (req, reply, payload, done) => {
    // The route's own reading of the version when it has one (its parameter, percent-decoded).
    const version = req.apiVersion ?? (req.url.startsWith('/openapi/') ? apiVersionOfPath(req.url) : undefined);
    if (version !== undefined) {
      reply.header('X-Service-Api-Version', version);
      const lifecycle = services.config.apiDeprecations[version];
      if (lifecycle) {
        reply.header('Deprecation', `@${Math.floor(lifecycle.deprecatedAt / 1000)}`);
        reply.header('Sunset', new Date(lifecycle.sunsetAt).toUTCString());
        const link = reply.getHeader('link');
        reply.header('Link', link === undefined || link === '' ? docs : `${String(link)}, ${docs}`);
      }
    }
    done(null, payload);
  });
}
