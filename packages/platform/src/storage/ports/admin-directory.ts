// What the administrative commands read and change across stores (`storegate stores list`,
// `merchants unlock`...): whole-table listings that no request path needs, kept apart from the
// per-aggregate repositories the services share.

export interface StoreListRow {
  id: number;
  name: string;
  owner_email: string;
  currency: string;
  timezone: string;
  created_at: number;
  installed_apps: number;
  private_apps: number;
}

export interface PartnerListRow {
  id: number;
  email: string;
  created_at: number;
  apps: number;
}

export interface AppListRow {
  id: number;
  client_id: string;
  name: string;
  partner_email: string | null;
  app_url: string;
  redirect_uri: string;
  scopes: string;
  privacy_webhook_url: string | null;
  authorization_iss: number;
  managed_install: number;
  created_at: number;
  installations: number;
}

export interface PrivateAppListRow {
  id: number;
  store: string;
  name: string;
  scopes: string;
  created_at: number;
  revoked_at: number | null;
}

export interface InstallationListRow {
  id: number;
  store: string;
  client_id: string;
  app: string;
  scopes: string;
  installed_at: number;
  uninstalled_at: number | null;
}

export interface MerchantRow {
  id: number;
  email: string;
  stores: { id: number; name: string }[];
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
