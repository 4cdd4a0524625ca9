// Merchant log in / log out on a store host ("Email", "Password", "Log in"); the session cookie
// belongs to that store's host only.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/services.ts';
import { merchantAccount } from '../../services/login-throttle.ts';
import { handleLoginPost, sendLoginForm } from '../views/login-form.ts';
import { SESSION_COOKIE, currentMerchant, safeReturnTo, setSessionCookie } from './merchant-session.ts';

export function registerLoginRoutes(
  app: FastifyInstance,
  services: Pick<Services, 'accounts' | 'config' | 'loginThrottle' | 'metrics' | 'oauth'>,
): void {
  const throttle = services.loginThrottle;
  app.get('/admin/login', async (req, reply) => {
    const returnTo = safeReturnTo(services.config, req, (req.query as Record<string, unknown>).return_to);
    if (await currentMerchant(services.accounts, req)) return reply.redirect(returnTo, 303);
    return sendLoginForm(req, reply, { action: '/admin/login', title: 'Log in', heading: `Log in to ${req.store!.name}`, returnTo });
  });

  app.post('/admin/login', { preHandler: app.csrfProtection }, async (req, reply) => {
    const store = req.store!;
    return handleLoginPost(req, reply, {
      throttle,
      metrics: services.metrics,
      formPath: '/admin/login',
      returnTo: safeReturnTo(services.config, req, (req.body as Record<string, unknown> | undefined)?.return_to),
      account: (email) => merchantAccount(store.id, email),
      authenticate: (email, password) => services.accounts.authenticateMerchant(store, email, password),
      startSession: async (merchantId) => {
        const old = req.cookies[SESSION_COOKIE];
        if (old) await services.accounts.endSession(old);
        setSessionCookie(services.config, reply, await services.accounts.startSession('merchant', merchantId, store.id));
      },
      failureLog: { message: 'merchant login failed', fields: { store: store.name } },
    });
  });

  // Logging out also ends the online access apps hold as this merchant in this store.
  app.post('/admin/logout', { preHandler: app.csrfProtection }, async (req, reply) => {
    const merchant = await currentMerchant(services.accounts, req);
    if (merchant) await services.oauth.endMerchantAccess(req.store!.id, merchant.merchantId);
    await services.accounts.endSession(req.cookies[SESSION_COOKIE]);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.redirect('/admin/login', 303);
  });
}
