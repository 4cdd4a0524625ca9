// The merchant's browser session on a store host: a server-side record behind an HttpOnly cookie.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { storeBaseUrl, type Config } from '../../config.ts';
import { type AccountService, SESSION_TTL_MS } from '../../services/account-service.ts';
import { returnPath } from '../return-path.ts';

export const SESSION_COOKIE = 'sg_session';

export async function currentMerchant(
  accounts: AccountService,
  req: FastifyRequest,
): Promise<{ merchantId: number; sessionId: string } | undefined> {
  const id = req.cookies[SESSION_COOKIE];
  const row = await accounts.findSession('merchant', id, req.store!.id);
  return row && id ? { merchantId: row.subject_id, sessionId: id } : undefined;
}

export function setSessionCookie(config: Config, reply: FastifyReply, id: string): void {
  reply.setCookie(SESSION_COOKIE, id, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: config.publicScheme === 'https',
    maxAge: SESSION_TTL_MS / 1000,
  });
}

/** A return path after login: a path of this store's admin only, never another origin. */
export function safeReturnTo(config: Config, req: FastifyRequest, value: unknown): string {
  return returnPath(value, storeBaseUrl(config, req.store!.name), '/admin', 4000);
}

/** Sends the browser to the login page, coming back to this URL afterwards. */
export function redirectToLogin(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.redirect(`/admin/login?return_to=${encodeURIComponent(req.url)}`, 303);
}
