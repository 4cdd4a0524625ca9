// Private apps in the store admin: apps of one store that call the Admin API with a fixed
// Access-Token instead of OAuth. Create with chosen scopes (the Access-Token and webhook secret are
// shown once; only a hash of the token is kept), list, revoke; rotate the webhook secret (the new
// one shown once) and finish the rotation.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError, ValidationFailedError } from '../../domain/errors.ts';
import type { Services } from '../../services/services.ts';
import { checkPrivateApp } from '../../services/app-service.ts';
import { describeDuration, formList, formString, formatTime, scopeCheckboxes, secretField, textField } from '../views/form-fields.ts';
import { confirmationForm, confirmedOrRedirect } from '../views/confirmation.ts';
import { hiddenFields, html, scrollBox, type SafeHtml } from '../views/html.ts';
import { sendAdminPage } from '../views/store-admin-layout.ts';
import { parseId } from '../path-params.ts';

const NOTICES: Record<string, string> = {
  revoked: 'The private app was revoked: its Access-Token no longer works.',
  finished: 'The rotation is finished: webhooks are now signed with the new webhook secret only.',
};

const merchantOnly = { config: { session: 'merchant' as const } };

export function registerPrivateAppRoutes(
  app: FastifyInstance,
  services: Pick<Services, 'apps' | 'clock' | 'config' | 'reveals' | 'rotations'>,
): void {
  const reveals = services.reveals;

  app.get('/admin/private-apps', merchantOnly, async (req, reply) => {
    const store = req.store!;
    const rows = await services.apps.listPrivateApps(store.id);
    const notice = NOTICES[String((req.query as Record<string, unknown>).done)];
    const body = html`<h1>Private apps</h1>
${notice ? html`<p class="ok" role="status">${notice}</p>` : ''}
<p>A private app calls the Admin API of ${store.name} with a fixed Access-Token, without the install flow.</p>
<p><a class="button" href="/admin/private-apps/new">Create a private app</a></p>
${
  rows.length === 0
    ? html`<p class="muted">No private apps yet.</p>`
    : html`${scrollBox(
        'Private apps',
        html`<table>
<thead><tr><th scope="col">Name</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Webhook secret</th>\
<th scope="col">Status</th></tr></thead>
<tbody>
${rows.map(
  (p) => html`<tr><td>${p.name}</td><td>${p.scopes.split(',').join(', ')}</td><td>${formatTime(Number(p.created_at))}</td>
<td>${p.revoked_at !== null ? '' : webhookSecretCell(p, services.clock())}</td>
<td>${
    p.revoked_at !== null
      ? html`<span class="muted">Revoked ${formatTime(Number(p.revoked_at))}</span>`
      : html`<a class="button danger" href="/admin/private-apps/${String(p.id)}/revoke">Revoke<span \
class="visually-hidden"> ${p.name}</span></a>`
  }</td></tr>`,
)}
</tbody>
</table>`,
      )}
<p class="muted">Rotating a webhook secret creates a new one. Until you finish the rotation (at the latest \
after ${describeDuration(services.config.secretOverlapMs)}), <code>X-Service-Hmac-Sha256</code> is still signed with the previous secret \
and <code>webhook-signature</code> carries a signature with each secret, so your receiver keeps accepting webhooks while you deploy the \
new secret.</p>`
}`;
    return sendAdminPage(reply, store, 'private-apps', 'Private apps', body);
  });

  // The form; after a refused POST it comes back with the entered values and their errors.
  app.get('/admin/private-apps/new', merchantOnly, async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    const name = formString(q.name, 200);
    const scopes = formList(q.scopes);
    const errors = q.check === '1' ? checkPrivateApp({ name, scopes: scopes.join(' ') }).errors : {};
    return sendForm(req, reply, name, scopes, errors);
  });

  function sendForm(
    req: FastifyRequest,
    reply: FastifyReply,
    name: string,
    scopes: string[],
    errors: Record<string, string[]>,
    status = 200,
  ) {
    const body = html`<h1>Create a private app</h1>
${errors.base ? html`<p class="error" role="alert">${errors.base.join(' ')}</p>` : ''}
<form method="post" action="/admin/private-apps">
${hiddenFields({ _csrf: reply.generateCsrf() })}
${textField({ id: 'name', name: 'name', label: 'App name', value: name, errors: errors.name })}
${scopeCheckboxes(scopes, errors.scopes)}
<div class="actions"><button type="submit" name="create">Create private app</button><a href="/admin/private-apps">Cancel</a></div>
</form>`;
    return sendAdminPage(reply, req.store!, 'private-apps', 'Create a private app', body, { status });
  }

  app.post('/admin/private-apps', { ...merchantOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    const b = (req.body ?? {}) as Record<string, unknown>;
    const name = formString(b.name, 200);
    const scopes = formList(b.scopes);
    const checked = checkPrivateApp({ name, scopes: scopes.join(' ') });
    if (Object.keys(checked.errors).length > 0) {
      const back = new URLSearchParams({ check: '1', name });
      for (const s of scopes) back.append('scopes', s.slice(0, 40));
      return reply.redirect(`/admin/private-apps/new?${back}`, 303);
    }
    let created: Awaited<ReturnType<typeof services.apps.createPrivateApp>>;
    try {
      created = await services.apps.createPrivateApp({ storeId: req.store!.id, name, scopes: scopes.join(' ') });
    } catch (err) {
      // The store is at its cap of active private apps: the form again (422), naming the limit.
      if (err instanceof ValidationFailedError && err.errors.base) return sendForm(req, reply, name, scopes, err.errors, 422);
      throw err;
    }
    const reveal = await reveals.put(req.merchant!.sessionId, {
      name: checked.name,
      access_token: created.accessToken,
      webhook_secret: created.webhookSecret,
    });
    return reply.redirect(`/admin/private-apps/created?reveal=${reveal}`, 303);
  });

  // The token and webhook secret, once: the reveal is deleted as it is read.
  app.get('/admin/private-apps/created', merchantOnly, async (req, reply) => {
    const shown = await reveals.take(req.merchant!.sessionId, (req.query as Record<string, unknown>).reveal);
    const body =
      shown?.access_token !== undefined
        ? html`<h1>Private app "${shown.name}" created</h1>
<p class="notice" role="status">Copy the Access-Token and webhook secret now: they are shown only once.</p>
${secretField('access-token', 'Access-Token', shown.access_token ?? '')}
${secretField('webhook-secret', 'Webhook secret', shown.webhook_secret ?? '')}
<p>Send the token in the <code>Access-Token</code> header of every Admin API request.</p>
<p><a href="/admin/private-apps">Back to private apps</a></p>`
        : html`<h1>Already shown</h1>
<p>The Access-Token of a private app is shown only once. If it was lost, revoke the app and create a new one.</p>
<p><a href="/admin/private-apps">Back to private apps</a></p>`;
    return sendAdminPage(reply, req.store!, 'private-apps', 'Private app created', body, { scripts: ['/assets/copy-button.js'] });
  });

  // Revoke, rotate and finish ask first, each on a page of its own saying what happens.
  async function activePrivateApp(req: FastifyRequest): Promise<PrivateAppSummary> {
    const id = parseId((req.params as { id: string }).id);
    const found = (await services.apps.listPrivateApps(req.store!.id)).find((p) => p.id === id && p.revoked_at === null);
    if (!found) throw new NotFoundError('No active private app with this id in this store');
    return found;
  }

  function sendConfirmation(req: FastifyRequest, reply: FastifyReply, p: PrivateAppSummary, c: ConfirmText) {
    const body = html`<h1>${c.title}</h1>
<dl><dt>Private app</dt><dd>${p.name}</dd><dt>Scopes</dt><dd>${p.scopes.split(',').join(', ')}</dd><dt>Created</dt>\
<dd>${formatTime(Number(p.created_at))}</dd></dl>
${c.explain}
${
  c.button
    ? confirmationForm({
        action: req.url.split('?')[0]!,
        csrf: reply.generateCsrf(),
        button: c.button,
        danger: c.danger ?? false,
        cancel: '/admin/private-apps',
      })
    : html`<p><a href="/admin/private-apps">Back to private apps</a></p>`
}`;
    return sendAdminPage(reply, req.store!, 'private-apps', c.title, body);
  }

  app.get('/admin/private-apps/:id/revoke', merchantOnly, async (req, reply) => {
    const p = await activePrivateApp(req);
    return sendConfirmation(req, reply, p, {
      title: `Revoke ${p.name}?`,
      explain: html`<p>Its Access-Token stops working at once, and it is sent no more webhooks. A revoked private app cannot be used \
again: to call the Admin API again, create a new private app.</p>`,
      button: `Revoke ${p.name}`,
      danger: true,
    });
  });

  app.get('/admin/private-apps/:id/rotate-webhook-secret', merchantOnly, async (req, reply) => {
    const p = await activePrivateApp(req);
    const now = services.clock();
    if (rotating(p, now)) {
      return sendConfirmation(req, reply, p, {
        title: `Rotate the webhook secret of ${p.name}`,
        explain: html`<p class="notice" role="status">A rotation is already in progress: finish it before rotating again.</p>`,
      });
    }
    return sendConfirmation(req, reply, p, {
      title: `Rotate the webhook secret of ${p.name}?`,
      explain: html`<p>A new webhook secret is created and shown once. Until you finish the rotation (at the latest \
after ${describeDuration(services.config.secretOverlapMs)}), <code>X-Service-Hmac-Sha256</code> is still signed with the previous secret \
and <code>webhook-signature</code> carries a signature with each secret. The Access-Token does not change.</p>`,
      button: 'Rotate webhook secret',
    });
  });

  app.get('/admin/private-apps/:id/finish-rotation', merchantOnly, async (req, reply) => {
    const p = await activePrivateApp(req);
    if (!rotating(p, services.clock())) {
      return sendConfirmation(req, reply, p, {
        title: `Finish the rotation of ${p.name}`,
        explain: html`<p class="notice" role="status">No rotation of the webhook secret is in progress: there is nothing to finish.</p>`,
      });
    }
    return sendConfirmation(req, reply, p, {
      title: `Finish the rotation of ${p.name}?`,
      explain: html`<p>Webhooks are then signed with the new secret only; receivers that still hold only the previous secret reject them. \
This cannot be undone.</p>`,
      button: 'Finish rotation',
      danger: true,
    });
  });

  app.post('/admin/private-apps/:id/revoke', { ...merchantOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    if (!confirmedOrRedirect(req, reply)) return reply;
    await services.apps.revokePrivateApp(req.store!.id, parseId((req.params as { id: string }).id));
    return reply.redirect('/admin/private-apps?done=revoked', 303);
  });

  app.post('/admin/private-apps/:id/rotate-webhook-secret', { ...merchantOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    if (!confirmedOrRedirect(req, reply)) return reply;
    const id = parseId((req.params as { id: string }).id);
    const rotated = await services.rotations.rotatePrivateWebhookSecret(req.store!.id, id);
    req.log.info({ private_app_id: id }, 'webhook secret rotation started');
    const reveal = await reveals.put(req.merchant!.sessionId, {
      name: rotated.name,
      webhook_secret: rotated.secret,
      overlap_ends_at: String(rotated.overlapEndsAt),
    });
    return reply.redirect(`/admin/private-apps/rotated?reveal=${reveal}`, 303);
  });

  // The new webhook secret, once.
  app.get('/admin/private-apps/rotated', merchantOnly, async (req, reply) => {
    const shown = await reveals.take(req.merchant!.sessionId, (req.query as Record<string, unknown>).reveal);
    const body =
      shown?.webhook_secret !== undefined && shown.access_token === undefined
        ? html`<h1>New webhook secret for "${shown.name}"</h1>
<p class="notice" role="status">Copy the new webhook secret now: it is shown only once. Deploy it to your webhook receiver next to the \
previous one, then press "Finish rotation" on the Private apps page. Until then, and at the latest \
until ${formatTime(Number(shown.overlap_ends_at))}, webhooks are also signed with the previous secret.</p>
${secretField('webhook-secret', 'Webhook secret', shown.webhook_secret)}
<p><a href="/admin/private-apps">Back to private apps</a></p>`
        : html`<h1>Already shown</h1>
<p>A new webhook secret is shown only once. If it was lost, finish the rotation and rotate again.</p>
<p><a href="/admin/private-apps">Back to private apps</a></p>`;
    return sendAdminPage(reply, req.store!, 'private-apps', 'New webhook secret', body, { scripts: ['/assets/copy-button.js'] });
  });

  app.post('/admin/private-apps/:id/finish-rotation', { ...merchantOnly, preHandler: app.csrfProtection }, async (req, reply) => {
    if (!confirmedOrRedirect(req, reply)) return reply;
    const id = parseId((req.params as { id: string }).id);
    await services.rotations.finishPrivateWebhookSecretRotation(req.store!.id, id);
    req.log.info({ private_app_id: id }, 'webhook secret rotation finished');
    return reply.redirect('/admin/private-apps?done=finished', 303);
  });
}

type PrivateAppSummary = Awaited<ReturnType<Services['apps']['listPrivateApps']>>[number];

/** What a confirmation page says; without a button it only explains why there is nothing to do. */
interface ConfirmText {
  title: string;
  explain: SafeHtml;
  button?: string;
  danger?: boolean;
}

function rotating(p: PrivateAppSummary, now: number): boolean {
  const endsAt = p.previous_webhook_secret_expires_at;
  return endsAt !== null && endsAt > now;
}

/** Rotate, or the rotation in progress with what finishing does and its link. */
function webhookSecretCell(p: PrivateAppSummary, now: number): SafeHtml {
  if (!rotating(p, now)) {
    return html`<a class="button secondary" href="/admin/private-apps/${String(p.id)}/rotate-webhook-secret">Rotate webhook \
secret<span class="visually-hidden"> of ${p.name}</span></a>`;
  }
  return html`<p>Rotation in progress until ${formatTime(Number(p.previous_webhook_secret_expires_at))}. Finishing signs webhooks with the \
new secret only; receivers that still hold only the previous secret then reject them.</p>
<a class="button" href="/admin/private-apps/${String(p.id)}/finish-rotation">Finish rotation<span class="visually-hidden"> \
of ${p.name}</span></a>`;
}
