// The records the repositories read and write, as the services see them. Each is cut from the
// table it is read from (storage/schema.ts), so a column renamed or retyped there breaks every
// reader here; a joined or computed field takes the type of the column it comes from.
import type { Selectable } from 'kysely';
import type { Database } from '../schema.ts';
import type { EndpointKey } from './endpoint-health.ts';

type Stores = Selectable<Database['stores']>;
type Merchants = Selectable<Database['merchants']>;
type Apps = Selectable<Database['apps']>;
type Installations = Selectable<Database['installations']>;
type PrivateApps = Selectable<Database['private_apps']>;
type Codes = Selectable<Database['authorization_codes']>;
type RefreshTokens = Selectable<Database['refresh_tokens']>;
type AccessTokens = Selectable<Database['access_tokens']>;
type Subscriptions = Selectable<Database['webhook_subscriptions']>;
type Deliveries = Selectable<Database['webhook_deliveries']>;
type Attempts = Selectable<Database['webhook_attempts']>;
type Events = Selectable<Database['webhook_events']>;
type IdempotencyKeys = Selectable<Database['idempotency_keys']>;

export type StoreRow = Pick<Stores, 'id' | 'name' | 'owner_merchant_id'>;

/** The store's own record as apps read it: its owner's email joined in. */
export interface ShopRow extends Pick<Stores, 'id' | 'name' | 'currency' | 'timezone' | 'created_at'> {
  owner_email: Merchants['email'];
}

/** A merchant's or a partner's sign-in record (both tables have the same columns). */
export type CredentialRow = Pick<Merchants, 'id' | 'email' | 'password_hash'>;

export interface AppRow
  extends Pick<
    Apps,
    | 'id'
    | 'client_id'
    | 'partner_id'
    | 'name'
    | 'app_url'
    | 'redirect_uri'
    | 'scopes'
    | 'client_secret_enc'
    | 'previous_secret_enc'
    | 'previous_secret_expires_at'
  > {
  /** Where the privacy topics go; null when the app has set none (then it is sent none). */
  privacy_webhook_url: Apps['privacy_webhook_url'];
  /** 1 when the redirect with the code carries `iss` (signed with the other parameters), else 0. */
  authorization_iss: Apps['authorization_iss'];
  /** 1 when the platform runs consent for `scopes` and opens the app with a launch token, else 0. */
  managed_install: Apps['managed_install'];
  /** 1 when its webhooks also carry `v1a` (Ed25519) signatures by the platform's keys, else 0. */
  webhook_signature_ed25519: Apps['webhook_signature_ed25519'];
}

export type NewApp = Pick<
  Apps,
  'client_id' | 'partner_id' | 'name' | 'app_url' | 'redirect_uri' | 'scopes' | 'client_secret_enc' | 'created_at'
> &
  Partial<Pick<Apps, 'privacy_webhook_url' | 'authorization_iss' | 'managed_install'>>;

export type InstallationRow = Pick<Installations, 'id' | 'store_id' | 'app_id' | 'scopes' | 'uninstalled_at'>;

export interface InstalledApp extends Pick<Installations, 'app_id' | 'scopes' | 'installed_at'> {
  client_id: Apps['client_id'];
  name: Apps['name'];
}

export interface PrivateAppSummary extends Pick<PrivateApps, 'id' | 'name' | 'scopes' | 'created_at' | 'revoked_at'> {
  /** When the webhook secret's rotation ends by itself; null when none is in progress (or it ended). */
  previous_webhook_secret_expires_at: PrivateApps['previous_webhook_secret_expires_at'];
}

export type WebSessionRow = Pick<Selectable<Database['web_sessions']>, 'kind' | 'subject_id' | 'store_id' | 'expires_at'>;

export interface CodeRow
  extends Pick<
    Codes,
    'app_id' | 'store_id' | 'installation_id' | 'redirect_uri' | 'scopes' | 'code_challenge' | 'expires_at' | 'used_at' | 'family_id'
  > {
  /** Set for an online code: the merchant its token is bound to. */
  merchant_id: Codes['merchant_id'];
}

/** A refresh token with its family's revocation folded in (revoked when either is). */
export type RefreshRow = Pick<
  RefreshTokens,
  'family_id' | 'installation_id' | 'store_id' | 'app_id' | 'scopes' | 'expires_at' | 'rotated_at' | 'revoked_at'
>;

export type TokenOwner = Pick<AccessTokens, 'family_id' | 'app_id' | 'store_id'>;

