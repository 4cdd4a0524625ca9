// client.events(): the platform's events list as an async iterator over pages (fake fetch, no
// sockets): query parameters, pages followed to the end, resuming, version and input checks.
import { describe, expect, it } from 'vitest';
import { createAdminClient } from '../src/api/create-admin-client.ts';
import { eventsPagination, hasEvents, type WebhookEventEntry } from '../src/index.ts';
import { fakeFetch, json, type RecordedCall } from './support/fake-fetch.ts';

const entries: WebhookEventEntry[] = Array.from({ length: 5 }, (_, i) => ({
  webhook_id: `wh_${i}`,
  event_id: `evt_${i}`,
  topic: i % 2 === 0 ? 'products/create' : 'orders/create',
  created_at: new Date(Date.UTC(2026, 10, 20, 9, i)).toISOString(),
  api_version: '2026-01',
  status: i === 4 ? 'pending' : 'delivered',
  attempts: i === 4 ? 0 : 1,
  payload: { id: String(i) },
}));

// Cursors are "c<index of the next entry>", as opaque to the client as the platform's.
function platform(call: RecordedCall): Response {
  if (call.path !== '/openapi/2026-01/events') return json({ code: 'NotFound', message: 'Not found', request_id: 'r' }, 404);
  const limit = Number(call.search.get('limit') ?? 50);
  const start = call.search.has('cursor') ? Number(call.search.get('cursor')!.slice(1)) : 0;
  const topic = call.search.get('topic');
  const matching = entries.filter((e) => topic === null || e.topic === topic);
  const data = matching.slice(start, start + limit);
  const more = start + limit < matching.length;
  return json({ data, cursor: more ? `c${start + limit}` : '', has_more: more });
}

function client(version = '2026-01') {
  const fake = fakeFetch(platform);
  return { fake, client: createAdminClient({ shop: 'demo.localhost', accessToken: 't', fetch: fake.fetch, apiVersion: version }) };
}

describe('client.events()', () => {
  it('iterates every entry across pages with for await, sending limit and cursor', async () => {
    const { client: c, fake } = client();
    const seen: string[] = [];
    for await (const event of c.events({ limit: 2 })) seen.push(event.webhook_id);
    expect(seen).toEqual(['wh_0', 'wh_1', 'wh_2', 'wh_3', 'wh_4']);
    expect(fake.calls.map((x) => `${x.path}?${x.search}`)).toEqual([
      '/openapi/2026-01/events?limit=2',
      '/openapi/2026-01/events?limit=2&cursor=c2',
      '/openapi/2026-01/events?limit=2&cursor=c4',
    ]);
    expect(fake.calls[0]!.headers.get('access-token')).toBe('t');
  });

  it('sends topic and created_at_min (a Date, unix ms, or an ISO string kept as written)', async () => {
    const { client: c, fake } = client();
    const found = await c.events({ topic: 'products/create', createdAtMin: new Date(Date.UTC(2026, 10, 20)) }).toArray();
    expect(found.map((e) => e.webhook_id)).toEqual(['wh_0', 'wh_2', 'wh_4']);
    expect(Object.fromEntries(fake.calls[0]!.search)).toEqual({ topic: 'products/create', created_at_min: '2026-11-20T00:00:00.000Z' });
    await c.events({ createdAtMin: Date.UTC(2026, 10, 21) }).toArray();
    expect(fake.calls[1]!.search.get('created_at_min')).toBe('2026-11-21T00:00:00.000Z');
    await c.events({ createdAtMin: '2026-11-20T10:00:00+01:00' }).toArray();
    expect(fake.calls[2]!.search.get('created_at_min')).toBe('2026-11-20T10:00:00+01:00');
  });

  it('reconciles after downtime by webhook_id, resuming from a saved cursor', async () => {
    const { client: c } = client();
    const handled = new Set(['wh_0', 'wh_1']);
    const iterator = c.events({ limit: 3 });
    const handledNow: string[] = [];
    let resumeAt: string | null | undefined;
    for await (const event of iterator) {
      if (handled.has(event.webhook_id)) continue;
      handled.add(event.webhook_id);
      handledNow.push(event.webhook_id);
      if (event.webhook_id === 'wh_2') {
        resumeAt = iterator.page?.cursor;
        break;
      }
    }
    expect(handledNow).toEqual(['wh_2']);
    const rest = await c.events({ limit: 3, cursor: resumeAt ?? null }).toArray();
    expect(rest.map((e) => e.webhook_id)).toEqual(['wh_3', 'wh_4']);
  });

  it('stops after maxPages and honours an aborted signal', async () => {
    const { client: c, fake } = client();
    expect(await c.events({ limit: 1, maxPages: 2 }).toArray()).toHaveLength(2);
    expect(fake.calls).toHaveLength(2);
    const abort = new AbortController();
    abort.abort();
    await expect(c.events({ signal: abort.signal }).toArray()).rejects.toMatchObject({ code: 'REQUEST_ABORTED' });
  });

  it('refuses, before any request, a client pinned to a version without events and malformed options', async () => {
    for (const version of ['2022-01', '2025-06']) {
      const { client: c, fake } = client(version);
      expect(() => c.events()).toThrow(expect.objectContaining({ code: 'PARAMETER_INVALID', parameter: 'apiVersion' }));
      expect(() => c.events()).toThrow(`events needs API version 2026-01 or later; this client uses ${version}`);
      expect(fake.calls).toHaveLength(0);
    }
    const { client: c, fake } = client();
    for (const [options, parameter] of [
      [{ topic: 'products' }, 'topic'],
      [{ topic: 'products/create&limit=1' }, 'topic'],
      [{ createdAtMin: 'yesterday' }, 'createdAtMin'],
      [{ createdAtMin: '2026-11-20' }, 'createdAtMin'],
      [{ createdAtMin: '2026-11-20T10:00:00' }, 'createdAtMin'],
      [{ createdAtMin: new Date('nonsense') }, 'createdAtMin'],
      [{ createdAtMin: Number.NaN }, 'createdAtMin'],
    ] as const) {
      expect(() => c.events(options), JSON.stringify(options)).toThrow(expect.objectContaining({ code: 'PARAMETER_INVALID', parameter }));
    }
    expect(fake.calls).toHaveLength(0);
  });

  it('exposes the version rule and the query it builds', () => {
    expect([hasEvents('2022-01'), hasEvents('2025-06'), hasEvents('2026-01'), hasEvents('2027-04'), hasEvents('latest')]).toEqual([
      false,
      false,
      true,
      true,
      false,
    ]);
    expect(eventsPagination('2026-01', { topic: 'orders/create', limit: 10 })).toEqual({
      query: { topic: 'orders/create' },
      pagination: 'has_more',
      limit: 10,
    });
  });
});
