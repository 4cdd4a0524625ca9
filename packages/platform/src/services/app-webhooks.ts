// App-level webhook subscriptions: declared once for an app (its configuration file, the partner
// dashboard, the CLI, the partner API) and copied into every store that installs it. A change of
// the list is committed first, then spread to the stores the app is installed in, in batches, one
// transaction per store; an install made meanwhile reads the list as changed (see
// `AppWebhookRepository.countForInstall`).
import type { Config } from '../config.ts';
import { CURRENT_VERSION } from '../domain/api-versions.ts';
import type { Clock } from '../domain/clock.ts';
import { DuplicateRecordError, NotFoundError, ValidationFailedError } from '../domain/errors.ts';
import { MAX_SUBSCRIPTIONS_PER_OWNER, MAX_SUBSCRIPTIONS_PER_TOPIC } from '../domain/limits.ts';
import { checkWebhookAddress } from '../domain/ssrf.ts';
import { storedIncludeFields } from '../domain/webhook-subscription-shape.ts';
import { isPrivacyTopic, SUBSCRIBABLE_TOPICS, type WebhookTopic } from '../domain/webhook-topics.ts';
import type { AppSubscriptionRow } from '../storage/ports/app-webhooks.ts';
import type { Storage } from '../storage/ports/storage.ts';
import { copiesAfterChange, type SkippedCopy } from './app-webhook-copies.ts';
import { checkedAppShape, type ReshapeInput, type ShapeChange, shapeChange } from './app-webhook-shapes.ts';
import { resolvesToPublic } from './webhook-subscriptions.ts';

export type { ReshapeInput };

/** An app-level webhook subscription, as its partner and the partner API see it. */
export type AppSubscription = AppSubscriptionRow;

/** Stores walked per read of the stores to change; each store is changed in a transaction of its own. */
const STORE_BATCH = 200;

export interface DeclaredSubscription {
  topic: string;
  address: string;
  /** The filter its copies get; null or left out: every change of the topic. */
  filter?: string | null | undefined;
  /** The fields each delivery of its copies holds; null or left out: the whole object. */
  includeFields?: readonly string[] | null | undefined;
}

/** A subscription as a caller gives it, before the checks. */
export interface DeclaredInput {
  topic: unknown;
  address: unknown;
  filter?: string | null | undefined;
  includeFields?: readonly string[] | null | undefined;
}

/** A declared subscription as checked: the values to store. */
export interface CheckedSubscription {
  topic: WebhookTopic;
  address: string;
  filter: string | null;
  includeFields: string[] | null;
}

/** An app-level subscription with the number of stores holding a copy of it. */
export type ListedAppSubscription = AppSubscriptionRow & { stores: number };

/** What spreading one change did: the stores changed, and the stores where a cap left no room. */
export interface SpreadReport {
  stores: number;
  skipped: (SkippedCopy & { store: string })[];
}

/** What a change of a subscription's filter or include_fields did: the row before, the stores whose copy took it. */
export type ReshapeReport = AppSubscriptionRow & ShapeChange & { stores: number };

export interface SyncReport {
  added: (AppSubscriptionRow & SpreadReport)[];
  /** Same topic and address, another filter or include_fields: changed in place, with every copy. */
  changed: ReshapeReport[];
  removed: (AppSubscriptionRow & { stores: number })[];
  unchanged: AppSubscriptionRow[];
}

const same = (a: DeclaredSubscription, b: DeclaredSubscription) => a.topic === b.topic && a.address === b.address;

export class AppWebhooks {
  constructor(
    private readonly storage: Storage,
    private readonly config: Pick<Config, 'mode'>,
    private readonly clock: Clock,
  ) {}

  async list(appId: number): Promise<ListedAppSubscription[]> {
    const [rows, counts] = await Promise.all([this.storage.appWebhooks.list(appId), this.storage.appWebhooks.copyCounts(appId)]);
    return rows.map((r) => ({ ...r, stores: counts.get(r.id) ?? 0 }));
  }

