// What an app-level webhook subscription sends (its filter and include_fields): checked with the
// one rule every subscription follows, and compared with what a row holds to tell a change of it
// from a repeat of the same values.
import { ValidationFailedError } from '../domain/errors.ts';
import { checkSubscriptionShape, readIncludeFields, storedIncludeFields } from '../domain/webhook-subscription-shape.ts';
import type { WebhookTopic } from '../domain/webhook-topics.ts';
import type { AppSubscriptionRow, CopyShape } from '../storage/ports/app-webhooks.ts';

/** A change of the filter and include_fields: undefined keeps the one there, null removes it. */
export interface ReshapeInput {
  filter?: string | null | undefined;
  includeFields?: readonly string[] | null | undefined;
}

/** Whether a change of shape changed anything, and what the row held before it. */
export interface ShapeChange {
  changed: boolean;
  previous: CopyShape;
}

/**
 * The filter and fields to store for a subscription to `topic`, or the problems keyed by the
 * input's field (`filter`, `include_fields`) after `prefix`.
 */
export function checkedAppShape(
  topic: WebhookTopic,
  input: ReshapeInput,
  prefix = '',
): { filter: string | null; includeFields: string[] | null } | { errors: Record<string, string[]> } {
  const checked = checkSubscriptionShape(topic, { filter: input.filter, includeFields: input.includeFields });
  if (checked.ok) return { filter: checked.filter, includeFields: checked.includeFields };
  return { errors: Object.fromEntries(Object.entries(checked.errors).map(([k, v]) => [`${prefix}${k}`, v])) };
}

/**
 * `input` applied to `row` and checked against its topic (422 naming the field when bad): the
 * values to store, whether they differ from the row's, and the row's own.
 */
export function shapeChange(row: AppSubscriptionRow, input: ReshapeInput): ShapeChange & { shape: CopyShape } {
  const checked = checkedAppShape(row.topic as WebhookTopic, {
    filter: input.filter === undefined ? row.filter : input.filter,
    includeFields: input.includeFields === undefined ? readIncludeFields(row.include_fields) : input.includeFields,
  });
  if ('errors' in checked) throw new ValidationFailedError(checked.errors);
  const shape: CopyShape = { filter: checked.filter, include_fields: storedIncludeFields(checked.includeFields) };
  const previous: CopyShape = { filter: row.filter, include_fields: row.include_fields };
  return { shape, previous, changed: shape.filter !== previous.filter || shape.include_fields !== previous.include_fields };
}
