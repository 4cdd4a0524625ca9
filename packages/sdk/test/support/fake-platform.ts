// A small in-memory stand-in for the platform's OAuth and Admin API endpoints, behind fakeFetch.
import { signQuery } from '../../src/signature/query-signature.ts';
import { fakeFetch, json, type RecordedCall } from './fake-fetch.ts';
import { readClaims } from './launch-tokens.ts';

export interface FakePlatformOptions {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  now: () => number;
  accessTokenLifetime?: number;
  /** Lifetime of online tokens (default 86400). */
  onlineTokenLifetime?: number;
}

export function fakePlatform(options: FakePlatformOptions) {
  let counter = 0;
  const codes = new Map<string, { shop: string; online: boolean }>(); // code -> shop
  const refreshTokens = new Map<string, string>(); // refresh -> shop
  const accessTokens = new Map<string, { shop: string; expiresAt: number; userId?: string }>();
  const usedJtis = new Set<string>();
  const lifetime = options.accessTokenLifetime ?? 3600;
  const issueOnline = (shop: string, userId: string) => {
    counter++;
    const access = `sg_at_online${counter}xyz`;
    const onlineLifetime = options.onlineTokenLifetime ?? 86_400;
    const expiresAt = Math.floor(options.now() / 1000) + onlineLifetime;
    accessTokens.set(access, { shop, expiresAt, userId });
    return {
      token_type: 'Bearer',
      access_token: access,
      expires_at: expiresAt,
      expires_in: onlineLifetime,
      scope: 'read_products',
      store_id: '42',
      store_name: shop.split('.')[0],
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      associated_user_scope: 'read_products',
      associated_user: { id: userId, email: `merchant${userId}@example.com` },
    };
  };
  const issue = (shop: string) => {
    counter++;
    const access = `sg_at_access${counter}xyz`;
    const refresh = `sg_rt_refresh${counter}xyz`;
    const expiresAt = Math.floor(options.now() / 1000) + lifetime;
    accessTokens.set(access, { shop, expiresAt });
    refreshTokens.set(refresh, shop);
    return {
      token_type: 'Bearer',
      access_token: access,
      refresh_token: refresh,
      expires_at: expiresAt,
      expires_in: lifetime,
      scope: 'read_products',
      store_id: '42',
      store_name: shop.split('.')[0],
    };
  };
  const handler = async (call: RecordedCall): Promise<Response> => {
    const shop = new URL(call.url).hostname;
    if (call.method === 'POST' && call.path === '/admin/oauth/token') {
      const body = JSON.parse(call.body ?? '{}') as Record<string, string>;
      if (body['client_id'] !== options.clientId || body['client_secret'] !== options.clientSecret)
        return json({ error: 'invalid_client' }, 401);
      if (body['grant_type'] === 'authorization_code') {
        const code = codes.get(body['code'] ?? '');
        if (code?.shop !== shop || body['redirect_uri'] !== options.redirectUri)
          return json({ error: 'invalid_grant', error_description: 'bad code' }, 400);
        codes.delete(body['code'] ?? '');
        return json(code.online ? issueOnline(shop, '1') : issue(shop));
      }
      if (body['grant_type'] === 'urn:ietf:params:oauth:grant-type:token-exchange') {
        // The fake trusts the signature (the SDK verified it before sending); it checks the rest.
        if (body['subject_token_type'] !== 'urn:ietf:params:oauth:token-type:id_token') return json({ error: 'invalid_request' }, 400);
        const requested = body['requested_token_type'] ?? 'urn:storegate:params:oauth:token-type:offline-access-token';
        const claims = readClaims(body['subject_token'] ?? '');
        if (claims.iss !== `http://${shop}:8080` || claims.aud !== options.clientId || !claims.jti || usedJtis.has(claims.jti))
          return json({ error: 'invalid_grant', error_description: 'launch token refused' }, 400);
        usedJtis.add(claims.jti);
        if (requested === 'urn:storegate:params:oauth:token-type:online-access-token')
          return json(issueOnline(shop, claims.sub ?? ''), 200, { 'cache-control': 'no-store' });
        if (requested !== 'urn:storegate:params:oauth:token-type:offline-access-token') return json({ error: 'invalid_request' }, 400);
        return json({ ...issue(shop), issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' }, 200, {
          'cache-control': 'no-store',
        });
      }
      if (body['grant_type'] === 'refresh_token') {
        if (refreshTokens.get(body['refresh_token'] ?? '') !== shop) return json({ error: 'invalid_grant' }, 400);
        refreshTokens.delete(body['refresh_token'] ?? '');
        return json(issue(shop));
      }
      return json({ error: 'unsupported_grant_type' }, 400);
    }
    if (call.path.startsWith('/openapi/')) {
      const bearer = /^Bearer (.+)$/.exec(call.headers.get('authorization') ?? '')?.[1];
      const token = accessTokens.get(call.headers.get('access-token') ?? bearer ?? '');
      if (!token || token.shop !== shop || token.expiresAt <= options.now() / 1000) {
        return json({ code: 'Unauthorized', message: 'bad token', request_id: 'req-401' }, 401, { 'x-request-id': 'req-401' });
      }
      const title = token.userId === undefined ? 'Hat' : `Hat seen by ${token.userId}`;
      return json({ data: [{ id: '1', title }], cursor: '', has_more: false }, 200, {
        'x-request-id': 'req-ok',
        'x-service-api-call-limit': '1/40',
      });
    }
    return json({ code: 'NotFound', message: 'no route' }, 404);
  };
  const fake = fakeFetch(handler);
  return {
    ...fake,
    /** Issues a code and returns the signed redirect query the platform would send. */
    async redirectQuery(shop: string, state: string, extra: Record<string, string> = {}, online = false): Promise<string> {
      const code = `sg_ac_code${++counter}`;
      codes.set(code, { shop, online });
      const params = { code, shop, state, timestamp: String(Math.floor(options.now() / 1000)), ...extra };
      const hmac = await signQuery(params, options.clientSecret);
      return `${new URLSearchParams({ ...params, hmac }).toString()}`;
    },
    async installQuery(shop: string, idToken?: string): Promise<string> {
      const params = { shop, timestamp: String(Math.floor(options.now() / 1000)), ...(idToken ? { id_token: idToken } : {}) };
      return new URLSearchParams({ ...params, hmac: await signQuery(params, options.clientSecret) }).toString();
    },
    expireAccessToken(token: string) {
      const t = accessTokens.get(token);
      if (t) t.expiresAt = 0;
    },
    tokenCalls: () => fake.calls.filter((c) => c.path === '/admin/oauth/token'),
  };
}
