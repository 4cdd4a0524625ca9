// The port of public apps, their installations, and private apps: what AppService, the secret
// rotations and the OAuth flow need from storage.
import type { Selectable } from 'kysely';
import type { Database } from '../schema.ts';
import type { AppRow, InstallationRow, InstalledApp, NewApp, PrivateAppSummary } from './rows.ts';

type PrivateApps = Selectable<Database['private_apps']>;

export interface AppRepository {
  insertApp(app: NewApp): Promise<AppRow>;
  /**
   * Read on every token request: a prepared statement. Like the Access-Token lookups, it may see the
   * writes of a transaction open at that very moment on a single-connection database (SQLite).
   */
  findByClientId(clientId: string): Promise<AppRow | undefined>;
  findById(id: number): Promise<AppRow | undefined>;
  listApps(): Promise<AppRow[]>;
  listPartnerApps(partnerId: number): Promise<AppRow[]>;
  updateUrls(appId: number, appUrl: string, redirectUri: string): Promise<void>;
  updateManagedInstall(appId: number, on: boolean): Promise<void>;
  /** Whether some app's redirect with the code carries no `iss`. */
  anyWithoutIss(): Promise<boolean>;
  /** The app's name and the scopes it asks for (stored form); grants already given stay as they are. */
  updateProfile(appId: number, profile: { name: string; scopes: string }): Promise<void>;
  /** Sets or clears (null) the app's privacy webhook address. */
  updatePrivacyWebhookUrl(appId: number, url: string | null): Promise<void>;
  /** Whether the app's redirect with the code carries `iss`. */
  updateAuthorizationIss(appId: number, on: boolean): Promise<void>;
  /** Whether the app's webhooks also carry `v1a` (Ed25519) signatures. */
  updateWebhookSignatureEd25519(appId: number, on: boolean): Promise<void>;
  updateSecrets(appId: number, secrets: { current: string; previous: string | null; previousExpiresAt: number | null }): Promise<void>;
  findInstallation(storeId: number, appId: number): Promise<InstallationRow | undefined>;
  insertInstallation(input: { storeId: number; appId: number; scopes: string; now: number }): Promise<InstallationRow>;
  updateInstallation(
    storeId: number,
    id: number,
    change: { scopes?: string; installedAt?: number; uninstalledAt?: number | null },
  ): Promise<void>;
  listInstalled(storeId: number): Promise<InstalledApp[]>;
  insertPrivateApp(input: {
    storeId: number;
    name: string;
    scopes: string;
    tokenHash: string;
    webhookSecretEnc: string;
    now: number;
  }): Promise<number>;
  listPrivateApps(storeId: number): Promise<PrivateAppSummary[]>;
  countActivePrivateApps(storeId: number): Promise<number>;
  findPrivateApp(
    storeId: number,
    id: number,
  ): Promise<Pick<PrivateApps, 'id' | 'store_id' | 'webhook_secret_enc' | 'revoked_at'> | undefined>;
  /** Returns whether an active private app of the store was revoked. */
  revokePrivateApp(storeId: number, id: number, now: number): Promise<boolean>;
  /**
   * Starts a rotation of an owner's signing secret, as one compare-and-set: `current` becomes the
   * secret, the sealed secret it replaces (`expectedCurrent`) becomes the previous one until
   * `previousExpiresAt`. It changes nothing and returns false when the row no longer holds
   * `expectedCurrent`, or a rotation is still in progress at `now`, so two rotations at once cannot
   * both win. `owner` is a public app (`{ appId }`) or a store's active private app.
   */
  startSecretRotation(
    owner: SecretOwner,
    change: { expectedCurrent: string; current: string; previousExpiresAt: number; now: number },
  ): Promise<boolean>;
  /** Ends a rotation in progress at `now` (the previous secret is dropped); false when there was none. */
  finishSecretRotation(owner: SecretOwner, now: number): Promise<boolean>;
  /** A store's active private app with its sealed webhook secrets, for a rotation. */
  findPrivateAppSecrets(storeId: number, id: number): Promise<PrivateAppSecrets | undefined>;
}

/** Whose signing secret: a public app's client secret, or a store's private app's webhook secret. */
export type SecretOwner = { appId: number } | { storeId: number; privateAppId: number };

export type PrivateAppSecrets = Pick<
  PrivateApps,
  'id' | 'name' | 'webhook_secret_enc' | 'previous_webhook_secret_enc' | 'previous_webhook_secret_expires_at'
>;
