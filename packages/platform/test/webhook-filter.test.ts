// The webhook filter language (domain/webhook-filter.ts) and a subscription's shape
// (domain/webhook-subscription-shape.ts): grammar, precedence, types, bounds, every error, the
// compiled-filter cache and the narrowing of a delivery's body.
import { describe, expect, it } from 'vitest';
import { checkFieldNames, selectFields } from '../src/domain/list-filters.ts';
import { FilterSyntaxError } from '../src/domain/errors.ts';
import { compileFilter, FilterCache, MAX_FILTER_DEPTH, MAX_FILTER_TERMS } from '../src/domain/webhook-filter.ts';
import { checkSubscriptionShape, readIncludeFields, shapePayload, storedIncludeFields } from '../src/domain/webhook-subscription-shape.ts';

const product = {
  id: '1001',
  title: 'blue shirt',
  body_html: '',
  vendor: 'Acme',
  product_type: 'Shirts',
  status: 'active',
  price: '19.99',
  sku: 'BS-1',
  inventory_quantity: 4,
  tags: 'summer',
  created_at: '2026-11-20T10:00:00.000Z',
  updated_at: '2026-11-25T10:00:00.000Z',
};
const order = {
  id: '7',
  customer_id: null,
  email: 'a@example.com',
  currency: 'EUR',
  financial_status: 'paid',
  fulfillment_status: null,
  total_price: '120.00',
  line_items: [{ title: 'x', quantity: 1, price: '120.00' }],
  created_at: '2026-11-20T10:00:00.000Z',
  updated_at: '2026-11-20T10:00:00.000Z',
};

const matches = (text: string, object: Record<string, unknown> = product, resource = 'products') => compileFilter(resource, text)(object);

function problem(text: string, resource = 'products'): string {
  try {
    compileFilter(resource, text);
  } catch (err) {
    if (err instanceof FilterSyntaxError) return err.message;
    throw err;
  }
  throw new Error(`${text} compiled`);
}

describe('webhook filter: matching', () => {
  it.each([
    ['status:active', true],
    ['status:draft', false],
    ['price:>=10', true],
    ['price:>19.99', false],
    ['price:19.99', true],
    ['price:19.990', true],
    ['price:<20', true],
    ['price:<=19.98', false],
    ['inventory_quantity:<5', true],
    ['inventory_quantity:4', true],
    ['id:>1000', true],
    ['id:1001', true],
    ['title:"blue shirt"', true],
    ['title:"Blue shirt"', false],
    ['title:blue', false],
    ['vendor:Acme', true],
    ['created_at:>=2026-11-20', true],
    ['created_at:<2026-11-20T10:00:00Z', false],
    ['updated_at:>2026-11-25T09:59:59+00:00', true],
    ['created_at:2026-11-20T10:00:00Z', true],
    ['title:"say \\"hi\\""', false],
  ])('%s → %s', (text, want) => {
    expect(matches(text)).toBe(want);
  });

  it('quoted values keep their escapes and blanks', () => {
    expect(matches('title:"say \\"hi\\" \\\\ now"', { ...product, title: 'say "hi" \\ now' })).toBe(true);
    expect(matches('vendor:"Acme (EU)"', { ...product, vendor: 'Acme (EU)' })).toBe(true);
  });

  it('AND binds tighter than OR; parentheses change that', () => {
    // false OR (true AND true) = true; (false OR true) AND false = false.
    expect(matches('status:draft OR vendor:Acme AND price:>=10')).toBe(true);
    expect(matches('status:draft OR vendor:Acme AND price:>100')).toBe(false);
    expect(matches('(status:draft OR vendor:Acme) AND price:>100')).toBe(false);
    expect(matches('(status:draft OR vendor:Acme) AND price:>=10')).toBe(true);
    expect(matches('status:active AND (price:>100 OR inventory_quantity:<5)')).toBe(true);
    expect(matches('status:active AND price:>100 OR inventory_quantity:<5')).toBe(true);
    expect(matches('status:active AND (price:>100 OR inventory_quantity:>5)')).toBe(false);
  });

  it('blanks around operators and parentheses are free', () => {
    expect(matches('  ( status:active )AND(price:>=10)  ')).toBe(true);
    expect(matches('status:active\tAND\nprice:>=10')).toBe(true);
  });

  it('null matches a null field; a field the object lacks matches nothing', () => {
    expect(matches('fulfillment_status:null', order, 'orders')).toBe(true);
    expect(matches('customer_id:null', order, 'orders')).toBe(true);
    expect(matches('customer_id:>0', order, 'orders')).toBe(false);
    expect(matches('fulfillment_status:fulfilled', order, 'orders')).toBe(false);
    expect(matches('total_price:>100 AND currency:EUR', order, 'orders')).toBe(true);
    // A payload that holds only an id (or lacks the field) matches no comparison on the field.
    expect(matches('status:active', { id: '1001' })).toBe(false);
    expect(matches('status:active OR id:1001', { id: '1001' })).toBe(true);
    expect(matches('price:>=0', { ...product, price: 'n/a' })).toBe(false);
    expect(matches('created_at:>=2026-01-01', { ...product, created_at: 12 })).toBe(false);
  });

  it('a compiled filter is a plain function that can run many times', () => {
    const f = compileFilter('customers', 'email:"a@example.com" OR phone:null');
    expect(f({ email: 'a@example.com', phone: '+1 555 0100' })).toBe(true);
    expect(f({ email: 'b@example.com', phone: null })).toBe(true);
    expect(f({ email: 'b@example.com', phone: '+1 555 0100' })).toBe(false);
  });
});

