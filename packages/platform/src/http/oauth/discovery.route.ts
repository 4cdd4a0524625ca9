// GET {base_url}/.well-known/oauth-authorization-server: the authorization server metadata of a
// store (RFC 8414), so that standard OAuth clients find the endpoints, scopes and methods without
// being configured by hand. Each store is its own issuer: its base URL. What it says holds for every
// app it describes: it promises `iss` on every authorization response only while every app's
// redirect with the code carries it (an app may turn that off for a client that signs the encoded
// query), so it is read from the apps on each request and never kept by a cache for long.
import type { FastifyInstance } from 'fastify';
import { storeBaseUrl } from '../../config.ts';
import { supportedScopes } from '../../domain/scopes.ts';
import type { Services } from '../../services/services.ts';

const METADATA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'issuer',
    'authorization_endpoint',
    'token_endpoint',
    'revocation_endpoint',
    'scopes_supported',
    'response_types_supported',
    'grant_types_supported',
    'code_challenge_methods_supported',
    'token_endpoint_auth_methods_supported',
    'revocation_endpoint_auth_methods_supported',
    'introspection_endpoint',
    'introspection_endpoint_auth_methods_supported',
    'authorization_response_iss_parameter_supported',
    'jwks_uri',
  ],
  properties: {
    issuer: { type: 'string', description: "The store's base URL; the `iss` of every authorization response." },
    authorization_endpoint: { type: 'string' },
    token_endpoint: { type: 'string' },
    revocation_endpoint: { type: 'string', description: 'RFC 7009 token revocation.' },
    scopes_supported: { type: 'array', items: { type: 'string' } },
    response_types_supported: { type: 'array', items: { type: 'string' } },
    grant_types_supported: {
      type: 'array',
      items: { type: 'string' },
      description: 'Includes RFC 8693 token exchange, of the launch token an app is opened with.',
    },
    code_challenge_methods_supported: { type: 'array', items: { type: 'string' }, description: 'PKCE (RFC 7636) is optional; only S256.' },
    token_endpoint_auth_methods_supported: { type: 'array', items: { type: 'string' } },
    revocation_endpoint_auth_methods_supported: { type: 'array', items: { type: 'string' } },
    introspection_endpoint: {
      type: 'string',
      description: "RFC 7662 token introspection, for the operator's resource servers only (not apps).",
    },
    introspection_endpoint_auth_methods_supported: { type: 'array', items: { type: 'string' } },
    jwks_uri: {
      type: 'string',
      description: 'The platform keys (JWKS) of the `v1a` (Ed25519) webhook signatures; the same keys on every host.',
    },
    authorization_response_iss_parameter_supported: {
      type: 'boolean',
      description:
        'RFC 9207: true when every authorization response redirect, of every app, carries `iss`, the issuer; ' +
        'false while some app has turned `iss` off on the redirect with the code (error redirects always carry it).',
    },
  },
};

export function registerDiscoveryRoute(app: FastifyInstance, services: Pick<Services, 'apps' | 'config'>): void {
  app.get(
    '/.well-known/oauth-authorization-server',
    {
      config: { area: 'store', helmet: { skipRoute: true } },
      schema: {
        tags: ['oauth'],
        summary: 'OAuth 2.0 authorization server metadata of this store (RFC 8414); no Access-Token needed',
        security: [],
        response: { 200: METADATA },
      },
    },
    async (req, reply) => {
      const issuer = storeBaseUrl(services.config, req.store!.name);
      const clientAuth = ['client_secret_post', 'client_secret_basic'];
      reply.header('X-Content-Type-Options', 'nosniff').header('Cache-Control', 'no-cache');
      return {
        issuer,
        authorization_endpoint: `${issuer}/admin/oauth/authorize`,
        token_endpoint: `${issuer}/admin/oauth/token`,
        revocation_endpoint: `${issuer}/admin/oauth/revoke`,
        scopes_supported: supportedScopes(),
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:token-exchange'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: clientAuth,
        revocation_endpoint_auth_methods_supported: clientAuth,
        introspection_endpoint: `${issuer}/admin/oauth/introspect`,
        introspection_endpoint_auth_methods_supported: clientAuth,
        authorization_response_iss_parameter_supported: await services.apps.issToEveryApp(),
        jwks_uri: `${issuer}/.well-known/jwks.json`,
      };
    },
  );
}
