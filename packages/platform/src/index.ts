// The platform package's public surface: the composition root, configuration, and what the CLI,
// the benchmarks and the tests need to drive it.
export { createPlatform, type Platform, type PlatformOptions, type WorkerSettings } from './platform.ts';
export {
  loadConfig,
  rawConfigFromEnv,
  parseDatabase,
  storeBaseUrl,
  platformBaseUrl,
  DEFAULT_DATABASE,
  type Config,
  type RawConfig,
} from './config.ts';
export { parseMasterKey } from './config/master-key.ts';
export {
  ConfigError,
  PlatformError,
  ValidationFailedError,
  NotFoundError,
  ConflictError,
  DatabaseUnavailableError,
} from './domain/errors.ts';
export { signQuery, signedQueryString, verifyQueryString, canonicalQuery } from './domain/query-signature.ts';
export type { Services } from './services/services.ts';
export type { SeedCounts } from './services/seed-service.ts';
export { seedDemo, type DemoCredentials } from './services/demo-seed.ts';
export type { WebhookWorker, WebhookWorkerOptions, WorkerLogger, WorkerStopReport } from './webhooks/webhook-worker.ts';
export type { ShutdownReport } from './lifecycle.ts';
export { DELIVERY_STATUSES, type DeliveryView, type AttemptView } from './services/delivery-log.ts';
export { webhookHeaders } from './webhooks/signer.ts';
export { newWebhookId } from './services/webhook-outbox.ts';
export { samplePayload } from './domain/webhook-samples.ts';
export { TOPICS, SUBSCRIBABLE_TOPICS, isTopic, isPrivacyTopic, type WebhookTopic } from './domain/webhook-topics.ts';
export {
  checkSubscriptionShape,
  type ShapeCheck,
  type SubscriptionShape,
} from './domain/webhook-subscription-shape.ts';
export { CURRENT_VERSION, LATEST_VERSION, SUPPORTED_VERSIONS } from './domain/api-versions.ts';
export { daysLeft } from './domain/api-health.ts';
export type { VersionUsage, CallerUsage } from './services/api-health.ts';
export { MAX_HEALTH_HOURS, type AppEndpointHealth, type EndpointFigures } from './services/endpoint-health.ts';
export type { BrownoutSummary } from './services/api-brownouts.ts';
export type {
  AppSubscription,
  ListedAppSubscription,
  ReshapeReport,
  SpreadReport,
  SyncReport,
} from './services/app-webhooks.ts';
export { storeHostname } from './domain/store-host.ts';
export { checkWebhookAddress } from './domain/ssrf.ts';
