// `@storegate/app/fastify`: a Fastify plugin with the install and webhook routes. The webhook
// route lives in its own encapsulated scope whose content-type parser keeps the body as a Buffer.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { StoregateApp } from '../app.ts';
import type { RawBody } from '../signature/webhook-signature.ts';
import { handleBegin, handleCallback, handleWebhook, routePaths, type RouteOptions, type RouteResult } from './route-handlers.ts';

/** Options of {@link storegateFastify}. */
export interface FastifyAdapterOptions extends RouteOptions {
  /** Largest webhook body accepted, bytes (default 5 MiB). */
  webhookBodyLimit?: number;
}

function send(reply: FastifyReply, result: RouteResult): FastifyReply {
  reply.code(result.status);
  for (const [name, value] of Object.entries(result.headers)) reply.header(name, value);
  return reply.send(result.body);
}

function requestLike(req: FastifyRequest) {
  return { url: req.raw.url ?? req.url, headers: req.headers };
}

/**
 * A Fastify plugin serving `GET /auth`, `GET /auth/callback` and `POST /webhooks` (paths
 * configurable; register with a `prefix` to move them all).
 *
 * @example
 * ```ts
 * import Fastify from 'fastify';
 * import { storegateFastify } from '@storegate/app/fastify';
 *
 * const server = Fastify();
 * await server.register(storegateFastify(app, { onWebhook: (event) => queue.push(event) }));
 * await server.listen({ port: 3000 });
 * ```
 */
export function storegateFastify(app: StoregateApp, options: FastifyAdapterOptions = {}): (fastify: FastifyInstance) => Promise<void> {
  const paths = routePaths(options.paths);
  return async (fastify) => {
    fastify.get(paths.begin, async (req, reply) => send(reply, await handleBegin(app, requestLike(req), options)));
    fastify.get(paths.callback, async (req, reply) => send(reply, await handleCallback(app, requestLike(req), options)));
    await fastify.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: options.webhookBodyLimit ?? 5 * 1024 * 1024 }, (_req, body, done) =>
        done(null, body),
      );
      scope.post(paths.webhooks, async (req, reply) =>
        send(reply, await handleWebhook(app, (req.body ?? '') as RawBody, req.headers, options)),
      );
    });
  };
}
