// "Webhooks" of one app in the partner dashboard: the app's app-level subscriptions (copied into
// every store that installs it), how many stores hold each, a form to add one (topic, address and
// the optional filter and include_fields, checked as the Admin API checks them), editing the
// filter and fields of one (`partner-app-webhook-edit.route.ts`), and removal after a confirmation
// page.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ValidationFailedError } from '../../domain/errors.ts';
import { SUBSCRIBABLE_TOPICS } from '../../domain/webhook-topics.ts';
import type { AppProfile } from '../../domain/app-profile.ts';
import type { Services } from '../../services/services.ts';
import { parseId } from '../path-params.ts';
import { shapeCells, shapeFields, type ShapeForm, shapeForm, shapeInput } from './app-webhook-shape-form.ts';
import { registerPartnerAppWebhookEditRoutes } from './partner-app-webhook-edit.route.ts';
import { confirmationForm, confirmedOrRedirect } from '../views/confirmation.ts';
import { describedBy, fieldError, formatTime, formString, textField } from '../views/form-fields.ts';
import { hiddenFields, html, scrollBox } from '../views/html.ts';
import { appTabs, sendPartnerPage } from '../views/partner-layout.ts';

const partnerOnly = { config: { area: 'platform' as const, session: 'partner' as const } };
const NOTICES: Record<string, string> = {
  added: 'The subscription was added and copied into the stores that have the app installed.',
  removed: 'The subscription was removed, with its copy in every store.',
  changed: 'The filter and fields were changed, with every store copy. Webhooks already queued keep the fields they had.',
  unchanged: 'The filter and fields were already those: nothing changed.',
};

interface Form extends ShapeForm {
  topic: string;
  address: string;
  errors: Record<string, string[]>;
  /** After an add: the stores whose caps left no room for the copy. */
  skipped?: { store: string; reason: string }[];
}

