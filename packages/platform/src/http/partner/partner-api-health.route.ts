// "API health" of one app in the partner dashboard: the deprecated Admin API versions the app still
// calls, in plain words (when each stops answering, how many days are left, what to move to), and
// per route how often and when it was called, so the developer knows which calls to change.
import type { FastifyInstance } from 'fastify';
import type { VersionUsage } from '../../services/api-health.ts';
import type { Services } from '../../services/services.ts';
import { formatTime } from '../views/form-fields.ts';
import { html, type SafeHtml, scrollBox } from '../views/html.ts';
import { appTabs, sendPartnerPage } from '../views/partner-layout.ts';

const partnerOnly = { config: { area: 'platform' as const, session: 'partner' as const } };

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const at = (iso: string) => formatTime(Date.parse(iso));

function versionSection(v: VersionUsage): SafeHtml {
  const left = v.days_left === null ? '' : html` <strong>${plural(v.days_left, 'day')} left.</strong>`;
  const told = v.notified_at ? ` The app was sent app/api_version_deprecated on ${at(v.notified_at)}.` : '';
  const rows = v.routes.map(
    (r) => html`<tr><td><code>${r.route}</code></td><td>${String(r.calls)}</td>
<td>${at(r.first_seen_at)}</td><td>${at(r.last_seen_at)}</td></tr>
`,
  );
  return html`<h2>Version ${v.version}</h2>
<p class="notice" role="status">${v.summary}${left}</p>
<p>${plural(v.calls, 'call')} in all, the latest on ${at(v.last_seen_at)}.${told}</p>
${scrollBox(
  `Routes called in version ${v.version}`,
  html`<table>
<thead><tr><th scope="col">Route</th><th scope="col">Calls</th><th scope="col">First seen</th><th scope="col">Last seen</th></tr></thead>
<tbody>
${rows}</tbody>
</table>`,
)}`;
}

export function registerPartnerApiHealthRoute(app: FastifyInstance, services: Pick<Services, 'apiHealth' | 'apps'>): void {
  app.get('/partner/apps/:clientId/api-health', partnerOnly, async (req, reply) => {
    const partner = req.partner!;
    const a = await services.apps.findPartnerApp(partner.partnerId, (req.params as { clientId: string }).clientId);
    const versions = await services.apiHealth.forCaller('app', a.id);
    const body = html`<h1>${a.name}: API health</h1>
${appTabs(a.client_id, 'api-health')}
<p>Calls this app made to Admin API versions that are deprecated. Each server writes its counts
every minute or so, so the latest calls may take a moment to show.</p>
${
  versions.length === 0
    ? html`<p class="ok" role="status">This app calls no deprecated API version. Nothing to do.</p>`
    : versions.map(versionSection)
}`;
    return sendPartnerPage(reply, partner.email, 'apps', `${a.name} API health`, body);
  });
}
