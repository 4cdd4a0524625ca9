// Destructive actions (uninstall, revoke, rotate, finish a rotation, privacy requests) take two
// steps that work without JavaScript: a GET page saying what will happen, with a POST button and a
// Cancel link; the action's POST acts only when it carries `confirm=yes`, which only that page's
// button sends. A POST without the field (an old page, a form elsewhere) is sent to the page.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { BadRequestError } from '../../domain/errors.ts';
import { hiddenFields, html, type SafeHtml } from './html.ts';

export const CONFIRM_FIELD = 'confirm';
export const CONFIRM_VALUE = 'yes';

/** The confirmation page's form: CSRF token, the confirm field on the button, and Cancel. */
export function confirmationForm(form: { action: string; csrf: string; button: string; danger?: boolean; cancel: string }): SafeHtml {
  return html`<form method="post" action="${form.action}">
${hiddenFields({ _csrf: form.csrf })}
<div class="actions"><button${form.danger ? html` class="danger"` : ''} type="submit" name="${CONFIRM_FIELD}" \
value="${CONFIRM_VALUE}">${form.button}</button><a class="cancel" href="${form.cancel}">Cancel</a></div>
</form>`;
}

/**
 * Whether the POST was confirmed on the confirmation page. Without the field the browser is sent to
 * that page (303, nothing done) and the caller returns; any other value is a 400 naming the field.
 */
export function confirmedOrRedirect(req: FastifyRequest, reply: FastifyReply): boolean {
  const value = (req.body as Record<string, unknown> | null | undefined)?.[CONFIRM_FIELD];
  if (value === undefined || value === '') {
    // The confirmation page has the action's own path: the POST's URL without its query.
    void reply.redirect(req.url.split('?')[0]!, 303);
    return false;
  }
  if (value !== CONFIRM_VALUE)
    throw new BadRequestError(`${CONFIRM_FIELD} must be "${CONFIRM_VALUE}" (press the button on the confirmation page)`);
  return true;
}
