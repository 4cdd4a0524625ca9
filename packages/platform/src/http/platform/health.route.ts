// Liveness and readiness on any Host: load balancers probe a node by its address
// (http://10.0.0.5:8080/healthz), often with no Host at all.
// Liveness says the process answers; readiness says it should get traffic: not while it drains
// before stopping, nor while a dependency it cannot serve without is down.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/services.ts';

export function registerHealthRoutes(app: FastifyInstance, services: Pick<Services, 'readiness'>): void {
  app.get('/healthz', { config: { area: 'any-host' } }, async () => ({ status: 'ok' }));
  // A failing probe logs nothing: probes come every few seconds for as long as an outage lasts, and
  // the change of each dependency's state is logged once where it is watched.
  app.get('/readyz', { config: { area: 'any-host' } }, async (_req, reply) => {
    const report = await services.readiness.report();
    const body = { status: report.ready ? 'ready' : 'unavailable', draining: report.draining, dependencies: report.dependencies };
    if (!report.ready) return reply.code(503).header('retry-after', '5').send(body);
    return body;
  });
}
