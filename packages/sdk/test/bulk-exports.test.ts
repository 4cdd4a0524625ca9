// client.bulk (fake fetch, no sockets): start sends the wrapped body without an Idempotency-Key;
// wait polls with growing pauses, reports progress and waits out a 429's Retry-After; rows parses
// the JSON Lines file and resumes a broken download with Range and If-Range where it stopped.
import { describe, expect, it } from 'vitest';
import { createAdminClient } from '../src/api/create-admin-client.ts';
import type { BulkOperation } from '../src/index.ts';
import { fakeFetch, json, type RecordedCall, recordingSleep } from './support/fake-fetch.ts';

const ROWS = Array.from({ length: 40 }, (_, i) => ({ id: String(i + 1), title: `Produit ${i + 1} é` }));
const FILE = new TextEncoder().encode(ROWS.map((r) => `${JSON.stringify(r)}\n`).join(''));
const URL_BASE = 'http://demo.localhost:8080/bulk_downloads/7?expires=1&signature=s';

function op(status: BulkOperation['status'], rows: number): BulkOperation {
  return {
    id: '7',
    status,
    resource: 'products',
    filters: {},
    fields: null,
    rows,
    bytes: status === 'completed' ? FILE.length : 0,
    error: null,
    snapshot_at: status === 'created' ? null : '2026-11-20T09:00:00.000Z',
    created_at: '2026-11-20T09:00:00.000Z',
    url: status === 'completed' ? URL_BASE : null,
  };
}

/** A body that sends `upTo` bytes of `bytes` and then breaks. */
function breaking(bytes: Uint8Array, upTo: number): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream({
    pull(controller) {
      if (sent) controller.error(new TypeError('socket hang up'));
      else controller.enqueue(bytes.subarray(0, upTo));
      sent = true;
    },
  });
}

describe('client.bulk', () => {
  it('starts, waits with progress through a 429, and reads every row once across a broken download', async () => {
    const states = [op('created', 0), op('running', 10), op('running', 30), op('completed', 40)];
    let polls = 0;
    let downloads = 0;
    const fake = fakeFetch((call: RecordedCall) => {
      if (call.method === 'POST' && call.path === '/openapi/2026-01/bulk_operations') return json({ data: op('created', 0) }, 202);
      if (call.path === '/openapi/2026-01/bulk_operations/7') {
        polls++;
        if (polls === 2) return json({ code: 'TooManyRequests', message: 'slow down', request_id: 'r' }, 429, { 'retry-after': '3' });
        return json({ data: states[Math.min(states.length - 1, Math.max(0, polls - 2))] });
      }
      if (call.path === '/bulk_downloads/7') {
        downloads++;
        if (downloads === 1) return new Response(breaking(FILE, 1001), { status: 200, headers: { etag: '"v1"' } });
        const from = Number(/^bytes=(\d+)-$/.exec(call.headers.get('range') ?? '')![1]);
        return new Response(FILE.subarray(from), { status: 206, headers: { etag: '"v1"' } });
      }
      return json({ code: 'NotFound', message: 'no', request_id: 'r' }, 404);
    });
    const sleep = recordingSleep();
    const client = createAdminClient({
      shop: 'demo.localhost',
      accessToken: 't',
      fetch: fake.fetch,
      apiVersion: '2026-01',
      sleep: sleep.sleep,
      retry: { maxRetries: 0 },
    });
    const started = await client.bulk.start({ resource: 'products', filters: { title: 'Hat' }, fields: ['id', 'title'] });
    expect(started.status).toBe('created');
    const post = fake.calls[0]!;
    expect(JSON.parse(post.body!)).toEqual({ bulk_operation: { resource: 'products', filters: { title: 'Hat' }, fields: 'id,title' } });
    expect(post.headers.has('idempotency-key')).toBe(false);
    const seen: number[] = [];
    const done = await client.bulk.wait('7', { onProgress: (o) => seen.push(o.rows), intervalMs: 100 });
    expect(done.status).toBe('completed');
    expect(seen).toEqual([0, 10, 30, 40]);
    // The 429's Retry-After is waited out without growing the pause between polls.
    expect(sleep.delays).toEqual([100, 3000, 150, 225]);
    const rows = [];
    for await (const row of client.bulk.rows('7')) rows.push(row);
    expect(rows).toEqual(ROWS);
    const ranged = fake.calls.filter((c) => c.path === '/bulk_downloads/7');
    expect(ranged).toHaveLength(2);
    expect(ranged[1]!.headers.get('range')).toBe('bytes=1001-');
    expect(ranged[1]!.headers.get('if-range')).toBe('"v1"');
  });

  it('refuses to read an operation that is not completed, and a file that changed under a resume', async () => {
    let downloads = 0;
    const fake = fakeFetch((call) => {
      if (call.path === '/openapi/2026-01/bulk_operations/8') return json({ data: { ...op('failed', 0), id: '8', error: 'scope lost' } });
      if (call.path === '/openapi/2026-01/bulk_operations/7') return json({ data: op('completed', 40) });
      downloads++;
      return downloads === 1
        ? new Response(breaking(FILE, 100), { status: 200, headers: { etag: '"v1"' } })
        : new Response(FILE, { status: 200 });
    });
    const client = createAdminClient({ shop: 'demo.localhost', accessToken: 't', fetch: fake.fetch, apiVersion: '2026-01' });
    await expect(client.bulk.rows('8').next()).rejects.toThrow(/failed, not completed/);
    const read: unknown[] = [];
    await expect(
      (async () => {
        for await (const row of client.bulk.rows('7')) read.push(row);
      })(),
    ).rejects.toThrow(/changed while it was being read/);
    expect(read).toEqual(ROWS.slice(0, 2));
  });
});
