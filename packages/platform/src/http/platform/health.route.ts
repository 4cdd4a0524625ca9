// Liveness and readiness on the bare platform domain (and on store hosts, for load balancers).
// Liveness says the process answers; readiness says it should get traffic: not while it drains
// before stopping, nor while a dependency it cannot serve without is down.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/services.ts';

export function registerHealthRoutes(app: FastifyInstance, services: Services): void {
  app.get('/healthz', { config: { area: 'platform' } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { config: { area: 'platform' } }, async (req, reply) => {
    const report = await services.readiness.report();
    const body = { status: report.ready ? 'ready' : 'unavailable', draining: report.draining, dependencies: report.dependencies };
    if (!report.ready) {
      req.log.warn({ draining: report.draining, dependencies: report.dependencies }, 'not ready');
      return reply.code(503).header('retry-after', '5').send(body);
    }
    return body;
  });
}