/** An access token as the Admin API sees it: revoked when the token or its family is. */
export interface AccessTokenRow extends Pick<AccessTokens, 'app_id' | 'store_id' | 'scopes' | 'expires_at' | 'revoked_at'> {
  /** When it first authenticated an Admin API call; null while never used. */
  used_at: AccessTokens['used_at'];
}

/**
 * The pair a rotation issued, as a replay of the old refresh token needs to judge it: whether
 * either token has been used (the refresh token rotated, the access token called the Admin API or
 * was revoked by its holder) and whether the family still stands.
 */
export interface SuccessorRow extends Pick<RefreshTokens, 'access_expires_at' | 'rotated_at'> {
  /** Revocation of the successor refresh token or of its family. */
  revoked_at: RefreshTokens['revoked_at'];
  access_used_at: AccessTokens['used_at'];
  access_revoked_at: AccessTokens['revoked_at'];
}

export type PrivateTokenRow = Pick<PrivateApps, 'id' | 'store_id' | 'scopes' | 'revoked_at'>;

/** A store resource row (products, orders, customers): columns as stored. */
export type ResourceRow = Pick<Selectable<Database['products']>, 'id' | 'store_id'> & Record<string, unknown>;

export interface SubscriptionRow
  extends Pick<
    Subscriptions,
    | 'id'
    | 'store_id'
    | 'owner'
    | 'app_id'
    | 'private_app_id'
    | 'topic'
    | 'address'
    | 'api_version'
    | 'created_at'
    | 'updated_at'
    | 'disabled_at'
  > {
  /** Grows by one with every change: the record's ETag is made of it. */
  version: Subscriptions['version'];
  /** The app-level subscription this is the store's copy of (read-only through the Admin API); null otherwise. */
  app_subscription_id: Subscriptions['app_subscription_id'];
  /** The filter text (see domain/webhook-filter.ts); null: every change of the topic. */
  filter: Subscriptions['filter'];
  /** JSON array of the top-level fields each delivery holds; null: the whole object. */
  include_fields: Subscriptions['include_fields'];
}

/**
 * A subscription to insert: a copy of an app-level one names it, one made through the Admin API does
 * not; no filter and the whole object unless given.
 */
export type NewSubscription = Omit<
  SubscriptionRow,
  'id' | 'disabled_at' | 'version' | 'app_subscription_id' | 'filter' | 'include_fields'
> &
  Partial<Pick<SubscriptionRow, 'app_subscription_id' | 'filter' | 'include_fields'>>;

export type DeliveryStatus = Deliveries['status'];

export interface DeliveryLogRow
  extends Pick<
    Deliveries,
    | 'id'
    | 'webhook_id'
    | 'event_id'
    | 'topic'
    | 'status'
    | 'attempts'
    | 'last_status'
    | 'last_error'
    | 'next_attempt_at'
    | 'created_at'
    | 'updated_at'
    | 'private_app_id'
  > {
  store_name: Stores['name'];
  client_id: Apps['client_id'] | null;
  address: Subscriptions['address'] | null;
}

export type AttemptRow = Pick<Attempts, 'id' | 'delivery_id' | 'attempted_at' | 'status_code' | 'latency_ms' | 'response_body' | 'error'>;

export interface DisabledSubscriptionRow
  extends Pick<Subscriptions, 'id' | 'app_id' | 'topic' | 'address' | 'disabled_at' | 'disabled_reason'> {
  store_name: Stores['name'];
}

