// @storegate/app — named re-exports only.
export { createApp } from './app.ts';
export type {
  BeginOptions,
  BeginResult,
  BoundBeginOptions,
  BoundBeginResult,
  CallbackOptions,
  InstallRequest,
  SessionSelector,
  StoregateApp,
  WebhookInput,
  RequestLike,
} from './app.ts';
export { resolveConfig, normalizeScopes, paginationForVersion, DEFAULT_API_VERSION } from './config/app-config.ts';
export type { ApiAuthentication, AppConfig, Clock, PaginationConvention, ResolvedConfig } from './config/app-config.ts';
export {
  ERROR_CODES,
  StoregateError,
  ConfigError,
  ParameterError,
  HmacError,
  TimestampError,
  ShopError,
  StateError,
  AuthorizationDeniedError,
  IssuerError,
  WebhookError,
  LaunchTokenError,
  TokenExchangeError,
  TokenRefreshError,
  ReauthorizationRequiredError,
  SessionNotFoundError,
  SessionExpiredError,
  SessionStorageError,
  ApiError,
  AuthError,
  ScopeError,
  NotFoundError,
  ValidationError,
  PreconditionFailedError,
  InventoryConflictError,
  RateLimitError,
  ApiVersionGoneError,
  ServerError,
  NetworkError,
  TimeoutError,
  AbortedError,
} from './errors.ts';
export type { ErrorCode, ApiErrorDetails, LaunchTokenErrorCode } from './errors.ts';
export { signQuery, verifyQuery, canonicalQuery, queryPairs, checkTimestamp } from './signature/query-signature.ts';
export type { QueryInput, QueryValue, SecretInput, VerifyQueryOptions } from './signature/query-signature.ts';
export {
  signWebhook,
  signStandardWebhook,
  verifyWebhook,
  webhookHeaderNames,
  DEFAULT_HEADER_PREFIX,
} from './signature/webhook-signature.ts';
export type { HeadersInput, RawBody, VerifyWebhookOptions, WebhookEvent, WebhookHeaderNames } from './signature/webhook-signature.ts';
export { remoteJwks, RemoteJwks } from './signature/webhook-public-keys.ts';
export type {
  JsonWebKeySet,
  RemoteJwksOptions,
  WebhookKeySource,
  WebhookPublicJwk,
  WebhookVerificationKey,
} from './signature/webhook-public-keys.ts';
export { isValidShop } from './shop/shop-hostname.ts';
export type { ShopValidationOptions } from './shop/shop-hostname.ts';
export { createState, verifyState } from './oauth/state.ts';
export { checkIssuer } from './oauth/issuer.ts';
export { verifyLaunchToken, LAUNCH_TOKEN_SKEW_SECONDS } from './oauth/launch-token.ts';
export type { LaunchTokenClaims, VerifiedLaunchToken, VerifyLaunchTokenOptions } from './oauth/launch-token.ts';
export { ID_TOKEN_TYPE, REQUESTED_TOKEN_TYPES, TOKEN_EXCHANGE_GRANT } from './oauth/token-endpoint.ts';
export type { TokenExchangeOptions } from './oauth/token-exchange.ts';
export type { StatePayload } from './oauth/state.ts';
export { stateCookieHeader, clearStateCookieHeader, readCookie } from './oauth/state-cookie.ts';
export type { StateCookieOptions } from './oauth/state-cookie.ts';
export { TokenManager } from './oauth/token-manager.ts';
export type { AccessTokenOptions } from './oauth/token-manager.ts';
export type { RefreshLock } from './oauth/refresh-lock.ts';
export { AdminClient } from './api/admin-client.ts';
export type { AdminClientContext, ApiResponse, HttpMethod, RequestOptions } from './api/admin-client.ts';
export { createAdminClient } from './api/create-admin-client.ts';
export type { AdminClientOptions } from './api/create-admin-client.ts';
export { ItemIterator, PageIterator } from './api/paginator.ts';
export { EVENTS_SINCE_VERSION, eventsPagination, hasEvents } from './api/events.ts';
export type { EventsOptions, WebhookEventEntry } from './api/events.ts';
export { BulkExports } from './api/bulk-exports.ts';
export type { BulkExportInput, BulkOperation, BulkRowsOptions, BulkWaitOptions } from './api/bulk-exports.ts';
export { WebhookSubscriptions, webhookSubscriptionBody } from './api/webhook-subscriptions.ts';
export type {
  WebhookSubscription,
  WebhookSubscriptionInput,
  WebhookSubscriptionShape,
  WebhookSubscriptionUpdate,
} from './api/webhook-subscriptions.ts';
export type { ReplayInput, ReplayResult } from './api/webhook-recovery.ts';
export type { Page, PaginateOptions } from './api/paginator.ts';
export { parseRetryAfter } from './api/retry-policy.ts';
export type { RetryOptions, Sleep } from './api/retry-policy.ts';
export type { CallLimitOptions } from './api/call-limit.ts';
export { memorySessionStorage } from './session/memory-session-storage.ts';
export { offlineSessionId, onlineSessionId, sessionIdOf } from './session/session.ts';
export type { AssociatedUser, Session, SessionStorage } from './session/session.ts';
export { redactingLogger } from './logging/redacting-logger.ts';
export type { Logger } from './logging/redacting-logger.ts';
