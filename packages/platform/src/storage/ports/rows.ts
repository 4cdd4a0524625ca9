// The records the repositories read and write, as the services see them.
import type { EndpointKey } from './endpoint-health.ts';

export interface StoreRow {
  id: number;
  name: string;
  owner_merchant_id: number;
}

/** The store's own record as apps read it: its owner's email joined in. */
export interface ShopRow {
  id: number;
  name: string;
  currency: string;
  timezone: string;
  created_at: number;
  owner_email: string;
}

export interface CredentialRow {
  id: number;
  email: string;
  password_hash: string;
}

export interface AppRow {
  id: number;
  client_id: string;
  partner_id: number | null;
  name: string;
  app_url: string;
  redirect_uri: string;
  scopes: string;
  client_secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: number | null;
  /** Where the privacy topics go; null when the app has set none (then it is sent none). */
  privacy_webhook_url: string | null;
  /** 1 when the redirect with the code carries `iss` (signed with the other parameters), else 0. */
  authorization_iss: number;
  /** 1 when the platform runs consent for `scopes` and opens the app with a launch token, else 0. */
  managed_install: number;
  /** 1 when its webhooks also carry `v1a` (Ed25519) signatures by the platform's keys, else 0. */
  webhook_signature_ed25519: number;
}

export interface NewApp {
  client_id: string;
  partner_id: number | null;
  name: string;
  app_url: string;
  redirect_uri: string;
  scopes: string;
  client_secret_enc: string;
  created_at: number;
  privacy_webhook_url?: string | null;
  authorization_iss?: number;
  managed_install?: number;
}

export interface InstallationRow {
  id: number;
  store_id: number;
  app_id: number;
  scopes: string;
  uninstalled_at: number | null;
}

export interface InstalledApp {
  app_id: number;
  client_id: string;
  name: string;
  scopes: string;
  installed_at: number;
}

export interface PrivateAppSummary {
  id: number;
  name: string;
  scopes: string;
  created_at: number;
  revoked_at: number | null;
  /** When the webhook secret's rotation ends by itself; null when none is in progress (or it ended). */
  previous_webhook_secret_expires_at: number | null;
}

export interface WebSessionRow {
  kind: 'merchant' | 'partner';
  subject_id: number;
  store_id: number | null;
  expires_at: number;
}

export interface CodeRow {
  app_id: number;
  store_id: number;
  installation_id: number;
  redirect_uri: string;
  scopes: string;
  code_challenge: string | null;
  expires_at: number;
  used_at: number | null;
  family_id: string | null;
  /** Set for an online code: the merchant its token is bound to. */
  merchant_id: number | null;
}

/** A refresh token with its family's revocation folded in (revoked when either is). */
export interface RefreshRow {
  family_id: string;
  installation_id: number;
  store_id: number;
  app_id: number;
  scopes: string;
  expires_at: number;
  rotated_at: number | null;
  revoked_at: number | null;
}

export interface TokenOwner {
  family_id: string;
  app_id: number;
  store_id: number;
}

/** An access token as the Admin API sees it: revoked when the token or its family is. */
export interface AccessTokenRow {
  app_id: number;
  store_id: number;
  scopes: string;
  expires_at: number;
  revoked_at: number | null;
  /** When it first authenticated an Admin API call; null while never used. */
  used_at: number | null;
}

/**
 * The pair a rotation issued, as a replay of the old refresh token needs to judge it: whether
 * either token has been used (the refresh token rotated, the access token called the Admin API or
 * was revoked by its holder) and whether the family still stands.
 */
export interface SuccessorRow {
  access_expires_at: number;
  /** Revocation of the successor refresh token or of its family. */
  revoked_at: number | null;
  rotated_at: number | null;
  access_used_at: number | null;
  access_revoked_at: number | null;
}

export interface PrivateTokenRow {
  id: number;
  store_id: number;
  scopes: string;
  revoked_at: number | null;
}

/** A store resource row (products, orders, customers): columns as stored. */
export type ResourceRow = { id: number; store_id: number } & Record<string, unknown>;