export function registerPartnerAppWebhookRoutes(app: FastifyInstance, services: Pick<Services, 'appWebhooks' | 'apps'>): void {
  const render = async (reply: FastifyReply, partnerEmail: string, a: AppProfile, form: Form, notice?: string) => {
    const rows = await services.appWebhooks.list(a.id);
    const base = `/partner/apps/${a.client_id}/webhooks`;
    const topicErrors = form.errors.topic;
    const body = html`<h1>${a.name}: webhooks</h1>
${appTabs(a.client_id, 'webhooks')}
${notice ? html`<p class="ok" role="status">${notice}</p>` : ''}
${(form.skipped ?? []).map((s) => html`<p class="notice" role="status"><strong>Not copied into ${s.store}:</strong> ${s.reason}.</p>`)}
<p>App-level subscriptions are copied into every store that installs the app, now and later, for the
topics the store's grant allows. In a store they are read-only: the app cannot change or delete them
through the Admin API. <code>storegate apps deploy</code> makes this list the one its configuration file declares.</p>
${
  rows.length === 0
    ? html`<p class="muted">No app-level subscriptions yet.</p>`
    : scrollBox(
        'App-level webhook subscriptions',
        html`<table>
<thead><tr><th scope="col">Topic</th><th scope="col">Address</th><th scope="col">Filter</th><th scope="col">Fields</th>\
<th scope="col">Stores</th><th scope="col">Added</th><th scope="col">Actions</th></tr></thead>
<tbody>
${rows.map(
  (s) => html`<tr><td>${s.topic}</td><td><code>${s.address}</code></td>${shapeCells(s)}<td>${String(s.stores)}</td>\
<td>${formatTime(s.created_at)}</td>
<td><a class="button secondary" href="${base}/${String(s.id)}/edit">Edit<span class="visually-hidden"> ${s.topic} to ${s.address}</span></a>
<a class="button danger" href="${base}/${String(s.id)}/remove">Remove<span \
class="visually-hidden"> ${s.topic} to ${s.address}</span></a></td></tr>
`,
)}</tbody>
</table>`,
      )
}
<h2>Add a subscription</h2>
<form method="post" action="${base}">
${hiddenFields({ _csrf: reply.generateCsrf() })}
${fieldError('base', form.errors.base)}
<label for="topic">Topic</label>
${fieldError('topic', topicErrors)}<select id="topic" name="topic" required${describedBy('topic', topicErrors)}>${SUBSCRIBABLE_TOPICS.map(
      (t) => html`<option value="${t}"${t === form.topic ? html` selected` : ''}>${t}</option>`,
    )}</select>
${textField({ id: 'address', name: 'address', label: 'Address', type: 'url', value: form.address, errors: form.errors.address })}
${shapeFields(form, form.errors)}
<div class="actions"><button type="submit" name="add">Add subscription</button></div>
</form>`;
    return sendPartnerPage(reply, partnerEmail, 'apps', `${a.name} webhooks`, body);
  };

  app.get('/partner/apps/:clientId/webhooks', partnerOnly, async (req, reply) => {
    const partner = req.partner!;
    const a = await services.apps.findPartnerApp(partner.partnerId, (req.params as { clientId: string }).clientId);
    const notice = NOTICES[String((req.query as Record<string, unknown>).done)];
    return render(reply, partner.email, a, { topic: '', address: '', filter: '', includeFields: '', errors: {} }, notice);
  });

  app.post('/partner/apps/:clientId/webhooks', { ...partnerOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    const partner = req.partner!;
    const a = await services.apps.findPartnerApp(partner.partnerId, (req.params as { clientId: string }).clientId);
    const b = (req.body ?? {}) as Record<string, unknown>;
    const form: Form = { topic: formString(b.topic, 100), address: formString(b.address).trim(), ...shapeForm(b), errors: {} };
    try {
      const added = await services.appWebhooks.add(a.id, { topic: form.topic, address: form.address, ...shapeInput(form) });
      if (added.skipped.length === 0) return reply.redirect(`/partner/apps/${a.client_id}/webhooks?done=added`, 303);
      // Some stores had no room: say which, on the page itself.
      const blank = { topic: '', address: '', filter: '', includeFields: '' };
      return render(reply, partner.email, a, { ...blank, errors: {}, skipped: added.skipped }, NOTICES.added);
    } catch (err) {
      if (!(err instanceof ValidationFailedError)) throw err;
      reply.code(422);
      return render(reply, partner.email, a, { ...form, errors: err.errors });
    }
  });

  const subscriptionOf = async (partnerId: number, params: unknown) => {
    const p = params as { clientId: string; id: string };
    const a = await services.apps.findPartnerApp(partnerId, p.clientId);
    const id = parseId(p.id);
    const s = (await services.appWebhooks.list(a.id)).find((r) => r.id === id);
    return { a, id, s };
  };
  registerPartnerAppWebhookEditRoutes(app, services, subscriptionOf);

  app.get('/partner/apps/:clientId/webhooks/:id/remove', partnerOnly, async (req, reply) => {
    const partner = req.partner!;
    const { a, s } = await subscriptionOf(partner.partnerId, req.params);
    if (!s) return reply.redirect(`/partner/apps/${a.client_id}/webhooks`, 303);
    const base = `/partner/apps/${a.client_id}/webhooks`;
    const body = html`<h1>Remove this subscription?</h1>
${appTabs(a.client_id, 'webhooks')}
<dl><dt>Topic</dt><dd>${s.topic}</dd><dt>Address</dt><dd><code>${s.address}</code></dd><dt>Stores</dt><dd>${String(s.stores)}</dd></dl>
<p>Its copy in every store that has ${a.name} installed is deleted, and their webhooks still queued are not sent. Stores that install the \
app later do not get it.</p>
${confirmationForm({
  action: `${base}/${String(s.id)}/remove`,
  csrf: reply.generateCsrf(),
  button: 'Remove subscription',
  danger: true,
  cancel: base,
})}`;
    return sendPartnerPage(reply, partner.email, 'apps', `Remove ${s.topic}`, body);
  });

  app.post('/partner/apps/:clientId/webhooks/:id/remove', { ...partnerOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    if (!confirmedOrRedirect(req, reply)) return reply;
    const partner = req.partner!;
    const { a, id } = await subscriptionOf(partner.partnerId, req.params);
    await services.appWebhooks.remove(a.id, id);
    return reply.redirect(`/partner/apps/${a.client_id}/webhooks?done=removed`, 303);
  });
}
