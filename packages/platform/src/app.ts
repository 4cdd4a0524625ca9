// buildApp(config, deps): the whole platform as a Fastify instance that never listens by itself.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Config } from './config.ts';
import { CURRENT_VERSION } from './domain/api-versions.ts';
import { CursorCodec } from './domain/cursor.ts';
import { SecretBox } from './domain/secret-box.ts';
import { routeHost } from './domain/shop-host.ts';
import { AuthorizePageError, OAuthError, PlatformError } from './errors.ts';
import { registerAdminApi } from './http/admin-api/admin-api.route.ts';
import { registerAuthorizeRoutes } from './http/oauth/authorize.route.ts';
import { registerApiDocsRoutes } from './http/platform/api-docs.route.ts';
import { registerRevokeRoute } from './http/oauth/revoke.route.ts';
import { registerTokenRoute } from './http/oauth/token.route.ts';
import { registerHealthRoutes } from './http/platform/health.route.ts';
import { registerStoreAdminRoutes } from './http/store-admin/admin.route.ts';
import { registerLoginRoutes } from './http/store-admin/login.route.ts';
import { registerPartnerDashboard } from './http/partner/partner-dashboard.route.ts';
import { registerAssetRoutes } from './http/views/assets.route.ts';
import { html, page } from './http/views/html.ts';
import { AccountService, type StoreRow } from './services/account-service.ts';
import { ApiAuthService } from './services/api-auth.ts';
import { AppService } from './services/app-service.ts';
import { systemClock, type Clock } from './services/clock.ts';
import { OAuthService } from './services/oauth-service.ts';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from './services/rate-limiter.ts';
import { PageCache } from './services/page-cache.ts';
import { ResourceService } from './services/resource-service.ts';
import type { Db } from './storage/db.ts';
import { DeliveryLog } from './webhooks/delivery-log.ts';
import { WebhookOutbox } from './webhooks/outbox.ts';

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
  interface FastifyRequest {
    /** The store addressed by the Host header (store-area routes only). */
    store: StoreRow | undefined;
  }
  interface FastifyContextConfig {
    /** Which host serves the route: a store's host, the bare platform domain, or both. */
    area?: 'store' | 'platform' | 'any';
    /** Errors of this route are rendered as RFC 6749 §5.2 JSON. */
    oauth?: boolean;
  }
}

export interface Deps {
  db: Db;
  clock?: Clock;
  /** Where JSON logs go (default stdout); tests capture them to prove no secret is logged. */
  logStream?: DestinationStream;
}

export interface Services {
  config: Config;
  db: Db;
  clock: Clock;
  box: SecretBox;
  accounts: AccountService;
  apps: AppService;
  oauth: OAuthService;
  apiAuth: ApiAuthService;
  cursors: CursorCodec;
  resources: ResourceService;
  /** Validated cache of serialized list pages (SQLite only). */
  pageCache: PageCache | undefined;
  /** Admin API leaky buckets; undefined when rate limiting is off. Created by buildApp. */
  rateLimiter: RateLimiter | undefined;
  /** The transactional outbox: events written with the change that caused them. */
  webhooks: WebhookOutbox;
  /** Webhook deliveries and their attempts; redelivery; retention. */
  deliveries: DeliveryLog;
}

const REQUEST_ID_PREFIX = randomBytes(5).toString('hex');
let requestCounter = 0;

const CSS = readFileSync(new URL('./http/views/app.css', import.meta.url), 'utf8');

export function createServices(config: Config, deps: Deps): Services {
  const clock = deps.clock ?? systemClock;
  const box = new SecretBox(config.masterKey);
  const oauth = new OAuthService(deps.db, box, config, clock);
  const webhooks = new WebhookOutbox(deps.db, clock);
  const apps = new AppService(deps.db, box, config, clock, oauth);
  apps.webhooks = webhooks;
  return {
    config,
    db: deps.db,
    clock,
    box,
    oauth,
    accounts: new AccountService(deps.db, clock),
    apps,
    apiAuth: new ApiAuthService(deps.db, clock),
    cursors: new CursorCodec(box.subkey('cursor')),
    resources: new ResourceService(deps.db, clock, webhooks),
    pageCache: deps.db.sqlite ? new PageCache(deps.db.sqlite, deps.db.writes) : undefined,
    rateLimiter: undefined,
    webhooks,
    deliveries: new DeliveryLog(deps.db, clock, config),
  };
}

