// Every answered request counts in the metrics by its route's pattern (`/openapi/:version/products`,
// never the URL itself: ids and query strings would make a series per request) and status.
import type { FastifyInstance } from 'fastify';
import type { PlatformMetrics } from '../../services/metrics.ts';

export function registerRequestMetrics(app: FastifyInstance, metrics: PlatformMetrics): void {
  app.addHook('onResponse', (req, reply, done) => {
    metrics.observeRequest(req.method, req.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}
