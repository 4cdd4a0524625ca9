// Pieces of the server-rendered forms: field errors, scope checkboxes, secrets shown once.
import { ALL_SCOPES, describeScope, isServed, type Scope, splitScope } from '../../domain/scopes.ts';
import { html, type SafeHtml } from './html.ts';

/** The messages of one field, tied to its input by `aria-describedby="{id}-error"`. */
export function fieldError(id: string, messages: readonly string[] | undefined): SafeHtml {
  return messages && messages.length > 0 ? html`<p class="error" id="${id}-error" role="alert">${messages.join('; ')}</p>` : html``;
}

export function describedBy(id: string, messages: readonly string[] | undefined): SafeHtml {
  return messages && messages.length > 0 ? html` aria-invalid="true" aria-describedby="${id}-error"` : html``;
}

/** A labelled text input with its error. */
export function textField(o: {
  id: string;
  name: string;
  label: string;
  value: string;
  type?: 'text' | 'url' | 'email';
  errors?: readonly string[] | undefined;
  required?: boolean;
}): SafeHtml {
  return html`<label for="${o.id}">${o.label}</label>
${fieldError(o.id, o.errors)}<input id="${o.id}" name="${o.name}" type="${o.type ?? 'text'}" \
value="${o.value}"${o.required === false ? '' : html` required`}${describedBy(o.id, o.errors)}>`;
}

/**
 * One checkbox per scope, each with its own label; `checked` are ticked. The scopes of resources
 * storegate does not serve (accepted so that the platform family's apps install) sit in a folded
 * group of their own, open when one of them is ticked.
 */
export function scopeCheckboxes(checked: readonly string[], errors?: readonly string[]): SafeHtml {
  const box = (s: Scope) =>
    html`<div><input type="checkbox" id="scope-${s}" name="scopes" value="${s}"${checked.includes(s) ? html` checked` : ''}><label \
for="scope-${s}">${describeScope(s)} <span class="muted">(${s})</span></label></div>`;
  const served = ALL_SCOPES.filter((s) => isServed(splitScope(s)[1]));
  const unserved = ALL_SCOPES.filter((s) => !isServed(splitScope(s)[1]));
  const open = unserved.some((s) => checked.includes(s));
  return html`<fieldset${describedBy('scopes', errors)}><legend>Scopes</legend>
${fieldError('scopes', errors)}${served.map(box)}
<details${open ? html` open` : ''}><summary>Scopes this store does not serve yet (accepted for apps of the platform family; they grant \
nothing)</summary>
${unserved.map(box)}
</details>
</fieldset>`;
}

/** A secret shown once: a read-only field that can be selected, and a copy button for browsers with JavaScript. */
export function secretField(id: string, label: string, value: string): SafeHtml {
  return html`<label for="${id}">${label}</label>
<div class="secret"><input id="${id}" type="text" readonly value="${value}" spellcheck="false" autocomplete="off"><button type="button" \
class="secondary" data-copy="${id}" hidden>Copy ${label.toLowerCase()}</button></div>`;
}

/** Form values arrive as a string or, for repeated fields such as checkboxes, an array. */
export function formList(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string').slice(0, 20);
  return typeof value === 'string' && value !== '' ? [value] : [];
}

export function formString(value: unknown, max = 2000): string {
  return typeof value === 'string' ? value.slice(0, max) : '';
}

export function formatTime(ms: number): string {
  return `${new Date(ms).toISOString().replace('T', ' ').slice(0, 19)} UTC`;
}

/** A duration in words, in its largest whole unit (a single day reads as `24 hours`): `90 minutes`, `7 days`. */
export function describeDuration(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1000, 'second'],
  ];
  for (const [size, name] of units) {
    if (ms >= size && ms % size === 0 && !(name === 'day' && ms === size)) return `${ms / size} ${name}${ms / size === 1 ? '' : 's'}`;
  }
  return `${ms} ms`;
}
