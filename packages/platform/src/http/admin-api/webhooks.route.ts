// Webhook subscriptions of the calling app: list, create {address, topic}, get, delete.
// Delivery itself is the webhook worker's job; here are the records and their validation.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ValidationFailedError } from '../../domain/errors.ts';
import { isPrivacyTopic, SUBSCRIBABLE_TOPICS, type WebhookTopic } from '../../domain/webhook-topics.ts';
import type { Services } from '../../services/services.ts';
import type { SubscriptionRow } from '../../services/webhook-subscriptions.ts';
import { selectFields } from '../../domain/list-filters.ts';
import {
  errorResponses,
  fieldNamesOf,
  LIST_QUERY,
  listEnvelope,
  listQueryHook,
  methodNotAllowed,
  pageRequest,
  setLinkHeader,
  withApiHeaders,
  writeErrorResponses,
} from './api-common.ts';
import { IDEMPOTENCY_KEY_HEADERS, writeAnswer } from './idempotency.ts';
import { parseId } from '../path-params.ts';

const SUBSCRIPTION = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'address', 'topic', 'api_version', 'status', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string' },
    address: { type: 'string' },
    topic: { type: 'string', enum: SUBSCRIBABLE_TOPICS },
    api_version: { type: 'string' },
    status: { type: 'string', enum: ['active', 'disabled'] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

function toJson(r: SubscriptionRow) {
  return {
    id: String(r.id),
    address: r.address,
    topic: r.topic,
    api_version: r.api_version,
    status: r.disabled_at === null ? 'active' : 'disabled',
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}

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
        `${topic} is a privacy topic: it is sent without a subscription to the privacy webhook address set on the app (partner dashboard or "storegate apps update --privacy-webhook-url")`,
      ],
    });
  }
}

export function registerWebhookSubscriptionRoutes(api: FastifyInstance, services: Services): void {
  const base = '/openapi/:version/webhooks';
  const item = `${base}/:id`;
  const tags = ['webhooks'];
  const config = { area: 'store' as const, api: {} };
  const fieldNames = fieldNamesOf(SUBSCRIPTION);
  const writeConfig = { ...config, idempotent: 'webhooks' as const };
  const one = withApiHeaders({ type: 'object', required: ['data'], properties: { data: SUBSCRIPTION } });

  api.get(
    base,
    {
      config,
      preValidation: listQueryHook(fieldNames),
      schema: {
        tags,
        summary: "List this app's webhook subscriptions",
        querystring: LIST_QUERY,
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
        description: 'The body may also be wrapped: {"webhook": {"address": ..., "topic": ...}}.',
        headers: IDEMPOTENCY_KEY_HEADERS,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['address', 'topic'],
          properties: { address: { type: 'string', maxLength: 2000 }, topic: { type: 'string', enum: SUBSCRIBABLE_TOPICS } },
        },
        response: { 201: one, ...writeErrorResponses },
      },
    },
    async (req, reply) => {
      const body = req.body as { address: string; topic: WebhookTopic };
      const answer = writeAnswer(services, req, 201, (row: SubscriptionRow) => ({ data: toJson(row) }));
      const input = { address: body.address, topic: body.topic, apiVersion: req.apiVersion! };
      const row = await services.subscriptions.create(req.principal!, input, answer.step);
      return answer.send(reply, row);
    },
  );

  const id = (params: unknown) => parseId((params as { id: string }).id);
  api.get(
    item,
    { config, schema: { tags, summary: 'Get a webhook subscription', response: { 200: one, ...errorResponses } } },
    async (req) => ({
      data: toJson(await services.subscriptions.get(req.principal!, id(req.params))),
    }),
  );
  api.delete(
    item,
    {
      config: writeConfig,
      schema: {
        tags,
        summary: 'Delete a webhook subscription',
        headers: IDEMPOTENCY_KEY_HEADERS,
        response: { 200: withApiHeaders({ type: 'object', properties: {} }), ...writeErrorResponses },
      },
    },
    async (req, reply) => {
      const answer = writeAnswer(services, req, 200, () => ({}));
      await services.subscriptions.delete(req.principal!, id(req.params), answer.step);
      return answer.send(reply, undefined);
    },
  );
  methodNotAllowed(api, base, ['GET', 'POST']);
  methodNotAllowed(api, item, ['GET', 'DELETE']);
}
