// Merchant log in / log out on a store host (PRODUCT.md §8: "Email", "Password", "Log in").
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../app.ts';
import { hiddenFields, html, page } from '../views/html.ts';
import { SESSION_COOKIE, currentMerchant, safeReturnTo, setSessionCookie } from './merchant-session.ts';

export function registerLoginRoutes(app: FastifyInstance, services: Services): void {
  app.get('/admin/login', async (req, reply) => {
    const query = req.query as Record<string, unknown>;
    const returnTo = safeReturnTo(query.return_to);
    if (await currentMerchant(services, req)) return reply.redirect(returnTo, 303);
    const failed = query.error === '1';
    const body = html`<h1>Log in to ${req.store!.name}</h1>
${failed ? html`<p class="error" role="alert">Wrong email or password.</p>` : ''}
<form method="post" action="/admin/login">
${hiddenFields({ _csrf: reply.generateCsrf(), return_to: returnTo })}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<div class="actions"><button type="submit">Log in</button></div>
</form>`;
    return reply.header('Cache-Control', 'no-store').type('text/html; charset=utf-8').send(page('Log in', body));
  });

  app.post('/admin/login', { preHandler: app.csrfProtection }, async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const returnTo = safeReturnTo(body.return_to);
    const email = typeof body.email === 'string' ? body.email.slice(0, 320) : '';
    const password = typeof body.password === 'string' ? body.password : '';
    const merchantId = email && password ? await services.accounts.authenticateMerchant(req.store!, email, password) : undefined;
    if (merchantId === undefined) {
      req.log.info({ store: req.store!.name }, 'merchant login failed');
      return reply.redirect(`/admin/login?error=1&return_to=${encodeURIComponent(returnTo)}`, 303);
    }
    const old = req.cookies[SESSION_COOKIE];
    if (old) await services.accounts.endSession(old);
    setSessionCookie(services, reply, await services.accounts.startSession('merchant', merchantId, req.store!.id));
    return reply.redirect(returnTo, 303);
  });

  app.post('/admin/logout', { preHandler: app.csrfProtection }, async (req, reply) => {
    await services.accounts.endSession(req.cookies[SESSION_COOKIE]);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.redirect('/admin/login', 303);
  });
}
