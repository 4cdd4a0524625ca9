// The HTTP server: Fastify with its plugins and every route, built from the services. It never
// listens by itself (tests use inject(); the composition root decides where it listens).
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { DestinationStream } from 'pino';
import { CURRENT_VERSION } from '../domain/api-versions.ts';
import type { Services } from '../services/services.ts';
import { registerAdminApi } from './admin-api/admin-api.route.ts';
import { registerVersionHeaders } from './admin-api/api-headers.ts';
import { registerAuthorizeRoutes } from './oauth/authorize.route.ts';
import { registerDiscoveryRoute } from './oauth/discovery.route.ts';
import { registerJwksRoute } from './oauth/jwks.route.ts';
import { registerRevokeRoute } from './oauth/revoke.route.ts';
import { registerIntrospectRoute } from './oauth/introspect.route.ts';
import { registerTokenRoute } from './oauth/token.route.ts';
import { registerPartnerDashboard } from './partner/partner-dashboard.route.ts';
import { registerApiDocsRoutes } from './platform/api-docs.route.ts';
import { registerHealthRoutes } from './platform/health.route.ts';
import { registerMetricsRoute } from './platform/metrics.route.ts';
import { registerBodyLimits } from './plugins/body-limits.ts';
import { clientErrorHandler } from './plugins/client-errors.ts';
import { registerDrainConnections } from './plugins/drain-connections.ts';
import { registerErrorHandler } from './plugins/error-handler.ts';
import { registerHostRouting } from './plugins/host-routing.ts';
import { registerRequestMetrics } from './plugins/request-metrics.ts';
import { nextRequestId, registerRequestId } from './plugins/request-id.ts';
import { registerSessionGate } from './plugins/session-gate.ts';
import { registerStoreAdminRoutes } from './store-admin/admin.route.ts';
import { registerLoginRoutes } from './store-admin/login.route.ts';
import { registerAssetRoutes } from './views/assets.route.ts';

export interface HttpOptions {
  /** Where JSON logs go (default stdout); tests capture them to prove no secret is logged. */
  logStream?: DestinationStream | undefined;
}

export async function buildHttpServer(services: Services, options: HttpOptions = {}): Promise<FastifyInstance> {
  const config = services.config;
  const timeouts = config.httpTimeouts;
  const app = Fastify({
    logger: {
      level: config.logLevel,
      // Only the path is logged: query strings can carry codes, hmacs or states.
      serializers: {
        // Behind trusted proxies the address and scheme are the client's (X-Forwarded-For/-Proto).
        req: (req) => ({
          method: req.method,
          path: req.url.split('?')[0],
          host: req.headers.host,
          remoteAddress: req.ip,
          scheme: req.protocol,
        }),
        res: (res) => ({ statusCode: res.statusCode }),
      },
      redact: { paths: ['req.headers.authorization', 'req.headers["access-token"]', 'req.headers.cookie'], remove: true },
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    bodyLimit: 1024 * 1024,
    requestIdHeader: false,
    genReqId: nextRequestId,
    // Forwarded headers count only from the proxies named by --trust-proxy; the client is the
    // right-most address of X-Forwarded-For that is not one of them.
    trustProxy: config.trustProxy.length > 0 ? [...config.trustProxy] : false,
    // Once the listener is closed, a request that still arrives on an open connection was sent
    // before the balancer stopped routing here: it is served (with `Connection: close`), not
    // refused. Draining is orchestrated in lifecycle.ts.
    return503OnClosing: false,
    // Slow or silent clients are cut off (408 or closed) instead of holding a socket for ever.
    connectionTimeout: timeouts.requestMs,
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    http: {
      // Load balancers probe with HTTP/1.0 or without a Host; host routing answers what lacks one
      // (400 wherever a route needs a Host, the probes anyway).
      requireHostHeader: false,
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      // How often Node looks for requests over their time (its default, 30 s, would let one
      // overstay its timeout by that much).
      connectionsCheckingInterval: Math.min(1000, timeouts.headersMs),
    },
    clientErrorHandler,
    // Pretty logs are read by a person: one line per request instead of two objects.
    ...(config.logFormat === 'pretty' ? { logController: new OneLinePerRequest() } : {}),
  });
  app.addHook('onClose', async () => {
    await services.rateLimiter?.close();
    await services.grantLimits?.close();
    await services.introspection.close();
  });
  registerRequestId(app);
  registerDrainConnections(app, services.readiness);
  // On every answer under /openapi/{version}/, the 404 of an unknown path and host errors included.
  registerVersionHeaders(app, services);
  registerBodyLimits(app);

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
        description:
          'Store Admin API. Every request carries its token in the Access-Token header or as Authorization: Bearer <token> (RFC 6750). ' +
          'Paths take the API version: 2022-01 (cursor + pre_cursor pagination), 2025-06 and 2026-01 (cursor + has_more), and 2026-10 ' +
          '(cursor + has_more; every success body wrapped as {"code": "Success", "data": <the body 2026-01 answers>}, errors ' +
          'unchanged). The schemas below are the bodies as 2026-01 answers them.',
      },
      servers: [
        {
          url:
            `${config.publicScheme}://{store}.${config.storeDomain}` +
            `${config.publicPort === 80 || config.publicPort === 443 ? '' : `:${config.publicPort}`}`,
          variables: { store: { default: 'demo' } },
        },
      ],
      components: {
        securitySchemes: {
          AccessToken: { type: 'apiKey', in: 'header', name: 'Access-Token' },
          Bearer: { type: 'http', scheme: 'bearer', description: 'RFC 6750: the same token as Access-Token, in Authorization.' },
          ResourceServer: { type: 'http', scheme: 'basic', description: "A resource server's client_id and secret (token introspection)." },
          PartnerClient: {
            type: 'http',
            scheme: 'basic',
            description: "An app's client_id and client secret (the partner API, on the platform host, for that app only).",
          },
        },
      },
      security: [{ AccessToken: [] }, { Bearer: [] }],
    },
    hideUntagged: true,
  });

  registerHostRouting(app, services);
  registerErrorHandler(app);
  registerSessionGate(app, services);

  registerRequestMetrics(app, services.metrics);
  registerHealthRoutes(app, services);
  registerMetricsRoute(app, config.metrics, services.metrics);
  registerLoginRoutes(app, services);
  registerStoreAdminRoutes(app, services);
  registerPartnerDashboard(app, services);
  registerAssetRoutes(app);
  registerAuthorizeRoutes(app, services);
  registerTokenRoute(app, services);
  registerRevokeRoute(app, services);
  registerIntrospectRoute(app, services);
  registerDiscoveryRoute(app, services);
  registerJwksRoute(app, services);
  registerAdminApi(app, services);
  registerApiDocsRoutes(app, config);
  return app;
}

/** One line per answered request: method, path (never the query: it can carry codes), status, time. */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = `${request.method} ${request.url.split('?')[0]} ${reply.statusCode} ${reply.elapsedTime.toFixed(1)}ms`;
    if (error || reply.statusCode >= 500) reply.log.error(line);
    else reply.log.info(line);
  }
}
