// GET /openapi/{version}/oauth/access_scopes: the scopes the calling token holds now, as handles
// in their canonical form (`read_products`, never the singular alias an app may have asked for;
// the `scope` of the token response has the same forms). Any valid token may ask: an app checks
// here what the merchant granted before calling what needs it.
import type { FastifyInstance } from 'fastify';
import { errorResponses, methodNotAllowed, VERSION_PARAM, withApiHeaders } from './api-common.ts';

const ACCESS_SCOPES = {
  type: 'object',
  additionalProperties: false,
  required: ['access_scopes'],
  properties: {
    access_scopes: {
      type: 'array',
      description: 'Each scope granted, canonical and sorted (a write scope also allows the read; the read is not listed again).',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['handle'],
        properties: { handle: { type: 'string', description: 'e.g. read_products' } },
      },
    },
  },
};

export function registerAccessScopesRoute(api: FastifyInstance): void {
  const url = '/openapi/:version/oauth/access_scopes';
  api.get(
    url,
    {
      config: { area: 'store' as const, api: {} },
      schema: {
        tags: ['oauth'],
        summary: 'The scopes the calling token holds (any valid token; no scope needed)',
        params: { type: 'object', properties: { version: VERSION_PARAM } },
        response: { 200: withApiHeaders(ACCESS_SCOPES), ...errorResponses },
      },
    },
    // The principal's scopes are read where the token is authenticated, each call: a grant that
    // shrank shows here at once.
    async (req) => ({ access_scopes: [...req.principal!.scopes].sort().map((handle) => ({ handle })) }),
  );
  methodNotAllowed(api, url, ['GET']);
}
