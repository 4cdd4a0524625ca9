// Every error the SDK throws: a class per family, each with a stable string `code` to branch on.
// Messages explain what failed and what to do; they never contain a token or a secret.

/** Every stable error code, by family. */
export const ERROR_CODES = {
  config: ['CONFIG_INVALID'],
  request: ['PARAMETER_MISSING', 'PARAMETER_INVALID', 'PARAMETER_UNEXPECTED'],
  hmac: ['HMAC_MISSING', 'HMAC_INVALID'],
  timestamp: ['TIMESTAMP_MISSING', 'TIMESTAMP_OUT_OF_RANGE'],
  shop: ['SHOP_INVALID'],
  state: ['STATE_MISSING', 'STATE_INVALID', 'STATE_EXPIRED', 'STATE_MISMATCH'],
  authorization: ['AUTHORIZATION_DENIED'],
  issuer: ['ISSUER_MISMATCH'],
  launchToken: [
    'LAUNCH_TOKEN_MALFORMED',
    'LAUNCH_TOKEN_ALGORITHM_REFUSED',
    'LAUNCH_TOKEN_SIGNATURE_INVALID',
    'LAUNCH_TOKEN_EXPIRED',
    'LAUNCH_TOKEN_NOT_YET_VALID',
    'LAUNCH_TOKEN_AUDIENCE_MISMATCH',
    'LAUNCH_TOKEN_ISSUER_INVALID',
    'LAUNCH_TOKEN_CLAIM_MISSING',
  ],
  webhook: [
    'WEBHOOK_BODY_NOT_RAW',
    'WEBHOOK_SIGNATURE_MISSING',
    'WEBHOOK_SIGNATURE_INVALID',
    'WEBHOOK_TIMESTAMP_OUT_OF_RANGE',
    'WEBHOOK_PAYLOAD_INVALID',
    'WEBHOOK_KEYS_UNAVAILABLE',
  ],
  token: ['TOKEN_EXCHANGE_FAILED', 'TOKEN_REFRESH_FAILED', 'REAUTHORIZATION_REQUIRED', 'SESSION_NOT_FOUND', 'SESSION_EXPIRED'],
  api: [
    'UNAUTHORIZED',
    'FORBIDDEN',
    'NOT_FOUND',
    'VALIDATION_FAILED',
    'PRECONDITION_FAILED',
    'INVENTORY_QUANTITY_MISMATCH',
    'RATE_LIMITED',
    'API_VERSION_GONE',
    'SERVER_ERROR',
    'HTTP_ERROR',
    'NETWORK_ERROR',
    'REQUEST_TIMEOUT',
    'REQUEST_ABORTED',
  ],
  session: ['SESSION_STORAGE_FAILED'],
} as const;

type Values<T> = T[keyof T];
/** Union of every stable error code. */
export type ErrorCode = Values<{ [K in keyof typeof ERROR_CODES]: (typeof ERROR_CODES)[K][number] }>;

/** Base class of every error thrown by the SDK. */
export class StoregateError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** `createApp` was given an unknown key, a missing value or a bad value. `problems` names each. */
export class ConfigError extends StoregateError {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super('CONFIG_INVALID', `invalid storegate app config: ${problems.join('; ')}`);
    this.problems = problems;
  }
}

/** A required request parameter is missing or malformed, or one is there that must not be. `parameter` names it. */
export class ParameterError extends StoregateError {
  readonly parameter: string;
  constructor(code: 'PARAMETER_MISSING' | 'PARAMETER_INVALID' | 'PARAMETER_UNEXPECTED', parameter: string, message?: string) {
    super(
      code,
      message ??
        (code === 'PARAMETER_MISSING'
          ? `query parameter "${parameter}" is missing`
          : code === 'PARAMETER_UNEXPECTED'
            ? `query parameter "${parameter}" is not expected here`
            : `query parameter "${parameter}" is malformed`),
    );
    this.parameter = parameter;
  }
}

/** The `hmac` query parameter is missing or does not match any client secret. */
export class HmacError extends StoregateError {
  constructor(code: 'HMAC_MISSING' | 'HMAC_INVALID', message: string) {
    super(code, message);
  }
}

/** The `timestamp` of a signed request is missing or outside the allowed clock skew. */
export class TimestampError extends StoregateError {
  constructor(code: 'TIMESTAMP_MISSING' | 'TIMESTAMP_OUT_OF_RANGE', message: string) {
    super(code, message);
  }
}

/** The `shop` hostname is not `{name}.{storeDomain}`. */
export class ShopError extends StoregateError {
  readonly shop: string;
  constructor(shop: string, storeDomain: string) {
    super('SHOP_INVALID', `"${shop.slice(0, 100)}" is not a valid shop hostname for store domain "${storeDomain}"`);
    this.shop = shop;
  }
}

