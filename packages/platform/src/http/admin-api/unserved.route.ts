// Paths of resources the platform family has and storegate does not serve (themes, collections,
// script tags...): their scopes are accepted at install so that the family's apps install here, and
// their paths answer 404 saying so, so that nothing pretends to exist. After the Access-Token
// check, like every Admin API path.
import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../../domain/errors.ts';
import type { UnservedResource } from '../../domain/scopes.ts';

/** The family's paths of each unserved resource, by the first segment after the version. */
export const UNSERVED_PATHS: Readonly<Record<string, UnservedResource>> = {
  collections: 'collections',
  custom_collections: 'collections',
  smart_collections: 'collections',
  collects: 'collections',
  script_tags: 'script_tags',
  pages: 'content',
  blogs: 'content',
  articles: 'content',
  html_tags: 'html_tags',
  comments: 'comments',
  price_rules: 'price_rules',
  discount_codes: 'price_rules',
  navigation: 'shop_navigation',
  menus: 'shop_navigation',
  search: 'search_api',
  gift_cards: 'gift_cards',
  themes: 'themes',
  payments: 'payment_info',
  inventory_levels: 'inventory',
  inventory_items: 'inventory',
  locations: 'inventory',
  finance: 'finance',
  cart_transforms: 'cart_transform',
};

export function registerUnservedRoutes(api: FastifyInstance): void {
  for (const [segment, resource] of Object.entries(UNSERVED_PATHS)) {
    for (const url of [`/openapi/:version/${segment}`, `/openapi/:version/${segment}/*`]) {
      api.route({
        method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
        url,
        schema: { hide: true } as Record<string, unknown>,
        config: { area: 'store' as const, api: {} },
        handler: async () => {
          throw new NotFoundError(
            `storegate does not serve ${segment.replaceAll('_', ' ')}: the read_${resource} and write_${resource} scopes are accepted ` +
              `at install, but this store has no ${segment} API`,
          );
        },
      });
    }
  }
}
