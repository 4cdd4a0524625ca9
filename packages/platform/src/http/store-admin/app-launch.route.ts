// "Install" and "Open" in the store admin: a signed GET to the app's App URL carrying shop,
// timestamp and hmac, so the app can tell the merchant comes from this store. When the app is
// installed, the launch also carries `id_token`, a launch token the app's server exchanges for an
// access token without a redirect (covered by the hmac like the rest).
//
// An app whose scopes the platform manages is installed here, not through the authorization
// endpoint: Install shows the consent page for the scopes the app declares, and approving grants
// them and opens the app with a launch token. When the app declares other scopes later, the
// merchant is asked again the next time they open it; until they approve, the grant stays as it was.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { storeBaseUrl } from '../../config.ts';
import { NotFoundError, ValidationFailedError } from '../../domain/errors.ts';
import { signedQueryString } from '../../domain/query-signature.ts';
import { formatScopes, storedScopes } from '../../domain/scopes.ts';
import { storeHostname } from '../../domain/store-host.ts';
import type { AppProfile } from '../../domain/app-profile.ts';
import type { Services } from '../../services/services.ts';
import { consentPage } from '../views/consent-page.ts';
import { currentMerchant } from './merchant-session.ts';

const merchantOnly = { config: { session: 'merchant' as const } };

async function appOf(apps: Services['apps'], req: FastifyRequest): Promise<AppProfile> {
  const { clientId } = req.params as { clientId: string };
  const target = await apps.findByClientId(clientId);
  if (!target) throw new NotFoundError('No app with this client id');
  return target;
}

/** The merchant of the session (the session gate let the request in, so there is one). */
async function merchantId(accounts: Services['accounts'], req: FastifyRequest): Promise<number> {
  const merchant = await currentMerchant(accounts, req);
  if (!merchant) throw new NotFoundError('No merchant is signed in');
  return merchant.merchantId;
}

/** The signed GET to the App URL; with a launch token when the app is installed. */
async function launch(
  services: Pick<Services, 'accounts' | 'clock' | 'config' | 'launchTokens' | 'rotations'>,
  req: FastifyRequest,
  reply: FastifyReply,
  target: AppProfile,
  installed: boolean,
): Promise<FastifyReply> {
  const store = req.store!;
  const params: Record<string, string> = {
    shop: storeHostname(store.name, services.config.storeDomain),
    timestamp: String(Math.floor(services.clock() / 1000)),
  };
  if (installed)
    params.id_token = await services.launchTokens.issue(
      target,
      storeBaseUrl(services.config, store.name),
      await merchantId(services.accounts, req),
    );
  const url = new URL(target.app_url);
  for (const [k, v] of new URLSearchParams(signedQueryString(params, services.rotations.querySigningSecret(target))))
    url.searchParams.set(k, v);
  // The launch token is a credential for a minute: never kept by a cache on the way.
  return reply.header('Cache-Control', 'no-store').redirect(url.toString(), 303);
}

/** What Install and Open use: the app and its installation, the merchant, the signed launch. */
export type AppLaunchServices = Pick<Services, 'accounts' | 'apps' | 'clock' | 'config' | 'launchTokens' | 'rotations'>;

export function registerAppLaunchRoutes(app: FastifyInstance, services: AppLaunchServices): void {
  app.get('/admin/apps/:clientId/install', merchantOnly, async (req, reply) => {
    const store = req.store!;
    const target = await appOf(services.apps, req);
    const installation = await services.apps.findInstallation(store.id, target.id);
    const live = installation !== undefined && installation.uninstalled_at === null;
    if (target.managed_install !== 1 || (live && installation.scopes === target.scopes)) return launch(services, req, reply, target, live);
    const declared = storedScopes(target.scopes);
    if (declared.length === 0) throw new NotFoundError(`${target.name} declares no scopes yet, so it cannot be installed`);
    const consent = consentPage({
      appName: target.name,
      storeName: store.name,
      scopes: declared,
      granted: live ? storedScopes(installation.scopes) : undefined,
      online: false,
      action: `/admin/apps/${target.client_id}/install`,
      fields: { scopes: target.scopes, _csrf: reply.generateCsrf() },
    });
    return reply.header('Cache-Control', 'no-store').type('text/html; charset=utf-8').send(consent);
  });

  // The merchant's answer on the consent page of an app whose scopes the platform manages.
  app.post('/admin/apps/:clientId/install', { ...merchantOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    const store = req.store!;
    const target = await appOf(services.apps, req);
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (target.managed_install !== 1) throw new NotFoundError(`${target.name} is installed through its own authorization request`);
    if (body.decision === 'cancel') return reply.redirect('/admin', 303);
    if (body.decision !== 'install') throw new ValidationFailedError({ decision: ['must be install or cancel'] });
    // Granted is what the merchant saw: when the app has declared other scopes since, they are asked again.
    if (body.scopes !== target.scopes) return reply.redirect(`/admin/apps/${target.client_id}/install`, 303);
    await services.apps.grant(store.id, target.id, storedScopes(target.scopes));
    req.log.info({ store: store.name, client_id: target.client_id, scopes: formatScopes(storedScopes(target.scopes)) }, 'app authorized');
    return launch(services, req, reply, target, true);
  });
}
