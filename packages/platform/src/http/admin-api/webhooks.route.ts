// Webhook subscriptions of the calling app: list (filtered by topic or address too), count, create
// {address, topic, filter, include_fields}, get, update, delete.
// Delivery itself is the webhook worker's job; here are the records and their validation.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ValidationFailedError } from '../../domain/errors.ts';
import { isPrivacyTopic, SUBSCRIBABLE_TOPICS, SUBSCRIPTION_DISABLED, type WebhookTopic } from '../../domain/webhook-topics.ts';
import type { Services } from '../../services/services.ts';
import type { WebhookSubscription } from '../../services/webhook-subscriptions.ts';
import { type MatchFilter, selectFields } from '../../domain/list-filters.ts';
import { readIncludeFields } from '../../domain/webhook-subscription-shape.ts';
import {
  COUNT_BODY,
  COUNT_DESCRIPTION,
  countQueryHook,
  countQuerySchema,
  errorResponses,
  fieldNamesOf,
  listEnvelope,
  listQueryHook,
  listQuerySchema,
  methodNotAllowed,
  pageRequest,
  setLinkHeader,
  withApiHeaders,
  writeErrorResponses,
} from './api-common.ts';
import { IDEMPOTENCY_KEY_HEADERS, writeAnswer } from './idempotency.ts';
import { answerRecord, CONDITIONAL_READ_HEADERS, CONDITIONAL_WRITE_HEADERS, PRECONDITION_RESPONSES, withEtag } from './preconditions.ts';
import { etagOf } from '../../domain/etags.ts';
import { parseId } from '../path-params.ts';
import { FILTER, INCLUDE_FIELDS } from './webhook-shape-schema.ts';

export const SUBSCRIPTION = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'address', 'topic', 'api_version', 'status', 'filter', 'include_fields', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string' },
    address: { type: 'string' },
    topic: { type: 'string', enum: SUBSCRIBABLE_TOPICS },
    api_version: { type: 'string' },
    status: { type: 'string', enum: ['active', 'disabled'] },
    filter: { type: ['string', 'null'], description: 'The filter query; null when every change of the topic is sent.' },
    include_fields: {
      type: ['array', 'null'],
      items: { type: 'string' },
      description: 'The top-level fields each delivery holds; null when the whole object is sent.',
    },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    source: {
      type: 'string',
      enum: ['api', 'app_config'],
      description:
        "api: made through this API, the app may change or delete it; app_config: the store's copy of an app-level subscription (the " +
        "app's configuration), read-only here (PUT and DELETE answer 422)",
    },
  },
};

export function toJson(r: WebhookSubscription) {
  return {
    id: String(r.id),
    address: r.address,
    topic: r.topic,
    api_version: r.api_version,
    status: r.disabled_at === null ? 'active' : 'disabled',
    filter: r.filter,
    include_fields: readIncludeFields(r.include_fields),
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
    source: r.app_subscription_id === null ? 'api' : 'app_config',
  };
}

/** A body's filter and include_fields as the service takes them (absent: unchanged). */
function shapeOf(body: { filter?: string | null; include_fields?: string[] | null }) {
  return { filter: body.filter, includeFields: body.include_fields };
}

/**
 * Filters of the subscriptions list and count: exact matches. The address is compared as stored,
 * which is exactly as it was subscribed (addresses are not rewritten).
 */
const SUBSCRIPTION_MATCHES: readonly MatchFilter[] = [
  {
    name: 'topic',
    description: 'Only subscriptions to this topic (exact).',
    check: (v) => ((SUBSCRIBABLE_TOPICS as readonly string[]).includes(v) ? undefined : `must be one of ${SUBSCRIBABLE_TOPICS.join(', ')}`),
  },
  {
    name: 'address',
    description: 'Only subscriptions with exactly this address, as it was subscribed (no normalization; at most 2000 characters).',
    check: (v) => (v.length > 2000 ? 'must be at most 2000 characters' : URL.canParse(v) ? undefined : 'must be an absolute URL'),
  },
];

