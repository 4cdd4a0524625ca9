// The filter and include_fields of an app-level webhook subscription in the partner dashboard's
// forms (add and edit): two optional text fields, the fields comma-separated, read back into the
// values the service checks; and how a row shows them in the list.
import { readIncludeFields } from '../../domain/webhook-subscription-shape.ts';
import { formString } from '../views/form-fields.ts';
import { html, type SafeHtml } from '../views/html.ts';

/** What the two fields hold as typed. */
export interface ShapeForm {
  filter: string;
  includeFields: string;
}

/** The typed text of the two fields; longer than any valid value is kept whole so the check refuses it rather than a cut one passing. */
export function shapeForm(body: Record<string, unknown>): ShapeForm {
  return { filter: formString(body.filter, 20_000).trim(), includeFields: formString(body.include_fields, 20_000).trim() };
}

/** The form's values as the service takes them: blank means none. */
export function shapeInput(form: ShapeForm): { filter: string | null; includeFields: string[] | null } {
  const fields = form.includeFields
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  return { filter: form.filter === '' ? null : form.filter, includeFields: form.includeFields === '' ? null : fields };
}

/** A stored row's values as the form shows them. */
export function shapeFormOf(row: { filter: string | null; include_fields: string | null }): ShapeForm {
  return { filter: row.filter ?? '', includeFields: (readIncludeFields(row.include_fields) ?? []).join(', ') };
}

function field(id: string, label: string, hint: SafeHtml, value: string, errors: readonly string[] | undefined): SafeHtml {
  const bad = errors !== undefined && errors.length > 0;
  return html`<label for="${id}">${label}</label>
<p class="muted" id="${id}-hint">${hint}</p>
${
  bad ? html`<p class="error" id="${id}-error" role="alert">${errors.join('; ')}</p>` : ''
}<input id="${id}" name="${id}" type="text" value="${value}" spellcheck="false" autocomplete="off" \
aria-describedby="${id}-hint${bad ? ` ${id}-error` : ''}"${bad ? html` aria-invalid="true"` : ''}>`;
}

/** The two optional fields, with their errors (keyed `filter` and `include_fields`). */
export function shapeFields(form: ShapeForm, errors: Record<string, string[]>): SafeHtml {
  return html`${field(
    'filter',
    'Filter (optional)',
    html`Only changes whose object matches are sent, e.g. <code>status:active AND price:&gt;=10</code>. Empty: every change.`,
    form.filter,
    errors.filter,
  )}
${field(
  'include_fields',
  'Include fields (optional)',
  html`Comma-separated top-level fields each webhook holds, e.g. <code>id, title, price</code>. Empty: the whole object.`,
  form.includeFields,
  errors.include_fields,
)}`;
}

/** The list's cells: the filter and the fields, or a dash for none. */
export function shapeCells(row: { filter: string | null; include_fields: string | null }): SafeHtml {
  const fields = readIncludeFields(row.include_fields);
  return html`<td>${row.filter === null ? html`<span class="muted">all changes</span>` : html`<code>${row.filter}</code>`}</td>\
<td>${fields === null ? html`<span class="muted">all</span>` : fields.join(', ')}</td>`;
}
