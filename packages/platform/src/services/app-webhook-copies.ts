// The store copies of an app's app-level webhook subscriptions: what one store holds is brought
// to what the app declares and the store's grant allows, inside the caller's transaction (an
// install, a change of the grant, or the spreading of a change of the app's list). A copy is an
// ordinary store subscription of the app that names the app-level row it came from.
import { MAX_STORE_SUBSCRIPTIONS_PER_TOPIC, MAX_SUBSCRIPTIONS_PER_OWNER, MAX_SUBSCRIPTIONS_PER_TOPIC } from '../domain/limits.ts';
import { type Scope, storedScopes } from '../domain/scopes.ts';
import { isTopic, mayReceive } from '../domain/webhook-topics.ts';
import type { AppSubscriptionRow, CopyShape } from '../storage/ports/app-webhooks.ts';
import type { Repositories } from '../storage/ports/repositories.ts';
import type { NewSubscription } from '../storage/ports/rows.ts';

/**
 * `app/uninstalled` is sent after the uninstall, to the address of the subscription it was queued
 * for (the worker reads it when it sends): a copy to that topic outlives the uninstall. It is
 * inert meanwhile (nothing else is sent to an app that is not installed), is the copy again on a
 * reinstall, and goes with its app-level row.
 */
export const KEPT_AFTER_UNINSTALL = ['app/uninstalled'] as const;

/** Why a copy was not made in a store: one of the caps held. */
export interface SkippedCopy {
  topic: string;
  address: string;
  reason: string;
}

export interface StoreSync {
  /** The app-level subscriptions a copy was made of. */
  created: number[];
  /** The app-level subscriptions whose copy took their changed filter or include_fields. */
  reshaped: number[];
  removed: number;
  skipped: SkippedCopy[];
}

/**
 * The one place an app-level subscription becomes a store subscription: every field the store
 * row takes from the app-level one is copied here.
 */
export function copyOf(source: AppSubscriptionRow, storeId: number, now: number): NewSubscription {
  return {
    store_id: storeId,
    owner: `app:${source.app_id}`,
    app_id: source.app_id,
    private_app_id: null,
    topic: source.topic,
    address: source.address,
    api_version: source.api_version,
    ...shapeOf(source),
    created_at: now,
    updated_at: now,
    app_subscription_id: source.id,
  };
}

/** What a copy takes from its app-level row besides topic and address: what it sends. */
export function shapeOf(source: AppSubscriptionRow): CopyShape {
  return { filter: source.filter, include_fields: source.include_fields };
}

const sameShape = (a: CopyShape, b: CopyShape) => a.filter === b.filter && a.include_fields === b.include_fields;

/** Whether a store whose grant is `scopes` gets a copy of `source`. */
function allowed(source: AppSubscriptionRow, scopes: readonly Scope[]): boolean {
  return isTopic(source.topic) && mayReceive(source.topic, scopes);
}

/** Why the store cannot take one more subscription of the app to `topic`, if it cannot. */
async function capProblem(tx: Repositories, storeId: number, owner: string, topic: string): Promise<string | undefined> {
  if ((await tx.webhooks.countSubscriptions(storeId, owner)) >= MAX_SUBSCRIPTIONS_PER_OWNER)
    return `the app has ${MAX_SUBSCRIPTIONS_PER_OWNER} webhook subscriptions in this store already`;
  const onTopic = await tx.webhooks.countTopicSubscriptions(storeId, topic, owner);
  if (onTopic.owner >= MAX_SUBSCRIPTIONS_PER_TOPIC)
    return `the app has ${MAX_SUBSCRIPTIONS_PER_TOPIC} webhook subscriptions to ${topic} in this store already`;
  if (onTopic.store >= MAX_STORE_SUBSCRIPTIONS_PER_TOPIC)
    return `the store has ${MAX_STORE_SUBSCRIPTIONS_PER_TOPIC} webhook subscriptions to ${topic} over all its apps already`;
  return undefined;
}

/**
 * Inside a transaction that installs the app into the store or changes its grant to `scopes`:
 * the store's copies follow the app's list. An app without app-level subscriptions costs one
 * read of its own row here and nothing more.
 */
