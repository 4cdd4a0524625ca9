// Pieces of the server-rendered forms: field errors, scope checkboxes, secrets shown once.
import { ALL_SCOPES, describeScope } from '../../domain/scopes.ts';
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
${fieldError(o.id, o.errors)}<input id="${o.id}" name="${o.name}" type="${o.type ?? 'text'}" value="${o.value}"${o.required === false ? '' : html` required`}${describedBy(o.id, o.errors)}>`;
}

/** One checkbox per scope, each with its own label; `checked` are ticked. */
export function scopeCheckboxes(checked: readonly string[], errors?: readonly string[]): SafeHtml {
  return html`<fieldset${describedBy('scopes', errors)}><legend>Scopes</legend>
${fieldError('scopes', errors)}${ALL_SCOPES.map(
  (s) =>
    html`<div><input type="checkbox" id="scope-${s}" name="scopes" value="${s}"${checked.includes(s) ? html` checked` : ''}><label for="scope-${s}">${describeScope(s)} <span class="muted">(${s})</span></label></div>`,
)}
</fieldset>`;
}

/** A secret shown once: a read-only field that can be selected, and a copy button for browsers with JavaScript. */
export function secretField(id: string, label: string, value: string): SafeHtml {
  return html`<label for="${id}">${label}</label>
<div class="secret"><input id="${id}" type="text" readonly value="${value}" spellcheck="false" autocomplete="off"><button type="button" class="secondary" data-copy="${id}" hidden>Copy ${label.toLowerCase()}</button></div>`;
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
