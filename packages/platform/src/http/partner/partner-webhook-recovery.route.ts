// A subscription of a partner's app in the dashboard, with its recovery: "Enable again" for one the
// platform disabled (the same id, history and deliveries; it starts receiving at once) and a form
// that replays its deliveries since a time, failed ones or all, each with its original webhook id.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ConflictError, ValidationFailedError } from '../../domain/errors.ts';
import { MAX_REPLAY, type ReplayAnswer } from '../../services/webhook-recovery.ts';
import type { Services } from '../../services/services.ts';
import type { RecoverableSubscription } from '../../services/webhook-recovery.ts';
import { parseId } from '../path-params.ts';
import { describedBy, fieldError, formatTime, formString } from '../views/form-fields.ts';
import { hiddenFields, html, type SafeHtml } from '../views/html.ts';
import { appTabs, sendPartnerPage } from '../views/partner-layout.ts';

const partnerOnly = { config: { area: 'platform' as const, session: 'partner' as const } };

const NOTICES: Record<string, [string, string]> = {
  enabled: ['ok', 'The subscription is active again; new events go to it at once.'],
  active: ['notice', 'The subscription was already active.'],
};

function replayNotice(q: Record<string, unknown>): [string, string] | undefined {
  if (q.done !== 'replayed') return undefined;
  const queued = Number(q.queued) || 0;
  const capped = q.next_since
    ? ` More deliveries matched than one replay takes (${MAX_REPLAY}): replay again since ${String(q.next_since)}.`
    : '';
  return ['ok', `${queued} ${queued === 1 ? 'delivery was' : 'deliveries were'} queued again.${capped}`];
}

/** What the notice of a disabled subscription offers: enable it again at once, or open it to replay its deliveries. */
export function recoveryActions(clientId: string, id: number, csrf: string): SafeHtml {
  const base = `/partner/apps/${clientId}/subscriptions/${id}`;
  return html`<form class="inline" method="post" action="${base}/enable">${hiddenFields({ _csrf: csrf })}<button class="secondary" \
type="submit" name="enable" aria-label="Enable subscription ${String(id)} again">Enable again</button></form> \
<a href="${base}">Subscription #${String(id)}: replay its deliveries</a>`;
}

