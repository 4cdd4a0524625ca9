// The partner's apps: create, edit the App URL and redirect URL (absolute http(s) URLs; the redirect
// URL must not contain "#", and the authorize step later demands an exact match with it), turn
// managed install and iss on the code redirect on or off. The client secret's pages (reveal,
// rotate, finish the rotation) are in partner-app-secrets.route.ts.
import type { FastifyInstance } from 'fastify';
import { ValidationFailedError } from '../../domain/errors.ts';
import type { AppProfile } from '../../domain/app-profile.ts';
import type { Services } from '../../services/services.ts';
import { describeDuration, formList, formString, formatTime, scopeCheckboxes, textField } from '../views/form-fields.ts';
import { hiddenFields, html, scrollBox, type SafeHtml } from '../views/html.ts';
import { appTabs, sendPartnerPage } from '../views/partner-layout.ts';
import { SIGNATURE_NOTICES, signatureSection } from './partner-app-signatures.route.ts';

const partnerOnly = { config: { area: 'platform' as const, session: 'partner' as const } };
const NOTICES: Record<string, string> = {
  ...SIGNATURE_NOTICES,
  saved: 'The App URL and redirect URL were saved.',
  privacy_saved: 'The privacy webhook address was saved.',
  privacy_cleared: 'The privacy webhook address was removed: this app is sent no privacy webhooks.',
  iss_on: 'The redirect with the authorization code now carries iss.',
  iss_off: 'The redirect with the authorization code no longer carries iss.',
  managed_on: 'Managed install is on: merchants install this app from their store admin and it opens with a launch token.',
  managed_off: 'Managed install is off: merchants install this app through its own authorization request.',
  finished:
    'The rotation is finished: install links and webhooks are now signed with the new client secret only, and the previous secret no ' +
    'longer works.',
};

const MANAGED_EXPLAINED = html`<p>With managed install on, merchants install the app from their store admin: the platform
shows them the scopes the app declares and asks for their consent, then opens the app at its App URL with a launch token
(<code>id_token</code>). Your app exchanges that token at the token endpoint for an access token, so it needs no
authorization request, state or callback of its own. When the declared scopes change, merchants are asked for them the
next time they open the app; until they approve, their grant stays as it was.</p>`;

/** The create form's checkbox: on, off, or anything else (refused). */
function managedChoice(value: unknown): boolean | undefined {
  if (value === undefined || value === '') return false;
  return value === 'on' ? true : undefined;
}

function managedCheckbox(on: boolean) {
  return html`<div><input type="checkbox" id="managed_install" name="managed_install" value="on"${on ? html` checked` : ''}>
<label for="managed_install">Managed install: the platform asks merchants for the scopes below
and opens the app with a launch token</label></div>`;
}

/** The app page's managed install section: what it does, whether it is on, the button that changes it. */
function managedSection(a: AppProfile, csrf: string): SafeHtml {
  const on = a.managed_install === 1;
  const button = on
    ? html`<button class="secondary" type="submit" name="managed_install" value="off">Turn managed install off</button>`
    : html`<button type="submit" name="managed_install" value="on">Turn managed install on</button>`;
  return html`<h2>Managed install</h2>
${MANAGED_EXPLAINED}
<p>Now: managed install is <strong>${on ? 'on' : 'off'}</strong>.</p>
${
  !on && a.scopes === ''
    ? html`<p class="notice" role="status">This app declares no scopes, so there is nothing to ask merchants for: declare them
(<code>scopes</code> in <code>storegate.app.toml</code>, then <code>storegate apps deploy</code>) to turn managed install on.</p>`
    : html`<form method="post" action="/partner/apps/${a.client_id}/managed-install">${hiddenFields({ _csrf: csrf })}${button}</form>`
}`;
}

function privacyField(value: string, errors: readonly string[] | undefined) {
  return html`${textField({
    id: 'privacy_webhook_url',
    name: 'privacy_webhook_url',
    label: 'Privacy webhook address (optional)',
    type: 'url',
    value,
    errors,
    required: false,
  })}
<p class="muted">https in production; leave it empty and the app is sent no privacy webhooks.</p>`;
}

/** What the app pages use: the apps, their secrets and one-time reveals, the privacy deliveries. */
export type PartnerAppServices = Pick<Services, 'apps' | 'config' | 'partnerDeliveries' | 'reveals' | 'rotations'>;

