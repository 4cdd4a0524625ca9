// @storegate/app — named re-exports only.
export { createApp } from './app.ts';
export type {
  BeginOptions,
  BeginResult,
  BoundBeginOptions,
  BoundBeginResult,
  CallbackOptions,
  InstallRequest,
  StoregateApp,
  WebhookInput,
  RequestLike,
} from './app.ts';
export { resolveConfig, normalizeScopes, paginationForVersion, DEFAULT_API_VERSION } from './config/app-config.ts';
export type { AppConfig, Clock, PaginationConvention, ResolvedConfig } from './config/app-config.ts';
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
  TokenExchangeError,
  TokenRefreshError,
  ReauthorizationRequiredError,
  SessionNotFoundError,
  SessionStorageError,
  ApiError,
  AuthError,
  ScopeError,
  NotFoundError,
  ValidationError,
  RateLimitError,
  ServerError,
  NetworkError,
  TimeoutError,
  AbortedError,
} from './errors.ts';
export type { ErrorCode, ApiErrorDetails } from './errors.ts';
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
export { isValidShop } from './shop/shop-hostname.ts';
export type { ShopValidationOptions } from './shop/shop-hostname.ts';
export { createState, verifyState } from './oauth/state.ts';
export { checkIssuer } from './oauth/issuer.ts';
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
export type { Page, PaginateOptions } from './api/paginator.ts';
export { parseRetryAfter } from './api/retry-policy.ts';
export type { RetryOptions, Sleep } from './api/retry-policy.ts';
export type { CallLimitOptions } from './api/call-limit.ts';
export { memorySessionStorage } from './session/memory-session-storage.ts';
export type { Session, SessionStorage } from './session/session.ts';
export { redactingLogger } from './logging/redacting-logger.ts';
export type { Logger } from './logging/redacting-logger.ts';
