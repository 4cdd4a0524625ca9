// client.webhooks (fake fetch, no sockets): create sends filter and includeFields as the platform
// names them (include_fields); update sends only what it names, null removing; a 422 naming the
// filter comes back as a ValidationError; missing input is refused before any request.
import { describe, expect, it } from 'vitest';
import { createAdminClient } from '../src/api/create-admin-client.ts';
import { ParameterError, ValidationError, type WebhookSubscription, webhookSubscriptionBody } from '../src/index.ts';
import { fakeFetch, json } from './support/fake-fetch.ts';

const SUB: WebhookSubscription = {
  id: '5',
  address: 'https://app.example/hooks',
  topic: 'products/update',
  api_version: '2026-01',
  status: 'active',
  filter: 'status:active AND price:>=10',
  include_fields: ['id', 'title'],
  created_at: '2026-11-20T09:00:00.000Z',
  updated_at: '2026-11-20T09:00:00.000Z',
};

describe('client.webhooks', () => {
  it('creates, updates, gets, lists and deletes with filter and includeFields', async () => {
    const fake = fakeFetch((call) => {
      if (call.path === '/openapi/2026-01/webhooks' && call.method === 'POST') return json({ data: SUB }, 201);
      if (call.path === '/openapi/2026-01/webhooks' && call.method === 'GET') return json({ data: [SUB], cursor: '', has_more: false });
      if (call.path === '/openapi/2026-01/webhooks/5' && call.method === 'PUT') return json({ data: { ...SUB, filter: null } });
      if (call.path === '/openapi/2026-01/webhooks/5' && call.method === 'GET') return json({ data: SUB });
      if (call.path === '/openapi/2026-01/webhooks/5' && call.method === 'DELETE') return json({});
      return json({ code: 'NotFound', message: 'no', request_id: 'r' }, 404);
    });
    const client = createAdminClient({ shop: 'demo.localhost', accessToken: 't', fetch: fake.fetch, apiVersion: '2026-01' });
    const made = await client.webhooks.create({
      address: SUB.address,
      topic: SUB.topic,
      filter: SUB.filter,
      includeFields: ['id', 'title'],
    });
    expect(made).toEqual(SUB);
    expect(JSON.parse(fake.calls[0]!.body!)).toEqual({
      address: SUB.address,
      topic: SUB.topic,
      filter: 'status:active AND price:>=10',
      include_fields: ['id', 'title'],
    });
    const changed = await client.webhooks.update('5', { filter: null, includeFields: ['id'] }, { ifMatch: '"5-1"' });
    expect(changed.filter).toBeNull();
    const put = fake.calls[1]!;
    expect(JSON.parse(put.body!)).toEqual({ filter: null, include_fields: ['id'] });
    expect(put.headers.get('if-match')).toBe('"5-1"');
    expect(await client.webhooks.get('5')).toEqual(SUB);
    const listed: WebhookSubscription[] = [];
    for await (const s of client.webhooks.list()) listed.push(s);
    expect(listed).toEqual([SUB]);
    await client.webhooks.delete('5');
    expect(fake.calls.at(-1)!.method).toBe('DELETE');
  });

  it('a 422 naming the filter is a ValidationError; bad input is refused before any request', async () => {
    const fake = fakeFetch(() =>
      json(
        {
          code: 'ValidationFailed',
          message: 'Validation failed',
          request_id: 'r',
          errors: { filter: ['unknown field "colour": products have id, title at position 1'] },
        },
        422,
      ),
    );
    const client = createAdminClient({
      shop: 'demo.localhost',
      accessToken: 't',
      fetch: fake.fetch,
      apiVersion: '2026-01',
      retry: { maxRetries: 0 },
    });
    const err = await client.webhooks.create({ address: SUB.address, topic: 'products/create', filter: 'colour:red' }).catch((e) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(JSON.stringify(err)).toContain('colour');
    const calls = fake.calls.length;
    await expect(client.webhooks.update('5', {})).rejects.toBeInstanceOf(ParameterError);
    await expect(client.webhooks.create({ topic: 'products/create' } as never)).rejects.toBeInstanceOf(ParameterError);
    expect(fake.calls.length).toBe(calls);
  });

  it('webhookSubscriptionBody leaves out what is not given', () => {
    expect(webhookSubscriptionBody({ address: 'https://a.example' })).toEqual({ address: 'https://a.example' });
    expect(webhookSubscriptionBody({ includeFields: null })).toEqual({ include_fields: null });
  });
});