/** The OAuth `state` is missing, forged, expired, or bound to another shop or browser. */
export class StateError extends StoregateError {
  constructor(code: 'STATE_MISSING' | 'STATE_INVALID' | 'STATE_EXPIRED' | 'STATE_MISMATCH', message: string) {
    super(code, message);
  }
}

/** The merchant declined, or the platform answered the authorization with an OAuth error. */
export class AuthorizationDeniedError extends StoregateError {
  readonly oauthError: string;
  readonly description: string | undefined;
  constructor(oauthError: string, description?: string) {
    super('AUTHORIZATION_DENIED', `authorization failed: ${oauthError}${description ? ` (${description})` : ''}`);
    this.oauthError = oauthError;
    this.description = description;
  }
}

/**
 * The authorization response names another issuer (`iss`, RFC 9207) than the shop the app started
 * the authorization with: the code may come from somewhere else (a mix-up attack) and is not used.
 */
export class IssuerError extends StoregateError {
  readonly expected: string;
  readonly received: string;
  constructor(expected: string, received: string) {
    super('ISSUER_MISMATCH', `the authorization response comes from issuer "${received.slice(0, 200)}", expected "${expected}"`);
    this.expected = expected;
    this.received = received;
  }
}

/** Every code of {@link LaunchTokenError}. */
export type LaunchTokenErrorCode = (typeof ERROR_CODES.launchToken)[number];

/**
 * A launch token (`id_token`) was refused: not a compact JWS, an algorithm other than HS256, a
 * signature made with neither client secret, outside its validity (5 s of skew allowed), for another
 * app, from something that is not a store of the configured domain, or without a required claim.
 * `claim` names the claim at fault when there is one. The message never contains the token.
 */
export class LaunchTokenError extends StoregateError {
  readonly claim: string | undefined;
  constructor(code: LaunchTokenErrorCode, message: string, claim?: string) {
    super(code, message);
    this.claim = claim;
  }
}

/** A webhook could not be verified: not a raw body, no or wrong signature, stale timestamp, public keys out of reach. */
export class WebhookError extends StoregateError {
  constructor(
    code:
      | 'WEBHOOK_BODY_NOT_RAW'
      | 'WEBHOOK_SIGNATURE_MISSING'
      | 'WEBHOOK_SIGNATURE_INVALID'
      | 'WEBHOOK_TIMESTAMP_OUT_OF_RANGE'
      | 'WEBHOOK_PAYLOAD_INVALID'
      | 'WEBHOOK_KEYS_UNAVAILABLE',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/** The code exchange at the token endpoint failed. No retry is made: codes are single-use. */
export class TokenExchangeError extends StoregateError {
  readonly status: number | undefined;
  readonly oauthError: string | undefined;
  constructor(message: string, details: { status?: number; oauthError?: string; cause?: unknown } = {}) {
    super('TOKEN_EXCHANGE_FAILED', message, { cause: details.cause });
    this.status = details.status;
    this.oauthError = details.oauthError;
  }
}

/** A refresh failed after its retries; the stored refresh token was left untouched. */
export class TokenRefreshError extends StoregateError {
  readonly status: number | undefined;
  readonly oauthError: string | undefined;
  constructor(message: string, details: { status?: number; oauthError?: string; cause?: unknown } = {}) {
    super('TOKEN_REFRESH_FAILED', message, { cause: details.cause });
    this.status = details.status;
    this.oauthError = details.oauthError;
  }
}

/** The grant is gone (`invalid_grant`, no refresh token, uninstalled): send the merchant through OAuth again. */
export class ReauthorizationRequiredError extends StoregateError {
  readonly shop: string;
  constructor(shop: string, reason: string) {
    super('REAUTHORIZATION_REQUIRED', `shop ${shop} must authorize the app again: ${reason}`);
    this.shop = shop;
  }
}

/** No session is stored for the shop. */
export class SessionNotFoundError extends StoregateError {
  readonly shop: string;
  constructor(shop: string) {
    super('SESSION_NOT_FOUND', `no session stored for shop ${shop}; install the app first`);
    this.shop = shop;
  }
}

/**
 * The merchant's online session is gone or expired (online tokens are never refreshed): exchange
 * a new launch token (or send the merchant through the per-user authorization again).
 */
export class SessionExpiredError extends StoregateError {
  readonly shop: string;
  readonly userId: string;
  constructor(shop: string, userId: string, reason: string) {
    super('SESSION_EXPIRED', `the online session of user ${userId} in shop ${shop} ${reason}; exchange a new launch token for another`);
    this.shop = shop;
    this.userId = userId;
  }
}

/** A session storage adapter failed (bad table name, database error). */
export class SessionStorageError extends StoregateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SESSION_STORAGE_FAILED', message, options);
  }
}

