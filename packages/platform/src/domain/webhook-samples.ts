// Made-up payloads of each webhook topic, shaped exactly as real deliveries of that topic are, for
// `storegate webhooks trigger`: an app developer tests a handler without first making the change
// in a store. Ids are fixed so a handler's output can be compared from one run to the next.
import { noticePayload } from './api-health.ts';
import { subscriptionDisabledPayload } from './subscription-disabled.ts';
import type { WebhookTopic } from './webhook-topics.ts';

const AT = '2026-01-15T10:00:00.000Z';

const product = {
  id: '1001',
  title: 'Sample T-shirt',
  body_html: '<p>A sample product</p>',
  vendor: 'storegate',
  product_type: 'Shirts',
  status: 'active',
  price: '19.99',
  sku: 'SAMPLE-TS',
  inventory_quantity: 10,
  tags: 'sample',
  created_at: AT,
  updated_at: AT,
};

const customer = {
  id: '2001',
  email: 'ada@example.com',
  first_name: 'Ada',
  last_name: 'Lovelace',
  phone: null,
  created_at: AT,
  updated_at: AT,
};

const order = {
  id: '3001',
  customer_id: '2001',
  email: 'ada@example.com',
  currency: 'USD',
  financial_status: 'paid',
  fulfillment_status: null,
  total_price: '39.98',
  line_items: [{ title: 'Sample T-shirt', quantity: 2, price: '19.99' }],
  created_at: AT,
  updated_at: AT,
};

/** The body of a sample delivery of `topic` from the store `storeId` at `shopDomain`. */
export function samplePayload(
  topic: WebhookTopic,
  shop: { storeId: string; shopDomain: string; clientId?: string },
): Record<string, unknown> {
  const privacy = { shop_id: shop.storeId, shop_domain: shop.shopDomain };
  const subject = { ...privacy, customer: { id: customer.id, email: customer.email, phone: customer.phone } };
  switch (topic) {
    case 'products/create':
    case 'products/update':
    case 'products/delete':
      return product;
    case 'orders/create':
    case 'orders/updated':
      return order;
    case 'customers/create':
    case 'customers/update':
      return customer;
    case 'app/uninstalled':
      return {
        id: shop.storeId,
        name: shop.shopDomain.split('.')[0],
        domain: shop.shopDomain,
        client_id: shop.clientId ?? 'sample-client-id',
        uninstalled_at: AT,
      };
    case 'app/scopes_update':
      return {
        id: '4001',
        previous: ['read_products'],
        current: ['read_orders', 'read_products'],
        updated_at: AT,
        shop_domain: shop.shopDomain,
      };
    case 'app/api_version_deprecated':
      return noticePayload(
        '2022-01',
        Date.parse('2025-06-01T00:00:00Z'),
        Date.parse('2026-02-14T00:00:00Z'),
        Date.parse(AT),
        Date.parse(AT),
      );
    case 'bulk_operations/finish':
      return {
        id: '6001',
        status: 'completed',
        resource: 'products',
        rows: 2,
        bytes: 812,
        error: null,
        snapshot_at: AT,
        completed_at: AT,
      };
    case 'subscription/disabled':
      return {
        ...subscriptionDisabledPayload(
          { id: 7001, topic: 'orders/create', address: 'https://app.example.com/webhooks/orders' },
          '5 deliveries in a row failed every retry',
          Date.parse(AT),
        ),
      };
    case 'customers/data_request':
      return { ...subject, orders_requested: [order.id], data_request: { id: '5001' } };
    case 'customers/redact':
      return { ...subject, orders_to_redact: [order.id] };
    case 'shop/redact':
      return privacy;
  }
}