describe('webhook filter: errors name the field or the position', () => {
  it.each([
    [
      'colour:red',
      'unknown field "colour": products have id, title, body_html, vendor, product_type, status, price, sku, inventory_quantity, tags, created_at, updated_at at position 1',
    ],
    ['status:active AND colour:red', 'unknown field "colour"', 'position 19'],
    ['title:>=b', 'title is a string: ranges (>=) apply to numbers and times only at position 7'],
    ['status:<active', 'status is a string: ranges (<) apply'],
    ['price:cheap', 'price is a number: "cheap" is not one at position 7'],
    ['inventory_quantity:>1e3', 'inventory_quantity is a number'],
    ['created_at:>=yesterday', 'created_at is a time: expected an ISO 8601 date or date-time', 'position 12'],
    ['created_at:>=2026-02-30', 'created_at is a time'],
    ['status:actve', 'status is one of active, draft, archived; not "actve" at position 8'],
    ['status:null', 'status is never null at position 8'],
    ['price:>null', 'price: a range needs a value, not null'],
    ['status', 'expected ":" right after the field status at position 7'],
    ['status :active', 'expected ":" right after the field status at position 7'],
    ['status:', 'expected a value for status after ":" at position 8'],
    ['status: active', 'expected a value for status after ":" at position 8'],
    ['status:active AND', 'expected a field name, found the end of the filter at position 18'],
    ['status:active OR OR price:1', 'expected a field name before OR at position 18'],
    ['AND status:active', 'expected a field name before AND at position 1'],
    ['status:active price:1', 'expected AND, OR or the end of the filter, not "price:1" at position 15'],
    ['status:active and price:1', 'expected AND, OR or the end of the filter, not "and"'],
    ['(status:active', 'the "(" at position 1 is not closed at position 15'],
    ['status:active)', 'unmatched ")" at position 14'],
    ['()', 'expected a field name, not ")" at position 2'],
    ['title:"blue', 'the quote opened for title is not closed at position 7'],
    ['"blue":x', 'expected a field name, not "\\"blue\\":x" at position 1'],
    ['', 'is empty; send null to have no filter'],
    ['   ', 'is empty'],
  ])('%j', (text, ...parts) => {
    const message = problem(text);
    for (const part of parts) expect(message).toContain(part);
  });

  it('lists and objects cannot be filtered on', () => {
    expect(problem('line_items:x', 'orders')).toBe('line_items is a list and cannot be filtered on at position 1');
  });

  it('a boolean-free resource still types its ranges: ids and amounts are numbers', () => {
    expect(problem('customer_id:abc', 'orders')).toContain('customer_id is a number');
    expect(problem('email:>a', 'customers')).toContain('email is a string');
  });

  it('is bounded in length, terms and nesting', () => {
    expect(problem(`title:"${'x'.repeat(1000)}"`)).toBe('is longer than 1000 characters');
    const many = Array.from({ length: MAX_FILTER_TERMS + 1 }, (_, i) => `inventory_quantity:${i}`).join(' OR ');
    expect(problem(many)).toContain(`a filter may compare at most ${MAX_FILTER_TERMS} fields`);
    const twenty = Array.from({ length: MAX_FILTER_TERMS }, (_, i) => `inventory_quantity:${i}`).join(' OR ');
    expect(compileFilter('products', twenty)({ inventory_quantity: 19 })).toBe(true);
    const deep = (n: number) => `${'('.repeat(n)}status:active${')'.repeat(n)}`;
    expect(compileFilter('products', deep(MAX_FILTER_DEPTH))(product)).toBe(true);
    expect(problem(deep(MAX_FILTER_DEPTH + 1))).toBe(
      `parentheses nest deeper than ${MAX_FILTER_DEPTH} levels at position ${MAX_FILTER_DEPTH + 1}`,
    );
  });

  it('a resource that is not one cannot be filtered', () => {
    expect(problem('id:1', 'apps')).toBe('apps cannot be filtered');
  });
});