export function registerPartnerAppRoutes(app: FastifyInstance, services: PartnerAppServices): void {
  const { reveals, partnerDeliveries: deliveries } = services;

  app.get('/partner', partnerOnly, async (req, reply) => {
    const partner = req.partner!;
    const apps = await services.apps.listPartnerApps(partner.partnerId);
    const disabled = await deliveries.disabledSubscriptions(apps.map((a) => a.id));
    const nameOf = new Map(apps.map((a) => [a.id, a]));
    const body = html`<h1>Your apps</h1>
${disabled.map((s) => {
  const a = nameOf.get(Number(s.app_id));
  return html`<p class="notice" role="status"><strong>Webhook subscription disabled:</strong> ${a?.name ?? ''} · ${s.topic} → \
<code>${s.address}</code> in ${s.store_name}, ${formatTime(Number(s.disabled_at))}: ${s.disabled_reason ?? 'disabled'}. \
<a href="/partner/apps/${a?.client_id ?? ''}/deliveries?status=dead">See its dead deliveries</a></p>`;
})}
${
  apps.length === 0
    ? html`<p>No apps yet. <a href="/partner/apps/new">Create your first app</a>.</p>`
    : scrollBox(
        'Your apps',
        html`<table>
<thead><tr><th scope="col">App</th><th scope="col">Client ID</th><th scope="col">App URL</th><th scope="col">Links</th></tr></thead>
<tbody>
${apps.map(
  (a) => html`<tr><td>${a.name}</td><td><code>${a.client_id}</code></td><td>${a.app_url}</td>\
<td><a href="/partner/apps/${a.client_id}" aria-label="Settings of ${a.name}">Settings</a> · \
<a href="/partner/apps/${a.client_id}/deliveries" aria-label="Webhook deliveries of ${a.name}">Webhook deliveries</a></td></tr>`,
)}
</tbody>
</table>`,
      )
}`;
    return sendPartnerPage(reply, partner.email, 'apps', 'Your apps', body);
  });

  app.get('/partner/apps/new', partnerOnly, async (req, reply) => {
    const partner = req.partner!;
    const q = req.query as Record<string, unknown>;
    const values = {
      name: formString(q.name, 200),
      appUrl: formString(q.app_url),
      redirectUri: formString(q.redirect_uri),
      scopes: formList(q.scopes),
      privacyWebhookUrl: formString(q.privacy_webhook_url),
    };
    const managed = q.managed_install === 'on';
    const errors = q.check === '1' ? services.apps.checkApp({ ...values, scopes: values.scopes.join(' ') }).errors : {};
    if (q.check === '1' && managed && values.scopes.length === 0 && !errors.scopes)
      errors.scopes = ['choose at least one scope: managed install asks merchants for them'];
    const body = html`<h1>Create an app</h1>
<form method="post" action="/partner/apps">
${hiddenFields({ _csrf: reply.generateCsrf() })}
${textField({ id: 'name', name: 'name', label: 'App name', value: values.name, errors: errors.name })}
${textField({ id: 'app_url', name: 'app_url', label: 'App URL', type: 'url', value: values.appUrl, errors: errors.app_url })}
<p class="muted">The platform sends a signed GET here when a merchant installs or opens the app.</p>
${textField({
  id: 'redirect_uri',
  name: 'redirect_uri',
  label: 'Redirect URL',
  type: 'url',
  value: values.redirectUri,
  errors: errors.redirect_uri,
})}
<p class="muted">Must equal the <code>redirect_uri</code> your app sends, exactly; it must not contain <code>#</code>.</p>
${privacyField(values.privacyWebhookUrl, errors.privacy_webhook_url)}
${scopeCheckboxes(values.scopes, errors.scopes)}
${managedCheckbox(managed)}
<p class="muted">Without it, your app sends merchants to the authorization endpoint itself.
You can change this later in the app settings.</p>
<div class="actions"><button type="submit" name="create">Create app</button></div>
</form>`;
    return sendPartnerPage(reply, partner.email, 'new-app', 'Create an app', body);
  });

  app.post('/partner/apps', { ...partnerOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    const partner = req.partner!;
    const b = (req.body ?? {}) as Record<string, unknown>;
    const input = {
      name: formString(b.name, 200),
      appUrl: formString(b.app_url),
      redirectUri: formString(b.redirect_uri),
      scopes: formList(b.scopes).join(' '),
      privacyWebhookUrl: formString(b.privacy_webhook_url).trim(),
    };
    const managedInstall = managedChoice(b.managed_install);
    if (managedInstall === undefined) throw new ValidationFailedError({ managed_install: ['must be on or left out'] });
    if (Object.keys(services.apps.checkApp(input).errors).length > 0 || (managedInstall && input.scopes === '')) {
      const back = new URLSearchParams({
        check: '1',
        name: input.name,
        app_url: input.appUrl,
        redirect_uri: input.redirectUri,
        privacy_webhook_url: input.privacyWebhookUrl,
        ...(managedInstall ? { managed_install: 'on' } : {}),
      });
      for (const s of formList(b.scopes)) back.append('scopes', s.slice(0, 40));
      return reply.redirect(`/partner/apps/new?${back}`, 303);
    }
    const created = await services.apps.createApp({ ...input, partnerId: partner.partnerId, managedInstall });
    const reveal = await reveals.put(partner.sessionId, {
      kind: 'created',
      client_id: created.app.client_id,
      client_secret: created.clientSecret,
    });
    return reply.redirect(`/partner/apps/${created.app.client_id}/secret?reveal=${reveal}`, 303);
  });

  app.get('/partner/apps/:clientId', partnerOnly, async (req, reply) => {
    const partner = req.partner!;
    const a = await services.apps.findPartnerApp(partner.partnerId, (req.params as { clientId: string }).clientId);
    const q = req.query as Record<string, unknown>;
    const checking = q.check === '1';
    const appUrl = checking ? formString(q.app_url) : a.app_url;
    const redirectUri = checking ? formString(q.redirect_uri) : a.redirect_uri;
    const errors = checking ? services.apps.urlErrors(appUrl, redirectUri) : {};
    const privacyChecking = q.check === 'privacy';
    const privacyUrl = privacyChecking ? formString(q.privacy_webhook_url) : (a.privacy_webhook_url ?? '');
    const privacyErrors = privacyChecking
      ? (services.apps.checkApp({ name: a.name, appUrl: a.app_url, redirectUri: a.redirect_uri, privacyWebhookUrl: privacyUrl }).errors
          .privacy_webhook_url ?? [typeof q.error === 'string' ? q.error.slice(0, 200) : 'is not a valid address'])
      : undefined;
    const notice = NOTICES[String(q.done)];
    const csrf = reply.generateCsrf();
    const rotationEndsAt = services.rotations.clientRotationEndsAt(a);
    const overlap = describeDuration(services.config.secretOverlapMs);
    const body = html`<h1>${a.name}</h1>
${appTabs(a.client_id, 'settings')}
${notice ? html`<p class="ok" role="status">${notice}</p>` : ''}
<dl><dt>Client ID</dt><dd><code>${a.client_id}</code></dd><dt>Requested scopes</dt><dd>${
      a.scopes ? a.scopes.split(',').join(', ') : html`<span class="muted">none (the app asks at install)</span>`
    }</dd></dl>
<h2>URLs</h2>
<form method="post" action="/partner/apps/${a.client_id}">
${hiddenFields({ _csrf: csrf })}
${textField({ id: 'app_url', name: 'app_url', label: 'App URL', type: 'url', value: appUrl, errors: errors.app_url })}
${textField({
  id: 'redirect_uri',
  name: 'redirect_uri',
  label: 'Redirect URL',
  type: 'url',
  value: redirectUri,
  errors: errors.redirect_uri,
})}
<div class="actions"><button type="submit" name="save">Save URLs</button></div>
</form>
<h2>Privacy webhooks</h2>
<p>customers/data_request, customers/redact and shop/redact go to this address, signed like every webhook, with no subscription needed.</p>
${
  a.privacy_webhook_url
    ? ''
    : html`<p class="notice" role="status">No privacy webhook address is set: this app is sent no privacy \
webhooks, and nothing is queued for it.</p>`
}
<form method="post" action="/partner/apps/${a.client_id}/privacy-webhook">
${hiddenFields({ _csrf: csrf })}
${privacyField(privacyUrl, privacyErrors)}
<div class="actions"><button type="submit" name="save_privacy">Save privacy webhook address</button></div>
</form>
${managedSection(a, csrf)}
<h2>Issuer in authorization responses</h2>
<p>Error redirects back to your app always carry <code>iss</code>, the store's base URL (RFC 9207). The redirect with the code
carries it too, signed with the other parameters over its raw value, unless you turn it off (new apps have it on; apps
registered before that default have it off until turned on). Your callback should check <code>iss</code> and verify the
<code>hmac</code> over decoded values (the storegate SDK does both); a client that signs the percent-encoded query would not
match the <code>hmac</code>, so turn it off for such a client until it does.</p>
<p>Now: the redirect with the \
code ${a.authorization_iss === 1 ? html`<strong>carries</strong>` : html`<strong>does not carry</strong>`} <code>iss</code>.</p>
<form method="post" action="/partner/apps/${a.client_id}/authorization-iss">${hiddenFields({ _csrf: csrf })}${
      a.authorization_iss === 1
        ? html`<button class="secondary" type="submit" name="authorization_iss" value="off">Stop sending iss with the code</button>`
        : html`<button type="submit" name="authorization_iss" value="on">Send iss with the code</button>`
    }</form>
${signatureSection(services.config, a, csrf)}
<h2>Client secret</h2>
<p>The client secret signs install redirects and webhooks and authenticates your app at the token endpoint.</p>
<div class="actions">
<form class="inline" method="post" action="/partner/apps/${a.client_id}/reveal-secret">${hiddenFields({ _csrf: csrf })}<button \
class="secondary" type="submit" name="reveal">Reveal client secret</button></form>
${
  rotationEndsAt === undefined
    ? html`<a class="button danger" href="/partner/apps/${a.client_id}/rotate-secret">Rotate client \
secret</a>`
    : ''
}
</div>
${
  rotationEndsAt === undefined
    ? html`<p class="muted">Rotating creates a new secret. Until you finish the rotation (at the latest after ${overlap}), the previous \
secret keeps working at the token endpoint and keeps signing install links and the <code>X-Service-Hmac-Sha256</code> header; \
<code>webhook-signature</code> carries a signature with each secret.</p>`
    : html`<h3>Rotation in progress</h3>
<p class="notice" role="status">The previous secret keeps working until ${formatTime(rotationEndsAt)} unless you finish the rotation \
first. Until then install links and the <code>X-Service-Hmac-Sha256</code> header are still signed with the previous secret; \
<code>webhook-signature</code> carries a signature with the new secret and one with the previous secret.</p>
<p>Finish the rotation once every server of your app accepts the new secret. Finishing signs install links and webhooks with the new \
secret only, and the previous secret stops working at the token endpoint. This cannot be undone.</p>
<p><a class="button" href="/partner/apps/${a.client_id}/finish-rotation">Finish rotation</a></p>`
}`;
    return sendPartnerPage(reply, partner.email, 'apps', a.name, body);
  });

  app.post('/partner/apps/:clientId', { ...partnerOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    const partner = req.partner!;
    const a = await services.apps.findPartnerApp(partner.partnerId, (req.params as { clientId: string }).clientId);
    const b = (req.body ?? {}) as Record<string, unknown>;
    const appUrl = formString(b.app_url);
    const redirectUri = formString(b.redirect_uri);
    if (Object.keys(services.apps.urlErrors(appUrl, redirectUri)).length > 0) {
      return reply.redirect(
        `/partner/apps/${a.client_id}?${new URLSearchParams({ check: '1', app_url: appUrl, redirect_uri: redirectUri })}`,
        303,
      );
    }
    await services.apps.updateUrls(a.id, appUrl, redirectUri);
    return reply.redirect(`/partner/apps/${a.client_id}?done=saved`, 303);
  });

  app.post('/partner/apps/:clientId/privacy-webhook', { ...partnerOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    const partner = req.partner!;
    const a = await services.apps.findPartnerApp(partner.partnerId, (req.params as { clientId: string }).clientId);
    const value = formString((req.body as Record<string, unknown> | null)?.privacy_webhook_url).trim();
    try {
      const saved = await services.apps.setPrivacyWebhookUrl(a.id, value);
      return reply.redirect(`/partner/apps/${a.client_id}?done=${saved ? 'privacy_saved' : 'privacy_cleared'}`, 303);
    } catch (err) {
      if (!(err instanceof ValidationFailedError)) throw err;
      const error = err.errors.privacy_webhook_url?.[0] ?? 'is not a valid address';
      return reply.redirect(
        `/partner/apps/${a.client_id}?${new URLSearchParams({ check: 'privacy', privacy_webhook_url: value, error })}`,
        303,
      );
    }
  });

  app.post('/partner/apps/:clientId/authorization-iss', { ...partnerOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    const partner = req.partner!;
    const a = await services.apps.findPartnerApp(partner.partnerId, (req.params as { clientId: string }).clientId);
    const value = formString((req.body as Record<string, unknown> | null)?.authorization_iss);
    if (value !== 'on' && value !== 'off') throw new ValidationFailedError({ authorization_iss: ['must be on or off'] });
    await services.apps.setAuthorizationIss(a.id, value === 'on');
    return reply.redirect(`/partner/apps/${a.client_id}?done=iss_${value}`, 303);
  });

  app.post('/partner/apps/:clientId/managed-install', { ...partnerOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    const partner = req.partner!;
    const a = await services.apps.findPartnerApp(partner.partnerId, (req.params as { clientId: string }).clientId);
    const value = formString((req.body as Record<string, unknown> | null)?.managed_install);
    if (value !== 'on' && value !== 'off') throw new ValidationFailedError({ managed_install: ['must be on or off'] });
    await services.apps.setManagedInstall(a.id, value === 'on');
    return reply.redirect(`/partner/apps/${a.client_id}?done=managed_${value}`, 303);
  });
}
