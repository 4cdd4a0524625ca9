// What a webhook subscription sends: which changes (`filter`) and which fields of each
// (`include_fields`). Checked here for every way a subscription is made (the Admin API, an app's
// configuration file, the partner dashboard), stored as text, and applied to a delivery's body.
import { checkFieldNames, selectFields } from './list-filters.ts';
import { resourceFields } from './resource-fields.ts';
import { FilterSyntaxError } from './errors.ts';
import { compileFilter } from './webhook-filter.ts';
import { topicResource, type WebhookTopic } from './webhook-topics.ts';

/** Most names one `include_fields` may list (more than any resource has). */
export const MAX_INCLUDE_FIELDS = 50;

export interface SubscriptionShape {
  /** The filter's text; null for every change of the topic. */
  filter: string | null;
  /** Top-level fields each delivery holds, without repeats; null for the whole object. */
  includeFields: string[] | null;
}

export type ShapeCheck = ({ ok: true } & SubscriptionShape) | { ok: false; errors: Record<string, string[]> };

/**
 * Checks a filter and an include_fields list for a subscription to `topic` (null or undefined:
 * none). The filter is parsed against the fields of the topic's resource; the field names are
 * checked as a list's `fields` is. Topics about no resource (`app/*`, `bulk_operations/finish`)
 * take neither. Returns the values as they are stored, or the problems by body field.
 */
export function checkSubscriptionShape(
  topic: WebhookTopic,
  input: { filter?: string | null | undefined; includeFields?: readonly string[] | null | undefined },
): ShapeCheck {
  const filter = input.filter ?? null;
  const asked = input.includeFields ?? null;
  const errors: Record<string, string[]> = {};
  const resource = topicResource(topic);
  const fields = resource === undefined ? undefined : resourceFields(resource);
  if (!fields) {
    const why = `${topic} is not about a product, order or customer: its deliveries cannot be filtered or narrowed`;
    if (filter !== null) errors.filter = [why];
    if (asked !== null) errors.include_fields = [why];
    return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, filter: null, includeFields: null };
  }
  if (filter !== null) {
    try {
      compileFilter(resource!, filter);
    } catch (err) {
      if (!(err instanceof FilterSyntaxError)) throw err;
      errors.filter = [err.message];
    }
  }
  let includeFields: string[] | null = null;
  if (asked !== null) {
    if (asked.length > MAX_INCLUDE_FIELDS) errors.include_fields = [`may list at most ${MAX_INCLUDE_FIELDS} fields`];
    else {
      const checked = checkFieldNames(asked, fields.names);
      if ('problem' in checked) errors.include_fields = [checked.problem];
      else includeFields = checked.fields;
    }
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, filter, includeFields };
}

/** The stored form of include_fields (a JSON array), or null. */
export function storedIncludeFields(fields: readonly string[] | null): string | null {
  return fields === null ? null : JSON.stringify(fields);
}

/** include_fields as stored, read back; null when unset or unreadable. */
export function readIncludeFields(stored: string | null): string[] | null {
  if (stored === null) return null;
  try {
    const parsed: unknown = JSON.parse(stored);
    return Array.isArray(parsed) && parsed.every((f) => typeof f === 'string') ? parsed : null;
  } catch {
    return null;
  }
}

/**
 * The body a delivery sends: the event's stored payload, or with include_fields only those of its
 * top-level fields, in the payload's own order (the rule of a list's `fields`). A payload that is
 * not an object is sent as it is.
 */
export function shapePayload(payload: string, includeFields: string | null): string {
  const fields = readIncludeFields(includeFields);
  if (fields === null) return payload;
  const parsed: unknown = JSON.parse(payload);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return payload;
  return JSON.stringify(selectFields(parsed as Record<string, unknown>, fields));
}