  /**
   * The rules of a subscription (422 naming the field), as the Admin API checks them: topic,
   * address, and the filter and include_fields against the topic's resource.
   */
  async check(input: DeclaredInput, field = ''): Promise<CheckedSubscription> {
    const errors: Record<string, string[]> = {};
    const { topic, address } = input;
    if (typeof topic !== 'string' || !(SUBSCRIBABLE_TOPICS as readonly string[]).includes(topic)) {
      errors[`${field}topic`] = [
        typeof topic === 'string' && isPrivacyTopic(topic)
          ? `${topic} is a privacy topic: it is sent without a subscription to the app's privacy webhook address`
          : `must be one of ${SUBSCRIBABLE_TOPICS.join(', ')}`,
      ];
    }
    const mode = this.config.mode;
    const problem = checkWebhookAddress(address, mode) ?? (mode === 'production' ? await resolvesToPublic(address as string) : undefined);
    if (problem) errors[`${field}address`] = [problem];
    let shape: { filter: string | null; includeFields: string[] | null } = { filter: null, includeFields: null };
    if (!errors[`${field}topic`]) {
      const checked = checkedAppShape(topic as WebhookTopic, input, field);
      if ('errors' in checked) Object.assign(errors, checked.errors);
      else shape = checked;
    }
    if (Object.keys(errors).length > 0) throw new ValidationFailedError(errors);
    return { topic: topic as WebhookTopic, address: address as string, ...shape };
  }

  /** Adds one to the app's list, then copies it into every store the app is installed in. */
  async add(appId: number, input: DeclaredInput): Promise<AppSubscriptionRow & SpreadReport> {
    const wanted = await this.check(input);
    const now = this.clock();
    const duplicate = new ValidationFailedError({ address: [`is already subscribed to ${wanted.topic}`] });
    const row = await this.storage.transaction(async (tx) => {
      await tx.appWebhooks.lockApp(appId);
      const list = await tx.appWebhooks.list(appId);
      if (list.some((s) => same(s, wanted))) throw duplicate;
      if (list.length >= MAX_SUBSCRIPTIONS_PER_OWNER)
        throw new ValidationFailedError({
          base: [`an app may have at most ${MAX_SUBSCRIPTIONS_PER_OWNER} app-level webhook subscriptions`],
        });
      if (list.filter((s) => s.topic === wanted.topic).length >= MAX_SUBSCRIPTIONS_PER_TOPIC)
        throw new ValidationFailedError({
          base: [`an app may have at most ${MAX_SUBSCRIPTIONS_PER_TOPIC} app-level webhook subscriptions to ${wanted.topic}`],
        });
      let added: AppSubscriptionRow;
      try {
        added = await tx.appWebhooks.insert({
          app_id: appId,
          topic: wanted.topic,
          address: wanted.address,
          api_version: CURRENT_VERSION,
          filter: wanted.filter,
          include_fields: storedIncludeFields(wanted.includeFields),
          created_at: now,
          updated_at: now,
        });
      } catch (err) {
        if (err instanceof DuplicateRecordError) throw duplicate;
        throw err;
      }
      await tx.appWebhooks.recount(appId);
      return added;
    });
    return { ...row, ...(await this.spread(row)) };
  }

  /**
   * Changes the filter and/or include_fields of one of the app's list (undefined keeps one, null
   * removes it), checked against its topic before anything is written (422 naming the field; 404
   * when the app has no such one); then every store copy takes the change, one transaction per
   * store. Deliveries already queued keep the fields they were queued with. Topic and address name
   * the subscription: changing them is a remove and an add.
   */
  async update(appId: number, id: number, input: ReshapeInput): Promise<ReshapeReport> {
    const now = this.clock();
    const done = await this.storage.transaction(async (tx) => {
      await tx.appWebhooks.lockApp(appId);
      const row = await tx.appWebhooks.find(appId, id);
      if (!row) throw new NotFoundError(`No app-level webhook subscription with id ${id}`);
      const change = shapeChange(row, input);
      if (!change.changed) return { row, change };
      const updated = await tx.appWebhooks.reshape(appId, id, change.shape, now);
      if (!updated) throw new NotFoundError(`No app-level webhook subscription with id ${id}`);
      return { row: updated, change };
    });
    const report: ReshapeReport = { ...done.row, previous: done.change.previous, changed: done.change.changed, stores: 0 };
    if (done.change.changed) report.stores = await this.reshapeCopies(done.row);
    return report;
  }

  /** Removes one from the app's list (404 when the app has no such one), then its copy in every store. */
  async remove(appId: number, id: number): Promise<AppSubscriptionRow & { stores: number }> {
    const row = await this.storage.transaction(async (tx) => {
      await tx.appWebhooks.lockApp(appId);
      const found = await tx.appWebhooks.find(appId, id);
      if (!found || !(await tx.appWebhooks.delete(appId, id))) throw new NotFoundError(`No app-level webhook subscription with id ${id}`);
      await tx.appWebhooks.recount(appId);
      return found;
    });
    return { ...row, stores: await this.removeCopies(appId, row.id) };
  }

