// What redacting a customer replaces. The customer's record and the email on its orders are
// rewritten in the database; the webhook bodies kept for delivery and for the events list are
// copies of those records, so the same fields are replaced in them, and the ids stay, so an app
// can still tell which customer or order an event was about.
import type { WebhookTopic } from './webhook-topics.ts';

/** The domain of the placeholder email a redacted customer keeps (reserved: it can never receive mail). */
export const REDACTED_EMAIL_DOMAIN = 'redacted.invalid';

/** The placeholder email of a redacted customer, on its record, its orders and the events about either. */
export function redactedEmail(customerId: number): string {
  return `customer-${customerId}@${REDACTED_EMAIL_DOMAIN}`;
}

export function isRedactedEmail(email: string): boolean {
  return email.endsWith(`@${REDACTED_EMAIL_DOMAIN}`);
}

/**
 * The topics whose bodies can name a customer, each with where the customer's id sits in the body:
 * a customer object's own id, an order's customer_id, a privacy request's customer.id. Storage finds
 * a customer's events by these paths; other topics never carry a customer's data.
 */
export const CUSTOMER_ID_PATHS = {
  'customers/create': ['id'],
  'customers/update': ['id'],
  'orders/create': ['customer_id'],
  'orders/updated': ['customer_id'],
  'customers/data_request': ['customer', 'id'],
  'customers/redact': ['customer', 'id'],
} as const satisfies Partial<Record<WebhookTopic, readonly string[]>>;

export type CustomerTopic = keyof typeof CUSTOMER_ID_PATHS;

export const CUSTOMER_TOPICS = Object.keys(CUSTOMER_ID_PATHS) as CustomerTopic[];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A customer object with its email, names and phone replaced, as its row is redacted. */
function redactedCustomer(c: Record<string, unknown>, email: string): Record<string, unknown> {
  const out = { ...c };
  if ('email' in out) out.email = email;
  if ('first_name' in out) out.first_name = '';
  if ('last_name' in out) out.last_name = '';
  if ('phone' in out) out.phone = null;
  return out;
}

/**
 * The body of an event about the customer with its personal data replaced by what the redacted
 * records now hold: a customer's email, names and phone; an order's email; a privacy request's
 * customer email and phone. Everything else, ids included, is kept. A body of another shape is
 * returned as it is.
 */
export function redactedEventPayload(topic: CustomerTopic, payload: unknown, email: string): unknown {
  if (!isObject(payload)) return payload;
  switch (topic) {
    case 'customers/create':
    case 'customers/update':
      return redactedCustomer(payload, email);
    case 'orders/create':
    case 'orders/updated':
      return 'email' in payload ? { ...payload, email } : payload;
    case 'customers/data_request':
    case 'customers/redact':
      return isObject(payload.customer) ? { ...payload, customer: redactedCustomer(payload.customer, email) } : payload;
  }
}
