// "API health" of one app in the partner dashboard: the deprecated Admin API versions the app still
// calls, in plain words (when each stops answering, how many days are left, what to move to), and
// per route how often and when it was called, so the developer knows which calls to change.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/services.ts';
import { formatTime } from '../views/form-fields.ts';
import { html, scrollBox } from '../views/html.ts';
import { appTabs, sendPartnerPage } from '../views/partner-layout.ts';

const partnerOnly = { config: { area: 'platform' as const, session: 'partner' as const } };

export function registerPartnerApiHealthRoute(app: FastifyInstance, services: Services): void {
  app.get('/partner/apps/:clientId/api-health', partnerOnly, async (req, reply) => {
    const partner = req.partner!;
    const a = await services.apps.findPartnerApp(partner.partnerId, (req.params as { clientId: string }).clientId);
    const versions = await services.apiHealth.forCaller('app', a.id);
    const body = html`<h1>${a.name}: API health</h1>
${appTabs(a.client_id, 'api-health')}
<p>Calls this app made to Admin API versions that are deprecated. Counts are written every few minutes, so the latest calls may take a moment to show.</p>
${
  versions.length === 0
    ? html`<p class="ok" role="status">This app calls no deprecated API version. Nothing to do.</p>`
    : versions.map(
        (v) => html`<h2>Version ${v.version}</h2>
<p class="notice" role="status">${v.summary}${v.days_left !== null ? html` <strong>${String(v.days_left)} day${v.days_left === 1 ? '' : 's'} left.</strong>` : ''}</p>
<p>${String(v.calls)} call${v.calls === 1 ? '' : 's'} in all, the latest on ${formatTime(Date.parse(v.last_seen_at))}.${v.notified_at ? ` The app was sent app/api_version_deprecated on ${formatTime(Date.parse(v.notified_at))}.` : ''}</p>
${scrollBox(
  `Routes called in version ${v.version}`,
  html`<table>
<thead><tr><th scope="col">Route</th><th scope="col">Calls</th><th scope="col">First seen</th><th scope="col">Last seen</th></tr></thead>
<tbody>
${v.routes.map(
  (r) =>
    html`<tr><td><code>${r.route}</code></td><td>${String(r.calls)}</td><td>${formatTime(Date.parse(r.first_seen_at))}</td><td>${formatTime(Date.parse(r.last_seen_at))}</td></tr>
`,
)}</tbody>
</table>`,
)}`,
      )
}`;
    return sendPartnerPage(reply, partner.email, 'apps', `${a.name} API health`, body);
  });
}
