// An app's client secret on the partner dashboard: reveal it (shown once per reveal), rotate it and
// finish the rotation (until then the old secret keeps authenticating and signing, so running apps
// roll over without a dropped webhook). Rotating and finishing ask first, on a page saying what
// happens to the secrets.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppProfile } from '../../domain/app-profile.ts';
import type { Services } from '../../services/services.ts';
import { confirmationForm, confirmedOrRedirect } from '../views/confirmation.ts';
import { describeDuration, secretField } from '../views/form-fields.ts';
import { html, type SafeHtml } from '../views/html.ts';
import { appTabs, sendPartnerPage } from '../views/partner-layout.ts';

const partnerOnly = { config: { area: 'platform' as const, session: 'partner' as const } };

const REVEAL_TITLES: Record<string, [string, string]> = {
  created: ['App created', 'Copy the client secret now: it is shown only once. You can reveal it again later from the app settings.'],
  revealed: ['Client secret', 'This is the current client secret. It is shown once; reveal it again when you need it.'],
  rotated: [
    'New client secret',
    'The secret was rotated. Copy the new secret now: it is shown once. Deploy it to your app next to the previous one, then press ' +
      '"Finish rotation" in the app settings.',
  ],
};

/** What the secret pages use: the apps, the rotations and their overlap, one-time reveals. */
export type PartnerAppSecretServices = Pick<Services, 'apps' | 'config' | 'reveals' | 'rotations'>;

export function registerPartnerAppSecretRoutes(app: FastifyInstance, services: PartnerAppSecretServices): void {
  const { reveals } = services;

  app.post('/partner/apps/:clientId/reveal-secret', { ...partnerOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    const partner = req.partner!;
    const a = await services.apps.findPartnerApp(partner.partnerId, (req.params as { clientId: string }).clientId);
    const reveal = await reveals.put(partner.sessionId, {
      kind: 'revealed',
      client_id: a.client_id,
      client_secret: services.apps.clientSecret(a),
    });
    return reply.redirect(`/partner/apps/${a.client_id}/secret?reveal=${reveal}`, 303);
  });

  const confirmation = (req: FastifyRequest, reply: FastifyReply, a: AppProfile, title: string, explain: SafeHtml, button?: string) => {
    const body = html`<h1>${title}</h1>
${appTabs(a.client_id, 'settings')}
<dl><dt>App</dt><dd>${a.name}</dd><dt>Client ID</dt><dd><code>${a.client_id}</code></dd></dl>
${explain}
${
  button
    ? confirmationForm({
        action: req.url.split('?')[0]!,
        csrf: reply.generateCsrf(),
        button,
        danger: true,
        cancel: `/partner/apps/${a.client_id}`,
      })
    : html`<p><a href="/partner/apps/${a.client_id}">Back to the app settings</a></p>`
}`;
    return sendPartnerPage(reply, req.partner!.email, 'apps', title, body);
  };

  app.get('/partner/apps/:clientId/rotate-secret', partnerOnly, async (req, reply) => {
    const a = await services.apps.findPartnerApp(req.partner!.partnerId, (req.params as { clientId: string }).clientId);
    if (services.rotations.clientRotationEndsAt(a) !== undefined) {
      return confirmation(
        req,
        reply,
        a,
        'Rotate the client secret',
        html`<p class="notice" role="status">A rotation is already in progress: finish it before rotating again.</p>`,
      );
    }
    const overlap = describeDuration(services.config.secretOverlapMs);
    return confirmation(
      req,
      reply,
      a,
      `Rotate the client secret of ${a.name}?`,
      html`<p>A new client secret is created and shown once. Until you finish the rotation (at the latest after ${overlap}), the previous \
secret keeps working at the token endpoint and keeps signing install links and the <code>X-Service-Hmac-Sha256</code> header; \
<code>webhook-signature</code> carries a signature with each secret. Deploy the new secret to your app, then finish the rotation.</p>`,
      'Rotate client secret',
    );
  });

  app.get('/partner/apps/:clientId/finish-rotation', partnerOnly, async (req, reply) => {
    const a = await services.apps.findPartnerApp(req.partner!.partnerId, (req.params as { clientId: string }).clientId);
    if (services.rotations.clientRotationEndsAt(a) === undefined) {
      return confirmation(
        req,
        reply,
        a,
        'Finish the rotation',
        html`<p class="notice" role="status">No rotation of the client secret is in progress: there is nothing to finish.</p>`,
      );
    }
    return confirmation(
      req,
      reply,
      a,
      `Finish the rotation of ${a.name}?`,
      html`<p>Install links and webhooks are then signed with the new secret only, and the previous secret stops working at the token \
endpoint. Every server of your app must accept the new secret first. This cannot be undone.</p>`,
      'Finish rotation',
    );
  });

  app.post('/partner/apps/:clientId/rotate-secret', { ...partnerOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    if (!confirmedOrRedirect(req, reply)) return reply;
    const partner = req.partner!;
    const a = await services.apps.findPartnerApp(partner.partnerId, (req.params as { clientId: string }).clientId);
    const { secret } = await services.rotations.rotateClientSecret(a.id);
    req.log.info({ client_id: a.client_id }, 'client secret rotation started');
    const reveal = await reveals.put(partner.sessionId, { kind: 'rotated', client_id: a.client_id, client_secret: secret });
    return reply.redirect(`/partner/apps/${a.client_id}/secret?reveal=${reveal}`, 303);
  });

  app.post('/partner/apps/:clientId/finish-rotation', { ...partnerOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    if (!confirmedOrRedirect(req, reply)) return reply;
    const partner = req.partner!;
    const a = await services.apps.findPartnerApp(partner.partnerId, (req.params as { clientId: string }).clientId);
    await services.rotations.finishClientSecretRotation(a.id);
    req.log.info({ client_id: a.client_id }, 'client secret rotation finished');
    return reply.redirect(`/partner/apps/${a.client_id}?done=finished`, 303);
  });

  app.get('/partner/apps/:clientId/secret', partnerOnly, async (req, reply) => {
    const partner = req.partner!;
    const a = await services.apps.findPartnerApp(partner.partnerId, (req.params as { clientId: string }).clientId);
    const shown = await reveals.take(partner.sessionId, (req.query as Record<string, unknown>).reveal);
    const valid = shown && shown.client_id === a.client_id ? shown : undefined;
    const [title, note] = REVEAL_TITLES[valid?.kind ?? ''] ?? [
      'Already shown',
      'A revealed secret is shown only once. Use "Reveal client secret" in the app settings to see it again.',
    ];
    const body = html`<h1>${title}</h1>
${appTabs(a.client_id, 'settings')}
<p class="${valid ? 'notice' : 'muted'}" role="status">${note}</p>
<dl><dt>App</dt><dd>${a.name}</dd><dt>Client ID</dt><dd><code>${a.client_id}</code></dd></dl>
${valid ? secretField('client-secret', 'Client secret', valid.client_secret ?? '') : ''}
<p><a href="/partner/apps/${a.client_id}">Back to the app settings</a></p>`;
    return sendPartnerPage(reply, partner.email, 'apps', title, body, { scripts: ['/assets/copy-button.js'] });
  });
}
