// Webhook deliveries of one app in the partner dashboard: newest first with the latest attempt's
// status and latency, filters by status and topic, every attempt of a delivery, "Send again", and a
// notice for subscriptions the platform disabled.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services/services.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../../domain/errors.ts';
import { DELIVERY_STATUSES, isDeliveryStatus } from '../../services/delivery-log.ts';
import { TOPICS } from '../../domain/webhook-topics.ts';
import { parseId } from '../path-params.ts';
import { formatTime } from '../views/form-fields.ts';
import { hiddenFields, html, scrollBox, type SafeHtml } from '../views/html.ts';
import { appTabs, sendPartnerPage } from '../views/partner-layout.ts';
import { recoveryActions } from './partner-webhook-recovery.route.ts';

const partnerOnly = { config: { area: 'platform' as const, session: 'partner' as const } };
export const DELIVERIES_PAGE_SIZE = 25;
const NOTICES: Record<string, [string, string]> = {
  resent: ['ok', 'The delivery was queued again; it is sent within moments.'],
  queued: ['notice', 'This delivery is still queued; it cannot be sent again until it finishes.'],
  disabled: ['notice', 'The subscription of this delivery is disabled; enable it again (above) to receive webhooks.'],
  deleted: ['notice', 'The subscription of this delivery was deleted.'],
};

function statusCell(status: string): SafeHtml {
  return html`<span class="status-${status}">${status}</span>`;
}

function httpStatus(code: number | null | undefined, error: string | null | undefined): string {
  return code !== null && code !== undefined ? String(code) : error ? 'no answer' : '—';
}

