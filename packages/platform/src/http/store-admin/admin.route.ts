// The store admin's Apps section: installed apps with their scopes, "Open" and "Uninstall"; every
// public app with "Install"; the signed redirect to an app's App URL.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/services.ts';
import { describeScope, type Scope } from '../../domain/scopes.ts';
import { NotFoundError } from '../../domain/errors.ts';
import { confirmationForm, confirmedOrRedirect } from '../views/confirmation.ts';
import { describeDuration, formatTime } from '../views/form-fields.ts';
import { html, scrollBox, type SafeHtml } from '../views/html.ts';
import { sendAdminPage } from '../views/store-admin-layout.ts';
import { type AppLaunchServices, registerAppLaunchRoutes } from './app-launch.route.ts';
import { registerCustomerPrivacyRoutes } from './customer-privacy.route.ts';
import { registerPrivateAppRoutes } from './private-apps.route.ts';
import { registerStoreListRoutes } from './store-lists.route.ts';

const NOTICES: Record<string, string> = {
  uninstalled: 'The app was uninstalled: its tokens no longer work and it was sent app/uninstalled.',
};

const merchantOnly = { config: { session: 'merchant' as const } };

/** A row's link named after its row: "Open" on screen, "Open Demo app" to a screen reader. */
function rowLink(href: string, text: string, name: string, className = 'button'): SafeHtml {
  return html`<a class="${className}" href="${href}">${text}<span class="visually-hidden"> ${name}</span></a>`;
}

/** What the store admin's pages use: apps and launches, private apps, the store's lists, privacy requests. */
export type StoreAdminServices = Pick<Services, keyof AppLaunchServices | 'customerPrivacy' | 'resources' | 'reveals'>;

export function registerStoreAdminRoutes(app: FastifyInstance, services: StoreAdminServices): void {
  app.get('/admin', merchantOnly, async (req, reply) => {
    const store = req.store!;
    const [installed, publicApps] = await Promise.all([services.apps.listInstalled(store.id), services.apps.listPublicApps()]);
    const installedIds = new Set(installed.map((i) => i.app_id));
    const notice = NOTICES[String((req.query as Record<string, unknown>).done)];
    const body = html`<h1>${store.name} · Apps</h1>
${notice ? html`<p class="ok" role="status">${notice}</p>` : ''}
<h2>Installed apps</h2>
${
  installed.length === 0
    ? html`<p class="muted">No app is installed in ${store.name}.</p>`
    : scrollBox(
        'Installed apps',
        html`<table>
<thead><tr><th scope="col">App</th><th scope="col">Granted scopes</th><th scope="col">Installed</th><th scope="col">Actions</th></tr>\
</thead>
<tbody>
${installed.map(
  (a) => html`<tr><td>${a.name}</td><td><ul class="scopes">${a.scopes
    .split(',')
    .filter(Boolean)
    .map((s) => html`<li title="${describeScope(s as Scope)}">${s}</li>`)}</ul></td><td>${formatTime(Number(a.installed_at))}</td>
<td class="row-actions">${rowLink(`/admin/apps/${a.client_id}/install`, 'Open', a.name)} \
${rowLink(`/admin/apps/${a.client_id}/uninstall`, 'Uninstall', a.name, 'button danger')}</td></tr>`,
)}
</tbody>
</table>`,
      )
}
<h2>App list</h2>
${
  publicApps.length === 0
    ? html`<p class="muted">No public apps are registered yet.</p>`
    : scrollBox(
        'App list',
        html`<table>
<thead><tr><th scope="col">App</th><th scope="col">Asks for</th><th scope="col">Action</th></tr></thead>
<tbody>
${publicApps.map(
  (
    a,
  ) => html`<tr><td>${a.name}</td><td>${a.scopes ? a.scopes.split(',').join(', ') : html`<span class="muted">chosen at install</span>`}</td>
<td>${rowLink(`/admin/apps/${a.client_id}/install`, installedIds.has(a.id) ? 'Open' : 'Install', a.name)}</td></tr>`,
)}
</tbody>
</table>`,
      )
}`;
    return sendAdminPage(reply, store, 'apps', `${store.name} · Apps`, body);
  });

  // "Uninstall" asks first: what the app loses and what it is sent.
  app.get('/admin/apps/:clientId/uninstall', merchantOnly, async (req, reply) => {
    const store = req.store!;
    const { clientId } = req.params as { clientId: string };
    const [target, installed] = await Promise.all([services.apps.findByClientId(clientId), services.apps.listInstalled(store.id)]);
    const row = installed.find((i) => i.client_id === clientId);
    if (!target || !row) throw new NotFoundError('The app is not installed in this store');
    const scopes = row.scopes.split(',').filter(Boolean);
    const body = html`<h1>Uninstall ${row.name}?</h1>
<dl><dt>App</dt><dd>${row.name}</dd><dt>Granted scopes</dt><dd>${
      scopes.length > 0 ? scopes.join(', ') : html`<span class="muted">none</span>`
    }</dd><dt>Installed</dt><dd>${formatTime(Number(row.installed_at))}</dd></dl>
<p>Every access token and refresh token ${row.name} holds for ${store.name} stops working at once, its queued webhooks are cancelled, and \
it is sent app/uninstalled.${
      target.privacy_webhook_url
        ? ` It is also sent shop/redact ` +
          `after ${describeDuration(services.config.shopRedactDelayMs)}, unless you install it again before then.`
        : ''
    } Installing it again later asks for your consent again.</p>
${confirmationForm({
  action: `/admin/apps/${clientId}/uninstall`,
  csrf: reply.generateCsrf(),
  button: `Uninstall ${row.name}`,
  danger: true,
  cancel: '/admin',
})}`;
    return sendAdminPage(reply, store, 'apps', `Uninstall ${row.name}`, body);
  });

  // The confirmed uninstall: every token of the installation is revoked and app/uninstalled is sent.
  app.post('/admin/apps/:clientId/uninstall', { ...merchantOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    if (!confirmedOrRedirect(req, reply)) return reply;
    const { clientId } = req.params as { clientId: string };
    const target = await services.apps.findByClientId(clientId);
    if (!target) throw new NotFoundError('No app with this client id');
    await services.apps.uninstall(req.store!.id, target.id);
    return reply.redirect('/admin?done=uninstalled', 303);
  });

  registerAppLaunchRoutes(app, services);
  registerPrivateAppRoutes(app, services);
  registerStoreListRoutes(app, services);
  registerCustomerPrivacyRoutes(app, services);
}
