// The store admin's Apps section: installed apps with their scopes, "Open" and "Uninstall"; every
// public app with "Install"; the signed redirect to an app's App URL.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/services.ts';
import { signedQueryString } from '../../domain/query-signature.ts';
import { describeScope, type Scope } from '../../domain/scopes.ts';
import { storeHostname } from '../../domain/store-host.ts';
import { NotFoundError } from '../../domain/errors.ts';
import { formatTime } from '../views/form-fields.ts';
import { hiddenFields, html } from '../views/html.ts';
import { sendAdminPage } from '../views/store-admin-layout.ts';
import { registerPrivateAppRoutes } from './private-apps.route.ts';
import { registerStoreListRoutes } from './store-lists.route.ts';

const NOTICES: Record<string, string> = {
  uninstalled: 'The app was uninstalled: its tokens no longer work and it was sent app/uninstalled.',
};

const merchantOnly = { config: { session: 'merchant' as const } };

export function registerStoreAdminRoutes(app: FastifyInstance, services: Services): void {
  app.get('/admin', merchantOnly, async (req, reply) => {
    const store = req.store!;
    const [installed, publicApps] = await Promise.all([services.apps.listInstalled(store.id), services.apps.listPublicApps()]);
    const installedIds = new Set(installed.map((i) => i.app_id));
    const notice = NOTICES[String((req.query as Record<string, unknown>).done)];
    const csrf = reply.generateCsrf();
    const body = html`<h1>${store.name} · Apps</h1>
${notice ? html`<p class="ok" role="status">${notice}</p>` : ''}
<h2>Installed apps</h2>
${
  installed.length === 0
    ? html`<p class="muted">No app is installed in ${store.name}.</p>`
    : html`<table>
<thead><tr><th scope="col">App</th><th scope="col">Granted scopes</th><th scope="col">Installed</th><th scope="col">Actions</th></tr></thead>
<tbody>
${installed.map(
  (a) => html`<tr><td>${a.name}</td><td><ul class="scopes">${a.scopes
    .split(',')
    .filter(Boolean)
    .map((s) => html`<li title="${describeScope(s as Scope)}">${s}</li>`)}</ul></td><td>${formatTime(Number(a.installed_at))}</td>
<td><a class="button" href="/admin/apps/${a.client_id}/install">Open</a><form class="inline" method="post" action="/admin/apps/${a.client_id}/uninstall">${hiddenFields({ _csrf: csrf })}<button class="danger" type="submit" name="uninstall" aria-label="Uninstall ${a.name}">Uninstall</button></form></td></tr>`,
)}
</tbody>
</table>`
}
<h2>App list</h2>
${
  publicApps.length === 0
    ? html`<p class="muted">No public apps are registered yet.</p>`
    : html`<table>
<thead><tr><th scope="col">App</th><th scope="col">Asks for</th><th scope="col">Action</th></tr></thead>
<tbody>
${publicApps.map(
  (
    a,
  ) => html`<tr><td>${a.name}</td><td>${a.scopes ? a.scopes.split(',').join(', ') : html`<span class="muted">chosen at install</span>`}</td>
<td>${installedIds.has(a.id) ? html`<a class="button" href="/admin/apps/${a.client_id}/install">Open</a>` : html`<a class="button" href="/admin/apps/${a.client_id}/install">Install</a>`}</td></tr>`,
)}
</tbody>
</table>`
}`;
    return sendAdminPage(reply, store, 'apps', `${store.name} · Apps`, body);
  });

  // "Install" and "Open": a signed GET to the App URL carrying shop, timestamp and hmac, so the app
  // can tell the merchant comes from this store and start its OAuth flow for it.
  app.get('/admin/apps/:clientId/install', merchantOnly, async (req, reply) => {
    const { clientId } = req.params as { clientId: string };
    const target = await services.apps.findByClientId(clientId);
    if (!target) throw new NotFoundError('No app with this client id');
    const params = {
      shop: storeHostname(req.store!.name, services.config.storeDomain),
      timestamp: String(Math.floor(services.clock() / 1000)),
    };
    const url = new URL(target.app_url);
    const signed = new URLSearchParams(signedQueryString(params, services.rotations.querySigningSecret(target)));
    for (const [k, v] of signed) url.searchParams.set(k, v);
    return reply.redirect(url.toString(), 303);
  });

  // "Uninstall": every token of the installation is revoked and app/uninstalled is sent.
  app.post('/admin/apps/:clientId/uninstall', { ...merchantOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    const { clientId } = req.params as { clientId: string };
    const target = await services.apps.findByClientId(clientId);
    if (!target) throw new NotFoundError('No app with this client id');
    await services.apps.uninstall(req.store!.id, target.id);
    return reply.redirect('/admin?done=uninstalled', 303);
  });

  registerPrivateAppRoutes(app, services);
  registerStoreListRoutes(app, services);
}