  /**
   * Makes the app's list exactly `declared` (the configuration file): every entry is checked
   * before anything changes; missing ones are removed with their copies first (making room under
   * the caps), then ones whose filter or include_fields differ are changed in place (a filter or
   * fields left out of an entry means none), then new ones added and copied.
   */
  async sync(appId: number, declared: readonly DeclaredSubscription[]): Promise<SyncReport> {
    const checked: CheckedSubscription[] = [];
    for (const [i, d] of declared.entries()) checked.push(await this.check(d, `subscriptions[${i}].`));
    if (declared.length > MAX_SUBSCRIPTIONS_PER_OWNER)
      throw new ValidationFailedError({ subscriptions: [`at most ${MAX_SUBSCRIPTIONS_PER_OWNER} subscriptions`] });
    for (const topic of new Set(declared.map((d) => d.topic)))
      if (declared.filter((d) => d.topic === topic).length > MAX_SUBSCRIPTIONS_PER_TOPIC)
        throw new ValidationFailedError({ subscriptions: [`at most ${MAX_SUBSCRIPTIONS_PER_TOPIC} subscriptions to ${topic}`] });
    const current = await this.storage.appWebhooks.list(appId);
    const report: SyncReport = { added: [], changed: [], removed: [], unchanged: [] };
    const kept: [AppSubscriptionRow, CheckedSubscription][] = [];
    for (const row of current) {
      const wanted = checked.find((d) => same(d, row));
      if (wanted) kept.push([row, wanted]);
      else report.removed.push(await this.remove(appId, row.id));
    }
    for (const [row, wanted] of kept) {
      const shape = { filter: wanted.filter, includeFields: wanted.includeFields };
      // A file that matches the platform takes no lock: only a differing entry is written.
      const reshaped = shapeChange(row, shape).changed ? await this.update(appId, row.id, shape) : undefined;
      if (reshaped?.changed) report.changed.push(reshaped);
      else report.unchanged.push(row);
    }
    for (const d of checked) if (!current.some((row) => same(d, row))) report.added.push(await this.add(appId, d));
    return report;
  }

  /**
   * Copies the app's list into each store it is installed in, one transaction per store; reports
   * the stores that got a copy of `source` and those whose caps left no room for it.
   */
  private async spread(source: AppSubscriptionRow): Promise<SpreadReport> {
    const appId = source.app_id;
    const report: SpreadReport = { stores: 0, skipped: [] };
    for (let after = 0; ; ) {
      const stores = await this.storage.appWebhooks.installedStores(appId, after, STORE_BATCH);
      for (const storeId of stores) {
        const done = await this.storage.transaction((tx) => copiesAfterChange(tx, storeId, appId, this.clock()));
        if (!done) continue;
        if (done.created.includes(source.id)) report.stores++;
        const mine = done.skipped.filter((s) => same(s, source));
        if (mine.length > 0) {
          const store = (await this.storage.accounts.findStoreNameById(storeId)) ?? String(storeId);
          for (const s of mine) report.skipped.push({ ...s, store });
        }
      }
      if (stores.length < STORE_BATCH) break;
      after = stores.at(-1)!;
    }
    return report;
  }

  /**
   * After a change of `source`'s filter or include_fields: each store holding a copy brings its
   * copies in line with the app's list as it is then, one transaction per store. The number of
   * stores whose copy of `source` changed.
   */
  private async reshapeCopies(source: AppSubscriptionRow): Promise<number> {
    let changed = 0;
    for (let after = 0; ; ) {
      const stores = await this.storage.appWebhooks.storesWithCopies(source.id, after, STORE_BATCH);
      for (const storeId of stores) {
        const done = await this.storage.transaction((tx) => copiesAfterChange(tx, storeId, source.app_id, this.clock()));
        if (done?.reshaped.includes(source.id)) changed++;
      }
      if (stores.length < STORE_BATCH) break;
      after = stores.at(-1)!;
    }
    return changed;
  }

  /** Deletes the copies of a removed app-level subscription, one transaction per store. */
  private async removeCopies(appId: number, sourceId: number): Promise<number> {
    let removed = 0;
    for (let after = 0; ; ) {
      const stores = await this.storage.appWebhooks.storesWithCopies(sourceId, after, STORE_BATCH);
      for (const storeId of stores) {
        const n = await this.storage.transaction(async (tx) => {
          const copies = (await tx.appWebhooks.copiesInStore(storeId, appId)).filter((c) => c.app_subscription_id === sourceId);
          return tx.appWebhooks.deleteCopies(
            storeId,
            copies.map((c) => c.id),
          );
        });
        if (n > 0) removed++;
      }
      if (stores.length < STORE_BATCH) break;
      after = stores.at(-1)!;
    }
    return removed;
  }
}
