// GET /.well-known/jwks.json: the public keys that sign webhooks with `v1a` (Ed25519, Standard
// Webhooks), as a JSON Web Key Set (RFC 7517; OKP keys, RFC 8037). The keys are the platform's,
// the same on every host, so the set is served on the bare platform domain and on every store's
// host (the store's RFC 8414 metadata links its own copy as `jwks_uri`).
//
// Cached for five minutes: a rotation publishes the new key when it starts signing and keeps the
// replaced one signing and published for the whole overlap (days), so a copy five minutes old
// still verifies every delivery; and a receiver that meets a key id it does not know fetches again.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/services.ts';

const JWKS = {
  type: 'object',
  additionalProperties: false,
  required: ['keys'],
  properties: {
    keys: {
      type: 'array',
      description: 'The keys that sign now, newest first: one, or two while a rotation overlaps the old key with the new.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['kty', 'crv', 'x', 'kid', 'use', 'alg'],
        properties: {
          kty: { type: 'string', enum: ['OKP'] },
          crv: { type: 'string', enum: ['Ed25519'] },
          x: { type: 'string', description: 'The public key, base64url.' },
          kid: { type: 'string', description: "The key's RFC 7638 thumbprint; `X-Service-Signing-Key-Ids` names it on each delivery." },
          use: { type: 'string', enum: ['sig'] },
          alg: { type: 'string', enum: ['EdDSA'] },
        },
      },
    },
  },
};

export function registerJwksRoute(app: FastifyInstance, services: Pick<Services, 'signingKeys'>): void {
  app.get(
    '/.well-known/jwks.json',
    {
      config: { area: 'any', helmet: { skipRoute: true } },
      schema: {
        tags: ['oauth'],
        summary: "The platform's webhook signing keys (JWKS, RFC 7517 and RFC 8037); no Access-Token needed",
        description:
          'Public Ed25519 keys of the `v1a` entries in `webhook-signature` (Standard Webhooks), sent to apps that turned ' +
          'asymmetric signatures on. The same on the platform domain and on every store host.',
        security: [],
        response: { 200: JWKS },
      },
    },
    async (_req, reply) => {
      const jwks = await services.signingKeys.jwks();
      reply
        .header('X-Content-Type-Options', 'nosniff')
        .header('Cache-Control', 'public, max-age=300')
        .header('Access-Control-Allow-Origin', '*')
        .type('application/jwk-set+json');
      return jwks;
    },
  );
}
