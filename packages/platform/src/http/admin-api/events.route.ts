// Missed-event recovery: GET /openapi/{version}/events lists what the calling app's subscriptions
// delivered, or still try to deliver, in this store over the last 30 days, with the ids and body
// of each delivery. From API version 2026-01 on; pages forward with `cursor` and `has_more`.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SUPPORTED_VERSIONS, versionAtLeast, type ApiVersion } from '../../domain/api-versions.ts';
import { PlatformError } from '../../domain/errors.ts';
import { TOPICS, type WebhookTopic } from '../../domain/webhook-topics.ts';
import { DELIVERY_STATUSES } from '../../services/delivery-log.ts';
import type { Services } from '../../services/services.ts';
import { errorResponses, LIST_QUERY, methodNotAllowed, setLinkHeader } from './api-common.ts';

const SINCE: ApiVersion = '2026-01';

const EVENT = {
  type: 'object',
  additionalProperties: false,
  required: ['webhook_id', 'event_id', 'topic', 'created_at', 'api_version', 'status', 'attempts', 'payload'],
  properties: {
    webhook_id: {
      type: 'string',
      description: 'X-Service-Webhook-Id and webhook-id of the delivery, the same on every attempt: the de-duplication key.',
    },
    event_id: { type: 'string', description: 'X-Service-Event-Id: one change, shared by the deliveries to each subscriber.' },
    topic: { type: 'string', enum: TOPICS },
    created_at: { type: 'string', format: 'date-time', description: 'When the change happened (X-Service-Triggered-At).' },
    api_version: {
      type: ['string', 'null'],
      description: "X-Service-Api-Version: the subscription's version; null once the subscription is deleted.",
    },
    status: {
      type: 'string',
      enum: DELIVERY_STATUSES,
      description: 'pending (not sent yet, or failed and to be retried), delivered, dead (retries exhausted) or cancelled.',
    },
    attempts: { type: 'integer', description: 'Attempts made so far.' },
    payload: { type: 'object', additionalProperties: true, description: "The delivery's body, parsed." },
  },
};

const QUERY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    topic: { type: 'string', enum: TOPICS, description: 'Only events of this topic.' },
    created_at_min: {
      type: 'string',
      format: 'date-time',
      description: 'Only events created at or after this time (ISO 8601 with a time zone). Earlier than 30 days ago counts as 30 days ago.',
    },
    limit: LIST_QUERY.properties.limit,
    page_size: LIST_QUERY.properties.page_size,
    per_page: LIST_QUERY.properties.per_page,
    cursor: LIST_QUERY.properties.cursor,
  },
};

const PAGE = {
  type: 'object',
  additionalProperties: false,
  required: ['data', 'cursor', 'has_more'],
  properties: {
    data: { type: 'array', items: EVENT },
    cursor: { type: 'string', description: 'Send as `cursor` for the next page; "" on the last page.' },
    has_more: {
      type: 'boolean',
      description:
        'Whether the list goes on: keep sending `cursor` while it is true. A page reads a bounded stretch of the deliveries, so with a ' +
        '`topic` that is rare among them a page may hold fewer events than `limit`, even none, and still have more.',
    },
  },
};

const KNOWN = new Set(Object.keys(QUERY.properties));

/** A parameter this list does not support is refused by name rather than ignored. */
async function refuseUnknownParameters(req: FastifyRequest): Promise<void> {
  const unknown = Object.keys((req.query ?? {}) as Record<string, unknown>).filter((name) => !KNOWN.has(name));
  if (unknown.length === 0) return;
  const names = unknown.map((n) => n.slice(0, 40));
  throw new PlatformError(
    400,
    'BadRequest',
    `Unsupported query parameter${names.length > 1 ? 's' : ''}: ${names.join(', ')}; supported: ${[...KNOWN].join(', ')}`,
    { errors: Object.fromEntries(names.map((n) => [n, ['is not a supported query parameter']])) },
  );
}

export function registerEventRoutes(api: FastifyInstance, services: Pick<Services, 'config' | 'events'>): void {
  const url = '/openapi/:version/events';
  api.get(
    url,
    {
      config: { area: 'store', api: { since: SINCE } },
      preValidation: refuseUnknownParameters,
      schema: {
        tags: ['events'],
        summary: "List the calling app's webhook events of the last 30 days (missed-event recovery)",
        description:
          'One entry per delivery queued for the calling app (or private app) in this store in the last 30 days, whatever its ' +
          'state, oldest first, with the ids and body the delivery carries: compare `webhook_id` with those already handled ' +
          'to find what was missed. Topics the app may no longer read with its current scopes are left out. From API ' +
          'version 2026-01 on. Needs a valid Access-Token and no particular scope.',
        params: {
          type: 'object',
          properties: { version: { type: 'string', enum: SUPPORTED_VERSIONS.filter((v) => versionAtLeast(v, SINCE)) } },
        },
        querystring: QUERY,
        response: { 200: PAGE, ...errorResponses },
      },
    },
    async (req, reply) => {
      const q = req.query as {
        topic?: WebhookTopic;
        created_at_min?: string;
        limit?: number;
        page_size?: number;
        per_page?: number;
        cursor?: string;
      };
      const body = await services.events.page(req.principal!, {
        topic: q.topic,
        createdAtMin: q.created_at_min,
        limit: q.limit ?? q.page_size ?? q.per_page ?? 50,
        cursor: q.cursor,
      });
      const filters: [string, string][] = [];
      if (q.topic !== undefined) filters.push(['topic', q.topic]);
      if (q.created_at_min !== undefined) filters.push(['created_at_min', q.created_at_min]);
      setLinkHeader(req, reply, services.config, { next: body.cursor, previous: null }, filters);
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );
  methodNotAllowed(api, url, ['GET']);
}
