// Merchant log in / log out on a store host (PRODUCT.md §8: "Email", "Password", "Log in").
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../app.ts';
import { LoginThrottle, lockMessage } from '../../services/login-throttle.ts';
import { hiddenFields, html, page } from '../views/html.ts';
import { SESSION_COOKIE, currentMerchant, safeReturnTo, setSessionCookie } from './merchant-session.ts';

/** The lock message's minutes travel in the redirect (303 after every POST); 1 to 60. */
export function lockedMinutes(value: unknown): number | undefined {
  return typeof value === 'string' && /^[1-9][0-9]?$/.test(value) ? Math.min(60, Number(value)) : undefined;
}

export function registerLoginRoutes(app: FastifyInstance, services: Services): void {
  const throttle = new LoginThrottle(services.db, services.clock);
  app.get('/admin/login', async (req, reply) => {
    const query = req.query as Record<string, unknown>;
    const returnTo = safeReturnTo(query.return_to);
    if (await currentMerchant(services, req)) return reply.redirect(returnTo, 303);
    const failed = query.error === '1';
    const locked = lockedMinutes(query.locked);
    const body = html`<h1>Log in to ${req.store!.name}</h1>
${locked ? html`<p class="error" role="alert">${lockMessage(locked * 60_000)}</p>` : failed ? html`<p class="error" role="alert">Wrong email or password.</p>` : ''}
<form method="post" action="/admin/login">
${hiddenFields({ _csrf: reply.generateCsrf(), return_to: returnTo })}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<div class="actions"><button type="submit" name="login">Log in</button></div>
</form>`;
    return reply.header('Cache-Control', 'no-store').type('text/html; charset=utf-8').send(page('Log in', body));
  });

  app.post('/admin/login', { preHandler: app.csrfProtection }, async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const returnTo = safeReturnTo(body.return_to);
    const email = typeof body.email === 'string' ? body.email.slice(0, 320) : '';
    const password = typeof body.password === 'string' ? body.password : '';
    const keys = { account: `merchant:${req.store!.id}:${email}`, address: req.ip };
    const lockedBack = (waitMs: number) => reply.redirect(`/admin/login?locked=${Math.ceil(waitMs / 60_000)}&return_to=${encodeURIComponent(returnTo)}`, 303);
    // A locked account or address is refused before the password is even checked.
    const wait = await throttle.lockedFor(keys);
    if (wait > 0) return lockedBack(wait);
    const merchantId = email && password ? await services.accounts.authenticateMerchant(req.store!, email, password) : undefined;
    if (merchantId === undefined) {
      req.log.info({ store: req.store!.name }, 'merchant login failed');
      const lockedNow = await throttle.recordFailure(keys);
      if (lockedNow > 0) return lockedBack(lockedNow);
      return reply.redirect(`/admin/login?error=1&return_to=${encodeURIComponent(returnTo)}`, 303);
    }
    await throttle.recordSuccess(keys);
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