export function registerPartnerWebhookRoutes(
  app: FastifyInstance,
  services: Pick<Services, 'apps' | 'deliveries' | 'partnerDeliveries'>,
): void {
  const deliveries = services.partnerDeliveries;

  app.get('/partner/apps/:clientId/deliveries', partnerOnly, async (req, reply) => {
    const partner = req.partner!;
    const a = await services.apps.findPartnerApp(partner.partnerId, (req.params as { clientId: string }).clientId);
    const q = req.query as Record<string, unknown>;
    const status = typeof q.status === 'string' && q.status !== '' ? q.status : undefined;
    const topic = typeof q.topic === 'string' && q.topic !== '' ? q.topic : undefined;
    if (status !== undefined && !isDeliveryStatus(status))
      throw new BadRequestError(`status must be one of: ${DELIVERY_STATUSES.join(', ')}`);
    if (topic !== undefined && !(TOPICS as readonly string[]).includes(topic))
      throw new BadRequestError(`topic must be one of: ${TOPICS.join(', ')}`);
    const before = typeof q.before === 'string' && q.before !== '' ? parseId(q.before) : undefined;
    const [page, disabled] = await Promise.all([
      deliveries.list(a.id, { status, topic, before, limit: DELIVERIES_PAGE_SIZE }),
      deliveries.disabledSubscriptions([a.id]),
    ]);
    const filterQuery = (extra: Record<string, string>) =>
      new URLSearchParams({ ...(status ? { status } : {}), ...(topic ? { topic } : {}), ...extra }).toString();
    const notice = NOTICES[String(q.done)];
    const csrf = reply.generateCsrf();
    const body = html`<h1>${a.name}: webhook deliveries</h1>
${appTabs(a.client_id, 'deliveries')}
${notice ? html`<p class="${notice[0]}" role="status">${notice[1]}</p>` : ''}
${disabled.map(
  (s) => html`<div class="notice" role="status"><p><strong>Subscription disabled:</strong> ${s.topic} → <code>${s.address}</code> \
in ${s.store_name} since ${formatTime(Number(s.disabled_at))}: ${s.disabled_reason ?? 'disabled'}.</p>\
${recoveryActions(a.client_id, s.id, csrf)}</div>`,
)}
<form class="filters" method="get" action="/partner/apps/${a.client_id}/deliveries">
<div><label for="status">Status</label><select id="status" name="status"><option value="">Any status</option>${DELIVERY_STATUSES.map(
      (s) => html`<option value="${s}"${s === status ? html` selected` : ''}>${s}</option>`,
    )}</select></div>
<div><label for="topic">Topic</label><select id="topic" name="topic"><option value="">Any \
topic</option>${TOPICS.map((t) => html`<option value="${t}"${t === topic ? html` selected` : ''}>${t}</option>`)}</select></div>
<div><button type="submit" name="filter">Filter</button></div>
</form>
${
  page.rows.length === 0
    ? html`<p class="muted">No deliveries${status || topic ? ' match these filters' : ' yet'}.</p>`
    : scrollBox(
        'Deliveries',
        html`<table>
<thead><tr><th scope="col">Delivery</th><th scope="col">Topic</th><th scope="col">Store</th><th scope="col">Status</th>\
<th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Latency</th><th scope="col">Created</th>\
<th scope="col">Action</th></tr></thead>
<tbody>
${page.rows.map(
  (d) => html`<tr><td><a href="/partner/apps/${a.client_id}/deliveries/${String(d.id)}" \
aria-label="Delivery ${String(d.id)} details">#${String(d.id)}</a></td><td>${d.topic}</td><td>${d.store_name}</td>\
<td>${statusCell(d.status)}</td><td>${String(d.attempts)}</td>
<td>${httpStatus(d.lastAttempt?.status_code ?? d.last_status, d.lastAttempt?.error ?? d.last_error)}</td>\
<td>${d.lastAttempt ? `${d.lastAttempt.latency_ms} ms` : '—'}</td><td>${formatTime(Number(d.created_at))}</td>
<td>${
    d.status === 'pending'
      ? html`<span class="muted">queued</span>`
      : html`<form class="inline" method="post" \
action="/partner/apps/${a.client_id}/deliveries/${String(d.id)}/redeliver">${hiddenFields({ _csrf: csrf })}<button class="secondary" \
type="submit" name="redeliver" aria-label="Send delivery ${String(d.id)} again">Send again</button></form>`
  }</td></tr>
`,
)}</tbody>
</table>`,
      )
}
<nav class="pager" aria-label="Pages of deliveries">
${before !== undefined ? html`<a href="/partner/apps/${a.client_id}/deliveries?${filterQuery({})}">Newest deliveries</a>` : ''}
${
  page.more
    ? html`<a href="/partner/apps/${a.client_id}/deliveries?${filterQuery({ before: String(page.rows.at(-1)!.id) })}" \
rel="next">Older deliveries</a>`
    : ''
}
</nav>`;
    return sendPartnerPage(reply, partner.email, 'apps', `${a.name} deliveries`, body);
  });

  /** The partner's delivery named by the path (404 for another partner's app or delivery). */
  const deliveryOf = async (req: FastifyRequest) => {
    const partner = req.partner!;
    const params = req.params as { clientId: string; id: string };
    const a = await services.apps.findPartnerApp(partner.partnerId, params.clientId);
    const d = await deliveries.get(a.id, parseId(params.id));
    if (!d) throw new NotFoundError('No delivery with this id for this app');
    return { partner, a, d };
  };

  app.get('/partner/apps/:clientId/deliveries/:id', partnerOnly, async (req, reply) => {
    const found = await deliveryOf(req);
    if (!found) return reply;
    const { partner, a, d } = found;
    const notice = NOTICES[String((req.query as Record<string, unknown>).done)];
    const body = html`<h1>Delivery #${String(d.id)}</h1>
${appTabs(a.client_id, 'deliveries')}
${notice ? html`<p class="${notice[0]}" role="status">${notice[1]}</p>` : ''}
<dl>
<dt>Topic</dt><dd>${d.topic}</dd>
<dt>Store</dt><dd>${d.store_name}</dd>
<dt>Address</dt><dd>${
      d.address ? html`<code>${d.address}</code>` : html`<span class="muted">subscription deleted</span>`
    }${d.disabled_at !== null && d.disabled_at !== undefined ? html` <strong>(disabled)</strong>` : ''}</dd>
<dt>Status</dt>\
<dd>${statusCell(d.status)}${d.status === 'pending' ? html` · next attempt ${formatTime(Number(d.next_attempt_at))}` : ''}</dd>
<dt>Webhook id</dt><dd><code>${d.webhook_id}</code></dd>
${
  d.sub_id !== null && d.sub_id > 0
    ? html`<dt>Subscription</dt>\
<dd><a href="/partner/apps/${a.client_id}/subscriptions/${String(d.sub_id)}">Subscription #${String(d.sub_id)}</a> (enable, replay)</dd>`
    : ''
}
</dl>
<h2>Attempts</h2>
${
  d.attempts.length === 0
    ? html`<p class="muted">Not attempted yet.</p>`
    : scrollBox(
        'Attempts',
        html`<table>
<thead><tr><th scope="col">#</th><th scope="col">Time</th><th scope="col">Status</th><th scope="col">Latency</th><th scope="col">Answer or \
error</th></tr></thead>
<tbody>
${d.attempts.map(
  (t, i) => html`<tr><td>${String(i + 1)}</td><td>${formatTime(Number(t.attempted_at))}</td><td>${httpStatus(t.status_code, t.error)}</td>\
<td>${String(t.latency_ms)} ms</td><td>${t.error ?? (t.response_body ? html`<code>${t.response_body.slice(0, 300)}</code>` : '')}</td></tr>
`,
)}</tbody>
</table>`,
      )
}
${
  d.status === 'pending'
    ? ''
    : html`<form method="post" \
action="/partner/apps/${a.client_id}/deliveries/${String(d.id)}/redeliver">${hiddenFields({ _csrf: reply.generateCsrf(), back: 'detail' })}\
<div class="actions"><button type="submit" name="redeliver">Send again</button></div></form>`
}
<p><a href="/partner/apps/${a.client_id}/deliveries">All deliveries of ${a.name}</a></p>`;
    return sendPartnerPage(reply, partner.email, 'apps', `Delivery ${d.id}`, body);
  });

  app.post('/partner/apps/:clientId/deliveries/:id/redeliver', { ...partnerOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    const found = await deliveryOf(req);
    if (!found) return reply;
    const { a, d } = found;
    let done = 'resent';
    if (d.status === 'pending') done = 'queued';
    else if (d.sub_id === null) done = 'deleted';
    else if (d.disabled_at !== null) done = 'disabled';
    else {
      try {
        await services.deliveries.redeliver(d.id);
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
        done = 'queued';
      }
    }
    const back =
      (req.body as Record<string, unknown> | undefined)?.back === 'detail'
        ? `/partner/apps/${a.client_id}/deliveries/${d.id}`
        : `/partner/apps/${a.client_id}/deliveries`;
    return reply.redirect(`${back}?done=${done}`, 303);
  });
}
