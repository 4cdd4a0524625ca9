// The session gate: a route that declares `config.session` is served only to a logged-in merchant
// of the addressed store (`'merchant'`) or a logged-in partner (`'partner'`); anyone else is sent
// to the login page and comes back afterwards.
import type { FastifyInstance } from 'fastify';
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

export function registerSessionGate(app: FastifyInstance, services: Services): void {
  app.decorateRequest('merchant', undefined);
  app.decorateRequest('partner', undefined);
  app.addHook('preHandler', async (req, reply) => {
    const kind = req.routeOptions.config?.session;
    if (kind === 'merchant') {
      const merchant = await currentMerchant(services, req);
      if (!merchant) return redirectToLogin(req, reply);
      req.merchant = merchant;
    } else if (kind === 'partner') {
      const session = await currentPartner(services, req);
      if (!session) return redirectToPartnerLogin(req, reply);
      const partner = await services.accounts.findPartnerById(session.partnerId);
      req.partner = { ...session, email: partner?.email ?? '' };
    }
  });
}
