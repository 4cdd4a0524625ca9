// The partner's browser session on the bare platform domain: a server-side record (web_sessions,
// kind 'partner') behind an HttpOnly cookie that store hosts never receive (host-only cookie).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { platformBaseUrl, type Config } from '../../config.ts';
import { type AccountService, SESSION_TTL_MS } from '../../services/account-service.ts';
import { returnPath } from '../return-path.ts';

export const PARTNER_COOKIE = 'sg_partner_session';

export async function currentPartner(
  accounts: AccountService,
  req: FastifyRequest,
): Promise<{ partnerId: number; sessionId: string } | undefined> {
  const id = req.cookies[PARTNER_COOKIE];
  const row = await accounts.findSession('partner', id, null);
  return row && id ? { partnerId: row.subject_id, sessionId: id } : undefined;
}

export function setPartnerCookie(config: Config, reply: FastifyReply, id: string): void {
  reply.setCookie(PARTNER_COOKIE, id, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: config.publicScheme === 'https',
    maxAge: SESSION_TTL_MS / 1000,
  });
}

/** Where to go after login: a path of the dashboard only, never another origin. */
export function partnerReturnTo(config: Config, value: unknown): string {
  return returnPath(value, platformBaseUrl(config), '/partner', 2000);
}

export function redirectToPartnerLogin(config: Config, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.redirect(`/partner/login?return_to=${encodeURIComponent(partnerReturnTo(config, req.url))}`, 303);
}
