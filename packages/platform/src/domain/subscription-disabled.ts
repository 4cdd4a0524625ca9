// The body of a `subscription/disabled` event: which subscription the platform disabled, why and
// when. It goes to the app's other addresses, so it names the subscription in full.
export interface DisabledSubscription {
  id: number;
  topic: string;
  address: string;
}

export interface SubscriptionDisabledPayload {
  subscription: { id: string; topic: string; address: string };
  reason: string;
  disabled_at: string;
}

export function subscriptionDisabledPayload(s: DisabledSubscription, reason: string, at: number): SubscriptionDisabledPayload {
  return { subscription: { id: String(s.id), topic: s.topic, address: s.address }, reason, disabled_at: new Date(at).toISOString() };
}