export interface SubscriptionRow {
  id: number;
  store_id: number;
  owner: string;
  app_id: number | null;
  private_app_id: number | null;
  topic: string;
  address: string;
  api_version: string;
  created_at: number;
  updated_at: number;
  disabled_at: number | null;
  /** Grows by one with every change: the record's ETag is made of it. */
  version: number;
  /** The app-level subscription this is the store's copy of (read-only through the Admin API); null otherwise. */
  app_subscription_id: number | null;
  /** The filter text (see domain/webhook-filter.ts); null: every change of the topic. */
  filter: string | null;
  /** JSON array of the top-level fields each delivery holds; null: the whole object. */
  include_fields: string | null;
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

export type DeliveryStatus = 'pending' | 'delivered' | 'dead' | 'cancelled';

export interface DeliveryLogRow {
  id: number;
  webhook_id: string;
  event_id: string;
  topic: string;
  status: DeliveryStatus;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: number;
  created_at: number;
  updated_at: number;
  private_app_id: number | null;
  store_name: string;
  client_id: string | null;
  address: string | null;
}

export interface AttemptRow {
  id: number;
  delivery_id: number;
  attempted_at: number;
  status_code: number | null;
  latency_ms: number;
  response_body: string | null;
  error: string | null;
}

export interface DisabledSubscriptionRow {
  id: number;
  app_id: number | null;
  topic: string;
  address: string;
  disabled_at: number | null;
  disabled_reason: string | null;
  store_name: string;
}

/** What the worker loads for each claimed delivery: enough to decide whether and how to send it. */
export interface ClaimedDelivery {
  id: number;
  store_id: number;
  webhook_id: string;
  event_id: string;
  topic: string;
  subscription_id: number;
  attempts: number;
  app_id: number | null;
  private_app_id: number | null;
  /** Set when a replay queued it: its attempts count toward neither the breaker nor the dead streak. */
  replayed_at: number | null;
  payload: string;
  /** The include_fields the delivery was queued with: its body holds only those fields. */
  include_fields: string | null;
  event_at: number;
  store_name: string;
  sub_id: number | null;
  address: string | null;
  api_version: string | null;
  disabled_at: number | null;
  /** When the subscription was last enabled again: a breaker from before then is forgotten. */
  enabled_at: number | null;
  client_secret_enc: string | null;
  /** 1 when the app asks for `v1a` (Ed25519) signatures too (null: not an app's delivery). */
  webhook_signature_ed25519: number | null;
  /** The app's privacy webhook address now (where privacy topics go). */
  privacy_webhook_url: string | null;
  installation_id: number | null;
  uninstalled_at: number | null;
  installed_at: number | null;
  /** The scopes the installation grants now. */
  installation_scopes: string | null;
  /** The app's client secret before a rotation, and when it stops signing (see `activePrevious`). */
  previous_secret_enc: string | null;
  previous_secret_expires_at: number | null;
  private_id: number | null;
  webhook_secret_enc: string | null;
  previous_webhook_secret_enc: string | null;
  previous_webhook_secret_expires_at: number | null;
  revoked_at: number | null;
  /** The scopes the private app holds now. */
  private_scopes: string | null;
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
export interface Recipient {
  id: number;
  app_id: number | null;
  private_app_id: number | null;
  scopes: string | null;
  filter: string | null;
  include_fields: string | null;
}

/** An installed app with a privacy webhook address, with its installation's current scopes (stored form). */
export interface PrivacyRecipient {
  app_id: number;
  scopes: string;
}

export interface NewDelivery {
  subscriptionId: number;
  appId: number | null;
  privateAppId: number | null;
  webhookId: string;
  /** The subscription's include_fields as the event is written (kept for every attempt). */
  includeFields?: string | null;
}

export interface PartnerDeliveryRow {
  id: number;
  topic: string;
  status: DeliveryStatus;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  next_attempt_at: number;
  store_name: string;
  address: string | null;
}

export interface PartnerDeliveryDetailRow extends Omit<PartnerDeliveryRow, 'updated_at'> {
  webhook_id: string;
  event_id: string;
  sub_id: number | null;
  disabled_at: number | null;
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

export interface IdempotencyKeyRow {
  fingerprint: string;
  token: string;
  created_at: number;
  locked_until: number;
  request_id: string;
  /** Null while the request that reserved the key is still running. */
  response: StoredResponse | null;
}
