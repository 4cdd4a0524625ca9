// The merchant's browser session on a store host: a server-side record behind an HttpOnly cookie.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services/services.ts';
import { SESSION_TTL_MS } from '../../services/account-service.ts';

export const SESSION_COOKIE = 'sg_session';

export async function currentMerchant(
  services: Services,
  req: FastifyRequest,
): Promise<{ merchantId: number; sessionId: string } | undefined> {
  const id = req.cookies[SESSION_COOKIE];
  const row = await services.accounts.findSession('merchant', id, req.store!.id);
  return row && id ? { merchantId: row.subject_id, sessionId: id } : undefined;
}

export function setSessionCookie(services: Services, reply: FastifyReply, id: string): void {
  reply.setCookie(SESSION_COOKIE, id, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: services.config.publicScheme === 'https',
    maxAge: SESSION_TTL_MS / 1000,
  });
}

/** A return path after login: a local absolute path only, never another origin. */
export function safeReturnTo(value: unknown): string {
  if (typeof value !== 'string' || value.length > 4000) return '/admin';
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\') || /[\r\n]/.test(value)) return '/admin';
  return value;
}

/** Sends the browser to the login page, coming back to this URL afterwards. */
export function redirectToLogin(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.redirect(`/admin/login?return_to=${encodeURIComponent(req.url)}`, 303);
}
