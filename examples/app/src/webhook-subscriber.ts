// Right after an install: subscribe to the topics the app shows, through the Admin API
// (`POST /openapi/{version}/webhooks {address, topic}`). A reinstall finds them already there.
import { ScopeError, StoregateError, ValidationError, type AdminClient } from '@storegate/app';

/** Status of each topic's subscription, as shown on the pages ("subscribed", "already subscribed", or why it failed). */
export type SubscriptionStatus = Map<string, string>;

export async function subscribeWebhooks(client: AdminClient, address: string, topics: readonly string[]): Promise<SubscriptionStatus> {
  const status: SubscriptionStatus = new Map();
  for (const topic of topics) {
    try {
      await client.post('webhooks', { address, topic });
      status.set(topic, 'subscribed');
    } catch (error) {
      if (
        error instanceof ValidationError &&
        Object.values(error.errors)
          .flat()
          .some((m) => m.includes('already subscribed'))
      ) {
        status.set(topic, 'already subscribed');
      } else if (error instanceof ScopeError) {
        status.set(topic, 'refused: the app lacks the scope this topic needs');
      } else if (error instanceof ValidationError) {
        status.set(
          topic,
          `refused: ${Object.entries(error.errors)
            .map(([field, messages]) => `${field} ${messages.join(', ')}`)
            .join('; ')}`,
        );
      } else if (error instanceof StoregateError) {
        status.set(topic, `failed: ${error.code}`);
      } else {
        throw error;
      }
    }
  }
  return status;
}
