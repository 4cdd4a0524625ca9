// The partner API on the platform host: an app's app-level webhook subscriptions, for its own
// deployment tooling. The app authenticates as it does at the token endpoint (HTTP Basic with its
// client_id and client secret, the previous secret during a rotation), and only for itself: another
// app's path is refused whatever the credentials.
import { Ajv } from 'ajv';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ForbiddenError, UnauthorizedError } from '../../domain/errors.ts';
import type { AppProfile } from '../../domain/app-profile.ts';
import { readIncludeFields } from '../../domain/webhook-subscription-shape.ts';
import type { AppSubscription, SpreadReport } from '../../services/app-webhooks.ts';
import type { Services } from '../../services/services.ts';
import { FILTER, INCLUDE_FIELDS } from '../admin-api/webhook-shape-schema.ts';
import { parseId } from '../path-params.ts';

const tags = ['partner-api'];
const security = [{ PartnerClient: [] }];
const BASE = '/partner/api/apps/:clientId/webhook_subscriptions';
const REALM = 'Basic realm="storegate partner API", charset="UTF-8"';

const SUBSCRIPTION = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'topic', 'address', 'api_version', 'filter', 'include_fields', 'created_at', 'updated_at', 'stores'],
  properties: {
    id: { type: 'string' },
    topic: { type: 'string' },
    address: { type: 'string' },
    api_version: { type: 'string', description: 'The Admin API version the webhook bodies follow.' },
    filter: {
      type: ['string', 'null'],
      description: 'The filter query every store copy has; null when every change of the topic is sent.',
    },
    include_fields: {
      type: ['array', 'null'],
      items: { type: 'string' },
      description: 'The top-level fields each delivery of a store copy holds; null when the whole object is sent.',
    },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    stores: { type: 'integer', description: 'How many stores hold a copy of it now.' },
  },
};
const SKIPPED = {
  type: 'array',
  description: 'Stores the app is installed in where a cap on subscriptions left no room for the copy.',
  items: {
    type: 'object',
    required: ['store', 'reason'],
    properties: { store: { type: 'string' }, topic: { type: 'string' }, address: { type: 'string' }, reason: { type: 'string' } },
  },
};
const ERROR = {
  type: 'object',
  properties: {
    code: { type: 'string' },
    message: { type: 'string' },
    request_id: { type: 'string' },
    // Declared with its values: the serializer leaves out what a schema does not name.
    errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
  },
};
const ERRORS = {
  401: { description: 'No credentials, or not those of an app (WWW-Authenticate: Basic).', ...ERROR },
  403: { description: 'The credentials are another app’s.', ...ERROR },
  404: { description: 'No such subscription.', ...ERROR },
  422: { description: 'Bad input: nothing was changed.', ...ERROR },
};
const PARAMS = {
  type: 'object',
  required: ['clientId'],
  properties: { clientId: { type: 'string', description: "The app's client_id" }, id: { type: 'string' } },
};

function toJson(s: AppSubscription, stores: number) {
  return {
    id: String(s.id),
    topic: s.topic,
    address: s.address,
    api_version: s.api_version,
    filter: s.filter,
    include_fields: readIncludeFields(s.include_fields),
    created_at: new Date(s.created_at).toISOString(),
    updated_at: new Date(s.updated_at).toISOString(),
    stores,
  };
}

/** The client_id and secret of HTTP Basic (form-encoded, as at the token endpoint); undefined when malformed. */
function basicCredentials(header: string | undefined): { clientId: string; clientSecret: string } | undefined {
  const m = header === undefined ? null : /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header.trim());
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    const clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
    const clientSecret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
    return { clientId, clientSecret };
  } catch {
    return undefined;
  }
}

const authenticated = new WeakMap<FastifyRequest, AppProfile>();

/** What the partner API uses: the calling app's credentials and its app-level webhook subscriptions. */
export type PartnerApiServices = Pick<Services, 'appWebhooks' | 'apps'>;

export function registerPartnerApiRoutes(app: FastifyInstance, services: PartnerApiServices): void {
  app.register(async (api) => {
    // Bodies as written: an unknown field or a value of another type is a 422, never dropped or coerced.
    const strict = new Ajv({ allErrors: true, removeAdditional: false, coerceTypes: false, useDefaults: false, strict: false });
    api.setValidatorCompiler(({ schema }) => strict.compile(schema));
    registerRoutes(api, services);
  });
}

