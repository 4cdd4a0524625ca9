// The example app: an Express server built only on @storegate/app's public API. It never listens
// itself (main.ts does), so tests can run it on any port.
//
//   GET  /               App URL: the platform's signed install request (shop, timestamp, hmac) →
//                        authorize; without a query, a home page with an install form. With
//                        STOREGATE_MANAGED_INSTALL=1: the signed launch (… and id_token) → token
//                        exchange → the products, no redirect
//   GET  /auth?shop=     install into a store named by the merchant (seed §4.1, last bullet)
//   GET  /auth/callback  checks state, hmac, shop, timestamp; exchanges the code; subscribes webhooks
//   GET  /products       one page of products, links to the next (and on 2022-01 the previous) page
//   GET  /events         the last webhooks received for the shop
//   POST /webhooks       verifies the raw body's signature; app/uninstalled deletes the session
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import express, { type NextFunction, type Request, type Response } from 'express';
import {
  ApiError,
  AuthError,
  AuthorizationDeniedError,
  createAdminClient,
  createApp,
  HmacError,
  LaunchTokenError,
  NetworkError,
  NotFoundError,
  ParameterError,
  RateLimitError,
  ReauthorizationRequiredError,
  ScopeError,
  SessionNotFoundError,
  ShopError,
  StateError,
  StoregateError,
  TimestampError,
  TokenExchangeError,
  TokenRefreshError,
  WebhookError,
  memorySessionStorage,
  type AdminClient,
  type Logger,
  type SessionStorage,
  type StoregateApp,
} from '@storegate/app';
import { localhostFetch } from '@storegate/app/node';
import { sqliteSessionStorage } from '@storegate/app/session/sqlite';
import { API_VERSIONS, storeAdminUrl, WEBHOOK_TOPICS, type ApiVersion, type ExampleConfig } from './example-config.ts';
import { eventsPage, homePage, messagePage, productsPage, type ProductRow, type ProductsView } from './html-views.ts';
import { ManagedLaunches, MissingLaunchTokenError } from './managed-launch.ts';
import { ShopAccessCookie } from './shop-access-cookie.ts';
import { subscribeWebhooks, type SubscriptionStatus } from './webhook-subscriber.ts';
import { WebhookLog } from './webhook-log.ts';

export interface ExampleServerDeps {
  /** `fetch` used to reach the platform (default: `localhostFetch()`, which reaches `*.localhost` from Node). */
  fetch?: typeof fetch;
  logger?: Logger;
}

export interface ExampleServer {
  /** The Express application; `listen` it or hand it to `http.createServer`. */
  readonly server: express.Express;
  readonly app: StoregateApp;
  readonly webhooks: WebhookLog;
  /** Releases the session database. */
  close(): void;
}

/** A refusal of the request by the example app itself (not by the SDK or the platform). */
class RequestError extends Error {
  readonly status: number;
  readonly action: { href: string; label: string } | undefined;
  constructor(status: number, message: string, action?: { href: string; label: string }) {
    super(message);
    this.status = status;
    this.action = action;
  }
}

const CURSOR_PATTERN = /^[\x21-\x7e]{1,2048}$/;

/** One query parameter, given at most once. */
function single(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw new RequestError(400, `The "${name}" parameter was given ${values.length} times; give it once.`);
  return values[0];
}

function queryOf(req: Request): URLSearchParams {
  const url = req.originalUrl;
  return new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');
}

/** Whether `granted` (space-separated) covers every scope in `wanted`; `write_x` implies `read_x`. */
function coversScopes(granted: string, wanted: string): boolean {
  const have = new Set(granted.split(/[\s,]+/).filter(Boolean));
  return wanted
    .split(/\s+/)
    .filter(Boolean)
    .every((scope) => have.has(scope) || (scope.startsWith('read_') && have.has(`write_${scope.slice('read_'.length)}`)));
}

function openSessionStorage(config: ExampleConfig): { storage: SessionStorage; close(): void } {
  if (config.sessionStorage === 'memory') return { storage: memorySessionStorage(), close: () => {} };
  mkdirSync(dirname(config.sessionStorage.sqlitePath), { recursive: true });
  const db = new Database(config.sessionStorage.sqlitePath);
  db.pragma('journal_mode = WAL');
  return { storage: sqliteSessionStorage(db), close: () => db.close() };
}

