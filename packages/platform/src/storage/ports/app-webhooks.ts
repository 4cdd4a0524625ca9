// App-level webhook subscriptions: an app's own list (one row serves every store that installs
// the app) and the store copies made of it, which are ordinary store subscriptions naming the row
// they came from.
import type { Selectable } from 'kysely';
import type { Database } from '../schema.ts';
import type { SubscriptionRow } from './rows.ts';

type AppSubscriptions = Selectable<Database['app_webhook_subscriptions']>;

export interface AppSubscriptionRow
  extends Pick<AppSubscriptions, 'id' | 'app_id' | 'topic' | 'address' | 'api_version' | 'created_at' | 'updated_at'> {
  /** The filter text its copies get; null: every change of the topic. */
  filter: AppSubscriptions['filter'];
  /** JSON array of the top-level fields its copies' deliveries hold; null: the whole object. */
  include_fields: AppSubscriptions['include_fields'];
}

/** A store's copy of one app-level subscription. */
export interface StoreCopyRow extends Pick<SubscriptionRow, 'id' | 'topic' | 'filter' | 'include_fields'> {
  app_subscription_id: NonNullable<SubscriptionRow['app_subscription_id']>;
}

/** What a copy takes from its app-level row besides the topic and address, which name it. */
export type CopyShape = Pick<AppSubscriptions, 'filter' | 'include_fields'>;

export interface AppWebhookRepository {
  /** The app's app-level subscriptions, oldest first. */
  list(appId: number): Promise<AppSubscriptionRow[]>;
  find(appId: number, id: number): Promise<AppSubscriptionRow | undefined>;
  /**
   * Inside a transaction, before adding or removing one of the app's rows: holds the app until the
   * transaction ends, so an install reading the list (`countForInstall`) either sees the change or
   * commits before it.
   */
  lockApp(appId: number): Promise<void>;
  /** Throws DuplicateRecordError when the app has the same topic and address already. */
  insert(row: Omit<AppSubscriptionRow, 'id'>): Promise<AppSubscriptionRow>;
  delete(appId: number, id: number): Promise<boolean>;
  /** Sets the filter and include_fields of one of the app's rows; the row as it is now, undefined when there is none. */
  reshape(appId: number, id: number, shape: CopyShape, now: number): Promise<AppSubscriptionRow | undefined>;
  /** Writes the app's count of rows (read by `countForInstall`) after an insert or delete. */
  recount(appId: number): Promise<void>;
  /**
   * Inside a transaction that installs the app or copies its list into a store: how many rows
   * the app has, read from the app's own row (one read by primary key), shared with every other
   * install of the app but waiting for a change of its list to commit.
   */
  countForInstall(appId: number): Promise<number>;
  /** The store's copies of the app's app-level subscriptions. */
  copiesInStore(storeId: number, appId: number): Promise<StoreCopyRow[]>;
  /**
   * Makes the owner's store subscription with this topic and address (one made through the Admin
   * API) the copy of an app-level one; undefined when there is none.
   */
  adopt(input: {
    storeId: number;
    owner: string;
    topic: string;
    address: string;
    appSubscriptionId: number;
    shape: CopyShape;
    now: number;
  }): Promise<SubscriptionRow | undefined>;
  /**
   * Gives the store's copies with these ids the filter and include_fields of their app-level row
   * (a new version each); deliveries already queued keep the fields they were queued with.
   */
  reshapeCopies(storeId: number, ids: readonly number[], shape: CopyShape, now: number): Promise<number>;
  /** Deletes the store's copies with these ids. */
  deleteCopies(storeId: number, ids: readonly number[]): Promise<number>;
  /** Deletes the app's copies in the store except those to the topics kept; the number deleted. */
  deleteAppCopies(storeId: number, appId: number, keepTopics: readonly string[]): Promise<number>;
  /** Stores with a copy of the app-level subscription, by store id after `after`, at most `limit`. */
  storesWithCopies(appSubscriptionId: number, after: number, limit: number): Promise<number[]>;
  /** Stores the app is installed in now, by store id after `after`, at most `limit`. */
  installedStores(appId: number, after: number, limit: number): Promise<number[]>;
  /** How many stores hold a copy of each of the app's app-level subscriptions (by its id). */
  copyCounts(appId: number): Promise<Map<number, number>>;
}
