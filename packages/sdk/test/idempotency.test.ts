// Idempotency-Key in the Admin API client, against a fake fetch: a key on every write, the same on
// every retry of one call, the caller's own key, writes retried after ambiguous failures only with
// a key, `replayed` read from Idempotent-Replayed, and the switch that turns keys off.
import { describe, expect, it } from 'vitest';
import { createAdminClient } from '../src/api/create-admin-client.ts';
import { idempotencyKeyFor } from '../src/api/retry-policy.ts';
import { createApp } from '../src/app.ts';
import { fakeFetch, fixedRandom, frozenClock, json, recordingSleep, type FakeHandler } from './support/fake-fetch.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function client(handler: FakeHandler, retry: { maxRetries?: number; idempotencyKeys?: boolean } = {}) {
  const fake = fakeFetch(handler);
  const { sleep, delays } = recordingSleep();
  const c = createAdminClient({
    shop: 'demo.localhost',
    accessToken: 'sg_pt_test',
    fetch: fake.fetch,
    sleep,
    clock: frozenClock(1_700_000_000_000),
    randomBytes: fixedRandom(),
    callLimit: false,
    retry,
  });
  return { client: c, fake, delays };
}

const keys = (calls: { headers: Headers }[]) => calls.map((c) => c.headers.get('idempotency-key'));

describe('Idempotency-Key', () => {
  it('every write gets a random UUID key; reads get none', async () => {
    const { client: c, fake } = client(async () => json({ data: {} }));
    await c.post('products', { title: 'Hat' });
    await c.put('products/1', { title: 'Cap' });
    await c.request('PATCH', 'products/1', { body: { title: 'Cap' } });
    await c.delete('products/1');
    await c.get('products/1');
    const sent = keys(fake.calls);
    for (const k of sent.slice(0, 4)) expect(k).toMatch(UUID);
    expect(new Set(sent.slice(0, 4)).size).toBe(4);
    expect(sent[4]).toBeNull();
  });

  it('a POST is retried after network errors and 5xx with the same key, and the replayed answer is surfaced', async () => {
    let n = 0;
    const {
      client: c,
      fake,
      delays,
    } = client(async () => {
      n++;
      if (n === 1) throw new TypeError('socket hang up');
      if (n === 2) return new Response('oops', { status: 500 });
      if (n === 3) return json({ code: 'IdempotencyKeyInUse', message: 'in progress' }, 409);
      return json({ data: { id: '7' } }, 201, { 'idempotent-replayed': 'true', 'x-request-id': 'req-4' });
    });
    const res = await c.request('POST', 'products', { body: { title: 'Hat' } });
    expect(res).toMatchObject({ status: 201, data: { data: { id: '7' } }, replayed: true, requestId: 'req-4' });
    expect(fake.calls).toHaveLength(4);
    expect(delays).toHaveLength(3);
    const sent = keys(fake.calls);
    expect(sent[0]).toMatch(UUID);
    expect(new Set(sent)).toEqual(new Set([sent[0]]));
    expect(res.idempotencyKey).toBe(sent[0]);
  });

  it("the caller's key is sent as is on every attempt, from the option or from headers", async () => {
    let n = 0;
    const { client: c, fake } = client(async () => (++n % 2 === 1 ? new Response('x', { status: 503 }) : json({ data: {} }, 201)));
    const res = await c.request('POST', 'orders', { body: { email: 'a@b.test' }, idempotencyKey: 'checkout-42' });
    expect(res.replayed).toBe(false);
    expect(res.idempotencyKey).toBe('checkout-42');
    await c.post('orders', {}, { headers: { 'idempotency-key': 'from-header' } });
    expect(keys(fake.calls)).toEqual(['checkout-42', 'checkout-42', 'from-header', 'from-header']);
    // One header, not the caller's and a generated one side by side.
    expect(fake.calls[2]!.headers.get('idempotency-key')).toBe('from-header');
  });

  it('without a key a POST is not retried after a 5xx or a network error; other errors are never retried', async () => {
    const failing = client(async () => new Response('x', { status: 503 }));
    await expect(failing.client.post('products', {}, { idempotencyKey: false })).rejects.toMatchObject({ code: 'SERVER_ERROR' });
    expect(failing.fake.calls).toHaveLength(1);
    expect(failing.fake.calls[0]!.headers.get('idempotency-key')).toBeNull();
    const reused = client(async () => json({ code: 'IdempotencyKeyReused', message: 'other request' }, 422));
    await expect(reused.client.post('products', {})).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      platformCode: 'IdempotencyKeyReused',
    });
    expect(reused.fake.calls).toHaveLength(1);
    const conflict = client(async () => json({ code: 'Conflict', message: 'state' }, 409));
    await expect(conflict.client.post('products', {})).rejects.toMatchObject({ code: 'HTTP_ERROR', status: 409 });
    expect(conflict.fake.calls).toHaveLength(1);
  });

  it('retry.idempotencyKeys: false sends no keys and retries writes as before', async () => {
    const { client: c, fake } = client(async () => new Response('x', { status: 502 }), { idempotencyKeys: false });
    await expect(c.post('products', {})).rejects.toMatchObject({ status: 502 });
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]!.headers.get('idempotency-key')).toBeNull();
  });

  it('createApp validates retry.idempotencyKeys', () => {
    const base = { clientId: 'cid', clientSecret: 'secret', scopes: 'read_products', redirectUri: 'https://app.example/cb' };
    expect(() => createApp({ ...base, retry: { idempotencyKeys: 'yes' as unknown as boolean } })).toThrow(
      'retry.idempotencyKeys must be true or false',
    );
    expect(() => createApp({ ...base, retry: { idempotencyKeys: false } })).not.toThrow();
  });

  it('idempotencyKeyFor picks the caller key, then the header, then a new one for writes', () => {
    expect(idempotencyKeyFor('POST', { idempotencyKey: 'mine' }, true)).toBe('mine');
    expect(idempotencyKeyFor('DELETE', { headers: { 'Idempotency-Key': 'hdr' } }, false)).toBe('hdr');
    expect(idempotencyKeyFor('PATCH', {}, true)).toMatch(UUID);
    expect(idempotencyKeyFor('PATCH', {}, false)).toBeUndefined();
    expect(idempotencyKeyFor('POST', { idempotencyKey: false, headers: { 'idempotency-key': 'x' } }, true)).toBeUndefined();
    expect(idempotencyKeyFor('GET', {}, true)).toBeUndefined();
  });
});
