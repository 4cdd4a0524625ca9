// Webhook subscriptions of the calling app: list, create {address, topic}, get, delete.
// Delivery itself is the webhooks worker's job; here are the records and their validation.
import { lookup } from 'node:dns/promises';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../app.ts';
import { allows, type Resource } from '../../domain/scopes.ts';
import { checkWebhookAddress, isNonPublicAddress } from '../../domain/ssrf.ts';
import { ForbiddenError, NotFoundError, ValidationFailedError } from '../../errors.ts';
import { keysetPage } from '../../services/pagination.ts';
import { errorResponses, LIST_QUERY, listEnvelope, methodNotAllowed, pageRequest, parseId } from './api-common.ts';

export const TOPICS = ['products/create', 'products/update', 'products/delete', 'orders/create', 'orders/updated', 'customers/create', 'customers/update', 'app/uninstalled'] as const;
export type Topic = (typeof TOPICS)[number];

/** The resource whose read scope a topic needs (PRODUCT.md §4); app/uninstalled needs none. */
export function topicResource(topic: Topic): Resource | undefined {
  const [resource] = topic.split('/');
  return resource === 'app' ? undefined : (resource as Resource);
}

const SUBSCRIPTION = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'address', 'topic', 'api_version', 'status', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string' },
    address: { type: 'string' },
    topic: { type: 'string', enum: TOPICS },
    api_version: { type: 'string' },
    status: { type: 'string', enum: ['active', 'disabled'] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

function toJson(r: any) {
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

/** In production the address must resolve to public addresses only (checked again at delivery). */
export async function resolvesToPublic(address: string): Promise<string | undefined> {
  const host = new URL(address).hostname.replace(/^\[|\]$/g, '');
  try {
    const answers = await lookup(host, { all: true, verbatim: true });
    if (answers.length === 0) return 'could not be resolved';
    if (answers.some((a) => isNonPublicAddress(a.address))) return 'must not point at a private, loopback or link-local address';
    return undefined;
  } catch {
    return 'could not be resolved';
  }
}

export function registerWebhookSubscriptionRoutes(api: FastifyInstance, services: Services): void {
  const base = '/openapi/:version/webhooks';
  const item = `${base}/:id`;
  const tags = ['webhooks'];
  const config = { area: 'store' as const, api: {} };
  const one = { type: 'object', required: ['data'], properties: { data: SUBSCRIPTION } };

  api.get(base, { config, schema: { tags, summary: "List this app's webhook subscriptions", querystring: LIST_QUERY, response: { 200: listEnvelope(SUBSCRIPTION), ...errorResponses } } }, async (req) => {
    const p = req.principal!;
    return keysetPage(services.db.kysely as any, services.cursors, 'webhook_subscriptions', { storeId: p.storeId, resource: `webhooks:${p.owner}`, where: [['owner', '=', p.owner]] }, pageRequest(req), toJson);
  });

  api.post(
    base,
    {
      config,
      schema: {
        tags,
        summary: 'Subscribe to a topic',
        body: { type: 'object', additionalProperties: false, required: ['address', 'topic'], properties: { address: { type: 'string', maxLength: 2000 }, topic: { type: 'string', enum: TOPICS } } },
        response: { 201: one, ...errorResponses },
      },
    },
    async (req, reply) => {
      const p = req.principal!;
      const body = req.body as { address: string; topic: Topic };
      const resource = topicResource(body.topic);
      if (resource && !allows(p.scopes, 'read', resource)) throw new ForbiddenError(`The topic ${body.topic} needs the read_${resource} scope`);
      const mode = services.config.mode;
      const problem = checkWebhookAddress(body.address, mode) ?? (mode === 'production' ? await resolvesToPublic(body.address) : undefined);
      if (problem) throw new ValidationFailedError({ address: [problem] });
      const now = services.clock();
      const row = await services.db.kysely.transaction().execute(async (trx) => {
        const dup = await trx.selectFrom('webhook_subscriptions').select('id').where('store_id', '=', p.storeId).where('owner', '=', p.owner).where('topic', '=', body.topic).where('address', '=', body.address).executeTakeFirst();
        if (dup) throw new ValidationFailedError({ address: [`is already subscribed to ${body.topic}`] });
        return trx
          .insertInto('webhook_subscriptions')
          .values({
            store_id: p.storeId,
            owner: p.owner,
            app_id: p.kind === 'app' ? p.id : null,
            private_app_id: p.kind === 'private' ? p.id : null,
            topic: body.topic,
            address: body.address,
            api_version: req.apiVersion!,
            created_at: now,
            updated_at: now,
            disabled_at: null,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
      });
      return reply.status(201).send({ data: toJson(row) });
    },
  );

  const find = async (req: { principal?: { storeId: number; owner: string }; params: unknown }) => {
    const p = req.principal!;
    const id = parseId((req.params as { id: string }).id);
    const row = await services.db.kysely.selectFrom('webhook_subscriptions').selectAll().where('store_id', '=', p.storeId).where('owner', '=', p.owner).where('id', '=', id).executeTakeFirst();
    if (!row) throw new NotFoundError(`No webhook subscription with id ${id}`);
    return row;
  };

  api.get(item, { config, schema: { tags, summary: 'Get a webhook subscription', response: { 200: one, ...errorResponses } } }, async (req) => ({ data: toJson(await find(req)) }));
  api.delete(item, { config, schema: { tags, summary: 'Delete a webhook subscription', response: { 200: { type: 'object', properties: {} }, ...errorResponses } } }, async (req) => {
    const row = await find(req);
    await services.db.kysely.deleteFrom('webhook_subscriptions').where('id', '=', row.id).execute();
    return {};
  });
  methodNotAllowed(api, base, ['GET', 'POST']);
  methodNotAllowed(api, item, ['GET', 'DELETE']);
}