function createRateLimiter(config: Config, clock: Clock): RateLimiter | undefined {
  if (config.rateLimit === 'off') return undefined;
  return config.redisUrl
    ? new RedisRateLimiter(config.redisUrl, config.rateLimit.bucket, config.rateLimit.perSecond, clock)
    : new MemoryRateLimiter(config.rateLimit.bucket, config.rateLimit.perSecond, clock);
}

export async function buildApp(config: Config, deps: Deps): Promise<FastifyInstance> {
  const services = createServices(config, deps);
  services.rateLimiter = createRateLimiter(config, services.clock);
  const app = Fastify({
    logger: {
      level: config.logLevel,
      // Only the path is logged: query strings can carry codes, hmacs or states.
      serializers: {
        req: (req) => ({ method: req.method, path: req.url.split('?')[0], host: req.host, remoteAddress: req.ip }),
        res: (res) => ({ statusCode: res.statusCode }),
      },
      redact: { paths: ['req.headers.authorization', 'req.headers["access-token"]', 'req.headers.cookie'], remove: true },
      ...(deps.logStream ? { stream: deps.logStream } : {}),
    },
    bodyLimit: 1024 * 1024,
    requestIdHeader: false,
    // A random per-process prefix and a counter: unique, and cheaper than random bytes per request.
    genReqId: () => `req_${REQUEST_ID_PREFIX}${(++requestCounter).toString(36).padStart(6, '0')}`,
    trustProxy: false,
    return503OnClosing: true,
  });
  app.decorateRequest('store', undefined);
  app.decorate('services', services);
  app.addHook('onClose', async () => services.rateLimiter?.close());

  // Callback style (no promise per request): this runs for every request.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('X-Request-Id', req.id);
    done();
  });

  await app.register(cookie);
  await app.register(formbody, { bodyLimit: 64 * 1024 });
  await app.register(csrf, {
    sessionPlugin: '@fastify/cookie',
    cookieOpts: { path: '/', httpOnly: true, sameSite: 'lax', secure: config.publicScheme === 'https' },
    getToken: (req) => (req.body as Record<string, string> | undefined)?._csrf,
  });
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        scriptSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        frameAncestors: ["'none'"],
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: config.publicScheme === 'https',
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'storegate Admin API',
        version: CURRENT_VERSION,
        description: 'Store Admin API. Every request carries the Access-Token header. Paths take the API version: 2022-01 (cursor + pre_cursor pagination), 2025-06 and 2026-01 (cursor + has_more).',
      },
      servers: [{ url: `${config.publicScheme}://{store}.${config.storeDomain}${config.publicPort === 80 || config.publicPort === 443 ? '' : `:${config.publicPort}`}`, variables: { store: { default: 'demo' } } }],
      components: { securitySchemes: { AccessToken: { type: 'apiKey', in: 'header', name: 'Access-Token' } } },
      security: [{ AccessToken: [] }],
    },
    hideUntagged: true,
  });

  // Host routing (PRODUCT.md §2): malformed Host → 400, unknown store → 404, area mismatch → 404.
  app.addHook('onRequest', (req, _reply, done) => {
    const area = req.routeOptions.config?.area ?? 'store';
    const route = routeHost(req.headers.host, config.storeDomain);
    if (route.kind === 'invalid') return done(new PlatformError(400, 'BadRequest', 'The Host header does not name this platform or one of its stores'));
    if (route.kind === 'platform') return done(area === 'store' ? new PlatformError(404, 'NotFound', 'Not found') : undefined);
    if (area === 'platform') return done(new PlatformError(404, 'NotFound', 'Not found'));
    const found = (store: StoreRow | undefined) => {
      if (!store) return done(new PlatformError(404, 'NotFound', 'No store with this name'));
      req.store = store;
      done();
    };
    const cached = services.accounts.cachedStore(route.storeName);
    if (cached) return found(cached);
    services.accounts.findStoreByName(route.storeName).then(found, done);
  });

  app.setErrorHandler((error: FastifyError | Error, req, reply) => renderError(error, req, reply));
  app.setNotFoundHandler((req, reply) => renderError(new PlatformError(404, 'NotFound', 'Not found'), req, reply));

  app.get('/assets/app.css', { config: { area: 'any' } }, async (_req, reply) => {
    return reply.header('Cache-Control', 'public, max-age=3600').type('text/css; charset=utf-8').send(CSS);
  });

  registerHealthRoutes(app, services);
  registerLoginRoutes(app, services);
  registerStoreAdminRoutes(app, services);
  registerPartnerDashboard(app, services);
  registerAssetRoutes(app);
  registerAuthorizeRoutes(app, services);
  registerTokenRoute(app, services);
  registerRevokeRoute(app, services);
  registerAdminApi(app, services);
  registerApiDocsRoutes(app);
  return app;
}