/** How the pages answer an error: status, a sentence for a person, and what to do next. */
interface ErrorAnswer {
  status: number;
  title: string;
  message: string;
  code?: string | undefined;
  action?: { href: string; label: string } | undefined;
  headers?: Record<string, string>;
}

type Action = { href: string; label: string } | undefined;

function describeError(
  error: unknown,
  shop: string | undefined,
  platform: string,
  installAgain: (shop?: string) => Action,
): ErrorAnswer | undefined {
  if (error instanceof LaunchTokenError || error instanceof MissingLaunchTokenError) {
    return {
      status: 400,
      title: 'This launch could not be verified',
      message: error.message,
      code: error instanceof LaunchTokenError ? error.code : undefined,
      action: installAgain(shop),
    };
  }
  return describeOtherError(error, shop, platform, installAgain);
}

function describeOtherError(
  error: unknown,
  shop: string | undefined,
  platform: string,
  installAgain: (shop?: string) => Action,
): ErrorAnswer | undefined {
  if (error instanceof RequestError) return { status: error.status, title: 'Bad request', message: error.message, action: error.action };
  if (
    error instanceof StateError ||
    error instanceof HmacError ||
    error instanceof TimestampError ||
    error instanceof ShopError ||
    error instanceof ParameterError
  ) {
    return {
      status: 400,
      title: 'This request could not be verified',
      message: error.message,
      code: error.code,
      action: installAgain(shop),
    };
  }
  if (error instanceof AuthorizationDeniedError) {
    return {
      status: 403,
      title: 'Installation cancelled',
      message: `The store did not authorize the app: ${error.message}`,
      code: error.code,
      action: installAgain(shop),
    };
  }
  if (error instanceof TokenExchangeError) {
    return {
      status: 502,
      title: 'The platform refused the token exchange',
      message: `${error.message}. Codes and launch tokens are single-use and expire after a minute: start again.`,
      code: error.code,
      action: installAgain(shop),
    };
  }
  if (error instanceof SessionNotFoundError) {
    return {
      status: 404,
      title: 'Not installed',
      message: `The app is not installed in ${error.shop} (or was uninstalled).`,
      code: error.code,
      action: installAgain(error.shop),
    };
  }
  if (error instanceof ReauthorizationRequiredError || error instanceof AuthError) {
    return {
      status: 401,
      title: 'Authorize the app again',
      message: `The platform no longer accepts this app's tokens for ${shop ?? 'the store'}: ${error.message}`,
      code: error.code,
      action: installAgain(shop),
    };
  }
  if (error instanceof ScopeError) {
    return { status: 403, title: 'Missing permission', message: error.message, code: error.code, action: installAgain(shop) };
  }
  if (error instanceof RateLimitError) {
    const retryAfter = String(Math.max(1, Math.ceil(error.retryAfter ?? 1)));
    return {
      status: 429,
      title: 'Too many requests',
      message: `The platform asks to wait ${retryAfter} s before the next call.`,
      code: error.code,
      headers: { 'retry-after': retryAfter },
    };
  }
  if (error instanceof NetworkError || error instanceof TokenRefreshError) {
    return {
      status: 502,
      title: 'The platform did not answer',
      message: `Could not reach the platform at ${platform}: ${error.message}. Is \`npm start\` running?`,
      code: error.code,
    };
  }
  if (error instanceof ApiError && error.platformCode === 'InvalidCursor') {
    return {
      status: 400,
      title: 'Invalid cursor',
      message: 'The cursor in this link is not one the platform issued for this list (or for this API version).',
      code: error.platformCode,
      action: shop ? { href: `/products?shop=${encodeURIComponent(shop)}`, label: 'First page' } : undefined,
    };
  }
  if (error instanceof NotFoundError) return { status: 404, title: 'Not found', message: error.message, code: error.code };
  if (error instanceof StoregateError)
    return { status: 502, title: 'The platform answered with an error', message: error.message, code: error.code };
  return undefined;
}

/**
 * Builds the example app from its settings.
 *
 * @example
 * ```ts
 * const { server } = createExampleServer(loadExampleConfig(process.env));
 * server.listen(3000);
 * ```
 */
