// What the administrative commands read and change across stores (`storegate stores list`,
// `merchants unlock`...): whole-table listings that no request path needs, kept apart from the
// per-aggregate repositories the services share.
import type { Selectable } from 'kysely';
import type { Database } from '../schema.ts';

type Stores = Selectable<Database['stores']>;
type Apps = Selectable<Database['apps']>;
type Installations = Selectable<Database['installations']>;
type PrivateApps = Selectable<Database['private_apps']>;
type Merchants = Selectable<Database['merchants']>;

export interface StoreListRow extends Pick<Stores, 'id' | 'name' | 'currency' | 'timezone' | 'created_at'> {
  owner_email: Merchants['email'];
  installed_apps: number;
  private_apps: number;
}

export interface PartnerListRow extends Pick<Selectable<Database['partners']>, 'id' | 'email' | 'created_at'> {
  apps: number;
}

export interface AppListRow
  extends Pick<
    Apps,
    | 'id'
    | 'client_id'
    | 'name'
    | 'app_url'
    | 'redirect_uri'
    | 'scopes'
    | 'privacy_webhook_url'
    | 'authorization_iss'
    | 'managed_install'
    | 'created_at'
  > {
  partner_email: Selectable<Database['partners']>['email'] | null;
  installations: number;
}

export interface PrivateAppListRow extends Pick<PrivateApps, 'id' | 'name' | 'scopes' | 'created_at' | 'revoked_at'> {
  /** The store's name. */
  store: Stores['name'];
}

export interface InstallationListRow extends Pick<Installations, 'id' | 'scopes' | 'installed_at' | 'uninstalled_at'> {
  /** The store's name. */
  store: Stores['name'];
  client_id: Apps['client_id'];
  /** The app's name. */
  app: Apps['name'];
}

export interface MerchantRow extends Pick<Merchants, 'id' | 'email'> {
  stores: Pick<Stores, 'id' | 'name'>[];
}

export interface AdminDirectoryRepository {
  stores(): Promise<StoreListRow[]>;
  partners(): Promise<PartnerListRow[]>;
  apps(): Promise<AppListRow[]>;
  /** Active and revoked ones, of one store or of all. */
  privateApps(storeId?: number): Promise<PrivateAppListRow[]>;
  /** Current and ended ones, newest first. */
  installations(filter: { storeId?: number; appId?: number }): Promise<InstallationListRow[]>;
  /** The merchant with this email (case-insensitive) and the stores it owns. */
  merchantByEmail(email: string): Promise<MerchantRow | undefined>;
  /** `locked_until` of each of these login-attempt keys that has a count. */
  loginLocks(keys: readonly string[]): Promise<{ key: string; locked_until: number | null }[]>;
  /** Drops the login-attempt counts (and so the locks) of these keys. */
  clearLoginCounts(keys: readonly string[]): Promise<void>;
  setMerchantPasswordHash(merchantId: number, passwordHash: string): Promise<void>;
  /** Ends every browser session of this merchant; returns how many there were. */
  endMerchantSessions(merchantId: number): Promise<number>;
}
