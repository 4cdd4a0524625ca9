// Recovery of one of the calling app's webhook subscriptions: POST …/webhooks/{id}/enable makes a
// disabled subscription active again in place, POST …/webhooks/{id}/replay queues its deliveries
// since a time again, each with its original webhook id.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/services.ts';
import { MAX_REPLAY, REPLAY_STATUSES } from '../../services/webhook-recovery.ts';
import { LOG_RETENTION_MS } from '../../services/delivery-log.ts';
import { parseId } from '../path-params.ts';
import { errorResponses, methodNotAllowed, VERSION_PARAM, withApiHeaders } from './api-common.ts';
import { setEtag, withEtag } from './preconditions.ts';
import { SUBSCRIPTION, toJson } from './webhooks.route.ts';

const SINCE = '2026-01' as const;
const RETENTION_DAYS = LOG_RETENTION_MS / 86_400_000;

const REPLAY_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['since'],
  properties: {
    since: {
      type: 'string',
      maxLength: 64,
      description:
        `Replay the deliveries created at or after this ISO 8601 time; at most ${RETENTION_DAYS} days ago (the retention of ` +
        `deliveries).`,
    },
    status: {
      type: 'string',
      enum: REPLAY_STATUSES,
      description:
        'failed (default): the deliveries never delivered (dead, or cancelled before they could be); all: delivered ones too. ' +
        'Deliveries still queued are left as they are.',
    },
  },
};

const REPLAY = {
  type: 'object',
  additionalProperties: false,
  required: ['subscription_id', 'since', 'status', 'queued', 'already_queued', 'capped', 'next_since'],
  properties: {
    subscription_id: { type: 'string' },
    since: { type: 'string', format: 'date-time' },
    status: { type: 'string', enum: REPLAY_STATUSES },
    queued: { type: 'integer', description: 'Deliveries queued again by this request.' },
    already_queued: {
      type: 'integer',
      description: 'Deliveries of the window still queued (an earlier replay not finished yet, or retries under way); not queued twice.',
    },
    capped: { type: 'boolean', description: `More deliveries matched than one replay queues (${MAX_REPLAY}).` },
    next_since: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When capped: replay again with this `since` for the rest.',
    },
  },
};

export function registerWebhookRecoveryRoutes(api: FastifyInstance, services: Pick<Services, 'webhookRecovery'>): void {
  const item = '/openapi/:version/webhooks/:id';
  const tags = ['webhooks'];
  const config = { area: 'store' as const, api: { since: SINCE } };
  const params = { type: 'object', properties: { version: VERSION_PARAM, id: { type: 'string', description: 'webhook subscription id' } } };
  const id = (p: unknown) => parseId((p as { id: string }).id);

  api.post(
    `${item}/enable`,
    {
      config,
      schema: {
        tags,
        summary: 'Enable a disabled webhook subscription again',
        description:
          'The platform disables a subscription whose endpoint answered 410 Gone or whose deliveries died one after another ' +
          '(and tells the app with a subscription/disabled webhook). This makes it active again in place: same id, history and ' +
          'deliveries, its run of failures forgotten; new events go to it at once. An active subscription is answered as it is. ' +
          '409 when the app could no longer receive its topic. Send an empty JSON object as the body.',
        params,
        body: { type: 'object', additionalProperties: false, properties: {} },
        response: {
          200: withEtag({ type: 'object', required: ['data'], properties: { data: SUBSCRIPTION } }),
          409: errorResponses[404],
          ...errorResponses,
        },
      },
    },
    async (req, reply) => {
      const row = await services.webhookRecovery.enable({ principal: req.principal! }, id(req.params));
      setEtag(reply, row);
      return { data: toJson(row) };
    },
  );

  api.post(
    `${item}/replay`,
    {
      config: { ...config, api: { ...config.api, wrapper: 'replay' } },
      schema: {
        tags,
        summary: "Replay a webhook subscription's deliveries since a time",
        description:
          'Queues the deliveries of this subscription created since `since` to be sent again, oldest first, each with its ' +
          'original webhook id (so deliveries already received can be told apart), signed and checked against the grant as it ' +
          `is when sent (a topic no longer covered, or an uninstalled app, gets nothing). At most ${MAX_REPLAY} per request: ` +
          '`capped` and `next_since` say how to go on. Replaying again while an earlier replay is queued queues nothing twice. ' +
          "A replay's failures never disable the subscription nor hold back its endpoint. A disabled subscription must be " +
          'enabled first (422). The body may also be wrapped: {"replay": {...}}.',
        params,
        body: REPLAY_BODY,
        response: {
          202: withApiHeaders({ type: 'object', required: ['data'], properties: { data: REPLAY } }),
          409: errorResponses[404],
          ...errorResponses,
        },
      },
    },
    async (req, reply) => {
      const body = req.body as { since: string; status?: string };
      const answer = await services.webhookRecovery.replay({ principal: req.principal! }, id(req.params), body);
      return reply.code(202).send({ data: answer });
    },
  );

  methodNotAllowed(api, `${item}/enable`, ['POST']);
  methodNotAllowed(api, `${item}/replay`, ['POST']);
}