function registerRoutes(app: FastifyInstance, services: PartnerApiServices): void {
  /** Before the body is read: the app of the credentials, which must be the app of the path. */
  async function authenticate(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    reply.header('Cache-Control', 'no-store');
    const presented = basicCredentials(req.headers.authorization);
    let found: AppProfile | undefined;
    try {
      if (presented) found = await services.apps.authenticateClient(presented.clientId, presented.clientSecret);
    } catch {
      found = undefined;
    }
    if (!found) {
      reply.header('WWW-Authenticate', REALM);
      throw new UnauthorizedError("Authenticate with the app's client_id and client secret (HTTP Basic)");
    }
    if (found.client_id !== (req.params as { clientId: string }).clientId)
      throw new ForbiddenError('These credentials are not those of the app in the path');
    authenticated.set(req, found);
  }
  const config = { area: 'platform' as const };
  const appOf = (req: FastifyRequest) => authenticated.get(req)!;

  app.get(
    BASE,
    {
      config,
      onRequest: authenticate,
      schema: {
        tags,
        security,
        summary: "List the app's app-level webhook subscriptions",
        description:
          'On the platform host. App-level subscriptions are copied into every store that installs the app, now and later (topics the ' +
          'store’s grant allows).',
        params: PARAMS,
        response: { 200: { type: 'object', required: ['data'], properties: { data: { type: 'array', items: SUBSCRIPTION } } }, ...ERRORS },
      },
    },
    async (req) => ({ data: (await services.appWebhooks.list(appOf(req).id)).map((s) => toJson(s, s.stores)) }),
  );

  app.post(
    BASE,
    {
      config,
      onRequest: authenticate,
      schema: {
        tags,
        security,
        summary: 'Add an app-level webhook subscription',
        description:
          'Copied at once into every store the app is installed in (one transaction per store) and into every store that installs it ' +
          'later. The address rules and caps of the Admin API apply; privacy topics are refused (they go to the privacy webhook ' +
          'address). ' +
          'With `filter` and `include_fields` every copy sends only the matching changes, with only those fields, e.g. ' +
          '{"topic": "products/update", "address": "https://app.example/webhooks", "filter": "status:active AND price:>=10", ' +
          '"include_fields": ["id", "title", "price"]}; ' +
          'they are checked as the Admin API checks them (422 naming the field, nothing written).',
        params: PARAMS,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['topic', 'address'],
          properties: {
            topic: { type: 'string', maxLength: 100 },
            address: { type: 'string', maxLength: 2000 },
            filter: FILTER,
            include_fields: INCLUDE_FIELDS,
          },
        },
        response: {
          201: { type: 'object', required: ['data', 'skipped'], properties: { data: SUBSCRIPTION, skipped: SKIPPED } },
          ...ERRORS,
        },
      },
    },
    async (req, reply) => {
      const body = req.body as { topic: string; address: string; filter?: string | null; include_fields?: string[] | null };
      const added: AppSubscription & SpreadReport = await services.appWebhooks.add(appOf(req).id, {
        topic: body.topic,
        address: body.address,
        filter: body.filter,
        includeFields: body.include_fields,
      });
      return reply.code(201).send({ data: toJson(added, added.stores), skipped: added.skipped });
    },
  );

  app.put(
    `${BASE}/:id`,
    {
      config,
      onRequest: authenticate,
      schema: {
        tags,
        security,
        summary: "Change an app-level webhook subscription's filter and include_fields",
        description:
          'A field left out stays as it is; `null` removes it (every change of the topic, the whole object). Checked against the ' +
          'subscription’s topic before anything is written (422 naming the field). Every store copy takes the change (one ' +
          'transaction per store); deliveries already queued keep the fields they had. The topic and address name the ' +
          'subscription: to change them, remove it and add another. `changed` is false when the values were already those; ' +
          '`stores_changed` counts the stores whose copy took the change.',
        params: PARAMS,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: { filter: FILTER, include_fields: INCLUDE_FIELDS },
        },
        response: {
          200: {
            type: 'object',
            required: ['data', 'changed', 'stores_changed'],
            properties: {
              data: SUBSCRIPTION,
              changed: { type: 'boolean', description: 'Whether the values differed from the ones it had.' },
              stores_changed: { type: 'integer', description: 'How many stores’ copies took the change.' },
            },
          },
          ...ERRORS,
        },
      },
    },
    async (req) => {
      const body = req.body as { filter?: string | null; include_fields?: string[] | null };
      const id = parseId((req.params as { id: string }).id);
      const appId = appOf(req).id;
      const done = await services.appWebhooks.update(appId, id, { filter: body.filter, includeFields: body.include_fields });
      const held = (await services.appWebhooks.list(appId)).find((s) => s.id === id)?.stores ?? done.stores;
      return { data: toJson(done, held), changed: done.changed, stores_changed: done.stores };
    },
  );

  app.delete(
    `${BASE}/:id`,
    {
      config,
      onRequest: authenticate,
      schema: {
        tags,
        security,
        summary: 'Remove an app-level webhook subscription',
        description: 'Its copy in every store is deleted too (one transaction per store); their queued deliveries are cancelled.',
        params: PARAMS,
        response: { 200: { type: 'object', required: ['data'], properties: { data: SUBSCRIPTION } }, ...ERRORS },
      },
    },
    async (req) => {
      const removed = await services.appWebhooks.remove(appOf(req).id, parseId((req.params as { id: string }).id));
      return { data: toJson(removed, removed.stores) };
    },
  );
}
