// The small HTTP server of a process that serves no platform traffic (`storegate worker`): only
// /healthz, /readyz and /metrics, on any Host, so the worker can be probed and scraped like a node.
import Fastify, { type FastifyInstance } from 'fastify';
import type { Services } from '../services/services.ts';
import { registerHealthRoutes } from './platform/health.route.ts';
import { registerMetricsRoute } from './platform/metrics.route.ts';
import { registerErrorHandler } from './plugins/error-handler.ts';
import { registerHostRouting } from './plugins/host-routing.ts';
import { nextRequestId, registerRequestId } from './plugins/request-id.ts';

export async function buildProbeServer(
  services: Pick<Services, 'accounts' | 'config' | 'metrics' | 'readiness'>,
): Promise<FastifyInstance> {
  const app = Fastify({
    // The worker logs its own lines; the probes' requests are not worth a log line each.
    logger: false,
    requestIdHeader: false,
    genReqId: nextRequestId,
    http: { requireHostHeader: false },
  });
  registerRequestId(app);
  registerHostRouting(app, services);
  registerErrorHandler(app);
  registerHealthRoutes(app, services);
  registerMetricsRoute(app, services.config.metrics, services.metrics);
  await app.ready();
  return app;
}
