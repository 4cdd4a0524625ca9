// Products, orders and customers in the store admin, page by page with the Admin API's keyset
// cursors: "Next page" carries `cursor`, "Previous page" `pre_cursor`; both opaque positions, so
// records added or removed meanwhile are neither skipped nor shown twice.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/services.ts';
import { customers, orders, products, type ResourceDef } from '../../domain/resources.ts';
import { formatTime } from '../views/form-fields.ts';
import { privacyNotice } from './customer-privacy.route.ts';
import { html, scrollBox, type SafeHtml } from '../views/html.ts';
import { sendAdminPage, type AdminSection } from '../views/store-admin-layout.ts';

const merchantOnly = { config: { session: 'merchant' as const } };

export const ADMIN_PAGE_SIZE = 25;

interface ListView {
  def: ResourceDef;
  section: AdminSection;
  title: string;
  columns: string[];
  /** The cells of one API object (as the Admin API returns it: ids and prices are strings). */
  row(o: Record<string, unknown>): SafeHtml[];
  /** A notice from the query string (after an action on a record). */
  notice?(q: Record<string, unknown>): SafeHtml | undefined;
}

const money = (amount: unknown, currency: unknown = 'USD') => `${String(amount)} ${String(currency)}`;
const iso = (value: unknown) => formatTime(Date.parse(String(value)));

const VIEWS: ListView[] = [
  {
    def: products,
    section: 'products',
    title: 'Products',
    columns: ['ID', 'Title', 'Status', 'Price', 'SKU', 'Inventory', 'Updated'],
    row: (p) => [
      html`${String(p.id)}`,
      html`${String(p.title)}`,
      html`${String(p.status)}`,
      html`${money(p.price)}`,
      html`${String(p.sku)}`,
      html`${String(p.inventory_quantity)}`,
      html`${iso(p.updated_at)}`,
    ],
  },
  {
    def: orders,
    section: 'orders',
    title: 'Orders',
    columns: ['ID', 'Email', 'Total', 'Payment', 'Fulfillment', 'Items', 'Created'],
    row: (o) => [
      html`${String(o.id)}`,
      html`${String(o.email)}`,
      html`${money(o.total_price, o.currency)}`,
      html`${String(o.financial_status)}`,
      html`${String(o.fulfillment_status ?? 'unfulfilled')}`,
      html`${String((o.line_items as unknown[]).length)}`,
      html`${iso(o.created_at)}`,
    ],
  },
  {
    def: customers,
    section: 'customers',
    title: 'Customers',
    columns: ['ID', 'Email', 'Name', 'Phone', 'Created', 'Privacy'],
    row: (c) => [
      html`${String(c.id)}`,
      html`${String(c.email)}`,
      html`${`${String(c.first_name)} ${String(c.last_name)}`.trim()}`,
      html`${String(c.phone ?? '')}`,
      html`${iso(c.created_at)}`,
      html`<a href="/admin/customers/${String(c.id)}/data-request" \
aria-label="Request data for apps about customer ${String(c.id)}">Request data for apps</a> · \
<a href="/admin/customers/${String(c.id)}/redact" aria-label="Redact customer ${String(c.id)}">Redact customer</a>`,
    ],
    notice: privacyNotice,
  },
];

export function registerStoreListRoutes(app: FastifyInstance, services: Pick<Services, 'resources'>): void {
  for (const view of VIEWS) {
    app.get(`/admin/${view.def.name}`, merchantOnly, async (req, reply) => {
      const store = req.store!;
      const q = req.query as Record<string, unknown>;
      const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
      // The older convention gives both directions: `cursor` forward, `pre_cursor` back.
      const result = (await services.resources.page(view.def, store.id, {
        limit: ADMIN_PAGE_SIZE,
        cursor: text(q.cursor),
        preCursor: text(q.pre_cursor),
        convention: 'older',
      })) as { data: Record<string, unknown>[]; cursor: string; pre_cursor: string | null };
      const label = view.title.toLowerCase();
      const body = html`<h1>${view.title}</h1>
${view.notice?.(q) ?? ''}
${
  result.data.length === 0
    ? html`<p class="muted">No ${label} on this page.</p>`
    : scrollBox(
        view.title,
        html`<table>
<caption class="muted">${result.data.length} ${label}, from id ${String(result.data[0]!.id)} to ${String(result.data.at(-1)!.id)}</caption>
<thead><tr>${view.columns.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
<tbody>
${result.data.map((o) => html`<tr>${view.row(o).map((cell) => html`<td>${cell}</td>`)}</tr>\n`)}</tbody>
</table>`,
      )
}
<nav class="pager" aria-label="Pages of ${label}">
${
  result.pre_cursor
    ? html`<a href="/admin/${view.def.name}?pre_cursor=${result.pre_cursor}" rel="prev">Previous page</a>`
    : q.cursor || q.pre_cursor
      ? html`<a href="/admin/${view.def.name}">First page</a>`
      : ''
}
${result.cursor ? html`<a href="/admin/${view.def.name}?cursor=${result.cursor}" rel="next">Next page</a>` : ''}
</nav>`;
      return sendAdminPage(reply, store, view.section, view.title, body);
    });
  }
}
