// Privacy requests about one customer, from the store admin's Customers page: "Request data for
// apps" (customers/data_request) and "Redact customer" (customers/redact). Each is a confirmation
// page, then a POST with CSRF that answers 303 back to the list with a notice of what was sent, so
// the whole flow works without JavaScript.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PrivacyAudienceApp } from '../../services/customer-privacy.ts';
import type { Services } from '../../services/services.ts';
import { parseId } from '../path-params.ts';
import { confirmationForm, confirmedOrRedirect } from '../views/confirmation.ts';
import { html, type SafeHtml } from '../views/html.ts';
import { sendAdminPage } from '../views/store-admin-layout.ts';

const merchantOnly = { config: { session: 'merchant' as const } };

type Action = 'data-request' | 'redact';

const ACTIONS: Record<Action, { title: string; topic: string; button: string; explain: string }> = {
  'data-request': {
    title: 'Request data for apps',
    topic: 'customers/data_request',
    button: 'Send the data request',
    explain:
      'Each app below that is marked "sent" receives customers/data_request with the customer\'s id, email, phone and the ids of their ' +
      'orders, and should send you the data it holds about this customer.',
  },
  redact: {
    title: 'Redact customer',
    topic: 'customers/redact',
    button: 'Redact this customer',
    explain:
      'Each app below that is marked "sent" receives customers/redact with the customer\'s id, email, phone and the ids of their ' +
      "orders, and must erase what it holds about this customer. This store then replaces the customer's email, name and phone with " +
      'placeholders, on the customer, on their orders and in the webhook bodies it keeps about either (the events apps can list again, ' +
      'and deliveries still waiting to be sent) and in the answers it keeps for apps that send the same Admin API request again. This ' +
      'cannot be undone.',
  },
};

/** The notice the Customers list shows after a request, from its query string; undefined when there is none. */
export function privacyNotice(q: Record<string, unknown>): SafeHtml | undefined {
  const customer = typeof q.customer === 'string' && /^[1-9][0-9]{0,15}$/.test(q.customer) ? q.customer : undefined;
  const apps = typeof q.apps === 'string' && /^[0-9]{1,6}$/.test(q.apps) ? Number(q.apps) : undefined;
  if (!customer || apps === undefined) return undefined;
  const sentTo =
    apps === 0
      ? 'no app: no installed app both may read customers and has a privacy webhook address'
      : `${apps} app${apps === 1 ? '' : 's'}`;
  if (q.done === 'data_request') {
    const id = typeof q.request === 'string' && /^[0-9]{1,16}$/.test(q.request) ? q.request : undefined;
    return html`<p class="ok" role="status">Data request${id ? ` ${id}` : ''} for customer ${customer}: customers/data_request was sent \
to ${sentTo}.</p>`;
  }
  if (q.done === 'redacted') {
    return html`<p class="ok" role="status">Customer ${customer} was redacted: customers/redact was sent to ${sentTo}, and the customer's \
email, name and phone were replaced with placeholders in this store, its orders and the webhook bodies kept about them.</p>`;
  }
  return undefined;
}

function audienceList(apps: PrivacyAudienceApp[]): SafeHtml {
  if (apps.length === 0) return html`<p class="muted">No app is installed in this store: nothing will be sent.</p>`;
  return html`<ul>${apps.map(
    (a) => html`<li>${a.name}: ${a.receives ? html`<strong>sent</strong>` : html`<span class="muted">not sent (${a.reason})</span>`}</li>`,
  )}</ul>`;
}

export function registerCustomerPrivacyRoutes(app: FastifyInstance, services: Pick<Services, 'customerPrivacy'>): void {
  const privacy = services.customerPrivacy;

  async function confirmation(req: FastifyRequest, reply: FastifyReply, action: Action) {
    const store = req.store!;
    const id = parseId((req.params as { id: string }).id);
    const [customer, audience] = await Promise.all([privacy.customer(store.id, id), privacy.audience(store.id)]);
    const a = ACTIONS[action];
    const done = action === 'redact' && customer.redacted;
    const body = html`<h1>${a.title}</h1>
<dl><dt>Customer</dt><dd>${String(id)}</dd><dt>Email</dt><dd>${customer.email}</dd><dt>Phone</dt>\
<dd>${customer.phone ?? html`<span class="muted">none</span>`}</dd></dl>
${
  done
    ? html`<p class="notice" role="status">This customer was redacted already: there is nothing left to send.</p>
<p><a href="/admin/customers">Back to customers</a></p>`
    : html`<p>${a.explain}</p>
<h2>Apps installed in ${store.name}</h2>
${audienceList(audience)}
${confirmationForm({
  action: `/admin/customers/${String(id)}/${action}`,
  csrf: reply.generateCsrf(),
  button: a.button,
  danger: action === 'redact',
  cancel: '/admin/customers',
})}`
}`;
    return sendAdminPage(reply, store, 'customers', a.title, body);
  }

  app.get('/admin/customers/:id/data-request', merchantOnly, (req, reply) => confirmation(req, reply, 'data-request'));
  app.get('/admin/customers/:id/redact', merchantOnly, (req, reply) => confirmation(req, reply, 'redact'));

  app.post('/admin/customers/:id/data-request', { ...merchantOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    if (!confirmedOrRedirect(req, reply)) return reply;
    const id = parseId((req.params as { id: string }).id);
    const sent = await privacy.requestData(req.store!.id, id);
    req.log.info({ store: req.store!.name, customer: id, apps: sent.apps }, 'customer data request sent');
    const q = new URLSearchParams({
      done: 'data_request',
      customer: String(id),
      apps: String(sent.apps),
      request: sent.dataRequestId ?? '',
    });
    return reply.redirect(`/admin/customers?${q}`, 303);
  });

  app.post('/admin/customers/:id/redact', { ...merchantOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    if (!confirmedOrRedirect(req, reply)) return reply;
    const id = parseId((req.params as { id: string }).id);
    const sent = await privacy.redact(req.store!.id, id);
    req.log.info(
      { store: req.store!.name, customer: id, apps: sent.apps, events: sent.events, answers: sent.answers },
      'customer redacted',
    );
    return reply.redirect(
      `/admin/customers?${new URLSearchParams({ done: 'redacted', customer: String(id), apps: String(sent.apps) })}`,
      303,
    );
  });
}
