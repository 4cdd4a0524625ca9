// The Admin API: /openapi/{version}/{resource}[/{id}], called by public and private apps alike
// with an Access-Token header; one route table for every version. Order of checks: version (404) → Access-Token (401) → rate limit (429)
// → scope (403) → input (415/422) → Idempotency-Key of a write (400/409/422, or a replay) → handler.
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyRequest, preValidationHookHandler } from 'fastify';
import type { Services } from '../../services/services.ts';
import type { ApiVersion } from '../../domain/api-versions.ts';
import type { Access, ScopeResource } from '../../domain/scopes.ts';
import { UnsupportedMediaTypeError } from '../../domain/errors.ts';
import type { ApiPrincipal } from '../../services/api-auth.ts';
import { RESOURCE_DEFS, type ResourceDef } from '../../domain/resources.ts';
import type { ResourceRecord } from '../../services/resource-service.ts';
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
  VERSION_PARAM,
  withApiHeaders,
  writeErrorResponses,
} from './api-common.ts';
import { IDEMPOTENCY_KEY_HEADERS, registerIdempotency, writeAnswer } from './idempotency.ts';
import {
  answerRecord,
  CONDITIONAL_READ_HEADERS,
  CONDITIONAL_WRITE_HEADERS,
  INVENTORY_CONFLICT,
  PRECONDITION_RESPONSES,
  registerPreconditions,
  withEtag,
} from './preconditions.ts';
import { etagOf } from '../../domain/etags.ts';
import { parseId } from '../path-params.ts';
import { boundedValidator } from '../plugins/schema-bounds.ts';
import { registerEventRoutes } from './events.route.ts';
import { registerBulkOperationRoutes } from './bulk-operations.route.ts';
import { registerBulkDownloadRoute } from './bulk-download.route.ts';
import { registerWebhookSubscriptionRoutes } from './webhooks.route.ts';
import { registerWebhookRecoveryRoutes } from './webhook-recovery.route.ts';
import { registerShopRoute } from './shop.route.ts';
import { registerBearerChallenges } from './bearer.ts';
import { registerAccessScopesRoute } from './access-scopes.route.ts';
import { registerUnservedRoutes } from './unserved.route.ts';
import { registerSuccessEnvelope } from './success-envelope.ts';
import { type AdmissionServices, admit } from './admission.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: ApiPrincipal | undefined;
    apiVersion: ApiVersion | undefined;
  }
  interface FastifyContextConfig {
    /**
     * Admin API route: the scope it needs (resource and access), or none (webhooks); `since`: the
     * first API version that has the route (older ones answer 404 naming it); `wrapper`, on a
     * create or update route, is the key its body may be wrapped in (`{"product": {...}}`); `list`,
     * on a list route, the resource listed (its page may be read with the token: admission.ts).
     */
    api?: { resource?: ScopeResource; access?: Access; since?: ApiVersion; wrapper?: string; list?: ResourceDef };
  }
}

/** What the routes of one resource use: its rows, the Idempotency-Key records, the Link header's host. */
type ResourceServices = Pick<Services, 'config' | 'idempotency' | 'resources'>;

/** What the Admin API's routes and checks use, the bulk download outside its hooks included. */
export type AdminApiServices = Pick<
  Services,
  keyof AdmissionServices | keyof ResourceServices | 'accounts' | 'bulkExports' | 'events' | 'subscriptions' | 'webhookRecovery'
>;