describe('FilterCache', () => {
  it('compiles each text once, drops the least recently used past its bound, keeps a broken text as null', () => {
    const cache = new FilterCache(2);
    const a = cache.get('products', 'status:active');
    expect(cache.get('products', 'status:active')).toBe(a);
    cache.get('products', 'price:>1');
    cache.get('products', 'status:active'); // now the most recent
    cache.get('products', 'price:>2'); // evicts price:>1
    expect(cache.size).toBe(2);
    expect(cache.get('products', 'status:active')).toBe(a);
    expect(cache.get('products', 'colour:red')).toBeNull();
    // The same text on another resource is another filter.
    expect(cache.get('orders', 'status:active')).toBeNull();
  });
});

describe('checkSubscriptionShape', () => {
  it('normalises what is stored', () => {
    expect(checkSubscriptionShape('products/update', { filter: 'status:active', includeFields: ['title', ' id ', 'title'] })).toEqual({
      ok: true,
      filter: 'status:active',
      includeFields: ['title', 'id'],
    });
    expect(checkSubscriptionShape('orders/create', {})).toEqual({ ok: true, filter: null, includeFields: null });
    expect(checkSubscriptionShape('app/uninstalled', { filter: null, includeFields: null })).toEqual({
      ok: true,
      filter: null,
      includeFields: null,
    });
  });

  it('names each bad value', () => {
    expect(checkSubscriptionShape('products/create', { filter: 'colour:red', includeFields: ['id', 'colour'] })).toEqual({
      ok: false,
      errors: {
        filter: [expect.stringContaining('unknown field "colour"')],
        include_fields: [expect.stringContaining('unknown field "colour"; fields are id, title')],
      },
    });
    expect(checkSubscriptionShape('orders/updated', { includeFields: [] })).toEqual({
      ok: false,
      errors: { include_fields: [expect.stringContaining('must name at least one of id, customer_id')] },
    });
    expect(checkSubscriptionShape('orders/updated', { includeFields: Array.from({ length: 51 }, () => 'id') })).toEqual({
      ok: false,
      errors: { include_fields: ['may list at most 50 fields'] },
    });
  });

  it('topics about no resource take neither', () => {
    for (const topic of ['app/uninstalled', 'app/scopes_update', 'bulk_operations/finish'] as const) {
      const checked = checkSubscriptionShape(topic, { filter: 'id:1', includeFields: ['id'] });
      expect(checked.ok).toBe(false);
      if (!checked.ok) {
        expect(checked.errors.filter![0]).toContain(`${topic} is not about a product, order or customer`);
        expect(Object.keys(checked.errors)).toEqual(['filter', 'include_fields']);
      }
    }
  });

  it('include_fields follow the rule of a list’s fields', () => {
    expect(checkFieldNames('title, id'.split(','), ['id', 'title'])).toEqual({ fields: ['title', 'id'] });
    const fields = ['title', 'id'];
    const stored = storedIncludeFields(fields);
    expect(readIncludeFields(stored)).toEqual(fields);
    // The object's own order, like selectFields on a list page.
    expect(JSON.parse(shapePayload(JSON.stringify(product), stored))).toEqual(selectFields(product, fields));
    expect(Object.keys(JSON.parse(shapePayload(JSON.stringify(product), stored)))).toEqual(['id', 'title']);
    expect(shapePayload('{"a":1}', null)).toBe('{"a":1}');
    expect(readIncludeFields('not json')).toBeNull();
  });
});
