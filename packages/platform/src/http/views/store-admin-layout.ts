// The store admin's frame: the store's name, the sections, and "Log out" (a POST with CSRF).
import type { FastifyReply } from 'fastify';
import type { Store } from '../../services/account-service.ts';
import { hiddenFields, html, page, type SafeHtml } from './html.ts';

export type AdminSection = 'apps' | 'private-apps' | 'products' | 'orders' | 'customers';

const SECTIONS: [AdminSection, string, string][] = [
  ['apps', 'Apps', '/admin'],
  ['private-apps', 'Private apps', '/admin/private-apps'],
  ['products', 'Products', '/admin/products'],
  ['orders', 'Orders', '/admin/orders'],
  ['customers', 'Customers', '/admin/customers'],
];

export function sectionNav(sections: [string, string, string][], active: string, label: string): SafeHtml {
  return html`<nav class="sections" aria-label="${label}"><ul>${sections.map(
    ([key, text, href]) => html`<li><a href="${href}"${key === active ? html` aria-current="page"` : ''}>${text}</a></li>`,
  )}</ul></nav>
`;
}

/** Sends a store admin page (no-store: it shows the store's data). */
export function sendAdminPage(
  reply: FastifyReply,
  store: Store,
  active: AdminSection,
  title: string,
  body: SafeHtml,
  options: { scripts?: readonly string[]; status?: number } = {},
): FastifyReply {
  const header = html`<span>${store.name}</span><form class="inline" method="post" \
action="/admin/logout">${hiddenFields({ _csrf: reply.generateCsrf() })}<button class="link" type="submit" name="logout">Log \
out</button></form>`;
  return reply
    .status(options.status ?? 200)
    .header('Cache-Control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(
      page(title, body, {
        header,
        nav: sectionNav(SECTIONS, active, 'Store admin'),
        wide: true,
        ...(options.scripts ? { scripts: options.scripts } : {}),
      }),
    );
}
