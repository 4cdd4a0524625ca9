// Idempotency-Key on Admin API writes (routes with `config.idempotent`). Runs after everything that
// may refuse a request before its handler (version, Access-Token, rate limit, scope, body type,
// body schema): such refusals neither store an answer nor use up the key. Then the key is reserved,
// or the first answer to the same request is sent again with `Idempotent-Replayed: true`.
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendAsyncHookHandler, preHandlerAsyncHookHandler } from 'fastify';
import { parseIdempotencyKey, requestFingerprint } from '../../domain/idempotency.ts';
import type { ResourceName } from '../../domain/resources.ts';
import type { IdempotentRequests, Reservation, StoredResponse, WriteStep } from '../../services/idempotency.ts';
import type { Services } from '../../services/services.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The key this request holds while it runs; undefined without a key (or on a replay). */
    idempotency: Reservation | undefined;
    /** Its answer was stored with its write, in the same transaction. */
    idempotencyRecorded: boolean;
  }
  interface FastifyContextConfig {
    /**
     * An Admin API write that honours Idempotency-Key, named by the resource it writes: kept with
     * its answer, so a customer's redaction reads the customer and order answers only.
     */
    idempotent?: ResourceName | 'webhooks';
  }
}

const JSON_TYPE = 'application/json; charset=utf-8';
/** Headers that describe the stored body and so come back with it; the rest are the replay's own. */
const KEPT_HEADERS = ['content-type', 'location', 'etag'] as const;

/**
 * The request header, for route schemas (and so the OpenAPI document). Checked by the hook, not by the schema, so a bad key is a 400
 * naming it.
 */
export const IDEMPOTENCY_KEY_HEADERS = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      description:
        'Optional. A unique key for this write (1–255 printable ASCII characters, e.g. a UUID), scoped to the store and the calling app. ' +
        'Sending the same request with the same key within 24 hours returns the first response again, with `Idempotent-Replayed: true`, ' +
        'without performing the write again. The same key with a different request is 422 IdempotencyKeyReused; while the first request ' +
        'is still running, 409 IdempotencyKeyInUse. Server errors (5xx) do not use up the key.',
    },
  },
};

export function registerIdempotency(api: FastifyInstance, services: Pick<Services, 'idempotency'>): void {
  api.decorateRequest('idempotency', undefined);
  api.decorateRequest('idempotencyRecorded', false);

  const admit: preHandlerAsyncHookHandler = async (req, reply) => {
    const key = parseIdempotencyKey(req.headers['idempotency-key']);
    if (key === undefined) return;
    const p = req.principal!;
    const admission = await services.idempotency.admit(
      { storeId: p.storeId, owner: p.owner, key },
      requestFingerprint(req.method, req.url, req.body, req.headers['if-match']),
      req.id,
      req.routeOptions.config.idempotent,
    );
    if (admission.kind === 'run') {
      req.idempotency = admission.reservation;
      return;
    }
    const { response } = admission;
    for (const [name, value] of Object.entries(response.headers)) reply.header(name, value);
    reply.header('Idempotent-Replayed', 'true').header('Original-Request-Id', admission.requestId);
    return reply.status(response.status).send(response.body);
  };

  // Answers that did not come with a write of their own: a refusal by the handler is stored (the
  // same request would be refused again); a server error frees the key for a retry.
  const settle: onSendAsyncHookHandler<unknown> = async (req, reply, payload) => {
    const reservation = req.idempotency;
    if (!reservation || (req.idempotencyRecorded && reply.statusCode < 500)) return payload;
    try {
      if (reply.statusCode >= 500 || typeof payload !== 'string') await services.idempotency.release(reservation);
      else await services.idempotency.record(reservation, { status: reply.statusCode, body: payload, headers: kept(reply) });
    } catch (err) {
      // The reservation's lease frees the key later; the answer itself must still go out.
      req.log.warn({ err }, 'could not store or free the idempotency key of this request');
    }
    return payload;
  };

  // Both run only on the routes that honour a key; reads pay nothing for them.
  api.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return;
    route.preHandler = [admit, ...asList(route.preHandler)];
    route.onSend = [settle, ...asList(route.onSend)];
  });
}

function asList<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}

function kept(reply: FastifyReply): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = reply.getHeader(name);
    if (value !== undefined) out[name] = String(value);
  }
  return out;
}

/**
 * A write handler's answer: JSON `render(result)` with `status`, and the ETag `etag(result)` when
 * given. With a reserved key, `step` stores exactly that answer (its ETag too) inside the write's
 * transaction; `send` sends it once the write committed.
 *
 * @example
 * const answer = writeAnswer(services.idempotency, req, 201, (row: ResourceRecord) => ({ data: def.toJson(row) }));
 * const row = await services.resources.create(def, storeId, body, answer.step);
 * return answer.send(reply, row);
 */
export function writeAnswer<T>(
  idempotency: IdempotentRequests,
  req: FastifyRequest,
  status: number,
  render: (result: T) => unknown,
  etag?: (result: T) => string,
): { step: WriteStep<T> | undefined; send(reply: FastifyReply, result: T): FastifyReply } {
  let body: string | undefined;
  const text = (result: T) => (body ??= JSON.stringify(render(result)));
  const headers = (result: T): Record<string, string> =>
    etag ? { 'content-type': JSON_TYPE, etag: etag(result) } : { 'content-type': JSON_TYPE };
  const stored = (result: T): StoredResponse => ({ status, body: text(result), headers: headers(result) });
  const reservation = req.idempotency;
  return {
    step: reservation && idempotency.recordIn(reservation, stored),
    send(reply, result) {
      if (reservation) req.idempotencyRecorded = true;
      if (etag) reply.header('ETag', etag(result));
      return reply.status(status).type(JSON_TYPE).send(text(result));
    },
  };
}