export async function copiesOnGrant(
  tx: Repositories,
  input: { storeId: number; appId: number; scopes: readonly Scope[]; now: number },
): Promise<StoreSync> {
  const none: StoreSync = { created: [], reshaped: [], removed: 0, skipped: [] };
  if ((await tx.appWebhooks.countForInstall(input.appId)) === 0) return none;
  return (await syncStore(tx, input)) ?? none;
}

/**
 * In a transaction of its own per store, after the app's list changed: the store's copies follow
 * it when the app is installed there (undefined when it is not, or no longer).
 */
export async function copiesAfterChange(tx: Repositories, storeId: number, appId: number, now: number): Promise<StoreSync | undefined> {
  await tx.appWebhooks.countForInstall(appId);
  return syncStore(tx, { storeId, appId, now });
}

/**
 * Brings the store's copies of the app's list to what the list holds and `scopes` allow: missing
 * ones made (a store subscription of the app with the same topic and address becomes the copy),
 * ones no longer declared or allowed deleted, ones whose app-level row has another filter or
 * include_fields given them (read here, inside the store's transaction, so the latest change of
 * the row wins whatever order spreads run in). A copy the caps leave no room for is skipped and
 * reported, never an error: the install or change goes on without it.
 */
async function syncStore(
  tx: Repositories,
  input: { storeId: number; appId: number; scopes?: readonly Scope[]; now: number },
): Promise<StoreSync | undefined> {
  const { storeId, appId, now } = input;
  // The caller has read the app's row (`countForInstall`): the list read below is the one of the
  // latest change committed. The store lock makes the caps counted by one transaction at a time.
  await tx.accounts.lockStore(storeId);
  // Read after the lock: an uninstall (which takes it too) has either committed or not begun.
  let scopes = input.scopes;
  if (scopes === undefined) {
    const installation = await tx.apps.findInstallation(storeId, appId);
    if (!installation || installation.uninstalled_at !== null) return undefined;
    scopes = storedScopes(installation.scopes);
  }
  const declared = await tx.appWebhooks.list(appId);
  const copies = await tx.appWebhooks.copiesInStore(storeId, appId);
  const wanted = declared.filter((s) => allowed(s, scopes));
  const wantedIds = new Set(wanted.map((s) => s.id));
  const stale = copies.filter((c) => !wantedIds.has(c.app_subscription_id)).map((c) => c.id);
  const removed = await tx.appWebhooks.deleteCopies(storeId, stale);
  const have = new Map(copies.map((c) => [c.app_subscription_id, c]));
  const out: StoreSync = { created: [], reshaped: [], removed, skipped: [] };
  for (const source of wanted) {
    const copy = have.get(source.id);
    if (copy) {
      if (!sameShape(copy, shapeOf(source)) && (await tx.appWebhooks.reshapeCopies(storeId, [copy.id], shapeOf(source), now)) > 0)
        out.reshaped.push(source.id);
      continue;
    }
    const row = copyOf(source, storeId, now);
    const adoption = { storeId, owner: row.owner, topic: row.topic, address: row.address, appSubscriptionId: source.id };
    if (await tx.appWebhooks.adopt({ ...adoption, shape: shapeOf(source), now })) {
      out.created.push(source.id);
      continue;
    }
    const problem = await capProblem(tx, storeId, row.owner, row.topic);
    if (problem) {
      out.skipped.push({ topic: source.topic, address: source.address, reason: problem });
      continue;
    }
    // Every other write of the app's subscriptions in the store takes the store lock, so the check
    // by `adopt` above still holds: the insert cannot meet the same topic and address.
    await tx.webhooks.insertSubscription(row);
    out.created.push(source.id);
  }
  return out;
}

/**
 * Inside the uninstall's transaction: the app's copies in the store go, but for those that must
 * carry `app/uninstalled` (see KEPT_AFTER_UNINSTALL). The store lock keeps a spreading change of
 * the app's list from adding one behind it.
 */
export async function copiesOnUninstall(tx: Repositories, storeId: number, appId: number): Promise<number> {
  await tx.accounts.lockStore(storeId);
  return tx.appWebhooks.deleteAppCopies(storeId, appId, KEPT_AFTER_UNINSTALL);
}
