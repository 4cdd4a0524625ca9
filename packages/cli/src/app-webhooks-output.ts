// How the CLI prints app-level webhook subscriptions and what a change of them did in the stores
// that installed the app: shared by `apps deploy` and `apps webhooks`.
import type { SyncReport } from '@storegate/platform';

export type { SyncReport };

type Spread = { stores: number; skipped: { store: string; topic: string; address: string; reason: string }[] };

const plural = (n: number) => `${n} store${n === 1 ? '' : 's'}`;

/** One line for an added subscription, then one per store whose caps left no room for its copy. */
export function addedLines(s: { topic: string; address: string } & Spread): string[] {
  return [
    `added ${s.topic} -> ${s.address} (copied into ${plural(s.stores)})`,
    ...s.skipped.map((k) => `  not copied into ${k.store}: ${k.reason}`),
  ];
}

export function removedLine(s: { topic: string; address: string; stores: number }): string {
  return `removed ${s.topic} -> ${s.address} (its copies in ${plural(s.stores)} deleted)`;
}

export function subscriptionLines(r: SyncReport): string[] {
  return [...r.removed.map(removedLine), ...r.added.flatMap(addedLines)];
}

type SubscriptionJson = { id: string; topic: string; address: string; api_version: string; created_at: string };
type SkippedJson = { store: string; topic: string; address: string; reason: string };

/** An app-level subscription as JSON output: ids as strings, times as ISO strings. */
export function appSubscriptionJson(s: {
  id: number;
  topic: string;
  address: string;
  api_version: string;
  created_at: number;
}): SubscriptionJson {
  return {
    id: String(s.id),
    topic: s.topic,
    address: s.address,
    api_version: s.api_version,
    created_at: new Date(s.created_at).toISOString(),
  };
}

export function subscriptionsJson(r: SyncReport): {
  added: (SubscriptionJson & { stores: number; skipped: SkippedJson[] })[];
  removed: (SubscriptionJson & { stores: number })[];
  unchanged: SubscriptionJson[];
} {
  return {
    added: r.added.map((s) => ({ ...appSubscriptionJson(s), stores: s.stores, skipped: s.skipped.map((k) => ({ ...k })) })),
    removed: r.removed.map((s) => ({ ...appSubscriptionJson(s), stores: s.stores })),
    unchanged: r.unchanged.map(appSubscriptionJson),
  };
}
