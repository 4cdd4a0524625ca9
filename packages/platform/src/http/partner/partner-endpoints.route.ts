// "Endpoint health" of one app in the partner dashboard: per endpoint (an origin its subscriptions
// send to) over the last 7 days, attempts per hour by outcome and the latency of its answers as
// charts drawn on the server, the totals as a table, the state of the app's circuit breakers there
// and when the next pending delivery goes out.
import type { FastifyInstance } from 'fastify';
import { OUTCOME_KINDS, OUTCOME_LABELS } from '../../domain/endpoint-health.ts';
import type { EndpointFigures } from '../../services/endpoint-health.ts';
import type { Services } from '../../services/services.ts';
import { attemptsChart, latencyChart, msLabel } from '../views/endpoint-charts.ts';
import { formatTime } from '../views/form-fields.ts';
import { html, type SafeHtml, scrollBox } from '../views/html.ts';
import { appTabs, sendPartnerPage } from '../views/partner-layout.ts';

const partnerOnly = { config: { area: 'platform' as const, session: 'partner' as const } };
const at = (iso: string) => formatTime(Date.parse(iso));
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The breaker in a sentence: closed, or open (until when) or half-open, and in which stores. */
export function breakerWords(b: EndpointFigures['breaker'], now: number): SafeHtml {
  if (b.state === 'closed')
    return html`Closed: deliveries go out as they fall due${b.changed_at ? html` (last change ${at(b.changed_at)})` : ''}.`;
  const stores = b.stores.map((s) => s.store_name).slice(0, 5);
  const more = b.stores.length > stores.length ? ` and ${b.stores.length - stores.length} more` : '';
  const where = html` in ${plural(b.stores.length, 'store')} (${stores.join(', ')}${more})`;
  if (b.state === 'half-open') return html`<strong>Half-open</strong>${where}: one probe delivery is out; its answer closes or reopens it.`;
  const until = b.reopen_at ? Date.parse(b.reopen_at) : undefined;
  const when =
    until === undefined
      ? ''
      : until > now
        ? html` until ${at(b.reopen_at!)}; deliveries wait until then, then one goes out as a probe`
        : html`; its cool-down ended ${at(b.reopen_at!)}, so the next delivery goes out as a probe`;
  return html`<strong>Open</strong>${where}${when}.`;
}

function endpointSection(e: EndpointFigures, index: number, now: number): SafeHtml {
  const t = e.totals;
  const totals = scrollBox(
    `Totals for ${e.endpoint}`,
    html`<table>
<thead><tr><th scope="col">Attempts</th>${OUTCOME_KINDS.map((k) => html`<th scope="col">${OUTCOME_LABELS[k]}</th>`)}<th \
scope="col">p50</th><th scope="col">p99</th></tr></thead>
<tbody><tr><td>${String(t.attempts)}</td>${OUTCOME_KINDS.map((k) => html`<td>${String(t[k])}</td>`)}\
<td>${e.p50_ms === null ? '—' : `≤ ${msLabel(e.p50_ms)}`}</td><td>${e.p99_ms === null ? '—' : `≤ ${msLabel(e.p99_ms)}`}</td></tr></tbody>
</table>`,
  );
  return html`<section class="endpoint" aria-labelledby="endpoint-${String(index)}">
<h2 id="endpoint-${String(index)}"><code>${e.endpoint}</code></h2>
<dl>
<dt>Circuit breaker</dt><dd>${breakerWords(e.breaker, now)}</dd>
<dt>Next attempt</dt><dd>${e.next_attempt_at ? at(e.next_attempt_at) : html`<span class="muted">none pending</span>`}</dd>
</dl>
${totals}
<h3>Attempts per hour</h3>
${attemptsChart(`attempts-${index}`, e.endpoint, e.hourly)}
<h3>Latency of answers</h3>
${latencyChart(`latency-${index}`, e.endpoint, e.hourly, e)}
</section>`;
}

export function registerPartnerEndpointsRoute(app: FastifyInstance, services: Pick<Services, 'apps' | 'clock' | 'endpointHealth'>): void {
  app.get('/partner/apps/:clientId/endpoints', partnerOnly, async (req, reply) => {
    const partner = req.partner!;
    const a = await services.apps.findPartnerApp(partner.partnerId, (req.params as { clientId: string }).clientId);
    const health = await services.endpointHealth.forApp(a.id);
    const now = services.clock();
    const body = html`<h1>${a.name}: endpoint health</h1>
${appTabs(a.client_id, 'endpoints')}
<p>Webhook attempts of this app over the last 7 days (since ${at(health.since)}), per endpoint: the
scheme, host and port its subscriptions send to, in every store that installed it. Latency is that
of answers only, estimated per hour from buckets that double (25 ms, 50 ms, 100 ms…): "p99 ≤ 800 ms"
means between 400 and 800 ms.</p>
${
  health.endpoints.length === 0
    ? html`<p class="muted" role="status">This app has no webhook endpoint yet: no subscription, and no attempt in the last 7 days.</p>`
    : health.endpoints.map((e, i) => endpointSection(e, i, now))
}`;
    return sendPartnerPage(reply, partner.email, 'apps', `${a.name} endpoint health`, body);
  });
}
