// The merchant's consent to an app's access, shown by the authorization endpoint and by the store
// admin when it installs an app whose scopes the platform manages: what the app will be able to do,
// what it gains and what it gives back, and the two buttons.
import { covers, describeScope, type Scope } from '../../domain/scopes.ts';
import { hiddenFields, html, page } from './html.ts';

export interface ConsentRequest {
  appName: string;
  storeName: string;
  /** What the app asks to hold once the merchant approves. */
  scopes: readonly Scope[];
  /** What it holds now; undefined when it is not installed. */
  granted: readonly Scope[] | undefined;
  /** The access is bound to the merchant and ends at their logout. */
  online: boolean;
  /** Where the form goes, and what it carries besides `decision`. */
  action: string;
  fields: Record<string, string | undefined>;
}

/** What approving adds and gives back (write implies read: asking for read_x while holding write_x adds nothing). */
export function consentChange(scopes: readonly Scope[], granted: readonly Scope[] | undefined): { added: Scope[]; removed: Scope[] } {
  return {
    added: scopes.filter((s) => !granted || !covers(granted, [s])),
    removed: granted?.filter((s) => !covers(scopes, [s])) ?? [],
  };
}

/** The page's title and HTML. */
export function consentPage(c: ConsentRequest): string {
  const { added, removed } = consentChange(c.scopes, c.granted);
  const givingBack = c.granted !== undefined && added.length === 0;
  const body = html`<h1>${givingBack ? html`Change the access of ${c.appName}?` : html`Install ${c.appName}?`}</h1>
<p><strong>${c.appName}</strong> ${givingBack ? 'gives back part of its access to' : 'asks for access to'} the store \
<strong>${c.storeName}</strong>.</p>
${
  c.granted
    ? html`<p>This app is already installed. Approving changes what it can do; it will be able to:</p>`
    : html`<p>It will be able to:</p>`
}
<ul class="scopes">
${c.scopes.map((s) => html`<li>${describeScope(s)} <span class="muted">(${s}${c.granted && added.includes(s) ? ', new' : ''})</span></li>`)}
</ul>
${c.online ? html`<p>It acts as you, signed in as you now: this access ends when you log out, or after a day at most.</p>` : ''}
${
  removed.length > 0
    ? html`<p>It gives back, and will no longer be able to:</p>\
<ul class="scopes removed">${removed.map((s) => html`<li>${describeScope(s)} <span class="muted">(${s}, given back)</span></li>`)}</ul>`
    : ''
}
<form method="post" action="${c.action}">
${hiddenFields(c.fields)}
<div class="actions">
<button type="submit" name="decision" value="install">${givingBack ? 'Confirm' : 'Install app'}</button>
<button type="submit" name="decision" value="cancel" class="secondary">Cancel</button>
</div>
</form>`;
  return page(givingBack ? `Change the access of ${c.appName}` : `Install ${c.appName}`, body);
}
