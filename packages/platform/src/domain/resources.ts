// Store resources of the Admin API: their JSON schemas (validation, serialization and the OpenAPI
// document all come from these), and the mapping between rows and API objects.
import type { MatchFilter } from './list-filters.ts';
import type { Resource } from './scopes.ts';

/** The store resources of the Admin API, which are also their table names. */
export type ResourceName = Resource;

const iso = (ms: unknown) => new Date(Number(ms)).toISOString();
const DECIMAL = '^(0|[1-9][0-9]{0,9})(\\.[0-9]{1,2})?$';

export interface ResourceDef {
  name: Resource;
  singular: string;
  table: 'products' | 'orders' | 'customers';
  canDelete: boolean;
  /** Exact-match filters its list and count take besides the common ones (see list-filters.ts). */
  matches: readonly MatchFilter[];
  object: Record<string, unknown>;
  create: Record<string, unknown>;
  update: Record<string, unknown>;
  /** The API object of a row (times are unix milliseconds in the row, ISO 8601 strings in the API). */
  toJson(row: Record<string, unknown>): Record<string, unknown>;
  /**
   * The same object as `toJson`, field by field in its order, for a database that writes a list
   * page's JSON itself (storage/repositories/json-page.ts); absent when a field needs more than
   * these three ways of writing a column (orders' line items are parsed JSON).
   */
  jsonFields?: readonly JsonField[];
  /** Column values for a validated create body. */
  createValues(body: Record<string, unknown>, now: number): Record<string, unknown>;
  /** Column values for a validated update body. */
  updateValues(body: Record<string, unknown>, now: number): Record<string, unknown>;
}

/**
 * One field of an API object as the database writes it: `id` is an integer column as a string of
 * digits, `value` the column as it is (text, integer or null), `time` unix milliseconds as an
 * ISO 8601 string with milliseconds and `Z`, as `Date.prototype.toISOString` writes it.
 */
export interface JsonField {
  key: string;
  column: string;
  as: 'id' | 'value' | 'time';
}

const fieldsOf = (id: readonly string[], values: readonly string[]): readonly JsonField[] =>
  Object.freeze([
    ...id.map((c): JsonField => ({ key: c, column: c, as: 'id' })),
    ...values.map((c): JsonField => ({ key: c, column: c, as: 'value' })),
    { key: 'created_at', column: 'created_at', as: 'time' },
    { key: 'updated_at', column: 'updated_at', as: 'time' },
  ]);

const idString = { type: 'string', pattern: '^[0-9]+$', description: 'Identifier (a string of digits)' };
const timestamps = { created_at: { type: 'string', format: 'date-time' }, updated_at: { type: 'string', format: 'date-time' } };

const productFields = {
  title: { type: 'string', minLength: 1, maxLength: 255 },
  body_html: { type: 'string', maxLength: 65535 },
  vendor: { type: 'string', maxLength: 255 },
  product_type: { type: 'string', maxLength: 255 },
  status: { type: 'string', enum: ['active', 'draft', 'archived'] },
  price: { type: 'string', pattern: DECIMAL, description: 'Decimal amount such as "19.99"' },
  sku: { type: 'string', maxLength: 255 },
  inventory_quantity: { type: 'integer', minimum: -1_000_000, maximum: 1_000_000_000 },
  tags: { type: 'string', maxLength: 1000, description: 'Comma-separated tags' },
};

/**
 * A product update may name the inventory quantity it expects to replace: the write happens only
 * while the stored quantity is that one (else 409 with the stored one), so two apps setting stock
 * from what each read cannot overwrite each other's change unseen.
 */
const EXPECTED_INVENTORY = {
  type: 'integer',
  minimum: -1_000_000,
  maximum: 1_000_000_000,
  description:
    'Optional, with inventory_quantity: the quantity this write expects to replace. When the stored quantity differs, ' +
    '409 InventoryQuantityMismatch naming it (`inventory_quantity`) and nothing changes.',
};

/**
 * `title`: the whole title, compared exactly (case and blanks included), as the platform family's
 * clients send it; read from the (store_id, title, id) index.
 */
const TITLE_FILTER: MatchFilter = {
  name: 'title',
  description: 'Only products whose title is exactly this (case-sensitive; no partial match); at most 255 characters.',
  check: (v) => (v.length === 0 ? 'must not be empty' : v.length > 255 ? 'must be at most 255 characters' : undefined),
};

export const products: ResourceDef = {
  name: 'products',
  singular: 'product',
  table: 'products',
  canDelete: true,
  matches: [TITLE_FILTER],
  object: {
    type: 'object',
    additionalProperties: false,
    required: ['id', ...Object.keys(productFields), 'created_at', 'updated_at'],
    properties: { id: idString, ...productFields, ...timestamps },
  },
  create: { type: 'object', additionalProperties: false, required: ['title'], properties: productFields },
  update: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: { ...productFields, expected_inventory_quantity: EXPECTED_INVENTORY },
    dependencies: { expected_inventory_quantity: ['inventory_quantity'] },
  },
  jsonFields: fieldsOf(['id'], ['title', 'body_html', 'vendor', 'product_type', 'status', 'price', 'sku', 'inventory_quantity', 'tags']),
  toJson: (r) => ({
    id: String(r.id),
    title: r.title,
    body_html: r.body_html,
    vendor: r.vendor,
    product_type: r.product_type,
    status: r.status,
    price: r.price,
    sku: r.sku,
    inventory_quantity: r.inventory_quantity,
    tags: r.tags,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  }),
  createValues: (b, now) => ({
    title: b.title,
    body_html: b.body_html ?? '',
    vendor: b.vendor ?? '',
    product_type: b.product_type ?? '',
    status: b.status ?? 'active',
    price: normalizeDecimal(String(b.price ?? '0.00')),
    sku: b.sku ?? '',
    inventory_quantity: b.inventory_quantity ?? 0,
    tags: b.tags ?? '',
    created_at: now,
    updated_at: now,
  }),
  updateValues: (b, now) => ({
    ...pick(b, Object.keys(productFields)),
    ...(b.price !== undefined ? { price: normalizeDecimal(String(b.price)) } : {}),
    updated_at: now,
  }),
};

