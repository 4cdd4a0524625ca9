// A configured app plus the fake platform, shared by the adapter tests.
import { createApp } from '../../src/app.ts';
import type { AppConfig } from '../../src/config/app-config.ts';
import { memorySessionStorage } from '../../src/session/memory-session-storage.ts';
import { signWebhook } from '../../src/signature/webhook-signature.ts';
import { frozenClock } from './fake-fetch.ts';
import { fakePlatform } from './fake-platform.ts';

export const SECRET = 'adapter-secret';
export const SHOP = 'demo.localhost';
export const REDIRECT = 'http://localhost:3000/auth/callback';

export function adapterFixture(extra: Partial<AppConfig> = {}) {
  const clock = frozenClock(Date.now());
  const platform = fakePlatform({ clientId: 'cid', clientSecret: SECRET, redirectUri: REDIRECT, now: clock.now });
  const sessionStorage = memorySessionStorage();
  const app = createApp({
    clientId: 'cid',
    clientSecret: SECRET,
    scopes: 'read_products',
    redirectUri: REDIRECT,
    fetch: platform.fetch,
    clock,
    sessionStorage,
    ...extra,
  });
  const webhook = async (body = '{"id":"P1","title":"Hat"}') => ({
    body,
    headers: {
      'content-type': 'application/json',
      'x-service-hmac-sha256': await signWebhook(body, SECRET),
      'x-service-topic': 'products/create',
      'x-service-shop-domain': SHOP,
      'x-service-webhook-id': 'wh-1',
    },
  });
  return { app, platform, sessionStorage, webhook };
}

/** Splits a Set-Cookie value into its cookie pair. */
export function cookiePair(setCookie: string | null | undefined): string {
  return (setCookie ?? '').split(';')[0] ?? '';
}
