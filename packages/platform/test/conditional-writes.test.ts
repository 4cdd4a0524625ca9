// Conditional writes of the Admin API, on SQLite and PostgreSQL: the ETag of every record answer
// and how it changes (also for two writes within the same millisecond of the frozen clock),
// If-Match on PUT, PATCH and DELETE of every resource (match, stale, `*`, lists, weak and malformed
// tags), concurrent writers with the same tag, If-None-Match on GET, the expected inventory
// quantity of a product update, Idempotency-Key replays of conditional writes, and the OpenAPI
// entries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etagOf, noneMatchHits, parseIfMatch } from '../src/domain/etags.ts';
import { requestFingerprint } from '../src/domain/idempotency.ts';
import { createFixture, createTestPlatform, DIALECTS, privateToken, type Fixture, type TestPlatform } from './harness.ts';

const V = '/openapi/2026-01';
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

describe('entity tags (pure parts)', () => {
  it('makes a quoted tag of id and version and reads If-Match lists for one record', () => {
    expect(etagOf({ id: 42, version: 3 })).toBe('"42-3"');
    expect(parseIfMatch(undefined, 42)).toBeUndefined();
    expect(parseIfMatch('*', 42)).toEqual({ kind: 'any' });
    expect(parseIfMatch(' "42-3" ', 42)).toEqual({ kind: 'versions', versions: [3] });
    expect(parseIfMatch('"42-3", "42-5",,"7-9"', 42)).toEqual({ kind: 'versions', versions: [3, 5] });
    // A weak tag, another record's tag and a tag of another shape are well formed and match nothing.
    expect(parseIfMatch('W/"42-3", "7-3", "a,b", ""', 42)).toEqual({ kind: 'versions', versions: [] });
    expect(parseIfMatch(['"42-3"', '"42-4"'], 42)).toEqual({ kind: 'versions', versions: [3, 4] });
  });

  it('the Idempotency-Key fingerprint holds If-Match when sent, and is unchanged without it', () => {
    const plain = requestFingerprint('PUT', '/openapi/2026-01/products/1', { title: 'Hat' });
    expect(requestFingerprint('PUT', '/openapi/2026-01/products/1', { title: 'Hat' }, undefined)).toBe(plain);
    const tagged = requestFingerprint('PUT', '/openapi/2026-01/products/1', { title: 'Hat' }, '"1-2"');
    expect(tagged).not.toBe(plain);
    expect(requestFingerprint('PUT', '/openapi/2026-01/products/1', { title: 'Hat' }, '"1-3"')).not.toBe(tagged);
    expect(requestFingerprint('PUT', '/openapi/2026-01/products/1', { title: 'Hat' }, ['"1-2"'])).toBe(tagged);
  });

  it('refuses malformed If-Match and If-None-Match values with a 400 naming the header', () => {
    for (const bad of ['42-3', '"42-3', '"42-3" x', 'W/42', '**', '', ' , ', '"a"b"', `"${'1'.repeat(1100)}"`]) {
      expect(() => parseIfMatch(bad, 42), bad).toThrow(/If-Match/);
      expect(() => noneMatchHits(bad, { id: 42, version: 3 }), bad).toThrow(/If-None-Match/);
    }
    expect(noneMatchHits('W/"42-3"', { id: 42, version: 3 })).toBe(true);
    expect(noneMatchHits('"42-2"', { id: 42, version: 3 })).toBe(false);
    expect(noneMatchHits('*', { id: 42, version: 3 })).toBe(true);
  });
});

