// Liveness and readiness on the bare platform domain (and on store hosts, for load balancers).
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/services.ts';

export function registerHealthRoutes(app: FastifyInstance, services: Services): void {
  app.get('/healthz', { config: { area: 'platform' } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { config: { area: 'platform' } }, async (req, reply) => {
    try {
      await services.ping();
      return { status: 'ready' };
    } catch (err) {
      req.log.error({ err }, 'database not reachable');
      return reply.status(503).send({ code: 'ServiceUnavailable', message: 'database not reachable', request_id: req.id });
    }
  });
}
