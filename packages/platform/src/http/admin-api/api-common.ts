// Pieces shared by the Admin API routes: error and list schemas, list queries and page requests,
// Link headers, 405s.
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods, preValidationHookHandler } from 'fastify';
import { storeBaseUrl, type Config } from '../../config.ts';
import { API_VERSIONS, SUPPORTED_VERSIONS } from '../../domain/api-versions.ts';
import { MethodNotAllowedError, ValidationFailedError } from '../../domain/errors.ts';
import {
  FILTER_PARAMS,
  type ListFilters,
  type ListQuery,
  type MatchFilter,
  PAGE_PARAMS,
  parseCountQuery,
  parseListQuery,
} from '../../domain/list-filters.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** A list route's parsed filters and fields (set before validation by `listQueryHook`). */
    listQuery: ListQuery | undefined;
    /** A count route's parsed filters (set before validation by `countQueryHook`). */
    countFilters: ListFilters | undefined;
  }
}

export const VERSION_PARAM = { type: 'string', enum: SUPPORTED_VERSIONS, description: 'API version' };

export const ERROR_BODY = {
  type: 'object',
  properties: {
    code: { type: 'string' },
    message: { type: 'string' },
    request_id: { type: 'string' },
    errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
  },
  required: ['code', 'message', 'request_id'],
};

/** The page size of a list asked for without `limit` (or its aliases). */
export const DEFAULT_PAGE_SIZE = 50;

export const LIST_QUERY = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 250, description: 'Page size, 1–250 (default 50). Aliases: page_size, per_page.' },
    page_size: { type: 'integer', minimum: 1, maximum: 250 },
    per_page: { type: 'integer', minimum: 1, maximum: 250 },
    cursor: { type: 'string', maxLength: 200, description: 'The cursor of the previous response: returns the next page.' },
    pre_cursor: {
      type: 'string',
      maxLength: 200,
      description: 'Version 2022-01 only: the pre_cursor of a response returns the page before it.',
    },
    ...Object.fromEntries(Object.entries(FILTER_PARAMS).map(([name, description]) => [name, { type: 'string', description }])),
  },
};

/** The query schema of a list that adds exact-match filters of its own. */
export function listQuerySchema(matches: readonly MatchFilter[]) {
  if (matches.length === 0) return LIST_QUERY;
  const own = Object.fromEntries(matches.map((m) => [m.name, { type: 'string', description: m.description }]));
  return { ...LIST_QUERY, properties: { ...LIST_QUERY.properties, ...own } };
}

/** The query schema of a count: the list's filters, without `fields` and the page parameters. */
export function countQuerySchema(matches: readonly MatchFilter[]) {
  const { fields: _fields, ...filters } = FILTER_PARAMS;
  const properties = Object.fromEntries([
    ...Object.entries(filters).map(([name, description]) => [name, { type: 'string', description }]),
    ...matches.map((m) => [m.name, { type: 'string', description: m.description }]),
  ]);
  return { type: 'object', properties };
}

/**
 * preValidation of a count route: refuses parameters a count does not take (400) and bad filters
 * (422) before anything runs; the filters become one string each for the schema check.
 */
export function countQueryHook(matches: readonly MatchFilter[] = []): preValidationHookHandler {
  return (req, _reply, done) => {
    const raw = (req.query ?? {}) as Record<string, unknown>;
    try {
      req.countFilters = parseCountQuery(raw, matches);
    } catch (err) {
      return done(err as Error);
    }
    const ids = req.countFilters.ids;
    if (ids) req.query = { ...raw, ids: ids.join(',') };
    done();
  };
}

/**
 * preValidation of a list route: refuses unknown parameters (400) and bad filters (422) before
 * anything runs, keeps the parsed query on the request, and leaves each filter as one string (a
 * repeated `ids` becomes its comma form) for the schema check that follows. `matches` are the
 * list's own exact-match filters.
 */
export function listQueryHook(fieldNames: readonly string[], matches: readonly MatchFilter[] = []): preValidationHookHandler {
  const own = matches.map((m) => m.name);
  // Callback style (no promise per call); a query of page parameters alone (the usual one) needs
  // no parsing.
  return (req, _reply, done) => {
    const raw = (req.query ?? {}) as Record<string, unknown>;
    let onlyPaging = true;
    for (const k in raw)
      if (!(PAGE_PARAMS as readonly string[]).includes(k)) {
        onlyPaging = false;
        break;
      }
    if (onlyPaging) {
      req.listQuery = NO_FILTERS;
      return done();
    }
    let parsed: ListQuery;
    try {
      parsed = parseListQuery(raw, fieldNames, matches);
    } catch (err) {
      return done(err as Error);
    }
    req.listQuery = parsed;
    const normalized: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(raw)) if (!Object.hasOwn(FILTER_PARAMS, k) && !own.includes(k)) normalized[k] = v;
    for (const [k, v] of parsed.params) normalized[k] = v;
    req.query = normalized;
    done();
  };
}

