// The cache of apps by client_id that PostgreSQL grants check their client on: bounded, the least
// recently used entry making room, and a client_id no app has is not kept.
import { describe, expect, it } from 'vitest';
import { AppRowCache, sameApp } from '../src/storage/app-row-cache.ts';
import type { AppRow } from '../src/storage/ports/rows.ts';

const app = (id: number, change: Partial<AppRow> = {}): AppRow => ({
  id,
  client_id: `client-${id}`,
  partner_id: null,
  name: `App ${id}`,
  app_url: 'https://app.example/',
  redirect_uri: 'https://app.example/callback',
  scopes: 'read_products',
  client_secret_enc: `sealed-${id}`,
  previous_secret_enc: null,
  previous_secret_expires_at: null,
  privacy_webhook_url: null,
  authorization_iss: 0,
  managed_install: 0,
  webhook_signature_ed25519: 0,
  ...change,
});

describe('AppRowCache', () => {
  it('holds at most its capacity; the entry used least recently goes first', () => {
    const cache = new AppRowCache(2);
    cache.set('client-1', app(1));
    cache.set('client-2', app(2));
    expect(cache.get('client-1')?.id).toBe(1);
    cache.set('client-3', app(3));
    expect(cache.get('client-2')).toBeUndefined();
    expect(cache.get('client-1')?.id).toBe(1);
    expect(cache.get('client-3')?.id).toBe(3);
  });

  it('a read that found no app forgets the client_id, and the room it took', () => {
    const cache = new AppRowCache(2);
    cache.set('client-1', app(1));
    cache.set('client-1', undefined);
    expect(cache.get('client-1')).toBeUndefined();
    // Two rows fit again: forgetting client-1 did not leave a slot taken.
    cache.set('client-2', app(2));
    cache.set('client-3', app(3));
    expect(cache.get('client-2')?.id).toBe(2);
    expect(cache.get('client-3')?.id).toBe(3);
  });

  it('sameApp: equal in every column the services see, a nullable column included', () => {
    expect(sameApp(app(1), app(1))).toBe(true);
    expect(sameApp(app(1), app(1, { redirect_uri: 'https://app.example/moved' }))).toBe(false);
    expect(sameApp(app(1), app(1, { previous_secret_enc: 'sealed-old', previous_secret_expires_at: 5 }))).toBe(false);
    expect(sameApp(app(1), app(1, { name: 'Renamed' }))).toBe(false);
  });
});
