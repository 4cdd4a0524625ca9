// The partner dashboard's frame: sections and "Log out" (a POST with CSRF).
import type { FastifyReply } from 'fastify';
import { hiddenFields, html, page, type SafeHtml } from './html.ts';
import { sectionNav } from './store-admin-layout.ts';

export type PartnerSection = 'apps' | 'new-app';

const SECTIONS: [PartnerSection, string, string][] = [
  ['apps', 'Apps', '/partner'],
  ['new-app', 'Create an app', '/partner/apps/new'],
];

export function sendPartnerPage(
  reply: FastifyReply,
  email: string,
  active: PartnerSection,
  title: string,
  body: SafeHtml,
  options: { scripts?: readonly string[] } = {},
): FastifyReply {
  const header = html`<span>Partner dashboard \
· ${email}</span><form class="inline" method="post" action="/partner/logout">${hiddenFields({ _csrf: reply.generateCsrf() })}<button \
class="link" type="submit" name="logout">Log out</button></form>`;
  return reply
    .header('Cache-Control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(
      page(title, body, {
        header,
        nav: sectionNav(SECTIONS, active, 'Partner dashboard'),
        wide: true,
        ...(options.scripts ? { scripts: options.scripts } : {}),
      }),
    );
}

/** The tabs of one app: its settings, its app-level webhooks, their deliveries, endpoint health, its API health. */
export function appTabs(clientId: string, active: 'settings' | 'webhooks' | 'deliveries' | 'endpoints' | 'api-health'): SafeHtml {
  const tab = (name: typeof active, href: string, label: string) =>
    active === name ? html`<strong>${label}</strong>` : html`<a href="${href}">${label}</a>`;
  const settings = tab('settings', `/partner/apps/${clientId}`, 'Settings');
  const webhooks = tab('webhooks', `/partner/apps/${clientId}/webhooks`, 'Webhooks');
  const deliveries = tab('deliveries', `/partner/apps/${clientId}/deliveries`, 'Webhook deliveries');
  const endpoints = tab('endpoints', `/partner/apps/${clientId}/endpoints`, 'Endpoint health');
  return html`<p class="pager">${settings} ${webhooks} ${deliveries} ${endpoints} \
${tab('api-health', `/partner/apps/${clientId}/api-health`, 'API health')}</p>`;
}
