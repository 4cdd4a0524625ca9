// Everything the HTTP layer and the CLI may use, built once by the composition root.
import type { ApiHealth } from './api-health.ts';
import type { BrownoutSchedule } from './api-brownouts.ts';
import type { ApiUsageCounter } from './api-usage.ts';
import type { Config } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import type { CursorCodec } from '../domain/cursor.ts';
import type { AccountService } from './account-service.ts';
import type { ApiAuthService } from './api-auth.ts';
import type { AuthenticatedPages } from './authenticated-pages.ts';
import type { AppService } from './app-service.ts';
import type { AppWebhooks } from './app-webhooks.ts';
import type { BulkExports } from './bulk-exports.ts';
import type { CustomerPrivacy } from './customer-privacy.ts';
import type { DeliveryLog } from './delivery-log.ts';
import type { IdempotentRequests } from './idempotency.ts';
import type { KeyRotation } from './key-rotation.ts';
import type { AdminDirectory } from './admin-directory-service.ts';
import type { EndpointHealth } from './endpoint-health.ts';
import type { EventLog } from './event-log.ts';
import type { GrantLimits } from './grant-limits.ts';
import type { LoginThrottle } from './login-throttle.ts';
import type { PlatformMetrics } from './metrics.ts';
import type { OAuthService } from './oauth-service.ts';
import type { LaunchTokens } from './launch-tokens.ts';
import type { OneTimeReveals } from './one-time-reveal.ts';
import type { PartnerDeliveries } from './partner-deliveries.ts';
import type { RateLimiter } from './rate-limiter.ts';
import type { ResourceServers } from './resource-servers.ts';
import type { TokenIntrospection } from './token-introspection.ts';
import type { Readiness } from './readiness.ts';
import type { ResourceService } from './resource-service.ts';
import type { SecretRotations } from './secret-rotation.ts';
import type { SeedService } from './seed-service.ts';
import type { WebhookSubscriptions } from './webhook-subscriptions.ts';
import type { WebhookSignatureOption } from './webhook-signature-option.ts';
import type { WebhookSigningKeys } from './webhook-signing-keys.ts';
import type { WebhookRecovery } from './webhook-recovery.ts';

export interface Services {
  config: Config;
  clock: Clock;
  accounts: AccountService;
  apps: AppService;
  /** Rotating client secrets and private apps' webhook secrets, and which secret signs what meanwhile. */
  rotations: SecretRotations;
  launchTokens: LaunchTokens;
  oauth: OAuthService;
  apiAuth: ApiAuthService;
  /** The operator's resource servers: the clients of token introspection (`storegate resource-servers`). */
  resourceServers: ResourceServers;
  /** Calls to deprecated versions, counted in memory and flushed in batches. */
  apiUsage: ApiUsageCounter;
  /** The operator's brown-outs of deprecated versions, as this node's copy holds them. */
  brownouts: BrownoutSchedule;
  /** Usage of deprecated versions per app, and the notices before a sunset. */
  apiHealth: ApiHealth;
  /** Token introspection (RFC 7662) and its limit per resource server. */
  introspection: TokenIntrospection;
  cursors: CursorCodec;
  resources: ResourceService;
  /** A list page and its request's Access-Token read together, where storage can (one round trip on PostgreSQL). */
  authenticatedPages: AuthenticatedPages;
  /** Customer privacy requests from the store admin (customers/data_request, customers/redact). */
  customerPrivacy: CustomerPrivacy;
  /** Admin API leaky buckets; undefined when rate limiting is off. */
  rateLimiter: RateLimiter | undefined;
  /** The token endpoint's limits per client in a store and per store; undefined when both are off. */
  grantLimits: GrantLimits | undefined;
  subscriptions: WebhookSubscriptions;
  /** App-level webhook subscriptions: an app's own list, copied into every store that installs it. */
  appWebhooks: AppWebhooks;
  /** The platform's Ed25519 webhook signing keys: the JWKS and their rotation (`storegate keys webhook-signing`). */
  signingKeys: WebhookSigningKeys;
  /** Whether an app's webhooks also carry `v1a` (Ed25519) signatures. */
  webhookSignatures: WebhookSignatureOption;
  /** Enabling a disabled subscription again in place, replaying a subscription's deliveries. */
  webhookRecovery: WebhookRecovery;
  /** Idempotency-Key reservations and recorded responses of Admin API writes. */
  idempotency: IdempotentRequests;
  /** Webhook deliveries and their attempts; redelivery; retention. */
  deliveries: DeliveryLog;
  /** Missed-event recovery: an owner's deliveries over the retention window (Admin API `events`). */
  events: EventLog;
  partnerDeliveries: PartnerDeliveries;
  /** Per endpoint of an app: attempts by outcome and latency per hour, breaker states, the next attempt. */
  endpointHealth: EndpointHealth;
  /** Failed-login counting and locks, shared by the store admin and the partner dashboard. */
  loginThrottle: LoginThrottle;
  reveals: OneTimeReveals;
  /** Re-sealing every secret under a new master key (`storegate keys rotate`). */
  keyRotation: KeyRotation;
  /** Listings and account repairs of the administrative commands (`storegate stores list`, `merchants unlock`). */
  directory: AdminDirectory;
  seeds: SeedService;
  /** Bulk exports of the Admin API: start, look at, cancel, and the signed download. */
  bulkExports: BulkExports;
  /** Throws when the database does not answer. */
  ping(): Promise<void>;
  /** Whether this node takes traffic (not while draining) and how its dependencies are doing. */
  readiness: Readiness;
  /** Prometheus counters and gauges of this platform (/metrics). */
  metrics: PlatformMetrics;
}
