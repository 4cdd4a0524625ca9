// GET /openapi/{version}/shop: the calling app's store, the record an app reads first after an
// install (its host name, owner's email, currency and time zone). Needs read_shop.
import type { FastifyInstance } from 'fastify';
import { storeHostname } from '../../domain/store-host.ts';
import type { Services } from '../../services/services.ts';
import { errorResponses, methodNotAllowed, VERSION_PARAM } from './api-common.ts';

const SHOP = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'domain', 'email', 'currency', 'timezone', 'created_at'],
  properties: {
    id: { type: 'string', description: 'The store id' },
    name: { type: 'string', description: 'The store name (the first label of its host name)' },
    domain: { type: 'string', description: 'The store host name, e.g. demo.localhost' },
    email: { type: 'string', description: "The owner merchant's email" },
    currency: { type: 'string', description: 'ISO 4217 currency code, e.g. USD' },
    timezone: { type: 'string', description: 'IANA time zone name, e.g. UTC' },
    created_at: { type: 'string', format: 'date-time' },
  },
};

export function registerShopRoute(api: FastifyInstance, services: Pick<Services, 'accounts' | 'config'>): void {
  const url = '/openapi/:version/shop';
  api.get(
    url,
    {
      config: { area: 'store' as const, api: { resource: 'shop', access: 'read' } },
      schema: {
        tags: ['shop'],
        summary: "The calling app's store (needs read_shop)",
        params: { type: 'object', properties: { version: VERSION_PARAM } },
        response: { 200: { type: 'object', required: ['data'], properties: { data: SHOP } }, ...errorResponses },
      },
    },
    async (req) => {
      const shop = await services.accounts.findShop(req.principal!.storeId);
      return {
        data: {
          id: String(shop.id),
          name: shop.name,
          domain: storeHostname(shop.name, services.config.storeDomain),
          email: shop.owner_email,
          currency: shop.currency,
          timezone: shop.timezone,
          created_at: new Date(shop.created_at).toISOString(),
        },
      };
    },
  );
  methodNotAllowed(api, url, ['GET']);
}
