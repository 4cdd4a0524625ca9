// Every error the platform answers with, in one place. OAuth endpoints render OAuthError as the
// token endpoint's standard JSON (RFC 6749 section 5.2); everything else renders PlatformError as
// {code, message, request_id}. Clients branch on `code`, so the set of codes is closed.

/** Every `code` an Admin API or page error can carry. */
export const ERROR_CODES = [
  'BadRequest',
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'MethodNotAllowed',
  'Conflict',
  'IdempotencyKeyInUse',
  'IdempotencyKeyReused',
  'PreconditionFailed',
  'InventoryQuantityMismatch',
  'PayloadTooLarge',
  'UnsupportedMediaType',
  'ValidationFailed',
  'InvalidCursor',
  'TooManyRequests',
  'ApiVersionGone',
  'ServiceUnavailable',
  'ServerError',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Every `error` an OAuth endpoint can answer with (RFC 6749 and RFC 7009). */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'unsupported_response_type'
  | 'unsupported_token_type'
  | 'access_denied'
  | 'server_error'
  | 'temporarily_unavailable';

export class PlatformError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export class BadRequestError extends PlatformError {
  constructor(message: string) {
    super(400, 'BadRequest', message);
  }
}
export class UnauthorizedError extends PlatformError {
  constructor(message = 'Missing or invalid Access-Token') {
    super(401, 'Unauthorized', message);
  }
}
export class ForbiddenError extends PlatformError {
  /** `scope`: the scope the request needs, when a missing scope is the reason (for WWW-Authenticate). */
  constructor(
    message: string,
    readonly scope?: string,
  ) {
    super(403, 'Forbidden', message);
  }
}
export class NotFoundError extends PlatformError {
  constructor(message = 'Not found') {
    super(404, 'NotFound', message);
  }
}
export class ValidationFailedError extends PlatformError {
  constructor(readonly errors: Record<string, string[]>) {
    super(422, 'ValidationFailed', 'Validation failed', { errors });
  }
}

/** OAuth 2.0 errors of the token, revocation and authorization endpoints. */
export class OAuthError extends Error {
  readonly statusCode: number = 400;
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
  ) {
    super(description);
  }
}
export class InvalidRequest extends OAuthError {
  constructor(description: string) {
    super('invalid_request', description);
  }
}
export class InvalidClient extends OAuthError {
  override readonly statusCode = 401;
  constructor(description = 'client authentication failed') {
    super('invalid_client', description);
  }
}
export class InvalidGrant extends OAuthError {
  constructor(description: string) {
    super('invalid_grant', description);
  }
}
export class UnsupportedGrantType extends OAuthError {
  constructor(description = 'grant_type must be authorization_code or refresh_token') {
    super('unsupported_grant_type', description);
  }
}
export class InvalidScope extends OAuthError {
  constructor(description: string) {
    super('invalid_scope', description);
  }
}
export class UnsupportedResponseType extends OAuthError {
  constructor(description = 'response_type must be code') {
    super('unsupported_response_type', description);
  }
}
export class AccessDenied extends OAuthError {
  constructor(description = 'the merchant declined the installation') {
    super('access_denied', description);
  }
}
/**
 * An authorization request that must not go back to the app (unknown client, bad redirect_uri):
 * shown as an error page to the merchant, never redirected.
 */
export class AuthorizePageError extends Error {
  readonly statusCode = 400;
  constructor(message: string) {
    super(message);
  }
}

export class ConfigError extends Error {}

/** A cursor that is malformed, altered, of another list or of the wrong direction (400). */
export class InvalidCursor extends PlatformError {
  constructor(message: string) {
    super(400, 'InvalidCursor', message);
  }
}

/** The request is valid but the record is not in a state that allows it (409). */
/**
 * A deprecated API version answering 410 during a scheduled brown-out: the message names the
 * version, its sunset and the version to move to.
 */
export class ApiVersionGoneError extends PlatformError {
  constructor(message: string) {
    super(410, 'ApiVersionGone', message);
  }
}

export class ConflictError extends PlatformError {
  constructor(message: string) {
    super(409, 'Conflict', message);
  }
}

/**
 * A conditional write (If-Match) whose record changed since the tag was read (412): nothing was
 * changed; read the record again, then decide.
 */
export class PreconditionFailedError extends PlatformError {
  constructor(message: string) {
    super(412, 'PreconditionFailed', message);
  }
}

/**
 * A product write that named the inventory quantity it expected while the stored quantity is
 * another one (409): nothing was changed; the answer carries the stored quantity.
 */
export class InventoryQuantityMismatchError extends PlatformError {
  constructor(readonly actual: number) {
    super(409, 'InventoryQuantityMismatch', `The inventory quantity is ${actual}, not the expected one; nothing was changed`, {
      inventory_quantity: actual,
    });
  }
}

/** An Idempotency-Key sent again with a request other than the one it was first used for (422). */
export class IdempotencyKeyReusedError extends PlatformError {
  constructor() {
    super(
      422,
      'IdempotencyKeyReused',
      'This Idempotency-Key was already used for a different request (method, path or body); use a new key for a new request',
    );
  }
}

/** An Idempotency-Key whose first request has not finished yet (409): retrying later replays its answer. */
export class IdempotencyKeyInUseError extends PlatformError {
  constructor() {
    super(409, 'IdempotencyKeyInUse', 'A request with this Idempotency-Key is still in progress; retry once it has finished');
  }
}

/**
 * A write that would give a record the unique key of another one (a customer email in its store, an
 * identical webhook subscription). Storage raises it when the database refuses the write, so a
 * check made before the write and lost to a concurrent one still ends as this; services turn it
 * into their own validation answer.
 */
export class DuplicateRecordError extends Error {
  constructor(readonly record: string) {
    super(`${record}: another record already has the same unique key`);
  }
}

/**
 * The request cannot be served right now through no fault of its own (503 with Retry-After): the
 * client may send it again as it is once that time has passed.
 */
export class ServiceUnavailableError extends PlatformError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(503, 'ServiceUnavailable', message);
  }
}

/** Why the database could not serve a query, in words fit for logs (never a host or a password). */
export type DatabaseFault = 'connection lost' | 'cannot connect' | 'statement timeout' | 'pool exhausted' | 'busy';

/**
 * The database is unreachable, refused or lost the connection, did not answer within its timeout,
 * or (SQLite) stayed locked by another process. Storage raises it in place of the driver's error,
 * so no layer above needs to know the drivers' codes.
 */
export class DatabaseUnavailableError extends ServiceUnavailableError {
  constructor(readonly fault: DatabaseFault) {
    super('The database is unavailable for the moment; retry after the time in Retry-After', 2);
  }
}
