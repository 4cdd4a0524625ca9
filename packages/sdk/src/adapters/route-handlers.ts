// The three routes every app needs, independent of any framework; the Express, Fastify and web
// adapters only translate requests and responses.
import type { StoregateApp } from '../app.ts';
import { StoregateError, WebhookError } from '../errors.ts';
import type { RequestLike } from '../http/request-input.ts';
import type { Session } from '../session/session.ts';
import type { HeadersInput, RawBody, WebhookEvent } from '../signature/webhook-signature.ts';

/** Paths of the routes (defaults `/auth`, `/auth/callback`, `/webhooks`). */
export interface RoutePaths {
  begin?: string;
  callback?: string;
  webhooks?: string;
}

/** Hooks and settings shared by every adapter. */
export interface RouteOptions {
  paths?: RoutePaths;
  /** After a successful install; return where to send the merchant (default `/?shop={shop}`). */
  afterAuth?: (session: Session) => string | void | Promise<string | void>;
  /** Handles a verified webhook; answer 200 when it resolves. Use `event.id` to de-duplicate. */
  onWebhook?: (event: WebhookEvent) => void | Promise<void>;
  /** Sees every refused or failed request (the response never shows internals). */
  onError?: (error: unknown) => void;
}

/** A framework-neutral response. */
export interface RouteResult {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
}

/** The default paths filled in. */
export function routePaths(paths: RoutePaths = {}): Required<RoutePaths> {
  return { begin: paths.begin ?? '/auth', callback: paths.callback ?? '/auth/callback', webhooks: paths.webhooks ?? '/webhooks' };
}

function text(status: number, body: string, headers: Record<string, string | string[]> = {}): RouteResult {
  return { status, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers }, body };
}

function failure(error: unknown, options: RouteOptions, refusedStatus: number): RouteResult {
  options.onError?.(error);
  if (error instanceof WebhookError && error.code === 'WEBHOOK_BODY_NOT_RAW')
    return text(500, `${error.code}: the webhook route did not receive the raw body`);
  if (error instanceof StoregateError) return text(refusedStatus, `${error.code}: ${error.message}`);
  return text(500, 'internal error');
}

/**
 * GET `begin`: starts the OAuth flow. A signed App-URL request (the platform's Install/Open link,
 * with shop, timestamp and hmac) is verified first; otherwise `?shop=` names the shop. Answers 302
 * to the authorization URL with the state cookie.
 */
export async function handleBegin(app: StoregateApp, request: RequestLike, options: RouteOptions = {}): Promise<RouteResult> {
  try {
    const url = request.originalUrl ?? request.url;
    const query = new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');
    const shop = query.has('hmac') ? (await app.verifyInstallRequest(request)).shop : (query.get('shop') ?? '');
    const { url: location, cookie } = await app.auth.begin({ shop });
    return { status: 302, headers: { location, 'set-cookie': cookie, 'cache-control': 'no-store' }, body: '' };
  } catch (error) {
    return failure(error, options, 400);
  }
}

/** GET `callback`: checks and exchanges the code, stores the session, redirects onwards. */
export async function handleCallback(app: StoregateApp, request: RequestLike, options: RouteOptions = {}): Promise<RouteResult> {
  try {
    const session = await app.auth.callback(request);
    const location = (await options.afterAuth?.(session)) || `/?shop=${encodeURIComponent(session.shop)}`;
    return { status: 302, headers: { location, 'set-cookie': app.auth.clearStateCookie(), 'cache-control': 'no-store' }, body: '' };
  } catch (error) {
    return failure(error, options, 400);
  }
}

/** POST `webhooks`: verifies against the raw body, then calls `onWebhook`; 401 when not authentic. */
export async function handleWebhook(
  app: StoregateApp,
  rawBody: RawBody,
  headers: HeadersInput,
  options: RouteOptions = {},
): Promise<RouteResult> {
  let event: WebhookEvent;
  try {
    event = await app.verifyWebhook({ rawBody, headers });
  } catch (error) {
    return failure(error, options, 401);
  }
  try {
    await options.onWebhook?.(event);
    return text(200, 'ok');
  } catch (error) {
    // Not 2xx: the platform retries the delivery later with the same webhook id.
    options.onError?.(error);
    return text(500, 'webhook handler failed');
  }
}
