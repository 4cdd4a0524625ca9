// How the CLI prints app-level webhook subscriptions and what a change of them did in the stores
// that installed the app: shared by `apps deploy` and `apps webhooks`.
import type { ReshapeReport, SyncReport } from '@storegate/platform';

export type { ReshapeReport, SyncReport };

type Spread = { stores: number; skipped: { store: string; topic: string; address: string; reason: string }[] };
type Shape = { filter: string | null; include_fields: string | null };

const plural = (n: number) => `${n} store${n === 1 ? '' : 's'}`;

/** include_fields as stored (a JSON array), read back; null for none. */
function fieldsOf(stored: string | null): string[] | null {
  if (stored === null) return null;
  const parsed: unknown = JSON.parse(stored);
  return Array.isArray(parsed) ? parsed.map(String) : null;
}

/** The filter and fields in words, for a table cell or a line: `-` for none. */
export const filterText = (s: Shape) => s.filter ?? '-';
export const fieldsText = (s: Shape) => fieldsOf(s.include_fields)?.join(',') ?? '-';

/** ` [filter …, include_fields …]` after a subscription's line, or nothing when it has neither. */
function shapeSuffix(s: Shape): string {
  const parts = [
    ...(s.filter === null ? [] : [`filter "${s.filter}"`]),
    ...(s.include_fields === null ? [] : [`include_fields ${fieldsText(s)}`]),
  ];
  return parts.length === 0 ? '' : ` [${parts.join('; ')}]`;
}

/** One line for an added subscription, then one per store whose caps left no room for its copy. */
export function addedLines(s: { topic: string; address: string } & Shape & Spread): string[] {
  return [
    `added ${s.topic} -> ${s.address}${shapeSuffix(s)} (copied into ${plural(s.stores)})`,
    ...s.skipped.map((k) => `  not copied into ${k.store}: ${k.reason}`),
  ];
}

/** One line for a subscription whose filter or fields changed: what each was and is. */
export function changedLine(s: ReshapeReport): string {
  const parts: string[] = [];
  if (s.previous.filter !== s.filter) parts.push(`filter: ${filterText(s.previous)} -> ${filterText(s)}`);
  if (s.previous.include_fields !== s.include_fields) parts.push(`include_fields: ${fieldsText(s.previous)} -> ${fieldsText(s)}`);
  if (parts.length === 0) return `unchanged ${s.topic} -> ${s.address}`;
  return `changed ${s.topic} -> ${s.address}: ${parts.join('; ')} (its copies in ${plural(s.stores)} changed)`;
}

export function removedLine(s: { topic: string; address: string; stores: number }): string {
  return `removed ${s.topic} -> ${s.address} (its copies in ${plural(s.stores)} deleted)`;
}

export function subscriptionLines(r: SyncReport): string[] {
  return [...r.removed.map(removedLine), ...r.changed.map(changedLine), ...r.added.flatMap(addedLines)];
}

type SubscriptionJson = {
  id: string;
  topic: string;
  address: string;
  api_version: string;
  filter: string | null;
  include_fields: string[] | null;
  created_at: string;
  updated_at: string;
};
type SkippedJson = { store: string; topic: string; address: string; reason: string };

/** An app-level subscription as JSON output: ids as strings, times as ISO strings, include_fields as a list. */
export function appSubscriptionJson(
  s: {
    id: number;
    topic: string;
    address: string;
    api_version: string;
    created_at: number;
    updated_at: number;
  } & Shape,
): SubscriptionJson {
  return {
    id: String(s.id),
    topic: s.topic,
    address: s.address,
    api_version: s.api_version,
    filter: s.filter,
    include_fields: fieldsOf(s.include_fields),
    created_at: new Date(s.created_at).toISOString(),
    updated_at: new Date(s.updated_at).toISOString(),
  };
}

/** What a change of the filter or fields did, as JSON: the subscription now, what it had, the copies changed. */
export function changedJson(s: ReshapeReport): SubscriptionJson & {
  changed: boolean;
  previous: { filter: string | null; include_fields: string[] | null };
  stores: number;
} {
  return {
    ...appSubscriptionJson(s),
    changed: s.changed,
    previous: { filter: s.previous.filter, include_fields: fieldsOf(s.previous.include_fields) },
    stores: s.stores,
  };
}

export function subscriptionsJson(r: SyncReport): {
  added: (SubscriptionJson & { stores: number; skipped: SkippedJson[] })[];
  changed: ReturnType<typeof changedJson>[];
  removed: (SubscriptionJson & { stores: number })[];
  unchanged: SubscriptionJson[];
} {
  return {
    added: r.added.map((s) => ({ ...appSubscriptionJson(s), stores: s.stores, skipped: s.skipped.map((k) => ({ ...k })) })),
    changed: r.changed.map(changedJson),
    removed: r.removed.map((s) => ({ ...appSubscriptionJson(s), stores: s.stores })),
    unchanged: r.unchanged.map(appSubscriptionJson),
  };
}
