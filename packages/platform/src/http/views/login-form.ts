// The log-in flow shared by the store admin and the partner dashboard: the form ("Email",
// "Password", "Log in") and the POST with login protection (303 after every POST, so reloading a
// page never sends a form again).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { lockMessage, type LoginThrottle } from '../../services/login-throttle.ts';
import type { PlatformMetrics } from '../../services/metrics.ts';
import { hiddenFields, html, page, type SafeHtml } from './html.ts';

/** The lock message's minutes travel in the redirect (303 after every POST); 1 to 60. */
export function lockedMinutes(value: unknown): number | undefined {
  return typeof value === 'string' && /^[1-9][0-9]?$/.test(value) ? Math.min(60, Number(value)) : undefined;
}

export function sendLoginForm(
  req: FastifyRequest,
  reply: FastifyReply,
  form: { action: string; title: string; heading: string; returnTo: string; extra?: SafeHtml },
): FastifyReply {
  const query = req.query as Record<string, unknown>;
  const locked = lockedMinutes(query.locked);
  const body = html`<h1>${form.heading}</h1>
${
  locked
    ? html`<p class="error" role="alert">${lockMessage(locked * 60_000)}</p>`
    : query.error === '1'
      ? html`<p class="error" role="alert">Wrong email or password.</p>`
      : ''
}
${query.done === 'logout' ? html`<p class="ok" role="status">You are logged out.</p>` : ''}
<form method="post" action="${form.action}">
${hiddenFields({ _csrf: reply.generateCsrf(), return_to: form.returnTo })}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<div class="actions"><button type="submit" name="login">Log in</button></div>
</form>
${form.extra ?? ''}`;
  return reply.header('Cache-Control', 'no-store').type('text/html; charset=utf-8').send(page(form.title, body));
}

/**
 * The POST: the attempt is counted first, in one atomic step per key, and refused before its
 * password is checked when the account or the address is locked or this attempt is over the limit;
 * a wrong password may lock; a success clears the account's count and starts a session.
 */
export async function handleLoginPost(
  req: FastifyRequest,
  reply: FastifyReply,
  login: {
    throttle: LoginThrottle;
    /** Counts the attempts refused unchecked because of a lock. */
    metrics: PlatformMetrics;
    formPath: string;
    returnTo: string;
    account: (email: string) => string;
    authenticate: (email: string, password: string) => Promise<number | undefined>;
    startSession: (subjectId: number) => Promise<void>;
    failureLog: { message: string; fields: Record<string, unknown> };
  },
): Promise<FastifyReply> {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const email = typeof body.email === 'string' ? body.email.slice(0, 320) : '';
  const password = typeof body.password === 'string' ? body.password : '';
  const keys = { account: login.account(email), address: req.ip };
  const back = encodeURIComponent(login.returnTo);
  const lockedBack = (waitMs: number) => reply.redirect(`${login.formPath}?locked=${Math.ceil(waitMs / 60_000)}&return_to=${back}`, 303);
  const attempt = await login.throttle.begin(keys);
  if (attempt.wait > 0) {
    login.metrics.rateLimited('login');
    return lockedBack(attempt.wait);
  }
  const subjectId = email && password ? await login.authenticate(email, password) : undefined;
  if (subjectId === undefined) {
    req.log.info(login.failureLog.fields, login.failureLog.message);
    const lockedNow = await login.throttle.failed(attempt);
    if (lockedNow > 0) return lockedBack(lockedNow);
    return reply.redirect(`${login.formPath}?error=1&return_to=${back}`, 303);
  }
  await login.throttle.succeeded(attempt);
  await login.startSession(subjectId);
  return reply.redirect(login.returnTo, 303);
}
