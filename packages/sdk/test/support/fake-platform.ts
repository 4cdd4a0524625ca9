// A small in-memory stand-in for the platform's OAuth and Admin API endpoints, behind fakeFetch.
import { signQuery } from '../../src/signature/query-signature.ts';
import { fakeFetch, json, type RecordedCall } from './fake-fetch.ts';

export interface FakePlatformOptions {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  now: () => number;
  accessTokenLifetime?: number;
}

export function fakePlatform(options: FakePlatformOptions) {
  let counter = 0;
  const codes = new Map<string, string>(); // code -> shop
  const refreshTokens = new Map<string, string>(); // refresh -> shop
  const accessTokens = new Map<string, { shop: string; expiresAt: number }>();
  const lifetime = options.accessTokenLifetime ?? 3600;
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
        if (codes.get(body['code'] ?? '') !== shop || body['redirect_uri'] !== options.redirectUri)
          return json({ error: 'invalid_grant', error_description: 'bad code' }, 400);
        codes.delete(body['code'] ?? '');
        return json(issue(shop));
      }
      if (body['grant_type'] === 'refresh_token') {
        if (refreshTokens.get(body['refresh_token'] ?? '') !== shop) return json({ error: 'invalid_grant' }, 400);
        refreshTokens.delete(body['refresh_token'] ?? '');
        return json(issue(shop));
      }
      return json({ error: 'unsupported_grant_type' }, 400);
    }
    if (call.path.startsWith('/openapi/')) {
      const token = accessTokens.get(call.headers.get('access-token') ?? '');
      if (!token || token.shop !== shop || token.expiresAt <= options.now() / 1000) {
        return json({ code: 'Unauthorized', message: 'bad token', request_id: 'req-401' }, 401, { 'x-request-id': 'req-401' });
      }
      return json({ data: [{ id: '1', title: 'Hat' }], cursor: '', has_more: false }, 200, {
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
    async redirectQuery(shop: string, state: string, extra: Record<string, string> = {}): Promise<string> {
      const code = `sg_ac_code${++counter}`;
      codes.set(code, shop);
      const params = { code, shop, state, timestamp: String(Math.floor(options.now() / 1000)), ...extra };
      const hmac = await signQuery(params, options.clientSecret);
      return `${new URLSearchParams({ ...params, hmac }).toString()}`;
    },
    async installQuery(shop: string): Promise<string> {
      const params = { shop, timestamp: String(Math.floor(options.now() / 1000)) };
      return new URLSearchParams({ ...params, hmac: await signQuery(params, options.clientSecret) }).toString();
    },
    expireAccessToken(token: string) {
      const t = accessTokens.get(token);
      if (t) t.expiresAt = 0;
    },
    tokenCalls: () => fake.calls.filter((c) => c.path === '/admin/oauth/token'),
  };
}
