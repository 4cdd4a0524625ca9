// Liveness and readiness on the bare platform domain (and on store hosts, for load balancers).
import type { FastifyInstance } from 'fastify';
import { PlatformError } from '../../domain/errors.ts';
import type { Services } from '../../services/services.ts';

export function registerHealthRoutes(app: FastifyInstance, services: Services): void {
  app.get('/healthz', { config: { area: 'platform' } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { config: { area: 'platform' } }, async (req) => {
    try {
      await services.ping();
      return { status: 'ready' };
    } catch (err) {
      req.log.error({ err }, 'database not reachable');
      throw new PlatformError(503, 'ServiceUnavailable', 'database not reachable');
    }
  });
}
