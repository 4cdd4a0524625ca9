// client.webhooks (fake fetch, no sockets): enable and replay post to the subscription's own
// paths with the body the Admin API takes and no Idempotency-Key, a Date becomes an ISO time, and a
// bad id or a missing `since` is refused before any request.
import { describe, expect, it } from 'vitest';
import { createAdminClient } from '../src/api/create-admin-client.ts';
import { ParameterError, type ReplayResult, type WebhookSubscription } from '../src/index.ts';
import { fakeFetch, json, type RecordedCall } from './support/fake-fetch.ts';

const SUB: WebhookSubscription = {
  id: '42',
  address: 'https://app.example.test/hooks',
  topic: 'orders/create',
  api_version: '2026-01',
  status: 'active',
  filter: null,
  include_fields: null,
  created_at: '2026-11-20T09:00:00.000Z',
  updated_at: '2026-11-21T09:00:00.000Z',
};

const REPLAY: ReplayResult = {
  subscription_id: '42',
  since: '2026-11-20T00:00:00.000Z',
  status: 'failed',
  queued: 3,
  already_queued: 0,
  capped: false,
  next_since: null,
};

function client(handler: (call: RecordedCall) => Response) {
  const fake = fakeFetch(handler);
  return {
    fake,
    client: createAdminClient({
      shop: 'demo.localhost',
      accessToken: 't',
      fetch: fake.fetch,
      apiVersion: '2026-01',
      retry: { maxRetries: 0 },
    }),
  };
}

describe('client.webhooks', () => {
  it('enable and replay post to the subscription, without an Idempotency-Key', async () => {
    const { fake, client: c } = client((call) => (call.path.endsWith('/enable') ? json({ data: SUB }) : json({ data: REPLAY }, 202)));
    expect(await c.webhooks.enable('42')).toEqual(SUB);
    expect(await c.webhooks.replay(42, { since: new Date('2026-11-20T00:00:00Z') })).toEqual(REPLAY);
    await c.webhooks.replay('42', { since: '2026-11-20', status: 'all' });
    expect(fake.calls.map((x) => [x.method, x.path, JSON.parse(x.body!)])).toEqual([
      ['POST', '/openapi/2026-01/webhooks/42/enable', {}],
      ['POST', '/openapi/2026-01/webhooks/42/replay', { since: '2026-11-20T00:00:00.000Z' }],
      ['POST', '/openapi/2026-01/webhooks/42/replay', { since: '2026-11-20', status: 'all' }],
    ]);
    expect(fake.calls.every((x) => !x.headers.has('idempotency-key'))).toBe(true);
  });

  it('refuses a bad id or a missing since before sending anything', async () => {
    const { fake, client: c } = client(() => json({ data: SUB }));
    await expect(c.webhooks.enable('../products')).rejects.toBeInstanceOf(ParameterError);
    await expect(c.webhooks.replay('0', { since: '2026-11-20' })).rejects.toBeInstanceOf(ParameterError);
    await expect(c.webhooks.replay('42', { since: '' })).rejects.toMatchObject({ parameter: 'since' });
    await expect(c.webhooks.replay('42', { since: new Date('nope') })).rejects.toMatchObject({
      code: 'PARAMETER_INVALID',
      parameter: 'since',
    });
    expect(fake.calls).toHaveLength(0);
  });
});
