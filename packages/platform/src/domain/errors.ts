// Every error the platform raises, in one place, all of them a PlatformError: its `code`, its HTTP
// status, its `name` (the class's) and whether its message may be shown to the client. OAuth
// endpoints render OAuthError as the token endpoint's standard JSON (RFC 6749 section 5.2);
// everything else renders as {code, message, request_id}. Clients branch on `code`, so the set of
// codes is closed. Errors that are not shown are failures inside the platform: the client gets the
// generic 500 answer and the log gets the error, so their messages may name what went wrong inside.
// Infrastructure failures (the database away, a unique key refused) live here too: services and
// routes react to them by class, and this file imports nothing, so no layer gains a dependency.

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

/** The closed set of codes of every error: the Admin API's and the OAuth endpoints'. */
export type AnyErrorCode = ErrorCode | OAuthErrorCode;

/** How a PlatformError is answered besides its status, code, message and details. */
export interface ErrorOptions {
  /** False for a failure inside the platform: the client gets the generic 500 answer, the log the error. */
  exposed?: boolean;
  cause?: unknown;
}

/**
 * The base of every error the platform raises. `statusCode` is the HTTP status it answers with
 * (the name Fastify reads), `details` what the answer carries beside `code` and `message`.
 */
export class PlatformError<C extends AnyErrorCode = ErrorCode> extends Error {
  readonly exposed: boolean;
  constructor(
    readonly statusCode: number,
    readonly code: C,
    message: string,
    readonly details?: Record<string, unknown>,
    options: ErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.exposed = options.exposed ?? true;
  }

  /** The HTTP status, by its plain name. */
  get status(): number {
    return this.statusCode;
  }
}

/**
 * An error no client reads as it is: a failure inside the platform, or a finding a service answers
 * in its own words (a refused unique key, a cursor that does not decode, an unknown scope). One
 * that reaches the error handler is answered as the generic 500 and logged.
 */