const ADDRESS = { type: 'string', maxLength: 2000 };
const TOPIC = { type: 'string', enum: SUBSCRIBABLE_TOPICS };

/**
 * Privacy topics go to the address set on the app itself, never to a subscription: a plain "not
 * one of the allowed values" would leave an app wondering how to receive them, so it is told.
 */
async function refusePrivacyTopics(req: FastifyRequest): Promise<void> {
  const body = req.body as Record<string, unknown> | null;
  const inner = body && typeof body === 'object' ? ((body.webhook as Record<string, unknown> | undefined) ?? body) : undefined;
  const topic = inner && typeof inner === 'object' ? inner.topic : undefined;
  if (typeof topic === 'string' && isPrivacyTopic(topic)) {
    throw new ValidationFailedError({
      topic: [
        `${topic} is a privacy topic: it is sent without a subscription to the privacy webhook address set on the app (partner ` +
          `dashboard or "storegate apps update --privacy-webhook-url")`,
      ],
    });
  }
  if (topic === SUBSCRIPTION_DISABLED)
    throw new ValidationFailedError({
      topic: [
        `${topic} needs no subscription: it is sent to the app's other subscriptions in the store, or to its privacy webhook address`,
      ],
    });
}

export function registerWebhookSubscriptionRoutes(
  api: FastifyInstance,
  services: Pick<Services, 'config' | 'idempotency' | 'subscriptions'>,
): void {
  const base = '/openapi/:version/webhooks';
  const item = `${base}/:id`;
  const tags = ['webhooks'];
  const config = { area: 'store' as const, api: {} };
  const fieldNames = fieldNamesOf(SUBSCRIPTION);
  const writeConfig = { ...config, idempotent: 'webhooks' as const };
  const one = withEtag({ type: 'object', required: ['data'], properties: { data: SUBSCRIPTION } });

  api.get(
    base,
    {
      config,
      preValidation: listQueryHook(fieldNames, SUBSCRIPTION_MATCHES),
      schema: {
        tags,
        summary: "List this app's webhook subscriptions",
        querystring: listQuerySchema(SUBSCRIPTION_MATCHES),
        response: { 200: listEnvelope(SUBSCRIPTION), ...errorResponses },
      },
    },
    async (req, reply) => {
      const fields = req.listQuery?.fields;
      const page = await services.subscriptions.list(req.principal!, pageRequest(req), (row) => selectFields(toJson(row), fields));
      setLinkHeader(req, reply, services.config, page);
      return page.envelope;
    },
  );

  api.post(
    base,
    {
      config: { ...writeConfig, api: { wrapper: 'webhook' } },
      preValidation: refusePrivacyTopics,
      schema: {
        tags,
        summary: 'Subscribe to a topic',
        description:
          'The body may also be wrapped: {"webhook": {"address": ..., "topic": ...}}. With `filter` only the changes whose ' +
          'object matches are sent (e.g. {"topic": "products/update", "filter": "status:active AND price:>=10"}); with ' +
          '`include_fields` each body holds only those fields. A filter or field the topic’s object does not have, or a value ' +
          'of the wrong type, is a 422 naming it, and nothing is saved.',
        headers: IDEMPOTENCY_KEY_HEADERS,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['address', 'topic'],
          properties: { address: ADDRESS, topic: TOPIC, filter: FILTER, include_fields: INCLUDE_FIELDS },
        },
        response: { 201: one, ...writeErrorResponses },
      },
    },
    async (req, reply) => {
      const body = req.body as { address: string; topic: WebhookTopic; filter?: string | null; include_fields?: string[] | null };
      const answer = writeAnswer(services.idempotency, req, 201, (row: WebhookSubscription) => ({ data: toJson(row) }), etagOf);
      const input = { address: body.address, topic: body.topic, apiVersion: req.apiVersion!, ...shapeOf(body) };
      const row = await services.subscriptions.create(req.principal!, input, answer.step);
      return answer.send(reply, row);
    },
  );

  api.get(
    `${base}/count`,
    {
      config,
      preValidation: countQueryHook(SUBSCRIPTION_MATCHES),
      schema: {
        tags,
        summary: "Count this app's webhook subscriptions",
        description: COUNT_DESCRIPTION,
        querystring: countQuerySchema(SUBSCRIPTION_MATCHES),
        response: { 200: COUNT_BODY, ...errorResponses },
      },
    },
    async (req) => ({ count: await services.subscriptions.count(req.principal!, req.countFilters ?? {}) }),
  );

  const id = (params: unknown) => parseId((params as { id: string }).id);
  api.put(
    item,
    {
      config: { ...writeConfig, api: { wrapper: 'webhook' } },
      preValidation: refusePrivacyTopics,
      schema: {
        tags,
        summary: 'Change a webhook subscription (its address, topic, filter and/or include_fields)',
        description:
          'Only the fields sent change; the body may also be wrapped: {"webhook": {"address": ...}}. The checks of a subscribe apply ' +
          '(the topic’s scope, the address rules, one subscription per topic and address, the per-topic caps, the filter and ' +
          'include_fields checked against the topic the subscription ends up with). `"filter": null` and `"include_fields": null` ' +
          'remove them. A new address makes a disabled subscription active again. A new filter applies to changes from then on; ' +
          'deliveries already queued keep the fields they were queued with. A copy of an app-level subscription (`source`: `app_config`) ' +
          'is read-only: 422, nothing changed.',
        headers: CONDITIONAL_WRITE_HEADERS,
        body: {
          type: 'object',
          additionalProperties: false,
          minProperties: 1,
          properties: { address: ADDRESS, topic: TOPIC, filter: FILTER, include_fields: INCLUDE_FIELDS },
        },
        response: { 200: one, ...writeErrorResponses, ...PRECONDITION_RESPONSES },
      },
    },
    async (req, reply) => {
      const body = req.body as { address?: string; topic?: WebhookTopic; filter?: string | null; include_fields?: string[] | null };
      const answer = writeAnswer(services.idempotency, req, 200, (row: WebhookSubscription) => ({ data: toJson(row) }), etagOf);
      const input = { address: body.address, topic: body.topic, ...shapeOf(body) };
      const row = await services.subscriptions.update(req.principal!, id(req.params), input, answer.step, req.ifMatch);
      return answer.send(reply, row);
    },
  );
  api.get(
    item,
    {
      config,
      schema: {
        tags,
        summary: 'Get a webhook subscription',
        headers: CONDITIONAL_READ_HEADERS,
        response: { 200: one, 304: { description: 'Not Modified: If-None-Match holds the current ETag' }, ...errorResponses },
      },
    },
    async (req, reply) => {
      const row = await services.subscriptions.get(req.principal!, id(req.params));
      return answerRecord(req, reply, row, () => ({ data: toJson(row) }));
    },
  );
  api.delete(
    item,
    {
      config: writeConfig,
      schema: {
        tags,
        summary: 'Delete a webhook subscription',
        description:
          "A copy of an app-level subscription (`source`: `app_config`) answers 422: it is removed with the app's configuration, not here.",
        headers: CONDITIONAL_WRITE_HEADERS,
        response: { 200: withApiHeaders({ type: 'object', properties: {} }), ...writeErrorResponses, ...PRECONDITION_RESPONSES },
      },
    },
    async (req, reply) => {
      const answer = writeAnswer(services.idempotency, req, 200, () => ({}));
      await services.subscriptions.delete(req.principal!, id(req.params), answer.step, req.ifMatch);
      return answer.send(reply, undefined);
    },
  );
  methodNotAllowed(api, base, ['GET', 'POST']);
  methodNotAllowed(api, `${base}/count`, ['GET']);
  methodNotAllowed(api, item, ['GET', 'PUT', 'DELETE']);
}