/** What `parseListQuery` gives for a query without filters or fields; shared, so never changed. */
const NO_FILTERS: ListQuery = { filters: {}, fields: undefined, params: [] };

/** The top-level field names of an object schema, for `fields`. */
export function fieldNamesOf(schema: Record<string, unknown>): string[] {
  return Object.keys((schema.properties ?? {}) as Record<string, unknown>);
}

/** Response fields of every Admin API answer (see api-headers.ts), as the OpenAPI document lists them. */
export const API_RESPONSE_HEADERS = {
  'X-Service-Api-Version': { type: 'string', description: 'The API version that answered.' },
  'X-Service-Api-Call-Limit': {
    type: 'string',
    description: 'Calls in the leaky bucket / its size, e.g. `3/40` (absent when rate limiting is off).',
  },
  'RateLimit-Policy': {
    type: 'string',
    description: 'IETF draft-ietf-httpapi-ratelimit-headers: `"admin-api";q=<bucket>;w=<seconds to drain a full bucket>`.',
  },
  RateLimit: {
    type: 'string',
    description: 'IETF draft-ietf-httpapi-ratelimit-headers: `"admin-api";r=<calls left now>;t=<seconds until the bucket is empty>`.',
  },
  'Retry-After': { type: 'string', description: 'On 429: seconds until one more call fits.' },
  Deprecation: { type: 'string', description: 'Version 2022-01 only (RFC 9745): `@<unix seconds>` of its deprecation.' },
  Sunset: { type: 'string', description: 'Version 2022-01 only (RFC 8594): the HTTP date after which it stops answering.' },
  Link: { type: 'string', description: 'Version 2022-01: `<…/docs#deprecation>; rel="deprecation"`.' },
  'Request-Id': { type: 'string', description: 'The request id, the same value as X-Request-Id.' },
  'X-Request-Id': { type: 'string', description: 'The request id (quote it when reporting a problem).' },
};

/** A response schema with the Admin API response fields documented beside it. */
export function withApiHeaders<T extends Record<string, unknown>>(schema: T): T & { headers: typeof API_RESPONSE_HEADERS } {
  return { ...schema, headers: API_RESPONSE_HEADERS };
}

const ERROR_RESPONSE = withApiHeaders(ERROR_BODY);
export const errorResponses = {
  400: ERROR_RESPONSE,
  401: ERROR_RESPONSE,
  403: ERROR_RESPONSE,
  404: ERROR_RESPONSE,
  410: {
    ...ERROR_RESPONSE,
    description:
      'ApiVersionGone: a deprecated version during a brown-out the operator scheduled; ' +
      'the message names the version, its sunset and the version to move to',
  },
  422: ERROR_RESPONSE,
  429: ERROR_RESPONSE,
};

/** Errors of a write: those of every route, plus the answers about an Idempotency-Key. */
export const writeErrorResponses = {
  ...errorResponses,
  409: { ...ERROR_RESPONSE, description: 'IdempotencyKeyInUse: the first request with this Idempotency-Key is still running' },
  422: {
    ...ERROR_RESPONSE,
    description: 'ValidationFailed (errors by field), or IdempotencyKeyReused: this Idempotency-Key was used for a different request',
  },
};

const LIST_HEADERS = {
  ...API_RESPONSE_HEADERS,
  Link: {
    type: 'string',
    description:
      'RFC 8288 links to the pages either side: `<url>; rel="next"` unless this is the last page, `<url>; rel="previous"` unless it is ' +
      'the first; absolute, with the same limit and filters. Version 2022-01 adds `rel="deprecation"`.',
  },
};