export function registerAdminApi(app: FastifyInstance, services: AdminApiServices): void {
  // Outside the Admin API's hooks: the signed address is the credential, not an Access-Token.
  registerBulkDownloadRoute(app, services);
  app.register(async (api) => {
    // Bodies: strict (no coercion, unknown fields refused). Query strings: numbers coerced.
    const strict = new Ajv({ allErrors: true, removeAdditional: false, coerceTypes: false, useDefaults: false, strict: false });
    const coercing = new Ajv({ allErrors: true, removeAdditional: false, coerceTypes: true, useDefaults: true, strict: false });
    addFormats.default(strict);
    addFormats.default(coercing);
    // A body is held to its schema's bounds first: the validators list every error they find.
    api.setValidatorCompiler(({ schema, httpPart }) =>
      httpPart === 'body' ? boundedValidator(strict.compile(schema), schema) : coercing.compile(schema),
    );
    // JSON answers need none of the page headers (CSP, frame options...): helmet skips these
    // routes, and nosniff is set below.
    api.addHook('onRoute', (route) => {
      route.config = { ...(route.config ?? {}), helmet: { skipRoute: true } } as typeof route.config;
    });
    api.decorateRequest('principal', undefined);
    api.decorateRequest('apiVersion', undefined);
    api.decorateRequest('listQuery', undefined);
    api.decorateRequest('countFilters', undefined);
    api.decorateRequest('readPage', undefined);

    // Callback style, and no promise at all when the token is known and the limiter counts in
    // memory: this runs before every Admin API call.
    api.addHook('onRequest', (req, reply, done) => {
      let pending: Promise<void> | undefined;
      try {
        pending = admit(services, req, reply);
      } catch (err) {
        return done(err as Error);
      }
      if (pending === undefined) return done();
      pending.then(() => done(), done);
    });

    // Content type and body wrapper of writes: attached only to routes that take a body.
    const checkBody: preValidationHookHandler = (req, _reply, done) => {
      if (req.method !== 'POST' && req.method !== 'PUT' && req.method !== 'PATCH') return done();
      const type = req.headers['content-type'] ?? '';
      if (!/^application\/json\s*(;|$)/i.test(type)) return done(new UnsupportedMediaTypeError('Send the body as application/json'));
      const wrapper = req.routeOptions.config?.api?.wrapper;
      if (wrapper) req.body = unwrap(req.body, wrapper);
      done();
    };
    api.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (!methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH')) return;
      const own = route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation];
      route.preValidation = [checkBody, ...own];
    });

    registerBearerChallenges(api, services.config);
    registerIdempotency(api, services);
    registerPreconditions(api);
    registerSuccessEnvelope(api);
    for (const def of RESOURCE_DEFS) registerResource(api, services, def);
    registerWebhookSubscriptionRoutes(api, services);
    registerWebhookRecoveryRoutes(api, services);
    registerShopRoute(api, services);
    registerEventRoutes(api, services);
    registerBulkOperationRoutes(api, services);
    registerAccessScopesRoute(api);
    registerUnservedRoutes(api);
  });
}

/**
 * Clients of this platform family send `{"product": {...}}`: every create and update route takes
 * the body wrapped in its `wrapper` key as well as the bare object. Only a body whose one key is the
 * wrapper is unwrapped, so a bare object is never mistaken for a wrapped one.
 */
function unwrap(body: unknown, wrapper: string): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const keys = Object.keys(body);
  const inner = (body as Record<string, unknown>)[wrapper];
  return keys.length === 1 && keys[0] === wrapper && inner && typeof inner === 'object' && !Array.isArray(inner) ? inner : body;
}

