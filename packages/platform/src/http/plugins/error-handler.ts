// The one place that turns every error into a response: OAuth endpoints answer RFC 6749 JSON
// (`error`, `error_description`), a browser's page or form gets an HTML page, everything else
// `{code, message, request_id}`. Internal details go to the log only.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type AnyErrorCode,
  AuthorizePageError,
  NotFoundError,
  OAuthError,
  type OAuthErrorCode,
  PlatformError,
  ServiceUnavailableError,
} from '../../domain/errors.ts';
import { html, page } from '../views/html.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Errors of this route are rendered as OAuth 2.0 token-endpoint JSON. */
    oauth?: boolean;
  }
}

export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | Error, req, reply) => renderError(error, req, reply));
  app.setNotFoundHandler((req, reply) => renderError(new NotFoundError(), req, reply));
}

/** Most fields a 422 names: enough to fix a form, few enough that the answer stays small. */
export const MAX_LISTED_FIELDS = 10;
/** Most messages listed for one field, and the longest field name written out (names come from the client). */
const MAX_MESSAGES_PER_FIELD = 5;
const MAX_FIELD_NAME = 100;

/** Ajv errors as `{field: [messages]}`, fields named by their path (`line_items.0.price`). */
function fieldErrors(fe: FastifyError): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of fe.validation ?? []) {
    const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    const params = e.params as Record<string, unknown>;
    let field = path;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      field = [path, String(params.missingProperty)].filter(Boolean).join('.');
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      field = [path, String(params.additionalProperty)].filter(Boolean).join('.');
      message = 'is not a known field';
    } else if (e.keyword === 'dependencies') {
      field = [path, String(params.missingProperty)].filter(Boolean).join('.');
      message = `is required with ${String(params.property)}`;
    } else if (e.keyword === 'enum') {
      message = `must be one of: ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    }
    field ||= fe.validationContext ?? 'body';
    (out[field] ??= []).push(message);
  }
  return out;
}

/**
 * A validation answer's `errors`, bounded: at most `MAX_LISTED_FIELDS` fields, a few messages each,
 * long names cut short, so that the answer to a body full of mistakes stays as small as the answer
 * to one with a few; and its message, which says how many fields there were when some are left out.
 */
function listedErrors(errors: Record<string, unknown>, message: string): { message: string; errors: Record<string, string[]> } {
  const fields = Object.keys(errors);
  const listed: Record<string, string[]> = {};
  for (const field of fields.slice(0, MAX_LISTED_FIELDS)) {
    const messages = errors[field];
    const name = field.length > MAX_FIELD_NAME ? `${field.slice(0, MAX_FIELD_NAME)}…` : field;
    const all = [...(listed[name] ?? []), ...(Array.isArray(messages) ? messages : [messages]).map(String)];
    listed[name] = all.slice(0, MAX_MESSAGES_PER_FIELD);
  }
  if (fields.length <= MAX_LISTED_FIELDS) return { message, errors: listed };
  return { message: `${message}: ${fields.length} fields have errors; the first ${MAX_LISTED_FIELDS} are listed`, errors: listed };
}

function wantsHtml(req: FastifyRequest): boolean {
  if (!(req.headers.accept ?? '').includes('text/html')) return false;
  // Pages, and the HTML forms of the store admin and partner dashboard (a browser posting a form).
  return (
    req.method === 'GET' ||
    (req.method === 'POST' &&
      (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded') &&
      !req.routeOptions.config?.oauth)
  );
}

interface Rendered {
  status: number;
  code: AnyErrorCode;
  message: string;
  extra: Record<string, unknown>;
}

/**
 * The OAuth `error` an OAuth endpoint answers for an error of the given HTTP status: an OAuth
 * error's own code, else what its status means (the status an unshown or unexpected error answers
 * with is 500). The token and introspection routes count their refusals by it too.
 */
export function oauthErrorCode(error: unknown, status = statusOf(error)): OAuthErrorCode {
  if (error instanceof OAuthError) return error.code;
  if (status === 503) return 'temporarily_unavailable';
  return status < 500 ? 'invalid_request' : 'server_error';
}

/** The status a platform error answers with; 500 for one whose message is not shown, or any other error. */
function statusOf(error: unknown): number {
  return error instanceof PlatformError && error.exposed ? error.statusCode : 500;
}

/**
 * A platform error as it is answered; Fastify's own errors (validation, body parsing, CSRF); and
 * anything unexpected or not to be shown, which is logged and answered without its message.
 */
function describe(error: FastifyError | Error, req: FastifyRequest): Rendered {
  // OAuth errors too: their code is the RFC 6749 `error`, their message its description.
  if (error instanceof PlatformError && error.exposed) {
    const details = error.details ?? {};
    const errors = details.errors;
    if (error.code !== 'ValidationFailed' || typeof errors !== 'object' || errors === null)
      return { status: error.statusCode, code: error.code, message: error.message, extra: details };
    const listed = listedErrors(errors as Record<string, unknown>, error.message);
    return { status: error.statusCode, code: error.code, message: listed.message, extra: { ...details, errors: listed.errors } };
  }
  const fe = error as FastifyError;
  if (error instanceof PlatformError) return unexpected(error, req);
  if (fe.validation) {
    const listed = listedErrors(fieldErrors(fe), 'Validation failed');
    return { status: 422, code: 'ValidationFailed', message: listed.message, extra: { errors: listed.errors } };
  }
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return { status: 413, code: 'PayloadTooLarge', message: 'Request body is too large', extra: {} };
  if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return { status: 415, code: 'UnsupportedMediaType', message: 'Unsupported Content-Type', extra: {} };
  if (
    fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
    fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
    (fe.statusCode === 400 && fe.code?.startsWith('FST_ERR_CTP'))
  ) {
    return { status: 400, code: 'BadRequest', message: 'Request body is not valid JSON', extra: {} };
  }
  if (fe.code === 'FST_CSRF_INVALID_TOKEN' || fe.code === 'FST_CSRF_MISSING_SECRET') {
    return {
      status: 403,
      code: 'Forbidden',
      message: 'The form expired or was not sent from this site; reload the page and try again',
      extra: {},
    };
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500)
    return { status: fe.statusCode, code: 'BadRequest', message: 'Bad request', extra: {} };
  return unexpected(error, req);
}

function unexpected(error: Error, req: FastifyRequest): Rendered {
  req.log.error({ err: error }, 'unexpected error');
  return { status: 500, code: 'ServerError', message: 'Internal error; quote the request id when reporting it', extra: {} };
}

function renderError(error: FastifyError | Error, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof AuthorizePageError) {
    return reply
      .status(400)
      .type('text/html; charset=utf-8')
      .send(
        page(
          'Cannot continue',
          html`<h1>This app link is not valid</h1><p class="error" role="alert">${error.message}</p><p class="muted">Request id: \
<code>${req.id}</code></p>`,
        ),
      );
  }
  const { status, code, message, extra } = describe(error, req);
  // A dependency that is away for the moment (the database): the same request may be sent again.
  if (error instanceof ServiceUnavailableError) reply.header('Retry-After', String(error.retryAfterSeconds));
  if (req.routeOptions.config?.oauth) {
    const oauthCode = oauthErrorCode(error, status);
    // A client that failed authentication is told how to authenticate (RFC 6749 section 5.2).
    if (status === 401) reply.header('WWW-Authenticate', 'Basic realm="storegate"');
    return reply
      .status(status)
      .header('Cache-Control', 'no-store')
      .header('Pragma', 'no-cache')
      .send({ error: oauthCode, error_description: message });
  }
  if (wantsHtml(req)) {
    return reply
      .status(status)
      .type('text/html; charset=utf-8')
      .send(
        page(
          'Error',
          html`<h1>${status === 404 ? 'Not found' : 'Something went wrong'}</h1><p class="error" role="alert">${message}</p>\
<p class="muted">Request id: <code>${req.id}</code></p>`,
        ),
      );
  }
  return reply.status(status).send({ code, message, ...extra, request_id: req.id });
}
