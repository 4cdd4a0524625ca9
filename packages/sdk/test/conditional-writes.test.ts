// ETags and conditional writes in the Admin API client, against a fake fetch: the ETag of an
// answer, If-Match sent from `ifMatch` (on every retry of the call, with the same Idempotency-Key),
// 412 as PreconditionFailedError and an expected-inventory 409 as InventoryConflictError carrying
// the stored quantity, neither retried.
import { describe, expect, it } from 'vitest';
import { createAdminClient } from '../src/api/create-admin-client.ts';
import { ApiError, ERROR_CODES, InventoryConflictError, PreconditionFailedError } from '../src/index.ts';
import { fakeFetch, fixedRandom, frozenClock, json, recordingSleep, type FakeHandler } from './support/fake-fetch.ts';

function client(handler: FakeHandler) {
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
  });
  return { client: c, fake, delays };
}

describe('conditional writes', () => {
  it('getWithEtag returns the record and its ETag; request() surfaces the ETag of any answer', async () => {
    const { client: c } = client(async () => json({ data: { id: '5', title: 'Hat' } }, 200, { etag: '"5-2"' }));
    const read = await c.getWithEtag<{ data: { title: string } }>('products/5');
    expect(read).toEqual({ data: { data: { id: '5', title: 'Hat' } }, etag: '"5-2"' });
    expect((await c.request('GET', 'products/5')).etag).toBe('"5-2"');
    const { client: bare } = client(async () => json({ data: [] }));
    expect((await bare.getWithEtag('products')).etag).toBeUndefined();
  });

  it('ifMatch is sent as If-Match on put, patch and delete, and never without the option', async () => {
    const { client: c, fake } = client(async () => json({ data: {} }, 200, { etag: '"5-3"' }));
    await c.put('products/5', { title: 'Cap' }, { ifMatch: '"5-2"' });
    await c.patch('products/5', { title: 'Cap' }, { ifMatch: '*' });
    await c.delete('products/5', { ifMatch: '"5-3"' });
    await c.put('products/5', { title: 'Cap' });
    expect(fake.calls.map((call) => [call.method, call.headers.get('if-match')])).toEqual([
      ['PUT', '"5-2"'],
      ['PATCH', '*'],
      ['DELETE', '"5-3"'],
      ['PUT', null],
    ]);
  });

  it('a retried conditional write sends the same If-Match and Idempotency-Key, so the platform replays the first answer', async () => {
    let n = 0;
    const { client: c, fake } = client(async () => {
      n++;
      if (n === 1) throw new TypeError('socket hang up');
      return json({ data: { id: '5' } }, 200, { etag: '"5-3"', 'idempotent-replayed': 'true' });
    });
    const res = await c.request('PUT', 'products/5', { body: { title: 'Cap' }, ifMatch: '"5-2"' });
    expect(res).toMatchObject({ etag: '"5-3"', replayed: true });
    expect(fake.calls).toHaveLength(2);
    expect(new Set(fake.calls.map((call) => call.headers.get('if-match')))).toEqual(new Set(['"5-2"']));
    const sentKeys = fake.calls.map((call) => call.headers.get('idempotency-key'));
    expect(sentKeys[0]).toBeTruthy();
    expect(sentKeys[1]).toBe(sentKeys[0]);
  });

  it('412 is a PreconditionFailedError with a stable code, thrown at once', async () => {
    const {
      client: c,
      fake,
      delays,
    } = client(async () =>
      json({ code: 'PreconditionFailed', message: 'The product changed since the ETag in If-Match was read', request_id: 'r1' }, 412),
    );
    const error = await c.put('products/5', { title: 'Cap' }, { ifMatch: '"5-2"' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PreconditionFailedError);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'PRECONDITION_FAILED', status: 412, platformCode: 'PreconditionFailed', requestId: 'r1' });
    expect((error as Error).message).toMatch(/PUT \/openapi\/2026-01\/products\/5: 412 precondition failed/);
    expect(fake.calls).toHaveLength(1);
    expect(delays).toEqual([]);
    expect(ERROR_CODES.api).toContain('PRECONDITION_FAILED');
  });

  it('an expected-inventory 409 is an InventoryConflictError carrying the stored quantity; other 409s stay ApiError', async () => {
    const { client: c, fake } = client(async () =>
      json({ code: 'InventoryQuantityMismatch', message: 'The inventory quantity is 3', request_id: 'r2', inventory_quantity: 3 }, 409),
    );
    const error = await c.patch('products/5', { inventory_quantity: 4, expected_inventory_quantity: 5 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InventoryConflictError);
    expect(error).toMatchObject({ code: 'INVENTORY_QUANTITY_MISMATCH', status: 409, actualQuantity: 3 });
    expect(fake.calls).toHaveLength(1);

    const { client: other } = client(async () => json({ code: 'Conflict', message: 'changed while running' }, 409));
    const plain = await other.put('products/5', {}).catch((e: unknown) => e);
    expect(plain).toBeInstanceOf(ApiError);
    expect(plain).not.toBeInstanceOf(InventoryConflictError);
    expect(plain).toMatchObject({ code: 'HTTP_ERROR', status: 409 });
  });
});
