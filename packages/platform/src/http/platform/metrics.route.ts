// GET /metrics: the Prometheus text exposition, on any Host like the probes (scrapers reach a node
// by its address). With --metrics-token it takes `Authorization: Bearer <token>` only; closed in
// production unless a token or --metrics-public is given.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { MetricsAccess } from '../../config.ts';
import { ForbiddenError, UnauthorizedError } from '../../domain/errors.ts';
import type { PlatformMetrics } from '../../services/metrics.ts';

export function registerMetricsRoute(app: FastifyInstance, access: MetricsAccess, metrics: PlatformMetrics): void {
  const expected = access.kind === 'token' ? digest(access.token) : undefined;
  app.get('/metrics', { config: { area: 'any-host' } }, async (req, reply) => {
    if (access.kind === 'closed')
      throw new ForbiddenError('Metrics are off in production mode: start with --metrics-token <token> or --metrics-public');
    if (expected && !bearerMatches(req, expected)) {
      reply.header('www-authenticate', 'Bearer realm="metrics"');
      throw new UnauthorizedError('Metrics need Authorization: Bearer <the --metrics-token>');
    }
    const { contentType, body } = await metrics.scrape();
    return reply.header('cache-control', 'no-store').type(contentType).send(body);
  });
}

// Both sides are hashed first, so the comparison takes the same time whatever the lengths.
function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function bearerMatches(req: FastifyRequest, expected: Buffer): boolean {
  const m = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
  return m !== null && timingSafeEqual(digest(m[1]!), expected);
}