export class InternalError extends PlatformError<'ServerError'> {
  constructor(message: string, cause?: unknown) {
    super(500, 'ServerError', message, undefined, { exposed: false, cause });
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

/**
 * OAuth 2.0 errors of the token, revocation, introspection and authorization endpoints: `code` is
 * the RFC 6749 `error`, the message its `error_description` (400 unless the error says otherwise).
 */
export class OAuthError extends PlatformError<OAuthErrorCode> {
  constructor(code: OAuthErrorCode, description: string, statusCode = 400) {
    super(statusCode, code, description);
  }

  /** The RFC 6749 `error`. */
  get error(): OAuthErrorCode {
    return this.code;
  }

  /** The RFC 6749 `error_description`. */
  get description(): string {
    return this.message;
  }
}
export class InvalidRequest extends OAuthError {
  constructor(description: string) {
    super('invalid_request', description);
  }
}
/** A client that failed authentication (401, with a Basic challenge). */
export class InvalidClient extends OAuthError {
  constructor(description = 'client authentication failed') {
    super('invalid_client', description, 401);
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
 * A grant refused by a limit of the token endpoint: 429 in the OAuth error form. RFC 6749 has no
 * code for it; `temporarily_unavailable` is its code for "not now, ask again later", and clients
 * that retry on 429 find `Retry-After` (`invalid_grant` would make them drop the refresh token).
 */
export class GrantRateLimited extends OAuthError {
  constructor(perClient: boolean, retryAfterSeconds: number) {
    const whose = perClient ? 'from this client in this store' : 'in this store';
    super('temporarily_unavailable', `too many token requests ${whose}; retry after ${retryAfterSeconds} s`, 429);
  }
}

/** A resource server over its introspection bucket: 429 in the OAuth error form, as for grants. */
export class IntrospectionRateLimited extends OAuthError {
  constructor(retryAfterSeconds: number) {
    super('temporarily_unavailable', `too many introspection requests from this resource server; retry after ${retryAfterSeconds} s`, 429);
  }
}

/**
 * An authorization request that must not go back to the app (unknown client, bad redirect_uri):
 * shown as an error page to the merchant, never redirected.
 */
export class AuthorizePageError extends PlatformError {
  constructor(message: string) {
    super(400, 'BadRequest', message);
  }
}

/** Access-Token and Authorization: Bearer name different tokens (400 with an RFC 6750 challenge). */
export class ConflictingTokens extends BadRequestError {
  constructor() {
    super('The Access-Token header and Authorization: Bearer carry different tokens; send one token, in either header');
  }
}

/** A query parameter a list (or an export, or a count) does not support: 400 naming it. */
export class UnsupportedParameterError extends PlatformError {
  constructor(
    readonly names: string[],
    accepted: readonly string[],
    what = 'Lists take',
  ) {
    super(
      400,
      'BadRequest',
      `Unsupported query parameter${names.length > 1 ? 's' : ''}: ${names.join(', ')}. ${what} ${accepted.join(', ')}`,
      { errors: Object.fromEntries(names.map((n) => [n, ['is not a supported query parameter']])) },
    );
  }
}

/** A method the path does not answer (405); the message lists the ones it does. */
export class MethodNotAllowedError extends PlatformError {
  constructor(allowed: readonly string[]) {
    super(405, 'MethodNotAllowed', `Allowed methods: ${allowed.join(', ')}`);
  }
}
/** A body of a type the route does not read (415). */
export class UnsupportedMediaTypeError extends PlatformError {
  constructor(message: string) {
    super(415, 'UnsupportedMediaType', message);
  }
}
/** Over a rate or concurrency limit of the Admin API (429). */
export class TooManyRequestsError extends PlatformError {
  constructor(message: string) {
    super(429, 'TooManyRequests', message);
  }
}

/** A configuration value or flag that cannot be used (the CLI answers it as a usage error). */
export class ConfigError extends InternalError {}

/** A cursor that is malformed, altered, of another list or of the wrong direction (400). */
export class InvalidCursor extends PlatformError {
  constructor(message: string) {
    super(400, 'InvalidCursor', message);
  }
}

/**
 * A deprecated API version answering 410 during a scheduled brown-out: the message names the
 * version, its sunset and the version to move to.
 */
export class ApiVersionGoneError extends PlatformError {
  constructor(message: string) {
    super(410, 'ApiVersionGone', message);
  }
}

/** The request is valid but the record is not in a state that allows it (409). */
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
export class DuplicateRecordError extends InternalError {
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

/** A cursor that does not decode, or was sent where it cannot be used; services answer InvalidCursor. */
export class InvalidCursorError extends InternalError {}

/** What is wrong with a webhook filter; the message names the field and/or the position (1-based). */
export class FilterSyntaxError extends InternalError {}

/** A scope name the platform does not know; services answer it as their own validation error. */
export class ScopeParseError extends InternalError {
  constructor(readonly scope: string) {
    super(`unknown scope "${scope}"`);
  }
}

/** A name or value the platform would sign although it holds `%`, `&` (or, in a name, `=`). */
export class UnsafeSignedValueError extends InternalError {
  constructor(name: string) {
    super(`refusing to sign query parameter "${name}": signed names and values must not contain "%" or "&"`);
  }
}

/** A webhook address that resolves to a non-public address: the delivery is refused, never sent. */
export class SsrfRefusedError extends InternalError {}

/** A bulk export run that threw; `final` when the operation was ended as failed because of it. */
export class BulkAttemptError extends InternalError {
  constructor(
    readonly final: boolean,
    cause: unknown,
  ) {
    super(final ? 'bulk export failed on its last attempt' : 'bulk export attempt failed', cause);
  }
}

/** Rolls a deprecation notice back when the app has no subscription to hear it in that store. */
export class NoNoticeRecipient extends InternalError {
  constructor() {
    super('the app has no subscription to hear this notice in this store');
  }
}
