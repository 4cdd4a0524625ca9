// Conditional requests of the Admin API. A record's answer (GET of one record, and the answer of its
// create or update) carries its ETag; PUT, PATCH and DELETE of a record honour If-Match (412 when the
// record changed since, nothing changed); a GET honours If-None-Match (304). List answers carry no
// tags: an app that means to write a record conditionally reads it first, which also shows it what
// it is about to overwrite. The If-Match header is checked before the Idempotency-Key is reserved,
// so a malformed one (400) neither stores an answer nor uses up the key.
import type { FastifyInstance, FastifyReply, FastifyRequest, preValidationHookHandler } from 'fastify';
import { etagOf, type IfMatch, noneMatchHits, parseIfMatch, type Versioned } from '../../domain/etags.ts';
import { API_RESPONSE_HEADERS, ERROR_BODY, withApiHeaders } from './api-common.ts';
import { IDEMPOTENCY_KEY_HEADERS } from './idempotency.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The If-Match of a conditional write, parsed for the record its path names; undefined without one. */
    ifMatch: IfMatch | undefined;
  }
}

export function registerPreconditions(api: FastifyInstance): void {
  api.decorateRequest('ifMatch', undefined);
  const parse: preValidationHookHandler = (req, _reply, done) => {
    const raw = (req.params as { id?: string }).id ?? '';
    // A path that names no record is a 404 from the handler; its If-Match does not matter.
    if (!/^[1-9][0-9]{0,15}$/.test(raw)) return done();
    try {
      req.ifMatch = parseIfMatch(req.headers['if-match'], Number(raw));
    } catch (err) {
      return done(err as Error);
    }
    done();
  };
  api.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!route.config?.idempotent || !route.url.endsWith('/:id') || !methods.some((m) => m === 'PUT' || m === 'PATCH' || m === 'DELETE'))
      return;
    const own = route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation];
    route.preValidation = [parse, ...own];
  });
}

/** Sets the record's ETag on the answer. */
export function setEtag(reply: FastifyReply, record: Versioned): FastifyReply {
  return reply.header('ETag', etagOf(record));
}

/**
 * The answer to a GET of one record: its ETag, and 304 without a body when If-None-Match holds
 * that tag. `private, no-cache`: a cache may keep the answer for its own client only, and must ask
 * again (with If-None-Match) before using it.
 */
export function answerRecord(req: FastifyRequest, reply: FastifyReply, record: Versioned, body: () => unknown): unknown {
  setEtag(reply, record).header('Cache-Control', 'private, no-cache');
  if (noneMatchHits(req.headers['if-none-match'], record)) return reply.status(304).send();
  return body();
}

const IF_MATCH = {
  type: 'string',
  description:
    'Optional. The ETag of the record as last read (e.g. `"42-3"`), or `*`: the write happens only while the record still has ' +
    'that ETag (exists, for `*`); otherwise 412 PreconditionFailed and nothing changes. Two writers sending the same ETag: one ' +
    'wins, the other gets 412. A malformed value is 400.',
};

/** Request headers of a write to an existing record (PUT, PATCH, DELETE): If-Match and Idempotency-Key. */
export const CONDITIONAL_WRITE_HEADERS = {
  type: 'object',
  properties: { 'if-match': IF_MATCH, ...IDEMPOTENCY_KEY_HEADERS.properties },
};

/** Request headers of a GET of one record. */
export const CONDITIONAL_READ_HEADERS = {
  type: 'object',
  properties: {
    'if-none-match': {
      type: 'string',
      description:
        'Optional. ETags the client holds (or `*`): when one is the record\u2019s current ETag, 304 Not Modified without a body.',
    },
  },
};

const ETAG_HEADER = {
  ETag: {
    type: 'string',
    description: 'Strong entity tag of the record (`"<id>-<version>"`; opaque to clients): changes with every write. Send it as If-Match.',
  },
};

/** A response schema of one record: the Admin API response fields and its ETag. */
export function withEtag<T extends Record<string, unknown>>(schema: T): T & { headers: Record<string, unknown> } {
  return { ...schema, headers: { ...API_RESPONSE_HEADERS, ...ETAG_HEADER } };
}

/** The answers of a conditional write besides those of every write. */
export const PRECONDITION_RESPONSES = {
  412: {
    ...withApiHeaders(ERROR_BODY),
    description:
      'PreconditionFailed: the record changed since the ETag in If-Match was read (or If-Match named another record); nothing changed',
  },
};

/** A product update's 409s: those of every write, and an expected inventory quantity that differs. */
export const INVENTORY_CONFLICT = {
  409: {
    ...withApiHeaders({
      ...ERROR_BODY,
      properties: {
        ...ERROR_BODY.properties,
        inventory_quantity: { type: 'integer', description: 'InventoryQuantityMismatch only: the stored inventory quantity.' },
      },
    }),
    description:
      'InventoryQuantityMismatch: `expected_inventory_quantity` differs from the stored quantity, given as `inventory_quantity`; ' +
      'nothing changed. IdempotencyKeyInUse: the first request with this Idempotency-Key is still running',
  },
};
