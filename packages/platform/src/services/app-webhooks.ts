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
import { isPrivacyTopic, SUBSCRIBABLE_TOPICS, type WebhookTopic } from '../domain/webhook-topics.ts';
import type { AppSubscriptionRow, Storage } from '../storage/ports.ts';
import { copiesAfterChange, type SkippedCopy } from './app-webhook-copies.ts';
import { resolvesToPublic } from './webhook-subscriptions.ts';

export type { AppSubscriptionRow };

/** Stores walked per read of the stores to change; each store is changed in a transaction of its own. */
const STORE_BATCH = 200;

export interface DeclaredSubscription {
  topic: string;
  address: string;
}

/** An app-level subscription with the number of stores holding a copy of it. */
export type ListedAppSubscription = AppSubscriptionRow & { stores: number };

/** What spreading one change did: the stores changed, and the stores where a cap left no room. */
export interface SpreadReport {
  stores: number;
  skipped: (SkippedCopy & { store: string })[];
}

export interface SyncReport {
  added: (AppSubscriptionRow & SpreadReport)[];
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

  /** The topic and address rules of a subscription (422 naming the field), as the Admin API checks them. */
  async check(input: { topic: unknown; address: unknown }, field = ''): Promise<{ topic: WebhookTopic; address: string }> {
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
    if (Object.keys(errors).length > 0) throw new ValidationFailedError(errors);
    return { topic: topic as WebhookTopic, address: address as string };
  }

  /** Adds one to the app's list, then copies it into every store the app is installed in. */
  async add(appId: number, input: { topic: unknown; address: unknown }): Promise<AppSubscriptionRow & SpreadReport> {
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
        added = await tx.appWebhooks.insert({ app_id: appId, ...wanted, api_version: CURRENT_VERSION, created_at: now, updated_at: now });
      } catch (err) {
        if (err instanceof DuplicateRecordError) throw duplicate;
        throw err;
      }
      await tx.appWebhooks.recount(appId);
      return added;
    });
    return { ...row, ...(await this.spread(row)) };
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
   * the caps), then new ones added and copied.
   */
  async sync(appId: number, declared: readonly DeclaredSubscription[]): Promise<SyncReport> {
    for (const [i, d] of declared.entries()) await this.check(d, `subscriptions[${i}].`);
    if (declared.length > MAX_SUBSCRIPTIONS_PER_OWNER)
      throw new ValidationFailedError({ subscriptions: [`at most ${MAX_SUBSCRIPTIONS_PER_OWNER} subscriptions`] });
    for (const topic of new Set(declared.map((d) => d.topic)))
      if (declared.filter((d) => d.topic === topic).length > MAX_SUBSCRIPTIONS_PER_TOPIC)
        throw new ValidationFailedError({ subscriptions: [`at most ${MAX_SUBSCRIPTIONS_PER_TOPIC} subscriptions to ${topic}`] });
    const current = await this.storage.appWebhooks.list(appId);
    const report: SyncReport = { added: [], removed: [], unchanged: [] };
    for (const row of current) {
      if (declared.some((d) => same(d, row))) report.unchanged.push(row);
      else report.removed.push(await this.remove(appId, row.id));
    }
    for (const d of declared) if (!current.some((row) => same(d, row))) report.added.push(await this.add(appId, d));
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
