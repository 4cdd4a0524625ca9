// What redacting a customer replaces. The customer's record and the email on its orders are
// rewritten in the database; the webhook bodies kept for delivery and for the events list, and the
// answers kept for replaying Admin API writes sent with an Idempotency-Key, are copies of those
// records, so the same fields are replaced in them, and the ids stay, so an app can still tell
// which customer or order an event or an answer was about.
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

/**
 * The Admin API resources whose write answers (`{"data": …}`) can name a customer, each with the
 * field of `data` that holds the customer's id: a customer's own id, an order's customer_id.
 * Answers of other resources (products, webhook subscriptions) never carry a customer's data.
 */
export const ANSWER_CUSTOMER_ID_FIELDS = { customers: 'id', orders: 'customer_id' } as const;

export type CustomerAnswerResource = keyof typeof ANSWER_CUSTOMER_ID_FIELDS;

export const CUSTOMER_ANSWER_RESOURCES = Object.keys(ANSWER_CUSTOMER_ID_FIELDS) as CustomerAnswerResource[];

/**
 * Which resource an answer stored without its resource is about, by its shape: an order is the
 * only object with a customer_id, a customer the only one with names. Only keys written before the
 * resource was kept with them lack it, and they expire within a day.
 */
function resourceByShape(data: Record<string, unknown>): CustomerAnswerResource | undefined {
  if ('customer_id' in data) return 'orders';
  if ('email' in data && 'first_name' in data) return 'customers';
  return undefined;
}

/**
 * The stored answer of an Admin API write, as its parsed body, with the customer's personal data
 * replaced by what the redacted records now hold, when it names the customer: a customer answer
 * about it gets its email, names and phone replaced, an order answer of its orders the email.
 * Everything else, ids included, is kept. Undefined when the answer does not name the customer
 * (another customer's, a guest order numbered like the customer, another resource's).
 * `resource` is the resource the write was on; null for a key stored before that was kept.
 */
export function redactedAnswer(resource: string | null, body: unknown, customerId: number, email: string): unknown {
  if (!isObject(body) || !isObject(body.data)) return undefined;
  const data = body.data;
  const kind = resource === null ? resourceByShape(data) : CUSTOMER_ANSWER_RESOURCES.find((r) => r === resource);
  if (kind === undefined || data[ANSWER_CUSTOMER_ID_FIELDS[kind]] !== String(customerId)) return undefined;
  if (kind === 'customers') return { ...body, data: redactedCustomer(data, email) };
  return { ...body, data: 'email' in data ? { ...data, email } : data };
}
