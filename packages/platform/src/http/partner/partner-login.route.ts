// Partner log in / log out on the bare platform domain, with the same login protection as the
// store admin (per account and per address, stored in the database).
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../app.ts';
import { LoginThrottle, lockMessage } from '../../services/login-throttle.ts';
import { lockedMinutes } from '../store-admin/login.route.ts';
import { hiddenFields, html, page } from '../views/html.ts';
import { PARTNER_COOKIE, currentPartner, partnerReturnTo, setPartnerCookie } from './partner-session.ts';

const platform = { config: { area: 'platform' as const } };

export function registerPartnerLoginRoutes(app: FastifyInstance, services: Services): void {
  const throttle = new LoginThrottle(services.db, services.clock);

  app.get('/', platform, async (_req, reply) => reply.redirect('/partner', 303));

  app.get('/partner/login', platform, async (req, reply) => {
    const query = req.query as Record<string, unknown>;
    const returnTo = partnerReturnTo(query.return_to);
    if (await currentPartner(services, req)) return reply.redirect(returnTo, 303);
    const locked = lockedMinutes(query.locked);
    const body = html`<h1>Partner dashboard: log in</h1>
${locked ? html`<p class="error" role="alert">${lockMessage(locked * 60_000)}</p>` : query.error === '1' ? html`<p class="error" role="alert">Wrong email or password.</p>` : ''}
${query.done === 'logout' ? html`<p class="ok" role="status">You are logged out.</p>` : ''}
<form method="post" action="/partner/login">
${hiddenFields({ _csrf: reply.generateCsrf(), return_to: returnTo })}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<div class="actions"><button type="submit" name="login">Log in</button></div>
</form>
<p class="muted">Partner accounts are created with <code>storegate partners create</code>.</p>`;
    return reply.header('Cache-Control', 'no-store').type('text/html; charset=utf-8').send(page('Partner log in', body));
  });

  app.post('/partner/login', { ...platform, preHandler: app.csrfProtection }, async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const returnTo = partnerReturnTo(body.return_to);
    const email = typeof body.email === 'string' ? body.email.slice(0, 320) : '';
    const password = typeof body.password === 'string' ? body.password : '';
    const keys = { account: `partner:${email}`, address: req.ip };
    const lockedBack = (waitMs: number) => reply.redirect(`/partner/login?locked=${Math.ceil(waitMs / 60_000)}&return_to=${encodeURIComponent(returnTo)}`, 303);
    const wait = await throttle.lockedFor(keys);
    if (wait > 0) return lockedBack(wait);
    const partnerId = email && password ? await services.accounts.authenticatePartner(email, password) : undefined;
    if (partnerId === undefined) {
      req.log.info('partner login failed');
      const lockedNow = await throttle.recordFailure(keys);
      if (lockedNow > 0) return lockedBack(lockedNow);
      return reply.redirect(`/partner/login?error=1&return_to=${encodeURIComponent(returnTo)}`, 303);
    }
    await throttle.recordSuccess(keys);
    const old = req.cookies[PARTNER_COOKIE];
    if (old) await services.accounts.endSession(old);
    setPartnerCookie(services, reply, await services.accounts.startSession('partner', partnerId, null));
    return reply.redirect(returnTo, 303);
  });

  app.post('/partner/logout', { ...platform, preHandler: app.csrfProtection }, async (req, reply) => {
    await services.accounts.endSession(req.cookies[PARTNER_COOKIE]);
    reply.clearCookie(PARTNER_COOKIE, { path: '/' });
    return reply.redirect('/partner/login?done=logout', 303);
  });
}
