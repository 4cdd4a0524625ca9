// `@storegate/app/web`: the routes as one web-standard `(Request) => Promise<Response>` handler,
// for Hono, Next.js route handlers, Deno, Bun, Cloudflare Workers.
import type { StoregateApp } from '../app.ts';
import { handleBegin, handleCallback, handleWebhook, routePaths, type RouteOptions, type RouteResult } from './route-handlers.ts';

function toResponse(result: RouteResult): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(result.headers)) {
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return new Response(result.status === 302 ? null : result.body, { status: result.status, headers });
}

/**
 * A web-standard handler serving `GET /auth`, `GET /auth/callback` and `POST /webhooks` (paths
 * configurable); any other request gets 404.
 *
 * @example
 * ```ts
 * // Hono
 * const handle = createWebHandler(app, { onWebhook: (event) => console.log(event.topic) });
 * hono.all('/auth/*', (c) => handle(c.req.raw));
 * hono.post('/webhooks', (c) => handle(c.req.raw));
 * // Next.js: app/webhooks/route.ts
 * export const POST = createWebHandler(app, { paths: { webhooks: '/webhooks' } });
 * ```
 */
export function createWebHandler(app: StoregateApp, options: RouteOptions = {}): (request: Request) => Promise<Response> {
  const paths = routePaths(options.paths);
  return async (request) => {
    const { pathname } = new URL(request.url);
    const like = { url: request.url, headers: request.headers };
    if (request.method === 'GET' && pathname === paths.begin) return toResponse(await handleBegin(app, like, options));
    if (request.method === 'GET' && pathname === paths.callback) return toResponse(await handleCallback(app, like, options));
    if (request.method === 'POST' && pathname === paths.webhooks) {
      return toResponse(await handleWebhook(app, new Uint8Array(await request.arrayBuffer()), request.headers, options));
    }
    return new Response('not found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } });
  };
}