/** What the worker loads for each claimed delivery: enough to decide whether and how to send it. */
export interface ClaimedDelivery
  extends Pick<
    Deliveries,
    'id' | 'store_id' | 'webhook_id' | 'event_id' | 'topic' | 'subscription_id' | 'attempts' | 'app_id' | 'private_app_id'
  > {
  /** Set when a replay queued it: its attempts count toward neither the breaker nor the dead streak. */
  replayed_at: Deliveries['replayed_at'];
  payload: Events['payload'];
  /** The include_fields the delivery was queued with: its body holds only those fields. */
  include_fields: Deliveries['include_fields'];
  event_at: Events['created_at'];
  store_name: Stores['name'];
  sub_id: Subscriptions['id'] | null;
  address: Subscriptions['address'] | null;
  api_version: Subscriptions['api_version'] | null;
  disabled_at: Subscriptions['disabled_at'];
  /** When the subscription was last enabled again: a breaker from before then is forgotten. */
  enabled_at: Subscriptions['enabled_at'];
  client_secret_enc: Apps['client_secret_enc'] | null;
  /** 1 when the app asks for `v1a` (Ed25519) signatures too (null: not an app's delivery). */
  webhook_signature_ed25519: Apps['webhook_signature_ed25519'] | null;
  /** The app's privacy webhook address now (where privacy topics go). */
  privacy_webhook_url: Apps['privacy_webhook_url'];
  installation_id: Installations['id'] | null;
  uninstalled_at: Installations['uninstalled_at'];
  installed_at: Installations['installed_at'] | null;
  /** The scopes the installation grants now. */
  installation_scopes: Installations['scopes'] | null;
  /** The app's client secret before a rotation, and when it stops signing (see `activePrevious`). */
  previous_secret_enc: Apps['previous_secret_enc'];
  previous_secret_expires_at: Apps['previous_secret_expires_at'];
  private_id: PrivateApps['id'] | null;
  webhook_secret_enc: PrivateApps['webhook_secret_enc'] | null;
  previous_webhook_secret_enc: PrivateApps['previous_webhook_secret_enc'];
  previous_webhook_secret_expires_at: PrivateApps['previous_webhook_secret_expires_at'];
  revoked_at: PrivateApps['revoked_at'];
  /** The scopes the private app holds now. */
  private_scopes: PrivateApps['scopes'] | null;
}

/** How one claimed delivery ended this round, as the worker hands it to storage to record. */
export type DeliveryOutcome =
  | { id: number; storeId: number; subscriptionId: number; attempts: number; cancelled: string }
  | {
      id: number;
      /** The delivery's store, which its subscription and attempts share: every write names it. */
      storeId: number;
      subscriptionId: number;
      attempts: number;
      cancelled?: undefined;
      /** Sent by a replay: dying does not count toward the subscription's dead streak. */
      replay?: boolean | undefined;
      attempt: { attemptedAt: number; status: number | null; latencyMs: number; responseBody: string | null; error: string | null };
      /** Where the attempt went and whose it was: what it adds to the endpoint's hourly figures (none: not counted). */
      endpoint?: EndpointKey | undefined;
      next: { status: 'delivered' } | { status: 'pending'; nextAttemptAt: number } | { status: 'dead'; disable?: string | undefined };
    };

/** A subscription an event may go to, with its owner's current scopes (stored form). */
export interface Recipient extends Pick<Subscriptions, 'id' | 'app_id' | 'private_app_id' | 'filter' | 'include_fields'> {
  scopes: Installations['scopes'] | null;
}

/** An installed app with a privacy webhook address, with its installation's current scopes (stored form). */
export type PrivacyRecipient = Pick<Installations, 'app_id' | 'scopes'>;

export interface NewDelivery {
  subscriptionId: number;
  appId: number | null;
  privateAppId: number | null;
  webhookId: string;
  /** The subscription's include_fields as the event is written (kept for every attempt). */
  includeFields?: string | null;
}

export interface PartnerDeliveryRow
  extends Pick<
    Deliveries,
    'id' | 'topic' | 'status' | 'attempts' | 'last_status' | 'last_error' | 'created_at' | 'updated_at' | 'next_attempt_at'
  > {
  store_name: Stores['name'];
  address: Subscriptions['address'] | null;
}

export interface PartnerDeliveryDetailRow extends Omit<PartnerDeliveryRow, 'updated_at'>, Pick<Deliveries, 'webhook_id' | 'event_id'> {
  sub_id: Subscriptions['id'] | null;
  disabled_at: Subscriptions['disabled_at'];
}

/** One idempotency key: whose it is (store and calling app) and the key itself. */
export interface IdempotencyKeyId {
  storeId: number;
  /** The caller, as `ApiPrincipal.owner` (`app:12`, `private:3`). */
  owner: string;
  key: string;
}

/** A response kept for replay: exactly the bytes sent, with the headers that describe them. */
export interface StoredResponse {
  status: number;
  body: string;
  headers: Record<string, string>;
}

/** A new reservation of a key by one request (`token` tells it from any later one) writing `resource` (`customers`, …). */
export interface NewReservation extends IdempotencyKeyId {
  resource?: string | undefined;
  fingerprint: string;
  token: string;
  requestId: string;
  now: number;
  lockedUntil: number;
}

export interface IdempotencyKeyRow extends Pick<IdempotencyKeys, 'fingerprint' | 'token' | 'created_at' | 'locked_until' | 'request_id'> {
  /** Null while the request that reserved the key is still running. */
  response: StoredResponse | null;
}
