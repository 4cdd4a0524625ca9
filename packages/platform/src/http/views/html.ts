// Server-rendered HTML: tagged template with escaping by default.

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Part = SafeHtml | string | number | null | undefined | false | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof SafeHtml) return part.value;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

/** `html\`<p>${value}</p>\`` escapes every interpolated value unless it is already SafeHtml. */
export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += render(v) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}

export function page(
  title: string,
  body: SafeHtml,
  options: { header?: SafeHtml; nav?: SafeHtml; scripts?: readonly string[]; wide?: boolean } = {},
): string {
  return `<!doctype html>
${
  html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · storegate</title>
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/app.css">
${(options.scripts ?? []).map(
  (src) => html`<script src="${src}" defer></script>
`,
)}</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><span class="brand">storegate</span>${options.header ?? ''}</header>
${options.nav ?? ''}<main id="main"${options.wide ? html` class="wide"` : ''}>
${body}
</main>
</body>
</html>`.value
}`;
}

export function hiddenFields(fields: Record<string, string | undefined>): SafeHtml {
  return html`${Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}`;
}

/**
 * A table in a box that scrolls sideways on a narrow screen, so the page itself never does. The box
 * takes keyboard focus (it may hold no link to tab to) and is named for screen readers.
 */
export function scrollBox(label: string, table: SafeHtml): SafeHtml {
  return html`<div class="table-scroll" role="region" aria-label="${label}" tabindex="0">${table}</div>`;
}