export function registerPartnerWebhookRecoveryRoutes(
  app: FastifyInstance,
  services: Pick<Services, 'apps' | 'clock' | 'webhookRecovery'>,
): void {
  const recovery = services.webhookRecovery;

  /** The partner's app and its subscription named by the path (404 for another partner's). */
  const subscriptionOf = async (req: FastifyRequest) => {
    const partner = req.partner!;
    const params = req.params as { clientId: string; id: string };
    const a = await services.apps.findPartnerApp(partner.partnerId, params.clientId);
    const s = await recovery.find({ appId: a.id }, parseId(params.id));
    return { partner, a, s };
  };

  const render = (
    req: FastifyRequest,
    csrf: string,
    found: { partner: { email: string }; a: { name: string; client_id: string }; s: RecoverableSubscription },
    form: { since: string; status: string; errors?: Record<string, string[]> },
  ) => {
    const { a, s } = found;
    const q = req.query as Record<string, unknown>;
    const notice = NOTICES[String(q.done)] ?? replayNotice(q);
    const base = `/partner/apps/${a.client_id}/subscriptions/${s.id}`;
    const errors = form.errors ?? {};
    return html`<h1>Subscription #${String(s.id)}</h1>
${appTabs(a.client_id, 'deliveries')}
${notice ? html`<p class="${notice[0]}" role="status">${notice[1]}</p>` : ''}
${errors.base ? html`<p class="error" role="alert">${errors.base.join('; ')}</p>` : ''}
<dl>
<dt>Topic</dt><dd>${s.topic}</dd>
<dt>Address</dt><dd><code>${s.address}</code></dd>
<dt>Store</dt><dd>${s.store_name}</dd>
<dt>Status</dt><dd>${
      s.disabled_at === null
        ? 'active'
        : html`<strong>disabled</strong> since ${formatTime(Number(s.disabled_at))}: ${s.disabled_reason ?? 'disabled'}`
    }</dd>
</dl>
${
  s.disabled_at === null
    ? ''
    : html`<h2>Enable again</h2>
<p>Keeps this subscription, its history and its deliveries, and forgets its run of failures; new events go to it at once. Then replay what \
it missed below.</p>
<form method="post" action="${base}/enable">${hiddenFields({ _csrf: csrf })}<div class="actions"><button type="submit" \
name="enable">Enable subscription again</button></div></form>`
}
<h2>Replay deliveries</h2>
<p>Sends this subscription's deliveries created since a time again, oldest first, each with its original webhook id (so the app can skip \
what it already has), at most ${String(MAX_REPLAY)} at a time. Deliveries still queued are left alone.${
      s.disabled_at === null ? '' : ' Enable the subscription first.'
    }</p>
<form method="post" action="${base}/replay">${hiddenFields({ _csrf: csrf })}
<label for="since">Since (ISO 8601, within the last 30 days)</label>
${fieldError('since', errors.since)}<input id="since" name="since" type="text" value="${form.since}" \
required${describedBy('since', errors.since)}>
<label for="status">Which deliveries</label>
${fieldError('status', errors.status)}<select id="status" name="status"${describedBy('status', errors.status)}><option \
value="failed"${form.status === 'all' ? '' : html` selected`}>Failed only (dead or cancelled)</option>\
<option value="all"${form.status === 'all' ? html` selected` : ''}>All, delivered ones too</option></select>
<div class="actions"><button type="submit" name="replay">Replay deliveries</button></div>
</form>
<p><a href="/partner/apps/${a.client_id}/deliveries">All deliveries of ${a.name}</a></p>`;
  };

  app.get('/partner/apps/:clientId/subscriptions/:id', partnerOnly, async (req, reply) => {
    const found = await subscriptionOf(req);
    // A day back by default, to the minute: the usual first look after an outage.
    const since = `${new Date(services.clock() - 86_400_000).toISOString().slice(0, 16)}Z`;
    const body = render(req, reply.generateCsrf(), found, { since, status: 'failed' });
    return sendPartnerPage(reply, found.partner.email, 'apps', `Subscription ${found.s.id}`, body);
  });

  app.post('/partner/apps/:clientId/subscriptions/:id/enable', { ...partnerOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    const { a, s } = await subscriptionOf(req);
    const done = s.disabled_at === null ? 'active' : 'enabled';
    await recovery.enable({ appId: a.id }, s.id);
    return reply.redirect(`/partner/apps/${a.client_id}/subscriptions/${s.id}?done=${done}`, 303);
  });

  app.post('/partner/apps/:clientId/subscriptions/:id/replay', { ...partnerOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    const found = await subscriptionOf(req);
    const { a, s } = found;
    const fields = (req.body ?? {}) as Record<string, unknown>;
    const input = { since: formString(fields.since, 64), status: formString(fields.status, 16) || 'failed' };
    let answer: ReplayAnswer;
    try {
      answer = await recovery.replay({ appId: a.id }, s.id, input);
    } catch (err) {
      if (!(err instanceof ValidationFailedError) && !(err instanceof ConflictError)) throw err;
      const errors = err instanceof ValidationFailedError ? err.errors : { base: [err.message] };
      const body = render(req, reply.generateCsrf(), found, { ...input, errors });
      return sendPartnerPage(reply.code(422), found.partner.email, 'apps', `Subscription ${s.id}`, body);
    }
    const query = new URLSearchParams({
      done: 'replayed',
      queued: String(answer.queued),
      ...(answer.next_since ? { next_since: answer.next_since } : {}),
    });
    return reply.redirect(`/partner/apps/${a.client_id}/subscriptions/${s.id}?${query}`, 303);
  });
}
