// Bulk exports of the Admin API: POST starts one (202 at once; the worker writes the file),
// GET shows one or lists the caller's own, POST …/cancel ends one. The file is fetched from the
// signed address the operation carries once completed (bulk-download.route.ts), not from here.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { storeBaseUrl, type Config } from '../../config.ts';
import { BULK_RESOURCES, BULK_STATUSES } from '../../domain/bulk-operations.ts';
import type { BulkOperationView } from '../../services/bulk-exports.ts';
import type { Services } from '../../services/services.ts';
import { parseId } from '../path-params.ts';
import { errorResponses, methodNotAllowed, VERSION_PARAM, withApiHeaders } from './api-common.ts';

const SINCE = '2026-01' as const;

const OPERATION = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'status', 'resource', 'filters', 'fields', 'rows', 'bytes', 'error', 'snapshot_at', 'created_at', 'url'],
  properties: {
    id: { type: 'string' },
    status: { type: 'string', enum: BULK_STATUSES, description: 'created, running, completed, failed or canceled.' },
    resource: { type: 'string', enum: BULK_RESOURCES },
    filters: { type: 'object', additionalProperties: { type: 'string' }, description: 'The list filters, as the list takes them.' },
    fields: { type: ['string', 'null'], description: 'The fields of each row, or null for all.' },
    rows: { type: 'integer', description: 'Rows written to the file so far.' },
    bytes: { type: 'integer', description: 'Bytes written to the file so far.' },
    error: {
      type: ['string', 'null'],
      description: 'Why a failed operation failed: its app no longer holds read_<resource>, or it failed on each of its 3 attempts.',
    },
    snapshot_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description:
        'The instant the file shows the store at. Continue with GET /events?created_at_min=<snapshot_at>: every change from then on is ' +
        'there, every earlier one in the file.',
    },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    completed_at: { type: ['string', 'null'], format: 'date-time' },
    url: {
      type: ['string', 'null'],
      description:
        'Once completed: where to GET the JSON Lines file (HTTP Range supported), signed, valid until url_expires_at; GET the operation ' +
        'again for a fresh one.',
    },
    url_expires_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

const BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['resource'],
  properties: {
    resource: { type: 'string', enum: BULK_RESOURCES, description: 'What to export.' },
    filters: {
      type: 'object',
      maxProperties: 20,
      additionalProperties: { type: 'string', maxLength: 4000 },
      description: "The resource list's filters by name, as strings (ids, since_id, created_at_min, …, and the list's own such as title).",
    },
    fields: { type: 'string', maxLength: 2000, description: "Comma-separated top-level fields of each row, as the list's `fields`." },
  },
};

const ONE = withApiHeaders({ type: 'object', required: ['data'], properties: { data: OPERATION } });

function absolute(config: Config, req: FastifyRequest, view: BulkOperationView): BulkOperationView {
  return view.url ? { ...view, url: `${storeBaseUrl(config, req.store!.name)}${view.url}` } : view;
}

export function registerBulkOperationRoutes(api: FastifyInstance, services: Pick<Services, 'bulkExports' | 'config'>): void {
  const base = '/openapi/:version/bulk_operations';
  const item = `${base}/:id`;
  const tags = ['bulk_operations'];
  const config = { area: 'store' as const, api: { since: SINCE } };
  const params = { type: 'object', properties: { version: VERSION_PARAM } };
  const idParams = { type: 'object', properties: { version: VERSION_PARAM, id: { type: 'string', description: 'bulk operation id' } } };

  api.post(
    base,
    {
      config: { ...config, api: { ...config.api, wrapper: 'bulk_operation' } },
      schema: {
        tags,
        summary: 'Start a bulk export',
        description:
          'Answers 202 at once; the export runs in the background. Needs read_<resource>. At most 2 created or running per app in a ' +
          'store (429 beyond). The body may also be wrapped: {"bulk_operation": {...}}.',
        params,
        body: BODY,
        response: { 202: ONE, ...errorResponses },
      },
    },
    async (req, reply) => {
      const body = req.body as { resource: string; filters?: Record<string, string>; fields?: string };
      const view = await services.bulkExports.create(req.principal!, body);
      return reply.code(202).send({ data: absolute(services.config, req, view) });
    },
  );

  api.get(
    base,
    {
      config,
      schema: {
        tags,
        summary: "List this app's bulk operations",
        description: 'Newest first; finished ones are kept for the retention the platform sets (7 days by default).',
        params,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { limit: { type: 'integer', minimum: 1, maximum: 250, description: 'At most this many (default 50).' } },
        },
        response: {
          200: withApiHeaders({ type: 'object', required: ['data'], properties: { data: { type: 'array', items: OPERATION } } }),
          ...errorResponses,
        },
      },
    },
    async (req) => {
      const limit = (req.query as { limit?: number }).limit ?? 50;
      const views = await services.bulkExports.list(req.principal!, limit);
      return { data: views.map((v) => absolute(services.config, req, v)) };
    },
  );

  api.get(
    item,
    { config, schema: { tags, summary: 'Get a bulk operation', params: idParams, response: { 200: ONE, ...errorResponses } } },
    async (req) => {
      const view = await services.bulkExports.get(req.principal!, parseId((req.params as { id: string }).id));
      return { data: absolute(services.config, req, view) };
    },
  );

  api.post(
    `${item}/cancel`,
    {
      config,
      schema: {
        tags,
        summary: 'Cancel a bulk operation',
        description: 'A created or running operation ends as canceled; a finished one answers 409. Send an empty JSON object as the body.',
        params: idParams,
        body: { type: 'object', additionalProperties: false, properties: {} },
        response: { 200: ONE, 409: errorResponses[404], ...errorResponses },
      },
    },
    async (req) => {
      const view = await services.bulkExports.cancel(req.principal!, parseId((req.params as { id: string }).id));
      return { data: absolute(services.config, req, view) };
    },
  );

  methodNotAllowed(api, base, ['GET', 'POST']);
  methodNotAllowed(api, item, ['GET']);
  methodNotAllowed(api, `${item}/cancel`, ['POST']);
}
