// Server-rendered pages. Every value that comes from outside goes through `escapeHtml`.
import type { LoggedWebhook } from './webhook-log.ts';

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

const STYLE = `
  body { font: 15px/1.5 system-ui, sans-serif; margin: 0; color: #1d2327; background: #f6f7f9; }
  header { background: #1d2327; color: #fff; padding: .7rem 1.5rem; display: flex; gap: 1.5rem; align-items: baseline; }
  header a { color: #cfe3ff; }
  header strong { font-size: 1.05rem; }
  main { max-width: 980px; margin: 1.5rem auto; padding: 0 1.5rem; }
  table { border-collapse: collapse; width: 100%; background: #fff; }
  th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid #e3e5e8; vertical-align: top; }
  th { background: #eef0f3; font-weight: 600; }
  nav.pager { display: flex; gap: 1rem; margin: 1rem 0; align-items: center; }
  .button { display: inline-block; padding: .4rem .9rem; background: #2c6ecb; color: #fff; border-radius: 4px; text-decoration: none; border: 0; font: inherit; cursor: pointer; }
  .muted { color: #646970; }
  .notice { background: #fff; border-left: 4px solid #2c6ecb; padding: .6rem 1rem; margin: 1rem 0; }
  .error { border-left-color: #d63638; }
  pre { background: #fff; padding: .6rem; overflow-x: auto; max-height: 16rem; margin: .3rem 0 0; }
  code { font-size: .9em; }
  input[type=text] { font: inherit; padding: .35rem .5rem; min-width: 16rem; }
`;

function layout(title: string, body: string, options: { shop?: string | undefined; refreshSeconds?: number } = {}): string {
  const shopNav = options.shop
    ? `<a href="/products?shop=${encodeURIComponent(options.shop)}">Products</a> <a href="/events?shop=${encodeURIComponent(options.shop)}">Webhooks</a> <span class="muted">${escapeHtml(options.shop)}</span>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
${options.refreshSeconds ? `<meta http-equiv="refresh" content="${options.refreshSeconds}">` : ''}
<title>${escapeHtml(title)} · storegate example app</title><style>${STYLE}</style></head>
<body><header><strong><a href="/" style="color:#fff;text-decoration:none">storegate example app</a></strong>${shopNav}</header>
<main>${body}</main></body></html>`;
}

export function homePage(input: {
  shop: string | undefined;
  storeDomain: string;
  appUrl: string;
  scopes: string;
  /** With managed install: the store admin, where the app is installed (no install form here). */
  storeAdmin?: string | undefined;
}): string {
  const open = input.shop
    ? `<div class="notice">Installed in <strong>${escapeHtml(input.shop)}</strong>: <a href="/products?shop=${encodeURIComponent(input.shop)}">products</a> · <a href="/events?shop=${encodeURIComponent(input.shop)}">webhooks</a></div>`
    : '';
  return layout(
    'Home',
    `<h1>storegate example app</h1>
${open}
${
  input.storeAdmin
    ? `<p>Managed install: install and open this app from your store admin (<a href="${escapeHtml(input.storeAdmin)}">${escapeHtml(input.storeAdmin)}</a>, <em>Apps → Install</em>); the platform asks for consent and opens it here.</p>`
    : `<p>Install this app from your store admin (<em>Apps → Install</em>), or name the store here:</p>
<form method="get" action="/auth">
  <label>Store <input type="text" name="shop" placeholder="demo or demo.${escapeHtml(input.storeDomain)}" required></label>
  <button class="button" type="submit">Install</button>
</form>`
}
<p class="muted">App URL ${escapeHtml(input.appUrl)} · scopes ${escapeHtml(input.scopes)}</p>`,
    { shop: input.shop },
  );
}

export interface ProductRow {
  id: string;
  title: string;
  vendor?: string;
  status?: string;
  price?: string;
  updated_at?: string;
}

export interface ProductsView {
  shop: string;
  apiVersion: string;
  versions: readonly string[];
  products: readonly ProductRow[];
  /** Links to the neighbouring pages, when there are any. */
  nextHref: string | undefined;
  previousHref: string | undefined;
  /** The cursor this page was fetched with (shown so a job could resume here). */
  requestCursor: string | null;
  installed: boolean;
  subscriptions: ReadonlyMap<string, string> | undefined;
  /** The merchant whose online session this launch gave (managed install). */
  signedInAs?: { id: string; email: string } | undefined;
}

