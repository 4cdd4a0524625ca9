// Turns an error response of the Admin API into the matching typed error.
import {
  ApiError,
  ApiVersionGoneError,
  AuthError,
  InventoryConflictError,
  NotFoundError,
  PreconditionFailedError,
  RateLimitError,
  ScopeError,
  ServerError,
  ValidationError,
  type ApiErrorDetails,
} from '../errors.ts';
import { parseRetryAfter } from './retry-policy.ts';

interface ErrorBody {
  code?: unknown;
  message?: unknown;
  request_id?: unknown;
  errors?: unknown;
  inventory_quantity?: unknown;
  error?: unknown;
  error_description?: unknown;
}

function asString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function fieldErrors(value: unknown): Record<string, readonly string[]> {
  const out: Record<string, readonly string[]> = {};
  if (value === null || typeof value !== 'object') return out;
  for (const [field, messages] of Object.entries(value as Record<string, unknown>)) {
    out[field] = Array.isArray(messages) ? messages.map(String) : [String(messages)];
  }
  return out;
}

/** The typed error for an error response (status >= 400). */
export function apiErrorFromResponse(
  status: number,
  headers: Headers,
  body: unknown,
  context: { method: string; path: string; nowMs: number },
): ApiError {
  const b = (body !== null && typeof body === 'object' ? body : {}) as ErrorBody;
  const requestId = headers.get('x-request-id') ?? asString(b.request_id);
  const platformCode = asString(b.code) ?? asString(b.error);
  const said = asString(b.message) ?? asString(b.error_description);
  const where = `${context.method} ${context.path}`;
  const details: ApiErrorDetails = { status, requestId, platformCode, body, method: context.method, path: context.path };
  const message = (what: string) => `${where}: ${what}${said ? `: ${said}` : ''}${requestId ? ` (request id ${requestId})` : ''}`;
  if (status === 401) return new AuthError(message('401 unauthorized'), details);
  if (status === 403) return new ScopeError(message('403 forbidden (missing scope?)'), details);
  if (status === 404) return new NotFoundError(message('404 not found'), details);
  if (status === 412) return new PreconditionFailedError(message('412 precondition failed (the record changed)'), details);
  if (status === 409 && platformCode === 'InventoryQuantityMismatch' && typeof b.inventory_quantity === 'number') {
    return new InventoryConflictError(message('409 inventory quantity mismatch'), { ...details, actualQuantity: b.inventory_quantity });
  }
  if (status === 422) return new ValidationError(message('422 validation failed'), { ...details, errors: fieldErrors(b.errors) });
  if (status === 429) {
    return new RateLimitError(message('429 too many requests'), {
      ...details,
      retryAfter: parseRetryAfter(headers.get('retry-after'), context.nowMs),
    });
  }
  if (status === 410 && platformCode === 'ApiVersionGone') {
    const sunset = Date.parse(headers.get('sunset') ?? '');
    return new ApiVersionGoneError(message('410 API version gone'), {
      ...details,
      apiVersion: headers.get('x-service-api-version') ?? /^\/openapi\/([^/]+)/.exec(context.path)?.[1],
      sunset: Number.isNaN(sunset) ? undefined : new Date(sunset).toISOString(),
    });
  }
  if (status >= 500) return new ServerError(message(`${status} server error`), details);
  return new ApiError('HTTP_ERROR', message(`${status}`), details);
}
