import { describe, expect, it } from 'vitest';
import { createAdminClient } from '../src/api/create-admin-client.ts';
import { CODED_SINCE_VERSION, unwrapSuccess } from '../src/api/success-envelope.ts';
import { fakeFetch, json, type RecordedCall } from './support/fake-fetch.ts';

const items = Array.from({ length: 5 }, (_, i) => ({ id: String(i + 1) }));

// A platform of version 2026-10: every success body wrapped in {code: "Success", data}.
function coded(call: RecordedCall): Response {
  if (call.path.endsWith('/products/count')) return json({ code: 'Success', data: { count: items.length } });
  if (call.path.endsWith('/products/404')) return json({ code: 'NotFound', message: 'No product', request_id: 'r' }, 404);
  const limit = Number(call.search.get('limit') ?? 50);
  const start = call.search.has('cursor') ? Number(call.search.get('cursor')!.slice(1)) : 0;
  const data = items.slice(start, start + limit);
  const more = start + limit < items.length;
  return json({ code: 'Success', data: { data, cursor: more ? `c${start + limit}` : '', has_more: more } });
}

function client(version: string, handler: (c: RecordedCall) => Response) {
  const fake = fakeFetch(handler);
  return { fake, client: createAdminClient({ shop: 'demo.localhost', accessToken: 't', fetch: fake.fetch, apiVersion: version }) };
}

describe('the success envelope of API version 2026-10', () => {
  it('unwraps a coded body only under a coded version, and only a body that is one', () => {
    expect(CODED_SINCE_VERSION).toBe('2026-10');
    expect(unwrapSuccess('/openapi/2026-10/products', { code: 'Success', data: { data: [] } })).toEqual({ data: [] });
    expect(unwrapSuccess('/openapi/2026-01/products', { code: 'Success', data: { data: [] } })).toEqual({
      code: 'Success',
      data: { data: [] },
    });
    expect(unwrapSuccess('/openapi/2026-10/products', { data: [] })).toEqual({ data: [] });
    expect(unwrapSuccess('/openapi/2026-10/products', [1])).toEqual([1]);
    expect(unwrapSuccess('/openapi/2026-10/products', null)).toBeNull();
    expect(unwrapSuccess('/other', { code: 'Success', data: 1 })).toEqual({ code: 'Success', data: 1 });
  });

  it('get, request and pages read the bodies of earlier versions; errors stay typed', async () => {
    const { client: c, fake } = client('2026-10', coded);
    expect(await c.get('products/count')).toEqual({ count: 5 });
    expect((await c.request('GET', 'products/count')).data).toEqual({ count: 5 });
    const seen: string[] = [];
    for await (const item of c.paginate<{ id: string }>('products', { limit: 2 })) seen.push(item.id);
    expect(seen).toEqual(['1', '2', '3', '4', '5']);
    expect(fake.calls.map((call) => call.search.get('cursor'))).toEqual([null, null, null, 'c2', 'c4']);
    await expect(c.get('products/404')).rejects.toMatchObject({ name: 'NotFoundError' });
  });
});