export function listEnvelope(item: Record<string, unknown>) {
  // With `fields`, each object holds only the fields asked for.
  const { required: _all, ...partial } = item;
  return {
    type: 'object',
    headers: LIST_HEADERS,
    required: ['data', 'cursor'],
    properties: {
      data: { type: 'array', items: partial },
      cursor: { type: 'string', description: 'Send as `cursor` for the next page; "" on the last page.' },
      has_more: { type: 'boolean', description: 'Versions 2025-06 and 2026-01: whether more results exist.' },
      pre_cursor: {
        type: ['string', 'null'],
        description: 'Version 2022-01: send as `pre_cursor` for the previous page; null on the first page.',
      },
    },
  };
}

/** What a count endpoint promises, for the API documentation. */
export const COUNT_DESCRIPTION =
  'Answers {"count": N}: how many objects the list with the same filters returns over all its pages, counted exactly ' +
  '(the list filters apply; `fields`, `limit` and cursors are refused). The count reads every matching entry of an ' +
  'index, so it costs in proportion to the matching objects: narrow it with the filters on a large store. Same scope as the list.';

/** The answer of a count endpoint. */
export const COUNT_BODY = withApiHeaders({
  type: 'object',
  additionalProperties: false,
  required: ['count'],
  properties: { count: { type: 'integer', minimum: 0, description: 'How many objects match the filters, exactly.' } },
});

export function pageRequest(req: FastifyRequest) {
  const q = req.query as { limit?: number; page_size?: number; per_page?: number; cursor?: string; pre_cursor?: string };
  const convention = API_VERSIONS[req.apiVersion!].pagination;
  if (q.pre_cursor !== undefined && convention === 'newer') {
    throw new ValidationFailedError({
      pre_cursor: [`is only supported in version 2022-01; ${req.apiVersion} pages forward with cursor and has_more`],
    });
  }
  return {
    limit: q.limit ?? q.page_size ?? q.per_page ?? DEFAULT_PAGE_SIZE,
    cursor: q.cursor,
    preCursor: q.pre_cursor,
    convention,
    ...(req.listQuery ? { filters: req.listQuery.filters } : {}),
  };
}

/**
 * Sets the RFC 8288 `Link` header of a list page: absolute URLs on the store's base URL, with the
 * page size and filters of this request and the cursor of the page either side. In 2022-01 the
 * previous page is asked for with `pre_cursor`; the newer versions take a backwards cursor as `cursor`.
 */
export function setLinkHeader(
  req: FastifyRequest,
  reply: FastifyReply,
  config: Pick<Config, 'publicScheme' | 'storeDomain' | 'publicPort'>,
  page: { next: string; previous: string | null },
  filters: [string, string][] = req.listQuery?.params ?? [],
): void {
  const q = req.query as { limit?: number; page_size?: number; per_page?: number };
  const limit = q.limit ?? q.page_size ?? q.per_page ?? DEFAULT_PAGE_SIZE;
  const path = req.url.split('?')[0]!;
  const base = `${storeBaseUrl(config, req.store!.name)}${path}`;
  const links: string[] = [];
  if (page.previous) {
    const older = API_VERSIONS[req.apiVersion!].pagination === 'older';
    links.push(`<${pageUrl(base, limit, filters, older ? 'pre_cursor' : 'cursor', page.previous)}>; rel="previous"`);
  }
  if (page.next) links.push(`<${pageUrl(base, limit, filters, 'cursor', page.next)}>; rel="next"`);
  if (links.length > 0) reply.header('Link', links.join(', '));
}

function pageUrl(base: string, limit: number, filters: [string, string][], cursorParam: string, cursor: string): string {
  // Our cursors are base64url with a dot, which form encoding leaves as they are: without
  // filters the query string is written directly, byte for byte what URLSearchParams writes.
  if (filters.length === 0 && FORM_SAFE.test(cursor)) return `${base}?limit=${limit}&${cursorParam}=${cursor}`;
  return `${base}?${new URLSearchParams([['limit', String(limit)], ...filters, [cursorParam, cursor]])}`;
}

/** Characters application/x-www-form-urlencoded serialization leaves unescaped. */
const FORM_SAFE = /^[A-Za-z0-9*._-]*$/;

/** Answers methods a path does not support with 405 and an Allow header. */
export function methodNotAllowed(api: FastifyInstance, url: string, allowed: HTTPMethods[]): void {
  const others = (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as HTTPMethods[]).filter((m) => !allowed.includes(m));
  api.route({
    method: others,
    url,
    schema: { hide: true } as Record<string, unknown>,
    config: { api: {} },
    handler: async (_req, reply: FastifyReply) => {
      reply.header('Allow', allowed.join(', '));
      throw new MethodNotAllowedError(allowed);
    },
  });
}
