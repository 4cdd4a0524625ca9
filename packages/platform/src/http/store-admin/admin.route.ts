// The store admin's app list and the install/open redirect to an app's App URL (PRODUCT.md §5).
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../app.ts';
import { signedQueryString } from '../../domain/query-signature.ts';
import { AccountService } from '../../services/account-service.ts';
import { NotFoundError } from '../../errors.ts';
import { hiddenFields, html, page } from '../views/html.ts';
import { currentMerchant, redirectToLogin } from './merchant-session.ts';

export function registerStoreAdminRoutes(app: FastifyInstance, services: Services): void {
  app.get('/admin', async (req, reply) => {
    const merchant = await currentMerchant(services, req);
    if (!merchant) return redirectToLogin(req, reply);
    const store = req.store!;
    const apps = await services.apps.listApps();
    const installed = await services.db.kysely
      .selectFrom('installations')
      .select(['app_id', 'scopes'])
      .where('store_id', '=', store.id)
      .where('uninstalled_at', 'is', null)
      .execute();
    const grantedBy = new Map(installed.map((i) => [i.app_id, i.scopes]));
    const header = html`<form class="inline" method="post" action="/admin/logout">${hiddenFields({ _csrf: reply.generateCsrf() })}<button class="link" type="submit">Log out</button></form>`;
    const body = html`<h1>${store.name} · Apps</h1>
<table>
<thead><tr><th scope="col">App</th><th scope="col">Granted scopes</th><th scope="col">Action</th></tr></thead>
<tbody>
${apps.map((a) => {
  const granted = grantedBy.get(a.id);
  return html`<tr><td>${a.name}</td><td>${granted ? granted.split(',').join(', ') : html`<span class="muted">not installed</span>`}</td>
<td><a class="button" href="/admin/apps/${a.client_id}/install">${granted ? 'Open' : 'Install'}</a></td></tr>`;
})}
</tbody>
</table>`;
    return reply.header('Cache-Control', 'no-store').type('text/html; charset=utf-8').send(page(`${store.name} admin`, body, { header }));
  });

  // "Install" and "Open": a signed GET to the App URL (seed §2.3) carrying shop, timestamp, hmac.
  app.get('/admin/apps/:clientId/install', async (req, reply) => {
    const merchant = await currentMerchant(services, req);
    if (!merchant) return redirectToLogin(req, reply);
    const { clientId } = req.params as { clientId: string };
    const target = await services.apps.findByClientId(clientId);
    if (!target) throw new NotFoundError('No app with this client id');
    const params = {
      shop: AccountService.shopHostname(services.config, req.store!.name),
      timestamp: String(Math.floor(services.clock() / 1000)),
    };
    const url = new URL(target.app_url);
    const signed = new URLSearchParams(signedQueryString(params, services.apps.clientSecret(target)));
    for (const [k, v] of signed) url.searchParams.set(k, v);
    return reply.redirect(url.toString(), 303);
  });
}
