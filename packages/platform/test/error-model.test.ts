// The error model: every error class the platform has lives in domain/errors.ts, is a PlatformError
// named after its class, and the one error handler answers each with its status, in the Admin API's
// shape and in the OAuth endpoints' shape; one whose message is not shown is logged instead.
import { Writable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as errors from '../src/domain/errors.ts';
import { oauthErrorCode, registerErrorHandler } from '../src/http/plugins/error-handler.ts';

const { PlatformError } = errors;
type AnyError = errors.PlatformError<errors.AnyErrorCode>;

/** A detail from inside the platform that an error not shown to the client may carry: for the log only. */
const INSIDE = 'customers row 42 of shard-7';

/** One instance of every exported error class, and the status the handler answers it with. */
const SAMPLES: Record<string, [() => AnyError, number]> = {
  PlatformError: [() => new errors.PlatformError(400, 'BadRequest', 'plain'), 400],
  InternalError: [() => new errors.InternalError(`lost ${INSIDE}`), 500],
  BadRequestError: [() => new errors.BadRequestError('bad'), 400],
  UnauthorizedError: [() => new errors.UnauthorizedError(), 401],
  ForbiddenError: [() => new errors.ForbiddenError('no', 'read_orders'), 403],
  NotFoundError: [() => new errors.NotFoundError(), 404],
  ValidationFailedError: [() => new errors.ValidationFailedError({ title: ['is required'] }), 422],
  OAuthError: [() => new errors.OAuthError('invalid_request', 'odd'), 400],
  InvalidRequest: [() => new errors.InvalidRequest('code is required'), 400],
  InvalidClient: [() => new errors.InvalidClient(), 401],
  InvalidGrant: [() => new errors.InvalidGrant('code expired'), 400],
  UnsupportedGrantType: [() => new errors.UnsupportedGrantType(), 400],
  InvalidScope: [() => new errors.InvalidScope('unknown scope'), 400],
  UnsupportedResponseType: [() => new errors.UnsupportedResponseType(), 400],
  AccessDenied: [() => new errors.AccessDenied(), 400],
  GrantRateLimited: [() => new errors.GrantRateLimited(true, 3), 429],
  IntrospectionRateLimited: [() => new errors.IntrospectionRateLimited(3), 429],
  AuthorizePageError: [() => new errors.AuthorizePageError('unknown client'), 400],
  ConflictingTokens: [() => new errors.ConflictingTokens(), 400],
  UnsupportedParameterError: [() => new errors.UnsupportedParameterError(['sort'], ['limit']), 400],
  MethodNotAllowedError: [() => new errors.MethodNotAllowedError(['GET']), 405],
  UnsupportedMediaTypeError: [() => new errors.UnsupportedMediaTypeError('json only'), 415],
  TooManyRequestsError: [() => new errors.TooManyRequestsError('slow down'), 429],
  ConfigError: [() => new errors.ConfigError(`bad --database-url ${INSIDE}`), 500],
  InvalidCursor: [() => new errors.InvalidCursor('cursor is malformed'), 400],
  ApiVersionGoneError: [() => new errors.ApiVersionGoneError('gone'), 410],
  ConflictError: [() => new errors.ConflictError('busy'), 409],
  PreconditionFailedError: [() => new errors.PreconditionFailedError('changed'), 412],
  InventoryQuantityMismatchError: [() => new errors.InventoryQuantityMismatchError(4), 409],
  IdempotencyKeyReusedError: [() => new errors.IdempotencyKeyReusedError(), 422],
  IdempotencyKeyInUseError: [() => new errors.IdempotencyKeyInUseError(), 409],
  DuplicateRecordError: [() => new errors.DuplicateRecordError('customer'), 500],
  ServiceUnavailableError: [() => new errors.ServiceUnavailableError('later', 7), 503],
  DatabaseUnavailableError: [() => new errors.DatabaseUnavailableError('connection lost'), 503],
  InvalidCursorError: [() => new errors.InvalidCursorError('cursor is malformed'), 500],
  FilterSyntaxError: [() => new errors.FilterSyntaxError('position 3'), 500],
  ScopeParseError: [() => new errors.ScopeParseError('read_nothing'), 500],
  UnsafeSignedValueError: [() => new errors.UnsafeSignedValueError('a&b'), 500],
  SsrfRefusedError: [() => new errors.SsrfRefusedError('10.0.0.1 is not public'), 500],
  BulkAttemptError: [() => new errors.BulkAttemptError(true, new Error(INSIDE)), 500],
  NoNoticeRecipient: [() => new errors.NoNoticeRecipient(), 500],
};

type ErrorClass = abstract new (...args: never[]) => unknown;

/** Every class domain/errors.ts exports, by name. */
function exportedClasses(): [string, ErrorClass][] {
  const classes: [string, ErrorClass][] = [];
  for (const [name, value] of Object.entries(errors)) {
    if (typeof value === 'function' && /^class\b/.test(Function.prototype.toString.call(value))) classes.push([name, value as ErrorClass]);
  }
  return classes;
}

describe('error classes', () => {
  it('every exported class has a sample here (a new class must say what it answers)', () => {
    expect(
      exportedClasses()
        .map(([name]) => name)
        .sort(),
    ).toEqual(Object.keys(SAMPLES).sort());
  });

  it.each(exportedClasses())('%s extends PlatformError and is named after its class', (name, cls) => {
    const error = SAMPLES[name]![0]();
    expect(error).toBeInstanceOf(cls);
    expect(error).toBeInstanceOf(PlatformError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(error.status).toBe(error.statusCode);
  });

  it('OAuth errors keep their RFC 6749 error and description', () => {
    const error = new errors.InvalidGrant('code expired');
    expect([error.code, error.error, error.description, error.statusCode]).toEqual(['invalid_grant', 'invalid_grant', 'code expired', 400]);
  });
});

describe('the error handler maps each class', () => {
  let app: FastifyInstance;
  const logged: string[] = [];

  beforeAll(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logged.push(chunk.toString('utf8'));
        done();
      },
    });
    app = Fastify({ logger: { level: 'error', stream } });
    registerErrorHandler(app);
    const thrower = async (req: { params: unknown }) => {
      throw SAMPLES[(req.params as { name: string }).name]![0]();
    };
    app.get('/throw/:name', thrower);
    app.post('/oauth/:name', { config: { oauth: true } }, thrower);
    await app.ready();
  });
  afterAll(() => app.close());

  it.each(Object.entries(SAMPLES))('%s answers its status in the Admin API shape', async (name, [make, status]) => {
    const error = make();
    logged.length = 0;
    const res = await app.inject({ method: 'GET', url: `/throw/${name}`, headers: { accept: 'application/json' } });
    expect(res.statusCode).toBe(status);
    if (error instanceof errors.AuthorizePageError) {
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain(error.message);
      return;
    }
    const body = res.json() as { code: string; message: string; request_id: string };
    if (error.exposed) {
      expect(body).toMatchObject({ code: error.code, request_id: expect.any(String) });
      expect(logged).toEqual([]);
    } else {
      // Not shown: the generic answer, and the error (with what it says) in the log only.
      expect(body).toEqual({
        code: 'ServerError',
        message: 'Internal error; quote the request id when reporting it',
        request_id: body.request_id,
      });
      expect(res.body).not.toContain(error.message);
      expect(res.body).not.toContain('shard-7');
      const messages = logged.map((line) => (JSON.parse(line) as { err?: { message?: string } }).err?.message);
      // The log's serializer appends the cause's message to the error's own.
      expect(messages.some((m) => m?.startsWith(error.message))).toBe(true);
    }
  });

  it.each(Object.entries(SAMPLES).filter(([name]) => name !== 'AuthorizePageError'))(
    '%s answers its status in the OAuth shape',
    async (name, [make, status]) => {
      const error = make();
      const res = await app.inject({ method: 'POST', url: `/oauth/${name}` });
      expect(res.statusCode).toBe(status);
      expect(res.json()).toEqual({
        error: oauthErrorCode(error),
        error_description: error.exposed ? error.message : 'Internal error; quote the request id when reporting it',
      });
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['www-authenticate']).toBe(status === 401 ? 'Basic realm="storegate"' : undefined);
      expect(res.body).not.toContain('shard-7');
    },
  );

  it('names OAuth codes by class, then by status', () => {
    expect(oauthErrorCode(new errors.InvalidClient())).toBe('invalid_client');
    expect(oauthErrorCode(new errors.GrantRateLimited(false, 1))).toBe('temporarily_unavailable');
    expect(oauthErrorCode(new errors.DatabaseUnavailableError('busy'))).toBe('temporarily_unavailable');
    expect(oauthErrorCode(new errors.BadRequestError('bad'))).toBe('invalid_request');
    expect(oauthErrorCode(new errors.DuplicateRecordError('customer'))).toBe('server_error');
    expect(oauthErrorCode(new Error('anything else'))).toBe('server_error');
  });
});
