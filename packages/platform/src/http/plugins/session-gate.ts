// The session gate: a route that declares `config.session` is served only to a logged-in merchant
// of the addressed store (`'merchant'`) or a logged-in partner (`'partner'`); anyone else is sent
// to the login page and comes back afterwards.
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import type { Services } from '../../services/services.ts';
import { currentPartner, redirectToPartnerLogin } from '../partner/partner-session.ts';
import { currentMerchant, redirectToLogin } from '../store-admin/merchant-session.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may use the route: a merchant of the store, or a partner. */
    session?: 'merchant' | 'partner';
  }
  interface FastifyRequest {
    /** The logged-in merchant (routes with `session: 'merchant'`). */
    merchant: { merchantId: number; sessionId: string } | undefined;
    /** The logged-in partner (routes with `session: 'partner'`). */
    partner: { partnerId: number; sessionId: string; email: string } | undefined;
  }
}

export function registerSessionGate(app: FastifyInstance, services: Pick<Services, 'accounts' | 'config'>): void {
  app.decorateRequest('merchant', undefined);
  app.decorateRequest('partner', undefined);
  const merchantGate: preHandlerAsyncHookHandler = async (req, reply) => {
    const merchant = await currentMerchant(services.accounts, req);
    if (!merchant) return redirectToLogin(req, reply);
    req.merchant = merchant;
  };
  const partnerGate: preHandlerAsyncHookHandler = async (req, reply) => {
    const session = await currentPartner(services.accounts, req);
    if (!session) return redirectToPartnerLogin(services.config, req, reply);
    const partner = await services.accounts.findPartnerById(session.partnerId);
    req.partner = { ...session, email: partner?.email ?? '' };
  };
  // Attached to the routes that ask for it, after their own pre-handlers (the CSRF check of a form
  // comes first), so routes without a session (the Admin API, OAuth) pay nothing for it.
  app.addHook('onRoute', (route) => {
    const kind = route.config?.session;
    if (!kind) return;
    const gate = kind === 'merchant' ? merchantGate : partnerGate;
    const own = route.preHandler === undefined ? [] : Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler];
    route.preHandler = [...own, gate];
  });
}
