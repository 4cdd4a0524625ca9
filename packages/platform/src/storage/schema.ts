// Row types of every table. Times are unix milliseconds (bigint); ids of records are integers
// exposed as strings in the API.
import type { Generated } from 'kysely';

export interface Database {
  merchants: { id: Generated<number>; email: string; password_hash: string; created_at: number };
  stores: {
    id: Generated<number>;
    name: string;
    owner_merchant_id: number;
    created_at: number;
    currency: Generated<string>;
    timezone: Generated<string>;
  };
  partners: { id: Generated<number>; email: string; password_hash: string; created_at: number };
  apps: {
    id: Generated<number>;
    client_id: string;
    partner_id: number | null;
    name: string;
    app_url: string;
    redirect_uri: string;
    scopes: string;
    client_secret_enc: string;
    previous_secret_enc: string | null;
    previous_secret_expires_at: number | null;
    created_at: number;
    privacy_webhook_url: Generated<string | null>;
    authorization_iss: Generated<number>;
    /** 1: the platform runs consent for `scopes` and opens the app with a launch token to exchange. */
    managed_install: Generated<number>;
    /** How many app-level webhook subscriptions the app has (an install of an app with none reads no more). */
    app_subscription_count: Generated<number>;
    /** 1: webhooks also carry `v1a` (Ed25519) signatures by the platform's signing keys. */
    webhook_signature_ed25519: Generated<number>;
  };
  installations: {
    id: Generated<number>;
    store_id: number;
    app_id: number;
    scopes: string;
    installed_at: number;
    uninstalled_at: number | null;
  };
  authorization_codes: {
    code_hash: string;
    app_id: number;
    store_id: number;
    installation_id: number;
    redirect_uri: string;
    scopes: string;
    code_challenge: string | null;
    expires_at: number;
    used_at: number | null;
    family_id: string | null;
    created_at: number;
    /** The merchant an online code's token is bound to; null for the store's own (offline) access. */
    merchant_id: number | null;
  };
  token_families: {
    id: string;
    installation_id: number;
    store_id: number;
    created_at: number;
    revoked_at: number | null;
    /** Online access: the merchant it is bound to (ended at their logout); null for offline access. */
    merchant_id: number | null;
  };
  /** Launch tokens already exchanged, kept until they expire: each is exchanged once. */
  launch_token_uses: { store_id: number; jti: string; expires_at: number; created_at: number };
  access_tokens: {
    token_hash: string;
    family_id: string;
    installation_id: number;
    store_id: number;
    app_id: number;
    scopes: string;
    expires_at: number;
    revoked_at: number | null;
    created_at: number;
    /** First authenticated Admin API call; null while the token was never used. */
    used_at: number | null;
  };
  refresh_tokens: {
    token_hash: string;
    family_id: string;
    installation_id: number;
    store_id: number;
    app_id: number;
    scopes: string;
    access_expires_at: number;
    expires_at: number;
    rotated_at: number | null;
    revoked_at: number | null;
    created_at: number;
  };
  private_apps: {
    id: Generated<number>;
    store_id: number;
    name: string;
    scopes: string;
    token_hash: string;
    webhook_secret_enc: string;
    previous_webhook_secret_enc: string | null;
    previous_webhook_secret_expires_at: number | null;
    created_at: number;
    revoked_at: number | null;
  };
  web_sessions: {
    id_hash: string;
    kind: 'merchant' | 'partner';
    subject_id: number;
    store_id: number | null;
    expires_at: number;
    created_at: number;
  };
  products: {
    id: Generated<number>;
    store_id: number;
    title: string;
    body_html: string;
    vendor: string;
    product_type: string;
    status: string;
    price: string;
    sku: string;
    inventory_quantity: number;
    tags: string;
    created_at: number;
    updated_at: number;
    version: Generated<number>;
  };
  customers: {
    id: Generated<number>;
    store_id: number;
    email: string;
    first_name: string;
    last_name: string;
    phone: string | null;
    created_at: number;
    updated_at: number;
    version: Generated<number>;
  };
  orders: {
    id: Generated<number>;
    store_id: number;
    customer_id: number | null;
    email: string;
    currency: string;
    financial_status: string;
    fulfillment_status: string | null;
    total_price: string;
    line_items: string;
    created_at: number;
    updated_at: number;
    version: Generated<number>;
  };
  webhook_subscriptions: {
    id: Generated<number>;
    store_id: number;
    owner: string;
    app_id: number | null;
    private_app_id: number | null;
    topic: string;
    address: string;
    api_version: string;
    created_at: number;
    updated_at: number;
    version: Generated<number>;
    disabled_at: number | null;
    dead_streak: Generated<number>;
    disabled_reason: string | null;
    filter: Generated<string | null>;
    include_fields: Generated<string | null>;
    /** The app-level subscription this one is the store's copy of; null for one made through the Admin API. */
    app_subscription_id: Generated<number | null>;
    /** When it was last enabled again after being disabled. */
    enabled_at: number | null;
  };
  app_webhook_subscriptions: {
    id: Generated<number>;
    app_id: number;
    topic: string;
    address: string;
    api_version: string;
    filter: string | null;
    include_fields: string | null;
    created_at: number;
    updated_at: number;
  };
  webhook_events: { id: string; store_id: number; topic: string; payload: string; created_at: number };
  webhook_deliveries: {
    id: Generated<number>;
    webhook_id: string;
    event_id: string;
    subscription_id: number;
    store_id: number;
    app_id: number | null;
    private_app_id: number | null;
    topic: string;
    status: 'pending' | 'delivered' | 'dead' | 'cancelled';
    attempts: number;
    next_attempt_at: number;
    last_status: number | null;
    last_error: string | null;
    created_at: number;
    updated_at: number;
    include_fields: Generated<string | null>;
    /** When a replay queued it again; null for every other send. */
    replayed_at: number | null;
  };
  /** A worker's hold on a pending delivery: claimed until `leased_until`, free again after it. */
  webhook_delivery_leases: { delivery_id: number; store_id: number; worker: string; leased_until: number };
  webhook_attempts: {
    id: Generated<number>;
    store_id: number;
    delivery_id: number;
    attempted_at: number;
    status_code: number | null;
    latency_ms: number;
    response_body: string | null;
    error: string | null;
  };
  login_attempts: { key: string; failures: number; window_started_at: number; locked_until: number | null };
  /** The master key's public id (`current`, `previous`) and the sealed keys that outlive it (`data:…`). */
  master_keys: { name: string; value: string; updated_at: number };
  /** The operator's resource servers (token introspection clients); the secret only as its SHA-256 hash. */
  api_version_usage: {
    caller_kind: string;
    caller_id: number;
    store_id: number;
    version: string;
    route: string;
    calls: number;
    first_seen_at: number;
    last_seen_at: number;
  };
  api_version_notices: { caller_kind: string; caller_id: number; version: string; store_id: number; notified_at: number };
  api_version_brownouts: { id: Generated<number>; version: string; starts_at: number; ends_at: number; created_at: number };
  resource_servers: { id: Generated<number>; client_id: string; name: string; secret_hash: string; created_at: number };
  one_time_reveals: { id_hash: string; session_hash: string; payload_enc: string; expires_at: number };
  idempotency_keys: {
    store_id: number;
    owner: string;
    idem_key: string;
    fingerprint: string;
    token: string;
    created_at: number;
    locked_until: number;
    status_code: number | null;
    response_body: string | null;
    response_headers: string | null;
    request_id: string;
    /** The resource the write was on (`customers`, `webhooks`, …); null on keys stored before it was kept. */
    resource: string | null;
  };
  bulk_operations: {
    id: Generated<number>;
    store_id: number;
    app_id: number | null;
    private_app_id: number | null;
    resource: string;
    /** The list filters as query parameters, a JSON object of strings. */
    filters: string;
    /** Comma-separated fields, or null for all. */
    fields: string | null;
    status: string;
    rows: Generated<number>;
    bytes: Generated<number>;
    /** The last snapshot id written to the file. */
    position: Generated<number>;
    chunks: Generated<number>;
    error: string | null;
    snapshot_at: number | null;
    claimed_by: string | null;
    claimed_until: number | null;
    /** How many times a worker has claimed it. */
    attempts: Generated<number>;
    created_at: number;
    updated_at: number;
    finished_at: number | null;
  };
  /** A bulk export's snapshot: the rows it exports, as they were at its snapshot time (one table per resource). */
  bulk_rows_products: Omit<Database['products'], 'id' | 'version'> & { operation_id: number; id: number };
  bulk_rows_customers: Omit<Database['customers'], 'id' | 'version'> & { operation_id: number; id: number };
  bulk_rows_orders: Omit<Database['orders'], 'id' | 'version'> & { operation_id: number; id: number };
  bulk_operation_chunks: { operation_id: number; seq: number; start: number; data: Uint8Array };
  /** Attempts per owner, endpoint (origin) and UTC hour: counts by outcome and a latency histogram (`ms_<bound>`). */
  webhook_endpoint_hours: {
    owner_kind: string;
    owner_id: number;
    origin: string;
    hour: number;
    delivered: Generated<number>;
    failed: Generated<number>;
    no_answer: Generated<number>;
    not_sent: Generated<number>;
  } & Record<LatencyColumn, Generated<number>>;
  /** An owner's circuit breaker at an endpoint in one store, as the worker that last changed it wrote it. */
  webhook_endpoint_breakers: {
    owner_kind: string;
    owner_id: number;
    store_id: number;
    origin: string;
    state: string;
    failures: number;
    reopen_at: number | null;
    changed_at: number;
  };
  /** The platform's webhook signing key pairs (Ed25519); `active` 1 on the key that signs alone, else null. */
  webhook_signing_keys: {
    kid: string;
    /** The raw public key, base64url (a JWK's `x`). */
    public_key: string;
    /** The PKCS #8 private key, base64, sealed under the master key. */
    private_key_enc: string;
    active: number | null;
    created_at: number;
    /** When a replaced key stops signing and leaves the JWKS; null while it is the active key. */
    retires_at: number | null;
  };
}

/** A latency bucket's column in webhook_endpoint_hours, by its upper bound in ms. */
export type LatencyColumn = `ms_${25 | 50 | 100 | 200 | 400 | 800 | 1600 | 3200 | 6400 | 12800 | 25600 | 60000}`;