export function productsPage(view: ProductsView): string {
  const rows = view.products
    .map(
      (p) =>
        `<tr><td>${escapeHtml(p.id)}</td><td>${escapeHtml(p.title)}</td><td>${escapeHtml(p.vendor ?? '')}</td><td>${escapeHtml(p.status ?? '')}</td><td>${escapeHtml(p.price ?? '')}</td><td class="muted">${escapeHtml(p.updated_at ?? '')}</td></tr>`,
    )
    .join('\n');
  const versionLinks = view.versions
    .map((v) =>
      v === view.apiVersion
        ? `<strong>${escapeHtml(v)}</strong>`
        : `<a href="/products?shop=${encodeURIComponent(view.shop)}&amp;version=${encodeURIComponent(v)}">${escapeHtml(v)}</a>`,
    )
    .join(' · ');
  const pager = `<nav class="pager">
  ${view.previousHref ? `<a class="button" rel="prev" href="${escapeHtml(view.previousHref)}">← Previous page</a>` : ''}
  ${view.nextHref ? `<a class="button" rel="next" href="${escapeHtml(view.nextHref)}">Next page →</a>` : '<span class="muted">Last page</span>'}
</nav>`;
  const installed = view.installed
    ? `<div class="notice">The app is installed in ${escapeHtml(view.shop)}.${view.subscriptions ? ` Webhooks: ${[...view.subscriptions].map(([topic, status]) => `${escapeHtml(topic)} (${escapeHtml(status)})`).join(', ')}.` : ''}</div>`
    : '';
  const signedIn = view.signedInAs
    ? `<div class="notice">Opened by <strong>${escapeHtml(view.signedInAs.email || `merchant ${view.signedInAs.id}`)}</strong> (merchant ${escapeHtml(view.signedInAs.id)}, online token).</div>`
    : '';
  return layout(
    `Products of ${view.shop}`,
    `${installed}${signedIn}<h1>Products</h1>
<p class="muted">API version ${versionLinks}${view.apiVersion === '2022-01' ? ' (older convention: cursor + pre_cursor, so you can go back)' : ' (newer convention: cursor + has_more; switch to 2022-01 to page backwards)'}</p>
${view.products.length === 0 ? '<p>No products on this page.</p>' : `<table><thead><tr><th>ID</th><th>Title</th><th>Vendor</th><th>Status</th><th>Price</th><th>Updated</th></tr></thead><tbody>\n${rows}\n</tbody></table>`}
${pager}
<p class="muted">Page cursor: <code>${escapeHtml(view.requestCursor ?? '(first page)')}</code></p>`,
    { shop: view.shop },
  );
}

export function eventsPage(input: {
  shop: string;
  events: readonly LoggedWebhook[];
  capacity: number;
  subscriptions: ReadonlyMap<string, string> | undefined;
}): string {
  const subs = input.subscriptions
    ? `<p class="muted">Subscriptions: ${[...input.subscriptions].map(([topic, status]) => `${escapeHtml(topic)} (${escapeHtml(status)})`).join(', ')}</p>`
    : '<p class="muted">No subscriptions made by this process (they are made right after an install).</p>';
  const items = input.events
    .map(
      (e) =>
        `<tr><td>${escapeHtml(e.receivedAt.toISOString())}</td><td><strong>${escapeHtml(e.topic)}</strong><br><span class="muted">id ${escapeHtml(e.id ?? '(none)')}${e.apiVersion ? ` · ${escapeHtml(e.apiVersion)}` : ''}</span></td><td><pre>${escapeHtml(e.body)}</pre></td></tr>`,
    )
    .join('\n');
  return layout(
    `Webhooks of ${input.shop}`,
    `<h1>Webhooks</h1>
${subs}
<p class="muted">The last ${input.capacity} verified webhooks, newest first; this page reloads every 5 seconds.</p>
${input.events.length === 0 ? '<p>No webhooks yet. Create or change a product in the store and one arrives here.</p>' : `<table><thead><tr><th>Received</th><th>Topic</th><th>Body</th></tr></thead><tbody>\n${items}\n</tbody></table>`}`,
    { shop: input.shop, refreshSeconds: 5 },
  );
}

export function messagePage(input: {
  title: string;
  message: string;
  code?: string | undefined;
  action?: { href: string; label: string } | undefined;
  shop?: string | undefined;
}): string {
  return layout(
    input.title,
    `<h1>${escapeHtml(input.title)}</h1>
<div class="notice error"><p>${escapeHtml(input.message)}</p>${input.code ? `<p class="muted">Error code: <code>${escapeHtml(input.code)}</code></p>` : ''}</div>
${input.action ? `<p><a class="button" href="${escapeHtml(input.action.href)}">${escapeHtml(input.action.label)}</a></p>` : ''}`,
    { shop: input.shop },
  );
}
