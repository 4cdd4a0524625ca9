// Columns and column expressions the webhook repository selects: a subscription's columns, and
// for a delivery the address and subscription it belongs to (a privacy delivery has none of its own).
import type { ExpressionBuilder } from 'kysely';
import type { Database } from '../schema.ts';

export const SUBSCRIPTION_COLUMNS = [
  'id',
  'store_id',
  'owner',
  'app_id',
  'private_app_id',
  'topic',
  'address',
  'api_version',
  'created_at',
  'updated_at',
  'disabled_at',
  'version',
  'app_subscription_id',
  'filter',
  'include_fields',
] as const;

type LogTables = Database & {
  d: Database['webhook_deliveries'];
  s: Database['webhook_subscriptions'];
  a: Database['apps'];
};

/**
 * The address a delivery goes to: its subscription's, or for a privacy delivery (a negative
 * subscription id, see `privacySubscriptionId`) the app's privacy webhook address as it is now.
 */
export function addressOf(eb: ExpressionBuilder<LogTables, 'd' | 's' | 'a'>) {
  return eb.case().when('d.subscription_id', '<', 0).then(eb.ref('a.privacy_webhook_url')).else(eb.ref('s.address')).end();
}

/** The subscription of a delivery; a privacy delivery keeps its stand-in id, which never goes away. */
export function subscriptionOf(eb: ExpressionBuilder<LogTables, 'd' | 's'>) {
  return eb.case().when('d.subscription_id', '<', 0).then(eb.ref('d.subscription_id')).else(eb.ref('s.id')).end();
}
