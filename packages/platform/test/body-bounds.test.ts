// A body full of fields costs the server no more than its bounds: an object of more fields than
// any body takes is refused before it is parsed, an object or array beyond its schema's bounds
// before it is validated, and a 422 names at most ten fields, so that its answer stays small.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { api, createFixture, createTestPlatform, DIALECTS, type Fixture, privateToken, type TestPlatform } from './harness.ts';

/** An object of `n` fields none of the API's schemas knows: `{"k0":1,"k1":1,…}`. */
const unknownFields = (n: number): Record<string, number> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 1]));

/** The listed fields of a 422, after checking the answer is one and is small. */
function listedFields(res: {
  statusCode: number;
  body: string;
  json(): { code: string; errors: Record<string, string[]> };
}): Record<string, string[]> {
  expect(res.statusCode).toBe(422);
  expect(res.body.length).toBeLessThan(4096);
  expect(res.json().code).toBe('ValidationFailed');
  const errors = res.json().errors;
  expect(Object.keys(errors).length).toBeLessThanOrEqual(10);
  return errors;
}

describe.each(DIALECTS)('bodies beyond their bounds on %s', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  let token: string;
  const rows = async () => {
    const out: Record<string, number> = {};
    for (const table of ['products', 'orders', 'webhook_subscriptions'] as const) {
      const row = await t.db.kysely
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      out[table] = Number(row.n);
    }
    return out;
  };
  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off' });
    f = await createFixture(t);
    token = await privateToken(t, f.storeName, 'write_products write_orders');
  });
  afterAll(async () => t.close());

  it('a 1 MB body of 90,000 unknown fields, bare or wrapped: a small 422, and the body is never parsed', async () => {
    const before = await rows();
    const many = unknownFields(90_000);
    const parse = vi.spyOn(JSON, 'parse');
    try {
      for (const [path, body] of [
        ['/openapi/2026-01/webhooks', JSON.stringify(many)],
        ['/openapi/2026-01/webhooks', JSON.stringify({ webhook: many })],
        ['/openapi/2026-01/products', JSON.stringify({ product: { title: 'Mug', ...many } })],
      ] as const) {
        expect(body.length).toBeGreaterThan(900_000);
        const res = await api(t, f, token, 'POST', path, body);
        expect(listedFields(res), path).toEqual({ body: ['has an object of more than 1000 fields'] });
        expect(res.headers['x-service-api-version']).toBe('2026-01');
      }
      // The scan refused them before the parser saw them: no large text was parsed.
      expect(parse.mock.calls.filter(([text]) => typeof text === 'string' && text.length > 100_000)).toEqual([]);
    } finally {
      parse.mockRestore();
    }
    // The token endpoint answers the same excess in its own terms.
    const oauth = await t.app.inject({
      method: 'POST',
      url: '/admin/oauth/token',
      headers: { host: f.host, 'content-type': 'application/json' },
      payload: JSON.stringify(unknownFields(1500)),
    });
    expect(oauth.statusCode).toBe(400);
    expect(oauth.json()).toEqual({ error: 'invalid_request', error_description: 'Request body has an object of more than 1000 fields' });
    expect(await rows()).toEqual(before);
  });

  it('an object with more fields than its schema knows is refused before validation, naming its first unknown fields', async () => {
    const before = await rows();
    // 900 fields where 4 are known (address, topic, filter, include_fields): the count, then the
    // first nine; the missing address and topic are not reported, since the body never reached
    // the validator.
    const wrapped = listedFields(await api(t, f, token, 'POST', '/openapi/2026-01/webhooks', { webhook: unknownFields(900) }));
    expect(wrapped).toEqual({
      body: ['has 900 fields; at most 4 are known'],
      ...Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, ['is not a known field']])),
    });
    // Nested objects are held to their own schema.
    const item = { title: 'Mug', quantity: 1, price: '1.00', ...unknownFields(500) };
    const nested = listedFields(await api(t, f, token, 'POST', '/openapi/2026-01/orders', { email: 'a@example.com', line_items: [item] }));
    expect(nested['line_items.0']).toEqual(['has 503 fields; at most 3 are known']);
    expect(nested['line_items.0.k0']).toEqual(['is not a known field']);
    // A few unknown fields are all named, as the validator would name them.
    const few = listedFields(
      await api(t, f, token, 'POST', '/openapi/2026-01/products', { title: 'Mug', vendor: 'x', ...unknownFields(5) }),
    );
    expect(few).toEqual(Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`k${i}`, ['is not a known field']])));
    expect(await rows()).toEqual(before);
  });

  it('an array longer than its schema allows is refused before validation; a 422 lists at most 10 fields and cuts long names', async () => {
    const before = await rows();
    const long = await api(t, f, token, 'POST', '/openapi/2026-01/orders', {
      email: 'a@example.com',
      line_items: Array.from({ length: 100_000 }, () => ({})),
    });
    expect(listedFields(long)).toEqual({ line_items: ['must NOT have more than 100 items'] });
    // Within its bounds, a body with many mistakes: the first ten fields, and how many there were.
    const mistakes = await api(t, f, token, 'POST', '/openapi/2026-01/orders', {
      email: 'a@example.com',
      line_items: Array.from({ length: 50 }, () => ({})),
    });
    expect(Object.keys(listedFields(mistakes))).toHaveLength(10);
    expect(mistakes.json().message).toBe('Validation failed: 150 fields have errors; the first 10 are listed');
    expect(listedFields(mistakes)['line_items.0.title']).toEqual(['is required']);
    // A field name of half a megabyte is named by its first 100 characters.
    const name = 'n'.repeat(500_000);
    const named = listedFields(await api(t, f, token, 'POST', '/openapi/2026-01/products', { title: 'Mug', [name]: 1 }));
    expect(named).toEqual({ [`${'n'.repeat(100)}…`]: ['is not a known field'] });
    expect(await rows()).toEqual(before);
  });
});