describe.each(DIALECTS)('conditional writes on %s', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  let token: string;
  let keySeq = 0;
  const newKey = () => `cond-${dialect}-${++keySeq}`;

  function call(method: Method, url: string, body?: unknown, headers: Record<string, string> = {}) {
    return t.app.inject({
      method,
      url,
      headers: {
        host: f.host,
        'access-token': token,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
  }

  let subSeq = 0;
  const CREATES: Record<string, () => unknown> = {
    products: () => ({ title: 'Cap', price: '5.00', inventory_quantity: 10 }),
    customers: () => ({ email: `c${++subSeq}-${dialect}@example.test` }),
    orders: () => ({ email: 'buyer@example.test', line_items: [{ title: 'Cap', quantity: 1, price: '5.00' }] }),
    webhooks: () => ({ address: `http://127.0.0.1:9/hook-${++subSeq}`, topic: 'orders/create' }),
  };
  const CHANGES: Record<string, () => unknown> = {
    products: () => ({ title: `Cap ${++subSeq}` }),
    customers: () => ({ first_name: `Ann ${++subSeq}` }),
    orders: () => ({ financial_status: subSeq++ % 2 === 0 ? 'paid' : 'pending' }),
    webhooks: () => ({ address: `http://127.0.0.1:9/moved-${++subSeq}` }),
  };
  const RESOURCES = Object.keys(CREATES);
  const UPDATES: Record<string, Method[]> = {
    products: ['PUT', 'PATCH'],
    customers: ['PUT', 'PATCH'],
    orders: ['PUT', 'PATCH'],
    webhooks: ['PUT'],
  };
  const DELETABLE = ['products', 'customers', 'webhooks'];

  async function create(resource: string): Promise<{ url: string; etag: string; data: Record<string, unknown> }> {
    const res = await call('POST', `${V}/${resource}`, CREATES[resource]!());
    expect(res.statusCode, res.body).toBe(201);
    return { url: `${V}/${resource}/${res.json().data.id}`, etag: String(res.headers.etag), data: res.json().data };
  }

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off' });
    f = await createFixture(t);
    token = await privateToken(t, f.storeName, 'write_products write_orders write_customers');
  });
  afterAll(async () => t.close());

  it.each(RESOURCES)(
    '%s: every record answer carries an ETag that changes with every write, within the same millisecond too',
    async (r) => {
      const made = await create(r);
      expect(made.etag).toMatch(/^"[0-9]+-1"$/);
      const read = await call('GET', made.url);
      expect(read.headers.etag).toBe(made.etag);
      expect(read.headers['cache-control']).toBe('private, no-cache');
      const seen = new Set([made.etag]);
      let last = made.etag;
      // The test clock is frozen: every write below happens within the same millisecond.
      for (const method of [...UPDATES[r]!, ...UPDATES[r]!]) {
        const res = await call(method, made.url, CHANGES[r]!());
        expect(res.statusCode, res.body).toBe(200);
        const etag = String(res.headers.etag);
        expect(seen.has(etag)).toBe(false);
        seen.add(etag);
        last = etag;
        expect((await call('GET', made.url)).headers.etag).toBe(etag);
      }
      // A list carries no tags.
      expect((await call('GET', `${V}/${r}`)).headers.etag).toBeUndefined();
      expect(last).not.toBe(made.etag);
    },
  );

  it.each(RESOURCES)(
    '%s: If-Match on PUT/PATCH: the current tag, `*` or a list holding it writes; a stale one is 412 and changes nothing',
    async (r) => {
      for (const method of UPDATES[r]!) {
        const made = await create(r);
        const stale = made.etag;
        const first = await call(method, made.url, CHANGES[r]!(), { 'if-match': stale });
        expect(first.statusCode, first.body).toBe(200);
        const current = String(first.headers.etag);
        const before = (await call('GET', made.url)).json().data;

        const refused = await call(method, made.url, CHANGES[r]!(), { 'if-match': stale });
        expect(refused.statusCode).toBe(412);
        expect(refused.json()).toEqual({
          code: 'PreconditionFailed',
          message: expect.stringMatching(/changed since/),
          request_id: expect.any(String),
        });
        for (const other of [`W/${current}`, `"999999-1"`, '"nope"']) {
          expect((await call(method, made.url, CHANGES[r]!(), { 'if-match': other })).statusCode, other).toBe(412);
        }
        const after = await call('GET', made.url);
        expect(after.json().data).toEqual(before);
        expect(after.headers.etag).toBe(current);

        const listed = await call(method, made.url, CHANGES[r]!(), { 'if-match': `${stale}, ${current}` });
        expect(listed.statusCode, listed.body).toBe(200);
        const star = await call(method, made.url, CHANGES[r]!(), { 'if-match': '*' });
        expect(star.statusCode).toBe(200);
        expect(star.headers.etag).not.toBe(listed.headers.etag);
      }
    },
  );

  it.each(RESOURCES)('%s: a malformed If-Match is 400 naming the header and changes nothing; a missing record is 404', async (r) => {
    const made = await create(r);
    for (const method of [...UPDATES[r]!, ...(DELETABLE.includes(r) ? (['DELETE'] as const) : [])]) {
      const res = await call(method, made.url, method === 'DELETE' ? undefined : CHANGES[r]!(), { 'if-match': made.etag.slice(1) });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'BadRequest', message: expect.stringMatching(/If-Match/) });
      const missing = `${V}/${r}/999999`;
      const gone = await call(method, missing, method === 'DELETE' ? undefined : CHANGES[r]!(), { 'if-match': '*' });
      expect(gone.statusCode).toBe(404);
    }
    const read = await call('GET', made.url);
    expect(read.json().data).toEqual(made.data);
    expect(read.headers.etag).toBe(made.etag);
  });

  it.each(DELETABLE)('%s: DELETE with a stale If-Match is 412 and keeps the record; with the current one or `*` it deletes', async (r) => {
    const made = await create(r);
    const changed = await call(UPDATES[r]![0]!, made.url, CHANGES[r]!());
    const refused = await call('DELETE', made.url, undefined, { 'if-match': made.etag });
    expect(refused.statusCode).toBe(412);
    expect(refused.json().code).toBe('PreconditionFailed');
    expect((await call('GET', made.url)).statusCode).toBe(200);
    const deleted = await call('DELETE', made.url, undefined, { 'if-match': String(changed.headers.etag) });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect((await call('GET', made.url)).statusCode).toBe(404);
    const other = await create(r);
    expect((await call('DELETE', other.url, undefined, { 'if-match': '*' })).statusCode).toBe(200);
  });

  it.each(RESOURCES)('%s: concurrent writers with the same If-Match: exactly one wins, the others get 412', async (r) => {
    const made = await create(r);
    const method = UPDATES[r]![0]!;
    const answers = await Promise.all(Array.from({ length: 6 }, () => call(method, made.url, CHANGES[r]!(), { 'if-match': made.etag })));
    const codes = answers.map((a) => a.statusCode).sort();
    expect(codes).toEqual([200, 412, 412, 412, 412, 412]);
    const winner = answers.find((a) => a.statusCode === 200)!;
    const read = await call('GET', made.url);
    expect(read.headers.etag).toBe(winner.headers.etag);
    expect(read.json().data).toEqual(winner.json().data);
  });

  it.each(DELETABLE)('%s: concurrent conditional update and delete with the same tag: one wins', async (r) => {
    const made = await create(r);
    const answers = await Promise.all([
      call('DELETE', made.url, undefined, { 'if-match': made.etag }),
      call(UPDATES[r]![0]!, made.url, CHANGES[r]!(), { 'if-match': made.etag }),
      call('DELETE', made.url, undefined, { 'if-match': made.etag }),
    ]);
    const ok = answers.filter((a) => a.statusCode === 200);
    expect(ok).toHaveLength(1);
    // The losers are refused: 412 while the record exists, 404 once it was deleted.
    for (const a of answers.filter((x) => x.statusCode !== 200)) expect([404, 412]).toContain(a.statusCode);
  });

  it('If-None-Match on GET: the current tag is 304 without a body, a stale one the record; malformed is 400', async () => {
    for (const r of RESOURCES) {
      const made = await create(r);
      const same = await call('GET', made.url, undefined, { 'if-none-match': made.etag });
      expect(same.statusCode).toBe(304);
      expect(same.body).toBe('');
      expect(same.headers.etag).toBe(made.etag);
      expect((await call('GET', made.url, undefined, { 'if-none-match': `"0-0", W/${made.etag}` })).statusCode).toBe(304);
      await call(UPDATES[r]![0]!, made.url, CHANGES[r]!());
      const changed = await call('GET', made.url, undefined, { 'if-none-match': made.etag });
      expect(changed.statusCode).toBe(200);
      expect(changed.json().data.id).toBe(made.data.id);
      expect((await call('GET', made.url, undefined, { 'if-none-match': 'nope' })).statusCode).toBe(400);
    }
  });

  describe('expected inventory quantity', () => {
    it('writes when the stored quantity is the expected one; else 409 naming the stored one, nothing changed', async () => {
      const made = await create('products');
      const ok = await call('PATCH', made.url, { inventory_quantity: 7, expected_inventory_quantity: 10 });
      expect(ok.statusCode, ok.body).toBe(200);
      expect(ok.json().data.inventory_quantity).toBe(7);
      expect(ok.json().data).not.toHaveProperty('expected_inventory_quantity');
      const wrapped = await call('PUT', made.url, { product: { inventory_quantity: 6, expected_inventory_quantity: 7 } });
      expect(wrapped.json().data.inventory_quantity).toBe(6);

      const refused = await call('PATCH', made.url, { inventory_quantity: 1, title: 'Changed', expected_inventory_quantity: 10 });
      expect(refused.statusCode).toBe(409);
      expect(refused.json()).toEqual({
        code: 'InventoryQuantityMismatch',
        message: 'The inventory quantity is 6, not the expected one; nothing was changed',
        request_id: expect.any(String),
        inventory_quantity: 6,
      });
      const read = await call('GET', made.url);
      expect(read.json().data).toMatchObject({ inventory_quantity: 6, title: 'Cap' });
      expect(read.headers.etag).toBe(wrapped.headers.etag);
    });

    it('needs inventory_quantity beside it (422) and is a product field only; If-Match is judged first', async () => {
      const made = await create('products');
      const alone = await call('PATCH', made.url, { expected_inventory_quantity: 10 });
      expect(alone.statusCode).toBe(422);
      expect(alone.json().errors).toEqual({ inventory_quantity: ['is required with expected_inventory_quantity'] });
      const customer = await create('customers');
      expect((await call('PATCH', customer.url, { first_name: 'A', expected_inventory_quantity: 1 })).statusCode).toBe(422);
      const both = await call('PATCH', made.url, { inventory_quantity: 3, expected_inventory_quantity: 99 }, { 'if-match': '"1-999"' });
      expect(both.statusCode).toBe(412);
      expect((await call('GET', made.url)).json().data.inventory_quantity).toBe(10);
    });

    it('concurrent stock changes expecting the same quantity: exactly one wins, the others learn the new quantity', async () => {
      const made = await create('products');
      const answers = await Promise.all(
        [9, 8, 7, 6, 5].map((q) => call('PATCH', made.url, { inventory_quantity: q, expected_inventory_quantity: 10 })),
      );
      const ok = answers.filter((a) => a.statusCode === 200);
      expect(ok).toHaveLength(1);
      const stored = ok[0]!.json().data.inventory_quantity as number;
      for (const a of answers.filter((x) => x.statusCode !== 200)) {
        expect(a.statusCode).toBe(409);
        expect(a.json().inventory_quantity).toBe(stored);
      }
      expect((await call('GET', made.url)).json().data.inventory_quantity).toBe(stored);
    });
  });

  describe('with Idempotency-Key', () => {
    it('a retried conditional update replays the first answer and its ETag instead of failing the precondition', async () => {
      const made = await create('products');
      const key = newKey();
      const first = await call('PATCH', made.url, { title: 'Once' }, { 'if-match': made.etag, 'idempotency-key': key });
      expect(first.statusCode).toBe(200);
      const again = await call('PATCH', made.url, { title: 'Once' }, { 'if-match': made.etag, 'idempotency-key': key });
      expect(again.statusCode).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.headers.etag).toBe(first.headers.etag);
      expect(again.body).toBe(first.body);
      expect((await call('GET', made.url)).headers.etag).toBe(first.headers.etag);

      // Another If-Match is another request: the key cannot be used for it.
      const other = await call('PATCH', made.url, { title: 'Once' }, { 'if-match': String(first.headers.etag), 'idempotency-key': key });
      expect(other.statusCode).toBe(422);
      expect(other.json().code).toBe('IdempotencyKeyReused');
    });

    it('a 412 and a 409 are stored and replayed like any refusal; a malformed If-Match uses no key', async () => {
      const made = await create('products');
      await call('PATCH', made.url, { title: 'Moved on' });
      const key = newKey();
      const refused = await call('PATCH', made.url, { title: 'Late' }, { 'if-match': made.etag, 'idempotency-key': key });
      expect(refused.statusCode).toBe(412);
      const again = await call('PATCH', made.url, { title: 'Late' }, { 'if-match': made.etag, 'idempotency-key': key });
      expect(again.statusCode).toBe(412);
      expect(again.headers['idempotent-replayed']).toBe('true');

      const stock = newKey();
      const body = { inventory_quantity: 1, expected_inventory_quantity: 99 };
      const conflict = await call('PATCH', made.url, body, { 'idempotency-key': stock });
      expect(conflict.statusCode).toBe(409);
      const replay = await call('PATCH', made.url, body, { 'idempotency-key': stock });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.json()).toMatchObject({ code: 'InventoryQuantityMismatch', inventory_quantity: 10 });

      const unused = newKey();
      const bad = await call('DELETE', made.url, undefined, { 'if-match': 'bad', 'idempotency-key': unused });
      expect(bad.statusCode).toBe(400);
      const deleted = await call('DELETE', made.url, undefined, { 'if-match': '*', 'idempotency-key': unused });
      expect(deleted.statusCode).toBe(200);
      expect(deleted.headers['idempotent-replayed']).toBeUndefined();
    });

    it('a replayed create carries the ETag of its first answer', async () => {
      const key = newKey();
      const first = await call('POST', `${V}/customers`, { email: `idem-${dialect}@example.test` }, { 'idempotency-key': key });
      const again = await call('POST', `${V}/customers`, { email: `idem-${dialect}@example.test` }, { 'idempotency-key': key });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.headers.etag).toBe(first.headers.etag);
      expect(first.headers.etag).toMatch(/^"[0-9]+-1"$/);
    });
  });

  it('a customer redaction gives the customer a new ETag: an If-Match read before it is 412', async () => {
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    const customer = await create('customers');
    await t.services.customerPrivacy.redact(store.id, Number(customer.data.id));
    const after = await call('GET', customer.url);
    expect(after.headers.etag).not.toBe(customer.etag);
    const refused = await call('PATCH', customer.url, { first_name: 'Back' }, { 'if-match': customer.etag });
    expect(refused.statusCode).toBe(412);
  });

  it('the OpenAPI document names If-Match, If-None-Match, the ETag and the 412 and 409 answers', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'localhost:8080' } })).json();
    const conditional: [string, string][] = [
      ['/openapi/{version}/products/{id}', 'put'],
      ['/openapi/{version}/products/{id}', 'patch'],
      ['/openapi/{version}/products/{id}', 'delete'],
      ['/openapi/{version}/orders/{id}', 'patch'],
      ['/openapi/{version}/customers/{id}', 'delete'],
      ['/openapi/{version}/webhooks/{id}', 'put'],
      ['/openapi/{version}/webhooks/{id}', 'delete'],
    ];
    for (const [path, method] of conditional) {
      const op = doc.paths[path][method];
      const names = (op.parameters as { in: string; name: string }[]).filter((p) => p.in === 'header').map((p) => p.name);
      expect(names, `${method} ${path}`).toEqual(expect.arrayContaining(['if-match', 'idempotency-key']));
      expect(Object.keys(op.responses)).toContain('412');
    }
    const get = doc.paths['/openapi/{version}/products/{id}'].get;
    expect(get.parameters.some((p: { name: string }) => p.name === 'if-none-match')).toBe(true);
    expect(Object.keys(get.responses['200'].headers)).toContain('ETag');
    const patch = doc.paths['/openapi/{version}/products/{id}'].patch;
    expect(patch.responses['409'].description).toMatch(/InventoryQuantityMismatch/);
    expect(JSON.stringify(patch.requestBody)).toContain('expected_inventory_quantity');
    const docs = (await t.app.inject({ method: 'GET', url: '/docs', headers: { host: 'localhost:8080' } })).body;
    expect(docs).toMatch(/<code>if-match<\/code> \(header\)/);
    expect(docs).toContain('<p id="conditional-writes">Conditional writes:');
  });
});