const customerFields = {
  email: { type: 'string', format: 'email', maxLength: 320 },
  first_name: { type: 'string', maxLength: 255 },
  last_name: { type: 'string', maxLength: 255 },
  phone: { type: ['string', 'null'], pattern: '^\\+?[0-9 ()-]{5,20}$' },
};

export const customers: ResourceDef = {
  name: 'customers',
  singular: 'customer',
  table: 'customers',
  canDelete: true,
  matches: [],
  object: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'email', 'first_name', 'last_name', 'phone', 'created_at', 'updated_at'],
    properties: { id: idString, ...customerFields, ...timestamps },
  },
  create: { type: 'object', additionalProperties: false, required: ['email'], properties: customerFields },
  update: { type: 'object', additionalProperties: false, minProperties: 1, properties: customerFields },
  jsonFields: fieldsOf(['id'], ['email', 'first_name', 'last_name', 'phone']),
  toJson: (r) => ({
    id: String(r.id),
    email: r.email,
    first_name: r.first_name,
    last_name: r.last_name,
    phone: r.phone,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  }),
  createValues: (b, now) => ({
    email: String(b.email).toLowerCase(),
    first_name: b.first_name ?? '',
    last_name: b.last_name ?? '',
    phone: b.phone ?? null,
    created_at: now,
    updated_at: now,
  }),
  updateValues: (b, now) => ({
    ...pick(b, Object.keys(customerFields)),
    ...(b.email !== undefined ? { email: String(b.email).toLowerCase() } : {}),
    updated_at: now,
  }),
};

const lineItem = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'quantity', 'price'],
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 255 },
    quantity: { type: 'integer', minimum: 1, maximum: 10000 },
    price: { type: 'string', pattern: DECIMAL },
  },
};
const orderStatus = {
  financial_status: { type: 'string', enum: ['pending', 'paid', 'refunded', 'voided'] },
  fulfillment_status: { type: ['string', 'null'], enum: ['fulfilled', 'partial', null] },
};

export const orders: ResourceDef = {
  name: 'orders',
  singular: 'order',
  table: 'orders',
  canDelete: false,
  matches: [],
  object: {
    type: 'object',
    additionalProperties: false,
    required: [
      'id',
      'customer_id',
      'email',
      'currency',
      'financial_status',
      'fulfillment_status',
      'total_price',
      'line_items',
      'created_at',
      'updated_at',
    ],
    properties: {
      id: idString,
      customer_id: { type: ['string', 'null'] },
      email: { type: 'string' },
      currency: { type: 'string' },
      ...orderStatus,
      total_price: { type: 'string' },
      line_items: { type: 'array', items: lineItem },
      ...timestamps,
    },
  },
  create: {
    type: 'object',
    additionalProperties: false,
    required: ['email', 'line_items'],
    properties: {
      email: { type: 'string', format: 'email', maxLength: 320 },
      customer_id: { type: 'string', pattern: '^[0-9]{1,18}$' },
      currency: { type: 'string', pattern: '^[A-Z]{3}$' },
      ...orderStatus,
      line_items: { type: 'array', minItems: 1, maxItems: 100, items: lineItem },
    },
  },
  update: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: { email: { type: 'string', format: 'email', maxLength: 320 }, ...orderStatus },
  },
  toJson: (r) => ({
    id: String(r.id),
    customer_id: r.customer_id === null ? null : String(r.customer_id),
    email: r.email,
    currency: r.currency,
    financial_status: r.financial_status,
    fulfillment_status: r.fulfillment_status,
    total_price: r.total_price,
    line_items: JSON.parse(String(r.line_items)),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  }),
  createValues: (b, now) => {
    const items = (b.line_items as { title: string; quantity: number; price: string }[]).map((i) => ({
      title: i.title,
      quantity: i.quantity,
      price: normalizeDecimal(i.price),
    }));
    const cents = items.reduce((sum, i) => sum + Math.round(Number(i.price) * 100) * i.quantity, 0);
    return {
      customer_id: b.customer_id === undefined ? null : Number(b.customer_id),
      email: String(b.email).toLowerCase(),
      currency: b.currency ?? 'USD',
      financial_status: b.financial_status ?? 'pending',
      fulfillment_status: b.fulfillment_status ?? null,
      total_price: (cents / 100).toFixed(2),
      line_items: JSON.stringify(items),
      created_at: now,
      updated_at: now,
    };
  },
  updateValues: (b, now) => ({
    ...pick(b, ['email', 'financial_status', 'fulfillment_status']),
    ...(b.email !== undefined ? { email: String(b.email).toLowerCase() } : {}),
    updated_at: now,
  }),
};

export const RESOURCE_DEFS: readonly ResourceDef[] = [products, orders, customers];

function pick(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

function normalizeDecimal(v: string): string {
  return Number(v).toFixed(2);
}
