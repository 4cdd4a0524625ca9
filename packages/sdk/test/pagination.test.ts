import { describe, expect, it } from 'vitest';
import { createAdminClient } from '../src/api/create-admin-client.ts';
import { fakeFetch, json, type RecordedCall } from './support/fake-fetch.ts';

const SHOP = 'demo.localhost';
const items = Array.from({ length: 7 }, (_, i) => ({ id: String(i + 1) }));

// Cursors are "c<index of first item of the page>".
function newer(call: RecordedCall): Response {
  const limit = Number(call.search.get('limit') ?? 50);
  const start = call.search.has('cursor') ? Number(call.search.get('cursor')!.slice(1)) : 0;
  const data = items.slice(start, start + limit);
  const more = start + limit < items.length;
  return json({ data, cursor: more ? `c${start + limit}` : '', has_more: more });
}

function older(call: RecordedCall): Response {
  const limit = Number(call.search.get('limit') ?? 50);
  let start: number;
  if (call.search.has('pre_cursor')) start = Math.max(0, Number(call.search.get('pre_cursor')!.slice(1)) - limit);
  else start = call.search.has('cursor') ? Number(call.search.get('cursor')!.slice(1)) : 0;
  const data = items.slice(start, start + limit);
  return json({ data, cursor: start + limit < items.length ? `c${start + limit}` : '', pre_cursor: start === 0 ? null : `c${start}` });
}

function client(version: string, handler: (c: RecordedCall) => Response, pagination?: 'has_more' | 'pre_cursor') {
  const fake = fakeFetch(handler);
  return {
    fake,
    client: createAdminClient({
      shop: SHOP,
      accessToken: 't',
      fetch: fake.fetch,
      apiVersion: version,
      ...(pagination ? { pagination } : {}),
    }),
  };
}

describe('newer convention (2026-01: cursor + has_more)', () => {
  it('iterates every item across pages with limit and cursor', async () => {
    const { client: c, fake } = client('2026-01', newer);
    const seen: string[] = [];
    for await (const item of c.paginate<{ id: string }>('products', { limit: 3 })) seen.push(item.id);
    expect(seen).toEqual(['1', '2', '3', '4', '5', '6', '7']);
    expect(fake.calls.map((x) => x.search.toString())).toEqual(['limit=3', 'limit=3&cursor=c3', 'limit=3&cursor=c6']);
  });
  it('pages expose data, cursor, hasMore and the cursor they were fetched with', async () => {
    const { client: c } = client('2026-01', newer);
    const pages = await c.pages('products', { limit: 3 }).toArray();
    expect(pages.map((p) => [p.data.length, p.cursor, p.hasMore, p.requestCursor, p.preCursor])).toEqual([
      [3, 'c3', true, null, null],
      [3, 'c6', true, 'c3', null],
      [1, null, false, 'c6', null],
    ]);
  });
  it('resumes from a saved cursor', async () => {
    const { client: c } = client('2026-01', newer);
    const rest = await c.paginate<{ id: string }>('products', { limit: 3, cursor: 'c3' }).toArray();
    expect(rest.map((i) => i.id)).toEqual(['4', '5', '6', '7']);
  });
  it('toArray({ max }) stops fetching once it has enough', async () => {
    const { client: c, fake } = client('2026-01', newer);
    expect((await c.paginate('products', { limit: 3 }).toArray({ max: 4 })).length).toBe(4);
    expect(fake.calls).toHaveLength(2);
    expect((await c.pages('products', { limit: 3 }).toArray({ max: 1 })).length).toBe(1);
  });
  it('exposes the current page while iterating items', async () => {
    const { client: c } = client('2026-01', newer);
    const iterator = c.paginate<{ id: string }>('products', { limit: 3 });
    const cursors: Array<string | null | undefined> = [];
    for await (const item of iterator) if (item.id === '4') cursors.push(iterator.page?.requestCursor, iterator.page?.cursor);
    expect(cursors).toEqual(['c3', 'c6']);
  });
  it('refuses backward pagination', () => {
    const { client: c } = client('2026-01', newer);
    expect(() => c.pages('products', { direction: 'backward', cursor: 'c3' })).toThrow(
      expect.objectContaining({ code: 'PARAMETER_INVALID' }),
    );
  });
});

describe('older convention (2022-01: cursor + pre_cursor)', () => {
  it('stops at the empty cursor of the last page; pre_cursor is null on the first page', async () => {
    const { client: c, fake } = client('2022-01', older);
    const pages = await c.pages<{ id: string }>('products', { limit: 3 }).toArray();
    expect(pages.map((p) => [p.data.map((i) => i.id).join(''), p.cursor, p.preCursor, p.hasMore])).toEqual([
      ['123', 'c3', null, true],
      ['456', 'c6', 'c3', true],
      ['7', null, 'c6', false],
    ]);
    expect(fake.calls[0]!.url).toContain('/openapi/2022-01/products');
  });
  it('goes backwards from a pre_cursor', async () => {
    const { client: c, fake } = client('2022-01', older);
    const pages = await c.pages<{ id: string }>('products', { limit: 3, direction: 'backward', cursor: 'c6' }).toArray();
    expect(pages.map((p) => p.data.map((i) => i.id).join(''))).toEqual(['456', '123']);
    expect(fake.calls.map((x) => x.search.get('pre_cursor'))).toEqual(['c6', 'c3']);
    expect(pages[1]!.hasMore).toBe(false);
  });
  it('needs a starting cursor to go backwards', () => {
    const { client: c } = client('2022-01', older);
    expect(() => c.pages('products', { direction: 'backward' })).toThrow(expect.objectContaining({ code: 'PARAMETER_MISSING' }));
  });
  it('the convention can be overridden', async () => {
    const { client: c } = client('2026-01', older, 'pre_cursor');
    const pages = await c.pages('products', { limit: 3, direction: 'backward', cursor: 'c3' }).toArray();
    expect(pages).toHaveLength(1);
  });
});
