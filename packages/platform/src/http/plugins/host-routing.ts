// Host routing: the bare platform domain serves the platform's own pages, `{store}.{domain}` serves
// that store. A malformed Host is a 400, an unknown store or a route of the other area a 404.
// Probes and metrics are the exception: load balancers and scrapers reach a node by its address
// (an IP, any name, or no Host at all), so those routes take every Host.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BadRequestError, NotFoundError } from '../../domain/errors.ts';
import { type HostRoute, routeHost } from '../../domain/store-host.ts';
import type { Store } from '../../services/account-service.ts';
import type { Services } from '../../services/services.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The store addressed by the Host header (store-area routes only). */
    store: Store | undefined;
  }
  interface FastifyContextConfig {
    /**
     * Which host serves the route: a store's host, the bare platform domain, or both; `any-host`
     * takes whatever Host it gets, IP addresses and none included (probes and metrics only).
     */
    area?: 'store' | 'platform' | 'any' | 'any-host';
  }
}

export function registerHostRouting(app: FastifyInstance, services: Pick<Services, 'accounts' | 'config'>): void {
  app.decorateRequest('store', undefined);
  const storeDomain = services.config.storeDomain;
  // Parsed Host headers: a node sees few distinct ones, and parsing is the same work every time.
  // Bounded (emptied when full), since the header is whatever the client sends.
  const routes = new Map<string | undefined, HostRoute>();
  const route = (host: string | undefined): HostRoute => {
    let r = routes.get(host);
    if (r === undefined) {
      r = routeHost(host, storeDomain);
      if (routes.size >= 1024) routes.clear();
      routes.set(host, r);
    }
    return r;
  };
  // Callback style, no closure per request: this runs before every route but the probes.
  app.addHook('onRequest', (req, _reply, done) => {
    const area = req.routeOptions.config?.area ?? 'store';
    if (area === 'any-host') return done();
    const r = route(req.headers.host);
    if (r.kind === 'invalid') return done(new BadRequestError('The Host header does not name this platform or one of its stores'));
    if (r.kind === 'platform') return done(area === 'store' ? new NotFoundError() : undefined);
    if (area === 'platform') return done(new NotFoundError());
    const cached = services.accounts.cachedStore(r.storeName);
    if (cached) return found(req, cached, done);
    services.accounts.findStoreByName(r.storeName).then((store) => found(req, store, done), done);
  });
}

function found(req: FastifyRequest, store: Store | undefined, done: (err?: Error) => void): void {
  if (!store) {
    done(new NotFoundError('No store with this name'));
    return;
  }
  req.store = store;
  done();
}
