// Partner log in / log out on the bare platform domain, with the same login protection as the
// store admin (per account and per address, stored in the database).
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/services.ts';
import { html } from '../views/html.ts';
import { handleLoginPost, sendLoginForm } from '../views/login-form.ts';
import { PARTNER_COOKIE, currentPartner, partnerReturnTo, setPartnerCookie } from './partner-session.ts';

const platform = { config: { area: 'platform' as const } };

export function registerPartnerLoginRoutes(
  app: FastifyInstance,
  services: Pick<Services, 'accounts' | 'config' | 'loginThrottle' | 'metrics'>,
): void {
  const throttle = services.loginThrottle;

  app.get('/', platform, async (_req, reply) => reply.redirect('/partner', 303));

  app.get('/partner/login', platform, async (req, reply) => {
    const returnTo = partnerReturnTo(services.config, (req.query as Record<string, unknown>).return_to);
    if (await currentPartner(services.accounts, req)) return reply.redirect(returnTo, 303);
    return sendLoginForm(req, reply, {
      action: '/partner/login',
      title: 'Partner log in',
      heading: 'Partner dashboard: log in',
      returnTo,
      extra: html`<p class="muted">Partner accounts are created with <code>storegate partners create</code>.</p>`,
    });
  });

  app.post('/partner/login', { ...platform, preHandler: app.csrfProtection }, async (req, reply) =>
    handleLoginPost(req, reply, {
      throttle,
      metrics: services.metrics,
      formPath: '/partner/login',
      returnTo: partnerReturnTo(services.config, (req.body as Record<string, unknown> | undefined)?.return_to),
      account: (email) => `partner:${email}`,
      authenticate: (email, password) => services.accounts.authenticatePartner(email, password),
      startSession: async (partnerId) => {
        const old = req.cookies[PARTNER_COOKIE];
        if (old) await services.accounts.endSession(old);
        setPartnerCookie(services.config, reply, await services.accounts.startSession('partner', partnerId, null));
      },
      failureLog: { message: 'partner login failed', fields: {} },
    }),
  );

  app.post('/partner/logout', { ...platform, preHandler: app.csrfProtection }, async (req, reply) => {
    await services.accounts.endSession(req.cookies[PARTNER_COOKIE]);
    reply.clearCookie(PARTNER_COOKIE, { path: '/' });
    return reply.redirect('/partner/login?done=logout', 303);
  });
}