export function createExampleServer(config: ExampleConfig, deps: ExampleServerDeps = {}): ExampleServer {
  const sessions = openSessionStorage(config);
  const fetchImpl = deps.fetch ?? localhostFetch();
  const app = createApp({
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    scopes: config.scopes,
    redirectUri: config.redirectUri,
    storeDomain: config.storeDomain,
    apiOrigin: config.apiOrigin,
    apiVersion: config.apiVersion,
    sessionStorage: sessions.storage,
    fetch: fetchImpl,
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  const webhooks = new WebhookLog(config.webhookLogSize);
  const subscriptions = new Map<string, SubscriptionStatus>();
  const access = new ShopAccessCookie(config.clientSecret, { secure: config.appUrl.startsWith('https://') });
  const platformOrigin = (shop: string) => config.apiOrigin.split('{shop}').join(shop);
  // Where a merchant starts again: the OAuth install of this app, or with managed install the
  // store admin, which installs and opens the app itself.
  const installAgain = (shop?: string): Action => {
    if (!shop) return undefined;
    if (config.managedInstall) return { href: `${platformOrigin(shop)}/admin`, label: 'Open the app from the store admin' };
    return { href: `/auth?shop=${encodeURIComponent(shop)}`, label: 'Install (authorize) again' };
  };
  const subscribeAfterInstall = async (shop: string) => {
    subscriptions.set(shop, await subscribeWebhooks(app.client(shop), config.webhookAddress, WEBHOOK_TOPICS));
  };
  const launches = new ManagedLaunches(app, subscribeAfterInstall, (shop, error) =>
    deps.logger?.warn?.('example app: no online token for this launch', { shop, code: error.code, message: error.message }),
  );

  /** A client pinned to `version`: the app's own, or one sharing its token manager. */
  const clientFor = (shop: string, version: ApiVersion): AdminClient =>
    version === config.apiVersion
      ? app.client(shop)
      : createAdminClient({
          shop,
          accessToken: (signal) => app.getAccessToken(shop, signal ? { signal } : {}),
          apiVersion: version,
          apiOrigin: config.apiOrigin,
          storeDomain: config.storeDomain,
          fetch: fetchImpl,
        });

  /** `demo` or `demo.localhost` → `demo.localhost`, refused unless it is a shop of the store domain. */
  const shopParam = (query: URLSearchParams): string => {
    const raw = single(query, 'shop')?.trim().toLowerCase();
    if (raw === undefined || raw === '') {
      throw new RequestError(400, `Name the store: add ?shop=<store name>, e.g. ?shop=demo or ?shop=demo.${config.storeDomain}.`);
    }
    const shop = raw.includes('.') ? raw : `${raw}.${config.storeDomain}`;
    if (!app.isValidShop(shop)) {
      throw new RequestError(
        400,
        `"${raw}" is not a store of ${config.storeDomain}: a store name is letters, digits and hyphens (e.g. "demo"), a hostname is {store}.${config.storeDomain}.`,
      );
    }
    return shop;
  };

  /** The shop, when this browser was granted it by a signed request (install or open from the admin). */
  const requireAccess = (req: Request, shop: string): void => {
    if (access.read(req.headers.cookie) !== shop) {
      throw new RequestError(
        403,
        `This browser has not opened the app for ${shop}. Open it from the store admin (Apps → Open), or install it again.`,
        {
          href: `/auth?shop=${encodeURIComponent(shop)}`,
          label: 'Install / open the app',
        },
      );
    }
  };

  const server = express();
  server.disable('x-powered-by');
  server.set('etag', false);
  server.use((_req, res, next) => {
    res.setHeader('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'");
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    res.setHeader('cache-control', 'no-store');
    next();
  });

  const methodNotAllowed = (allowed: string) => (req: Request, res: Response) => {
    res.status(405).setHeader('allow', allowed).type('text/plain').send(`${req.method} is not allowed on ${req.path}; use ${allowed}.`);
  };

  server
    .route('/')
    .get(async (req, res) => {
      const query = queryOf(req);
      if (query.has('hmac') && config.managedInstall) {
        // Managed install: the launch is verified and its token exchanged here; the page follows.
        const { launch, result: view } = await launches.open({ url: req.originalUrl, headers: req.headers }, (shop) =>
          productsView(shop, new URLSearchParams()),
        );
        res.setHeader('set-cookie', access.issue(launch.shop));
        res
          .type('html')
          .send(
            productsPage({ ...view, installed: launch.installed, subscriptions: subscriptions.get(launch.shop), signedInAs: launch.user }),
          );
        return;
      }
      if (query.has('hmac')) {
        // The App URL request (seed §2.3, §5.2): verify before anything else.
        const install = await app.verifyInstallRequest({ url: req.originalUrl, headers: req.headers });
        const session = await app.sessions.get(install.shop);
        if (session && !session.reauthorizationRequired && coversScopes(session.scope, config.scopes)) {
          // Already installed with every scope: "Open" from the admin goes straight in.
          res.setHeader('set-cookie', access.issue(install.shop));
          res.redirect(303, `/products?shop=${encodeURIComponent(install.shop)}`);
          return;
        }
        const { url, cookie } = await app.auth.begin({ shop: install.shop });
        res.setHeader('set-cookie', cookie);
        res.redirect(302, url);
        return;
      }
      if (query.has('shop') || query.has('timestamp')) {
        throw new RequestError(
          400,
          'This install request carries no hmac, so it cannot be from the platform. Install from the store admin, or use the form on this page.',
          {
            href: '/',
            label: 'Home',
          },
        );
      }
      const shop = access.read(req.headers.cookie);
      res.type('html').send(
        homePage({
          shop,
          storeDomain: config.storeDomain,
          appUrl: config.appUrl,
          scopes: config.scopes,
          storeAdmin: config.managedInstall ? storeAdminUrl(config) : undefined,
        }),
      );
    })
    .all(methodNotAllowed('GET'));

  server
    .route('/auth')
    .get(async (req, res) => {
      const shop = shopParam(queryOf(req));
      if (config.managedInstall)
        throw new RequestError(
          400,
          'With managed install the platform installs this app: install or open it from the store admin, not through this page.',
          installAgain(shop),
        );
      const { url, cookie } = await app.auth.begin({ shop });
      res.setHeader('set-cookie', cookie);
      res.redirect(302, url);
    })
    .all(methodNotAllowed('GET'));

  server
    .route('/auth/callback')
    .get(async (req, res) => {
      const session = await app.auth.callback({ url: req.originalUrl, headers: req.headers });
      await subscribeAfterInstall(session.shop);
      res.setHeader('set-cookie', [app.auth.clearStateCookie(), access.issue(session.shop)]);
      res.redirect(303, `/products?shop=${encodeURIComponent(session.shop)}&installed=1`);
    })
    .all(methodNotAllowed('GET'));

  /** One page of products (the query's version, cursor and direction), read through the Admin API. */
  const productsView = async (shop: string, query: URLSearchParams): Promise<ProductsView> => {
    const version = single(query, 'version') ?? config.apiVersion;
    if (!(API_VERSIONS as readonly string[]).includes(version))
      throw new RequestError(400, `Unknown API version "${version}": use one of ${API_VERSIONS.join(', ')}.`);
    const direction = single(query, 'direction') ?? 'forward';
    if (direction !== 'forward' && direction !== 'backward')
      throw new RequestError(400, `direction must be "forward" or "backward" (got "${direction}").`);
    const cursor = single(query, 'cursor');
    if (cursor !== undefined && !CURSOR_PATTERN.test(cursor))
      throw new RequestError(400, 'The cursor must be the opaque text a previous page gave (1 to 2048 visible characters).');
    if (direction === 'backward' && version !== '2022-01')
      throw new RequestError(
        400,
        `Going backwards needs API version 2022-01 (its pages carry pre_cursor); ${version} pages only go forward.`,
      );
    if (direction === 'backward' && cursor === undefined)
      throw new RequestError(400, 'Going backwards starts from a page\'s pre_cursor: pass it as "cursor".');
    const installed = single(query, 'installed');
    if (installed !== undefined && installed !== '1') throw new RequestError(400, 'installed must be 1 when given.');

    const client = clientFor(shop, version as ApiVersion);
    const [page] = await client
      .pages<ProductRow>('products', { limit: config.pageSize, cursor: cursor ?? null, direction, maxPages: 1 })
      .toArray({ max: 1 });
    if (!page) throw new Error('the paginator returned no page');
    const link = (c: string, dir: 'forward' | 'backward') =>
      `/products?${new URLSearchParams({ shop, version, ...(dir === 'backward' ? { direction: dir } : {}), cursor: c }).toString()}`;
    // Forward pages say whether another follows; a page reached backwards always has one after it.
    const next = page.direction === 'backward' || page.hasMore ? page.cursor : null;
    return {
      shop,
      apiVersion: version,
      versions: API_VERSIONS,
      products: page.data,
      nextHref: next ? link(next, 'forward') : undefined,
      previousHref: page.preCursor ? link(page.preCursor, 'backward') : undefined,
      requestCursor: page.requestCursor,
      installed: installed === '1',
      subscriptions: subscriptions.get(shop),
    };
  };

  server
    .route('/products')
    .get(async (req, res) => {
      const query = queryOf(req);
      const shop = shopParam(query);
      requireAccess(req, shop);
      res.type('html').send(productsPage(await productsView(shop, query)));
    })
    .all(methodNotAllowed('GET'));

  server
    .route('/events')
    .get(async (req, res) => {
      const shop = shopParam(queryOf(req));
      requireAccess(req, shop);
      res
        .type('html')
        .send(
          eventsPage({ shop, events: webhooks.forShop(shop), capacity: config.webhookLogSize, subscriptions: subscriptions.get(shop) }),
        );
    })
    .all(methodNotAllowed('GET'));

  server
    .route('/webhooks')
    // The raw bytes, exactly as sent: the signature is over them (never mount express.json() here).
    .post(express.raw({ type: () => true, limit: '1mb' }), async (req, res) => {
      const rawBody: unknown = req.body;
      const event = await app.verifyWebhook({ rawBody: rawBody instanceof Uint8Array ? rawBody : '', headers: req.headers });
      if (!event.shop || !app.isValidShop(event.shop) || !event.topic) {
        res
          .status(400)
          .type('text/plain')
          .send('The webhook is signed but names no valid shop or topic (X-Service-Shop-Domain, X-Service-Topic).');
        return;
      }
      const fresh = webhooks.add(event);
      if (fresh && event.topic === 'app/uninstalled') {
        // The platform revoked every token of the installation: forget them.
        await app.sessions.delete(event.shop);
        await launches.forget(event.shop);
        subscriptions.delete(event.shop);
      }
      res
        .status(200)
        .type('text/plain')
        .send(fresh ? 'ok' : 'ok (already received)');
    })
    .all(methodNotAllowed('POST'));

  server.get('/healthz', (_req, res) => {
    res.type('text/plain').send('ok');
  });

  server.use((req, res) => {
    res
      .status(404)
      .type('html')
      .send(messagePage({ title: 'Not found', message: `Nothing at ${req.method} ${req.path}.`, action: { href: '/', label: 'Home' } }));
  });

  server.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (req.path === '/webhooks') {
      // The platform reads only the status: 401 for a signature that does not verify, so it does not count as delivered.
      if (error instanceof WebhookError) {
        res.status(401).type('text/plain').send(`${error.code}: ${error.message}`);
        return;
      }
      const status = (error as { status?: unknown }).status;
      if (typeof status === 'number' && status >= 400 && status < 500) {
        res
          .status(status)
          .type('text/plain')
          .send(`The webhook body could not be read: ${(error as Error).message}`);
        return;
      }
    }
    let shop: string | undefined;
    try {
      const raw = queryOf(req).get('shop') ?? undefined;
      shop = raw && app.isValidShop(raw) ? raw : undefined;
    } catch {
      shop = undefined;
    }
    const answer = describeError(error, shop, shop ? platformOrigin(shop) : config.apiOrigin, installAgain);
    if (!answer) {
      deps.logger?.error?.('example app: unexpected error', { path: req.path, message: (error as Error).message });
      if (!deps.logger) console.error(`example app: ${req.method} ${req.path}:`, error);
      res
        .status(500)
        .type('html')
        .send(
          messagePage({ title: 'Something went wrong', message: 'The example app failed to answer this request; its console shows why.' }),
        );
      return;
    }
    for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
    res
      .status(answer.status)
      .type('html')
      .send(messagePage({ title: answer.title, message: answer.message, code: answer.code, action: answer.action, shop }));
  });

  return { server, app, webhooks, close: sessions.close };
}
