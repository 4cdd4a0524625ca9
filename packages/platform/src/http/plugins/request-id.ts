// Request ids: a random per-process prefix and a counter (unique, and cheaper than random bytes
// per request), sent back on every response so a user can quote it. Under two names: clients of
// this platform family read `X-Request-Id`, others read `Request-Id`.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

const PREFIX = randomBytes(5).toString('hex');
let counter = 0;

export function nextRequestId(): string {
  return `req_${PREFIX}${(++counter).toString(36).padStart(6, '0')}`;
}

export function registerRequestId(app: FastifyInstance): void {
  // Callback style (no promise per request): this runs for every request.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('X-Request-Id', req.id);
    reply.header('Request-Id', req.id);
    done();
  });
}
