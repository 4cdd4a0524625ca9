// Editing one app-level webhook subscription in the partner dashboard: its filter and
// include_fields (the topic and address name it; changing those is a remove and an add). Checked
// as the Admin API checks them before anything is written; a bad value re-renders the form with
// its error. A change reaches every store copy.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ValidationFailedError } from '../../domain/errors.ts';
import type { AppProfile } from '../../domain/app-profile.ts';
import type { ListedAppSubscription } from '../../services/app-webhooks.ts';
import type { Services } from '../../services/services.ts';
import { fieldError } from '../views/form-fields.ts';
import { hiddenFields, html } from '../views/html.ts';
import { appTabs, sendPartnerPage } from '../views/partner-layout.ts';
import { shapeFields, type ShapeForm, shapeForm, shapeFormOf, shapeInput } from './app-webhook-shape-form.ts';

const partnerOnly = { config: { area: 'platform' as const, session: 'partner' as const } };

type SubscriptionOf = (partnerId: number, params: unknown) => Promise<{ a: AppProfile; id: number; s: ListedAppSubscription | undefined }>;

export function registerPartnerAppWebhookEditRoutes(
  app: FastifyInstance,
  services: Pick<Services, 'appWebhooks'>,
  subscriptionOf: SubscriptionOf,
): void {
  const render = (
    reply: FastifyReply,
    partnerEmail: string,
    a: AppProfile,
    s: ListedAppSubscription,
    form: ShapeForm,
    errors: Record<string, string[]>,
  ) => {
    const base = `/partner/apps/${a.client_id}/webhooks`;
    const body = html`<h1>Edit this subscription</h1>
${appTabs(a.client_id, 'webhooks')}
<dl><dt>Topic</dt><dd>${s.topic}</dd><dt>Address</dt><dd><code>${s.address}</code></dd><dt>Stores</dt><dd>${String(s.stores)}</dd></dl>
<p>The change reaches its copy in every store that has ${a.name} installed, and the stores that install it later. Webhooks already queued \
keep the fields they had. To change the topic or address, remove it and add another.</p>
<form method="post" action="${base}/${String(s.id)}/edit">
${hiddenFields({ _csrf: reply.generateCsrf() })}
${fieldError('base', errors.base)}
${shapeFields(form, errors)}
<div class="actions"><button type="submit" name="save">Save changes</button> <a class="button secondary" href="${base}">Cancel</a></div>
</form>`;
    return sendPartnerPage(reply, partnerEmail, 'apps', `Edit ${s.topic}`, body);
  };

  app.get('/partner/apps/:clientId/webhooks/:id/edit', partnerOnly, async (req, reply) => {
    const partner = req.partner!;
    const { a, s } = await subscriptionOf(partner.partnerId, req.params);
    if (!s) return reply.redirect(`/partner/apps/${a.client_id}/webhooks`, 303);
    return render(reply, partner.email, a, s, shapeFormOf(s), {});
  });

  app.post('/partner/apps/:clientId/webhooks/:id/edit', { ...partnerOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    const partner = req.partner!;
    const { a, id, s } = await subscriptionOf(partner.partnerId, req.params);
    if (!s) return reply.redirect(`/partner/apps/${a.client_id}/webhooks`, 303);
    const form = shapeForm((req.body ?? {}) as Record<string, unknown>);
    try {
      const done = await services.appWebhooks.update(a.id, id, shapeInput(form));
      return reply.redirect(`/partner/apps/${a.client_id}/webhooks?done=${done.changed ? 'changed' : 'unchanged'}`, 303);
    } catch (err) {
      if (!(err instanceof ValidationFailedError)) throw err;
      reply.code(422);
      return render(reply, partner.email, a, s, form, err.errors);
    }
  });
}