/** Ajv errors as `{field: [messages]}`, fields named by their path (`line_items.0.price`). */
function fieldErrors(fe: FastifyError): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of fe.validation ?? []) {
    const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    const params = e.params as Record<string, unknown>;
    let field = path;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      field = [path, String(params.missingProperty)].filter(Boolean).join('.');
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      field = [path, String(params.additionalProperty)].filter(Boolean).join('.');
      message = 'is not a known field';
    } else if (e.keyword === 'enum') {
      message = `must be one of: ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    }
    field ||= fe.validationContext ?? 'body';
    (out[field] ??= []).push(message);
  }
  return out;
}

function wantsHtml(req: FastifyRequest): boolean {
  if (!(req.headers.accept ?? '').includes('text/html')) return false;
  // Pages, and the HTML forms of the store admin and partner dashboard (a browser posting a form).
  return req.method === 'GET' || (req.method === 'POST' && (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded') && !req.routeOptions.config?.oauth);
}

/** One place that turns every error into a response; internal details go to the log only. */
function renderError(error: FastifyError | Error, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof AuthorizePageError) {
    return reply
      .status(400)
      .type('text/html; charset=utf-8')
      .send(page('Cannot continue', html`<h1>This app link is not valid</h1><p class="error" role="alert">${error.message}</p><p class="muted">Request id: <code>${req.id}</code></p>`));
  }
  let status: number;
  let code: string;
  let message: string;
  let extra: Record<string, unknown> = {};
  if (error instanceof OAuthError) {
    status = error.statusCode;
    code = error.error;
    message = error.description;
  } else if (error instanceof PlatformError) {
    status = error.statusCode;
    code = error.code;
    message = error.message;
    extra = error.details ?? {};
  } else {
    const fe = error as FastifyError;
    if (fe.validation) {
      status = 422;
      code = 'ValidationFailed';
      message = 'Validation failed';
      extra = { errors: fieldErrors(fe) };
    } else if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      status = 413;
      code = 'PayloadTooLarge';
      message = 'Request body is too large';
    } else if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      status = 415;
      code = 'UnsupportedMediaType';
      message = 'Unsupported Content-Type';
    } else if (fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || (fe.statusCode === 400 && fe.code?.startsWith('FST_ERR_CTP'))) {
      status = 400;
      code = 'BadRequest';
      message = 'Request body is not valid JSON';
    } else if (fe.code === 'FST_CSRF_INVALID_TOKEN' || fe.code === 'FST_CSRF_MISSING_SECRET') {
      status = 403;
      code = 'Forbidden';
      message = 'The form expired or was not sent from this site; reload the page and try again';
    } else if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
      status = fe.statusCode;
      code = 'BadRequest';
      message = 'Bad request';
    } else {
      req.log.error({ err: error }, 'unexpected error');
      status = 500;
      code = 'ServerError';
      message = 'Internal error; quote the request id when reporting it';
    }
  }
  if (req.routeOptions.config?.oauth) {
    const oauthCode = error instanceof OAuthError ? code : status === 500 ? 'server_error' : 'invalid_request';
    if (status === 401) reply.header('WWW-Authenticate', 'Basic realm="storegate"');
    return reply
      .status(status)
      .header('Cache-Control', 'no-store')
      .header('Pragma', 'no-cache')
      .send({ error: oauthCode, error_description: message });
  }
  if (wantsHtml(req)) {
    return reply
      .status(status)
      .type('text/html; charset=utf-8')
      .send(page('Error', html`<h1>${status === 404 ? 'Not found' : 'Something went wrong'}</h1><p class="error" role="alert">${message}</p><p class="muted">Request id: <code>${req.id}</code></p>`));
  }
  return reply.status(status).send({ code, message, ...extra, request_id: req.id });
}
