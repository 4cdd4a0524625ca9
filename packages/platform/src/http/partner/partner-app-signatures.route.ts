// The app page's "Asymmetric webhook signatures" section and the form that turns them on or off:
// with them on, the app's webhooks also carry `v1a` signatures by the platform's Ed25519 keys,
// which the app checks against the platform's published JWKS, beside the usual HMAC.
import type { FastifyInstance } from 'fastify';
import { platformBaseUrl, type Config } from '../../config.ts';
import { ValidationFailedError } from '../../domain/errors.ts';
import type { AppProfile } from '../../domain/app-profile.ts';
import type { Services } from '../../services/services.ts';
import { formString } from '../views/form-fields.ts';
import { hiddenFields, html, type SafeHtml } from '../views/html.ts';

const partnerOnly = { config: { area: 'platform' as const, session: 'partner' as const } };

/** The notices of the app page after the form below. */
export const SIGNATURE_NOTICES: Record<string, string> = {
  ed25519_on: 'Webhooks to this app now also carry v1a (Ed25519) signatures.',
  ed25519_off: 'Webhooks to this app no longer carry v1a (Ed25519) signatures; the HMAC signatures are unchanged.',
};

export function signatureSection(config: Config, a: AppProfile, csrf: string): SafeHtml {
  const on = a.webhook_signature_ed25519 === 1;
  const jwks = `${platformBaseUrl(config)}/.well-known/jwks.json`;
  return html`<h2>Asymmetric webhook signatures</h2>
<p>Every webhook carries HMAC signatures made with the client secret (<code>X-Service-Hmac-Sha256</code>, and <code>v1,</code>
in <code>webhook-signature</code>). With asymmetric signatures on, <code>webhook-signature</code> also carries <code>v1a,</code>
entries: Ed25519 signatures by the platform's keys, which your app checks with the public keys at <code>${jwks}</code>
(no secret needed). <code>X-Service-Signing-Key-Ids</code> names the key of each entry; while the platform rotates its key,
two entries come, one per key.</p>
<p>Now: asymmetric signatures are <strong>${on ? 'on' : 'off'}</strong>.</p>
<form method="post" action="/partner/apps/${a.client_id}/webhook-signatures">${hiddenFields({ _csrf: csrf })}${
    on
      ? html`<button class="secondary" type="submit" name="ed25519" value="off">Stop sending v1a signatures</button>`
      : html`<button type="submit" name="ed25519" value="on">Send v1a signatures too</button>`
  }</form>`;
}

export function registerPartnerSignatureRoutes(app: FastifyInstance, services: Pick<Services, 'apps' | 'webhookSignatures'>): void {
  app.post('/partner/apps/:clientId/webhook-signatures', { ...partnerOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    const partner = req.partner!;
    const a = await services.apps.findPartnerApp(partner.partnerId, (req.params as { clientId: string }).clientId);
    const value = formString((req.body as Record<string, unknown> | null)?.ed25519);
    if (value !== 'on' && value !== 'off') throw new ValidationFailedError({ ed25519: ['must be on or off'] });
    await services.webhookSignatures.setEd25519(a.id, value === 'on');
    return reply.redirect(`/partner/apps/${a.client_id}?done=ed25519_${value}`, 303);
  });
}