function registerResource(api: FastifyInstance, services: ResourceServices, def: ResourceDef): void {
  const base = `/openapi/:version/${def.name}`;
  const item = `${base}/:id`;
  const tags = [def.name];
  const one = withEtag({ type: 'object', required: ['data'], properties: { data: def.object } });
  const params = { type: 'object', properties: { version: VERSION_PARAM } };
  const idParams = { type: 'object', properties: { version: VERSION_PARAM, id: { type: 'string', description: `${def.singular} id` } } };
  const read = { area: 'store' as const, api: { resource: def.name, access: 'read' as const } };
  const write = {
    area: 'store' as const,
    api: { resource: def.name, access: 'write' as const, wrapper: def.singular },
    idempotent: def.name,
  };
  const fieldNames = fieldNamesOf(def.object);
  const answerOne = (req: FastifyRequest, status: number) =>
    writeAnswer(services.idempotency, req, status, (row: ResourceRecord) => ({ data: def.toJson(row) }), recordTag);

  api.get(
    base,
    {
      config: { ...read, api: { ...read.api, list: def } },
      preValidation: listQueryHook(fieldNames, def.matches),
      schema: {
        tags,
        summary: `List ${def.name}`,
        params,
        querystring: listQuerySchema(def.matches),
        response: { 200: listEnvelope(def.object), ...errorResponses },
      },
    },
    async (req, reply) => {
      const page = req.readPage ?? (await services.resources.listPage(def, req.store!.id, pageRequest(req), req.listQuery?.fields));
      setLinkHeader(req, reply, services.config, page);
      return reply.type('application/json; charset=utf-8').send(page.body);
    },
  );

  api.get(
    `${base}/count`,
    {
      config: read,
      preValidation: countQueryHook(def.matches),
      schema: {
        tags,
        summary: `Count ${def.name}`,
        description: COUNT_DESCRIPTION,
        params,
        querystring: countQuerySchema(def.matches),
        response: { 200: COUNT_BODY, ...errorResponses },
      },
    },
    async (req) => ({ count: await services.resources.count(def, req.store!.id, req.countFilters ?? {}) }),
  );

  api.get(
    item,
    {
      config: read,
      schema: {
        tags,
        summary: `Get a ${def.singular}`,
        params: idParams,
        headers: CONDITIONAL_READ_HEADERS,
        response: { 200: one, 304: { description: 'Not Modified: If-None-Match holds the current ETag' }, ...errorResponses },
      },
    },
    async (req, reply) => {
      const row = await services.resources.get(def, req.store!.id, parseId((req.params as { id: string }).id));
      return answerRecord(req, reply, versioned(row), () => ({ data: def.toJson(row) }));
    },
  );

  api.post(
    base,
    {
      config: write,
      schema: {
        tags,
        summary: `Create a ${def.singular}`,
        description: `The body may also be wrapped: {"${def.singular}": {...}}.`,
        params,
        headers: IDEMPOTENCY_KEY_HEADERS,
        body: def.create,
        response: { 201: one, ...writeErrorResponses },
      },
    },
    async (req, reply) => {
      const answer = answerOne(req, 201);
      const row = await services.resources.create(def, req.store!.id, req.body as Record<string, unknown>, answer.step);
      return answer.send(reply, row);
    },
  );

  for (const method of ['PUT', 'PATCH'] as const) {
    api.route({
      method,
      url: item,
      config: write,
      schema: {
        tags,
        summary: `Update a ${def.singular} (only the fields sent change)`,
        description: `The body may also be wrapped: {"${def.singular}": {...}}.`,
        params: idParams,
        headers: CONDITIONAL_WRITE_HEADERS,
        body: def.update,
        response: { 200: one, ...writeErrorResponses, ...PRECONDITION_RESPONSES, ...(def.table === 'products' ? INVENTORY_CONFLICT : {}) },
      },
      handler: async (req, reply) => {
        const answer = answerOne(req, 200);
        const id = parseId((req.params as { id: string }).id);
        const { expected_inventory_quantity: expectedInventory, ...body } = req.body as Record<string, unknown>;
        const condition = { ifMatch: req.ifMatch, expectedInventory: expectedInventory as number | undefined };
        const row = await services.resources.update(def, req.store!.id, id, body, answer.step, condition);
        return answer.send(reply, row);
      },
    });
  }

  if (def.canDelete) {
    api.delete(
      item,
      {
        config: write,
        schema: {
          tags,
          summary: `Delete a ${def.singular}`,
          params: idParams,
          headers: CONDITIONAL_WRITE_HEADERS,
          response: { 200: withApiHeaders({ type: 'object', properties: {} }), ...writeErrorResponses, ...PRECONDITION_RESPONSES },
        },
      },
      async (req, reply) => {
        const answer = writeAnswer(services.idempotency, req, 200, () => ({}));
        const id = parseId((req.params as { id: string }).id);
        await services.resources.delete(def, req.store!.id, id, answer.step, { ifMatch: req.ifMatch });
        return answer.send(reply, undefined);
      },
    );
  }
  methodNotAllowed(api, base, ['GET', 'POST']);
  methodNotAllowed(api, `${base}/count`, ['GET']);
  methodNotAllowed(api, item, def.canDelete ? ['GET', 'PUT', 'PATCH', 'DELETE'] : ['GET', 'PUT', 'PATCH']);
}

/** The id and version of a resource row, as its ETag is made. */
function versioned(row: ResourceRecord): { id: number; version: number } {
  return { id: Number(row.id), version: Number(row.version) };
}

function recordTag(row: ResourceRecord): string {
  return etagOf(versioned(row));
}
