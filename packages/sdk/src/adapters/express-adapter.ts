// `@storegate/app/express`: an Express router with the install and webhook routes. The webhook
// route captures the raw body itself (express.raw), so its HMAC sees the exact bytes.
import express, { type Request, type Response, type Router } from 'express';
import type { StoregateApp } from '../app.ts';
import type { RawBody } from '../signature/webhook-signature.ts';
import { handleBegin, handleCallback, handleWebhook, routePaths, type RouteOptions, type RouteResult } from './route-handlers.ts';

/** Options of {@link storegateExpress}. */
export interface ExpressAdapterOptions extends RouteOptions {
  /** Largest webhook body accepted (default `5mb`). */
  webhookBodyLimit?: string;
}

function send(res: Response, result: RouteResult): void {
  res.status(result.status);
  for (const [name, value] of Object.entries(result.headers)) res.setHeader(name, value);
  res.send(result.body);
}

function requestLike(req: Request) {
  return { url: req.originalUrl, headers: req.headers };
}

/**
 * An Express router serving `GET /auth`, `GET /auth/callback` and `POST /webhooks` (paths
 * configurable). Mount it before any global `express.json()`, or at least keep body parsers off
 * the webhook path: a parsed body cannot be verified (the error then says so).
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { storegateExpress } from '@storegate/app/express';
 *
 * const server = express();
 * server.use(storegateExpress(app, { onWebhook: async (event) => console.log(event.topic, event.id) }));
 * server.listen(3000);
 * ```
 */
export function storegateExpress(app: StoregateApp, options: ExpressAdapterOptions = {}): Router {
  const paths = routePaths(options.paths);
  const router = express.Router();
  router.get(paths.begin, async (req, res) => send(res, await handleBegin(app, requestLike(req), options)));
  router.get(paths.callback, async (req, res) => send(res, await handleCallback(app, requestLike(req), options)));
  router.post(paths.webhooks, express.raw({ type: () => true, limit: options.webhookBodyLimit ?? '5mb' }), async (req, res) => {
    // No body at all leaves req.body undefined (Express 5) or {} (Express 4): an empty raw body.
    const raw: unknown = req.body;
    const noBody = !req.headers['content-length'] && !req.headers['transfer-encoding'];
    const emptyObject = raw !== null && typeof raw === 'object' && !(raw instanceof Uint8Array) && Object.keys(raw).length === 0;
    const body = noBody && (raw === undefined || emptyObject) ? '' : raw;
    // Passed on unchecked: verifyWebhook itself refuses anything that is not raw bytes
    // (WEBHOOK_BODY_NOT_RAW), which is the error to report when another parser got there first.
    send(res, await handleWebhook(app, body as RawBody, req.headers, options));
  });
  return router;
}
