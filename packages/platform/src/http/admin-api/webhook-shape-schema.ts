// The request schema of a webhook subscription's filter and include_fields, with the syntax in
// their descriptions: the Admin API's subscriptions and the partner API's app-level ones take the
// same values.
import { MAX_FILTER_DEPTH, MAX_FILTER_LENGTH, MAX_FILTER_TERMS } from '../../domain/webhook-filter.ts';
import { MAX_INCLUDE_FIELDS } from '../../domain/webhook-subscription-shape.ts';

const FILTER_DESCRIPTION =
  'Only changes whose object matches this query get a delivery (null: every change of the topic). ' +
  '`field:value` compares a top-level field of the topic’s object for equality, `field:>=10` (also `>`, `<`, `<=`) a number ' +
  'or time for a range; quote values holding blanks (`title:"blue shirt"`); combine with AND and OR (AND binds tighter) ' +
  'and parentheses. Example: `status:active AND price:>=10`, `financial_status:paid OR (total_price:>100 AND currency:EUR)`. ' +
  'Values are checked against the field’s type when the subscription is saved: ids and amounts are numbers, ' +
  '`created_at`/`updated_at` ISO 8601 times, enumerated fields take one of their values, `null` only fits a field that may ' +
  'be null; strings compare exactly. A delete is filtered on the object as it was. ' +
  `At most ${MAX_FILTER_LENGTH} characters, ${MAX_FILTER_TERMS} comparisons and ${MAX_FILTER_DEPTH} levels of parentheses. ` +
  'Topics that are not about a product, order or customer take no filter.';
const INCLUDE_FIELDS_DESCRIPTION =
  'The top-level fields each delivery’s body holds, as the `fields` of the topic’s list takes them (e.g. ["id", "status"]); ' +
  'null: the whole object. Unknown fields are refused. A delivery keeps the fields its subscription had when the change ' +
  'happened, for every attempt and a manual redelivery. Topics that are not about a product, order or customer take none.';

export const FILTER = { type: ['string', 'null'], maxLength: MAX_FILTER_LENGTH, description: FILTER_DESCRIPTION };
export const INCLUDE_FIELDS = {
  type: ['array', 'null'],
  maxItems: MAX_INCLUDE_FIELDS,
  items: { type: 'string', maxLength: 100 },
  description: INCLUDE_FIELDS_DESCRIPTION,
};
