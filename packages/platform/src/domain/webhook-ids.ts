// The ids of a webhook event and of each of its deliveries. The webhook id is what a receiver
// de-duplicates by, so every send of one delivery (retries, "Send again", replays) keeps it.
import { pooledRandomBytes } from './random.ts';

export function newWebhookId(): string {
  return `wh_${pooledRandomBytes(16).toString('base64url')}`;
}

export function newEventId(): string {
  return `evt_${pooledRandomBytes(16).toString('base64url')}`;
}
