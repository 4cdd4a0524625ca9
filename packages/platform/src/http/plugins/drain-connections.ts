// While the node drains before stopping, every response asks the client to close its connection.
// A client (or load balancer) then opens its next connection afresh, which the balancer sends to
// another node once it has seen /readyz fail; and when the listener closes, few kept-alive
// connections are left for a request to race against their closing.
import type { FastifyInstance } from 'fastify';
import type { Readiness } from '../../services/readiness.ts';

export function registerDrainConnections(app: FastifyInstance, readiness: Readiness): void {
  // Callback style (no promise per request): this runs for every response.
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (readiness.draining) reply.header('connection', 'close');
    done(null, payload);
  });
}