describe('a listening server given a body of 90,000 unknown fields', () => {
  let t: TestPlatform;
  let f: Fixture;
  let token: string;
  let port: number;
  beforeAll(async () => {
    t = await createTestPlatform('sqlite', { rateLimit: 'off' });
    f = await createFixture(t);
    token = await privateToken(t, f.storeName, 'write_products');
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });
  afterAll(async () => t?.close());

  function send(
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: string,
  ): { written: Promise<void>; answer: Promise<{ status: number; body: string; ms: number }> } {
    let onWritten: () => void = () => {};
    const written = new Promise<void>((resolve) => {
      onWritten = resolve;
    });
    const answer = new Promise<{ status: number; body: string; ms: number }>((resolve, reject) => {
      const started = performance.now();
      const req = http.request({ host: '127.0.0.1', port, method, path, headers: { ...headers, connection: 'close' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, ms: performance.now() - started }));
      });
      req.on('error', reject);
      req.on('finish', onWritten);
      req.end(body);
    });
    return { written, answer };
  }

  it('answers it with a small 422, and /healthz asked meanwhile on another connection is answered too', async () => {
    const body = JSON.stringify(unknownFields(90_000));
    const post = send(
      'POST',
      '/openapi/2026-01/webhooks',
      { host: f.host, 'access-token': token, 'content-type': 'application/json' },
      body,
    );
    await post.written;
    const health = send('GET', '/healthz', { host: '127.0.0.1' });
    const [refused, healthz] = await Promise.all([post.answer, health.answer]);
    expect(refused.status).toBe(422);
    expect(refused.body.length).toBeLessThan(4096);
    expect(JSON.parse(refused.body).errors).toEqual({ body: ['has an object of more than 1000 fields'] });
    expect(healthz.status).toBe(200);
    // A bound loose enough for a loaded machine: the point is that the probe is not queued behind
    // seconds of validation and error rendering.
    expect(healthz.ms).toBeLessThan(5000);
  });
});
