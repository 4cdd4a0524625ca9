import { describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { ConfigError } from '../src/errors.ts';
import type { AppConfig } from '../src/config/app-config.ts';

const base: AppConfig = {
  clientId: 'cid',
  clientSecret: 'secret',
  scopes: 'read_products',
  redirectUri: 'https://app.example/auth/callback',
};

describe('createApp config', () => {
  it('names every unknown key and missing value in one ConfigError', () => {
    const error = (() => {
      try {
        createApp({ clientId: '', scopes: 'read_products', typo: 1, apiVersoin: 'x' } as unknown as AppConfig);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe('CONFIG_INVALID');
    expect((error as ConfigError).problems).toEqual(
      expect.arrayContaining([
        'unknown key "typo"',
        'unknown key "apiVersoin"',
        'clientId is required',
        'redirectUri is required',
        'clientSecret is required',
      ]),
    );
  });
  it('refuses bad values', () => {
    const bad = (patch: Record<string, unknown>) => () => createApp({ ...base, ...patch } as AppConfig);
    expect(bad({ redirectUri: 'https://a.example/cb#x' })).toThrow(/must not contain "#"/);
    expect(bad({ scopes: 'read_products fly_away' })).toThrow(/fly_away/);
    expect(bad({ apiVersion: '2026' })).toThrow(/YYYY-MM/);
    expect(bad({ storeDomain: 'Bad Domain' })).toThrow(/storeDomain/);
    expect(bad({ retry: { maxRetries: -1 } })).toThrow(/retry.maxRetries/);
    expect(bad({ retry: { tries: 3 } })).toThrow(/retry.tries/);
    expect(bad({ clientSecret: [] })).toThrow(/clientSecret/);
    expect(bad({ sessionStorage: {} })).toThrow(/sessionStorage must implement get/);
    expect(bad({ requestTimeoutMs: 0 })).toThrow(/requestTimeoutMs/);
  });
  it('fills in documented defaults', () => {
    const app = createApp(base);
    expect(app.settings).toMatchObject({
      storeDomain: 'localhost',
      apiVersion: '2026-01',
      headerPrefix: 'X-Service-',
      stateCookieName: 'storegate_state',
      scopes: ['read_products'],
    });
    expect(app.client('demo.localhost').url('products')).toBe('http://demo.localhost:8080/openapi/2026-01/products');
    const prod = createApp({ ...base, storeDomain: 'example-shops.com', scopes: ['read_products', 'write_orders'] });
    expect(prod.client('acme.example-shops.com').url('products', { limit: 5 })).toBe(
      'https://acme.example-shops.com/openapi/2026-01/products?limit=5',
    );
  });
  it('takes the API origin as a template or a function', () => {
    expect(
      createApp({ ...base, apiOrigin: 'http://{shop}:9000' })
        .client('demo.localhost')
        .url('orders'),
    ).toBe('http://demo.localhost:9000/openapi/2026-01/orders');
    expect(
      createApp({ ...base, apiOrigin: () => 'http://127.0.0.1:1' })
        .client('demo.localhost')
        .url('/admin/x'),
    ).toBe('http://127.0.0.1:1/admin/x');
  });
  it('refuses a client for an invalid shop (no request to arbitrary hosts)', () => {
    expect(() => createApp(base).client('evil.com')).toThrow(expect.objectContaining({ code: 'SHOP_INVALID' }));
  });
});