/** Details every Admin API error carries. */
export interface ApiErrorDetails {
  status: number;
  requestId?: string | undefined;
  /** The platform's PascalCase code (`NotFound`, `ValidationFailed`…) or the OAuth `error`. */
  platformCode?: string | undefined;
  body?: unknown;
  method?: string;
  path?: string;
  cause?: unknown;
}

/** An Admin API call answered with an error status; subclasses per status family. */
export class ApiError extends StoregateError {
  readonly status: number;
  readonly requestId: string | undefined;
  readonly platformCode: string | undefined;
  readonly body: unknown;
  constructor(code: ErrorCode, message: string, details: ApiErrorDetails) {
    super(code, message, { cause: details.cause });
    this.status = details.status;
    this.requestId = details.requestId;
    this.platformCode = details.platformCode;
    this.body = details.body;
  }
}

/** 401: the access token is missing, expired or revoked (after one forced refresh and retry). */
export class AuthError extends ApiError {
  constructor(message: string, details: ApiErrorDetails) {
    super('UNAUTHORIZED', message, details);
  }
}

/** 403: the app lacks a scope. */
export class ScopeError extends ApiError {
  constructor(message: string, details: ApiErrorDetails) {
    super('FORBIDDEN', message, details);
  }
}

/** 404. */
export class NotFoundError extends ApiError {
  constructor(message: string, details: ApiErrorDetails) {
    super('NOT_FOUND', message, details);
  }
}

/** 422: `errors` maps each bad field to its messages. */
export class ValidationError extends ApiError {
  readonly errors: Readonly<Record<string, readonly string[]>>;
  constructor(message: string, details: ApiErrorDetails & { errors: Record<string, readonly string[]> }) {
    super('VALIDATION_FAILED', message, details);
    this.errors = details.errors;
  }
}

/**
 * 412: a write sent with `ifMatch` found the record changed since that ETag was read; nothing was
 * changed. Read the record again (its new ETag with it), decide, and write again.
 */
export class PreconditionFailedError extends ApiError {
  constructor(message: string, details: ApiErrorDetails) {
    super('PRECONDITION_FAILED', message, details);
  }
}

/**
 * 409: a product write sent `expected_inventory_quantity` and the stored quantity is another one,
 * given as `actualQuantity`; nothing was changed.
 */
export class InventoryConflictError extends ApiError {
  readonly actualQuantity: number;
  constructor(message: string, details: ApiErrorDetails & { actualQuantity: number }) {
    super('INVENTORY_QUANTITY_MISMATCH', message, details);
    this.actualQuantity = details.actualQuantity;
  }
}

/** 429 after the retries ran out; `retryAfter` in seconds when the platform said. */
export class RateLimitError extends ApiError {
  readonly retryAfter: number | undefined;
  constructor(message: string, details: ApiErrorDetails & { retryAfter?: number | undefined }) {
    super('RATE_LIMITED', message, details);
    this.retryAfter = details.retryAfter;
  }
}

/**
 * 410 `ApiVersionGone`: the pinned API version is deprecated and the platform is browning it out
 * (answering 410 for a scheduled window) or it is past its sunset. `apiVersion` names it, `sunset`
 * is its sunset (ISO 8601) when the answer says; move to a newer version.
 */
export class ApiVersionGoneError extends ApiError {
  readonly apiVersion: string | undefined;
  readonly sunset: string | undefined;
  constructor(message: string, details: ApiErrorDetails & { apiVersion?: string | undefined; sunset?: string | undefined }) {
    super('API_VERSION_GONE', message, details);
    this.apiVersion = details.apiVersion;
    this.sunset = details.sunset;
  }
}

/** 5xx after the retries ran out (or at once for a non-idempotent request). */
export class ServerError extends ApiError {
  constructor(message: string, details: ApiErrorDetails) {
    super('SERVER_ERROR', message, details);
  }
}

/** The request never got an answer (connection refused, reset, DNS). `status` is 0. */
export class NetworkError extends ApiError {
  constructor(message: string, details: Omit<ApiErrorDetails, 'status'> & { code?: 'NETWORK_ERROR' | 'REQUEST_TIMEOUT' }) {
    super(details.code ?? 'NETWORK_ERROR', message, { ...details, status: 0 });
  }
}

/** The per-request timeout elapsed. A kind of {@link NetworkError}. */
export class TimeoutError extends NetworkError {
  readonly timeoutMs: number;
  constructor(timeoutMs: number, details: Omit<ApiErrorDetails, 'status'> = {}) {
    super(`request timed out after ${timeoutMs} ms`, { ...details, code: 'REQUEST_TIMEOUT' });
    this.timeoutMs = timeoutMs;
  }
}

/** The caller's `AbortSignal` fired; never retried. */
export class AbortedError extends StoregateError {
  constructor(options?: { cause?: unknown }) {
    super('REQUEST_ABORTED', 'request aborted by the caller', options);
  }
}
