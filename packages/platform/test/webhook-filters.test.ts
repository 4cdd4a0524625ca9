// Webhook filters and include_fields on SQLite and PostgreSQL: the Admin API stores, returns and
// refuses them (422 naming the field, nothing saved); the outbox writes no delivery (nor event)
// for a change a filter rejects and counts it in /metrics; an accepted change reaches a loopback
// receiver through the worker with only the included fields, signed over the body as sent; the
// events list and a redelivery carry the same body.
import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { selectFields } from '../src/domain/list-filters.ts';
import type { WebhookWorker } from '../src/webhooks/webhook-worker.ts';
import { api, appToken, createFixture, createTestPlatform, DIALECTS, type Fixture, type TestPlatform, testWorker } from './harness.ts';
import { Receiver, until } from './webhook-receiver.ts';

const V = '/openapi/2026-01';
const FAST = { timeoutMs: 2000, retrySchedule: [40, 40], disableAfterDead: 5 };

describe.each(DIALECTS)('webhook filters and include_fields on %s', (dialect) => {
  let t: TestPlatform;
  let rx: Receiver;
  let f: Fixture;
  let token: string;
  const workers: WebhookWorker[] = [];

  async function worker(): Promise<WebhookWorker> {
    const w = await testWorker(t, { pollMs: 25, random: () => 0.5, pruneEveryMs: 0 });
    workers.push(w);
    await w.start();
    return w;
  }

  const subscribe = (body: Record<string, unknown>) => api(t, f, token, 'POST', `${V}/webhooks`, body);
  const deliveries = (subscription: string) =>
    t.db.kysely.selectFrom('webhook_deliveries').selectAll().where('subscription_id', '=', Number(subscription)).orderBy('id').execute();
  const counts = async () => ({
    subscriptions: (await t.db.kysely.selectFrom('webhook_subscriptions').select('id').execute()).length,
    events: (await t.db.kysely.selectFrom('webhook_events').select('id').execute()).length,
    deliveries: (await t.db.kysely.selectFrom('webhook_deliveries').select('id').execute()).length,
  });
  async function filteredMetric(topic: string): Promise<number> {
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { host: '127.0.0.1' } });
    expect(res.statusCode).toBe(200);
    const line = res.body.split('\n').find((l) => l.startsWith(`storegate_webhook_deliveries_filtered_total{topic="${topic}"}`));
    return line ? Number(line.split(' ').at(-1)) : 0;
  }

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off', webhooks: FAST });
    t.clock.now = Date.now() - 1000;
    rx = await Receiver.start();
    f = await createFixture(t, { scopes: 'write_products write_orders' });
    token = await appToken(t, f, 'write_products write_orders');
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  it('a subscription stores, returns and lists its filter and include_fields (null when unset)', async () => {
    const made = await subscribe({
      address: rx.url('/stored'),
      topic: 'products/update',
      filter: 'status:active AND price:>=10',
      include_fields: ['title', 'id', 'title'],
    });
    expect(made.statusCode, made.body).toBe(201);
    const data = made.json().data;
    expect(data).toMatchObject({ filter: 'status:active AND price:>=10', include_fields: ['title', 'id'] });
    const got = await api(t, f, token, 'GET', `${V}/webhooks/${data.id}`);
    expect(got.json().data).toMatchObject({ filter: 'status:active AND price:>=10', include_fields: ['title', 'id'] });
    const plain = await subscribe({ address: rx.url('/stored'), topic: 'products/create' });
    expect(plain.json().data).toMatchObject({ filter: null, include_fields: null });
    const list = await api(t, f, token, 'GET', `${V}/webhooks?fields=id,filter,include_fields`);
    expect(list.json().data).toEqual(
      expect.arrayContaining([
        { id: data.id, filter: 'status:active AND price:>=10', include_fields: ['title', 'id'] },
        { id: plain.json().data.id, filter: null, include_fields: null },
      ]),
    );
    // Wrapped bodies take them too.
    const wrapped = await subscribe({ webhook: { address: rx.url('/wrapped'), topic: 'orders/create', filter: 'financial_status:paid' } });
    expect(wrapped.statusCode, wrapped.body).toBe(201);
    expect(wrapped.json().data.filter).toBe('financial_status:paid');
    for (const id of [data.id, plain.json().data.id, wrapped.json().data.id]) await api(t, f, token, 'DELETE', `${V}/webhooks/${id}`);
  });

  it('the OpenAPI document and /docs describe filter and include_fields, with the syntax and an example', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'localhost:8080' } })).json();
    const webhooks = doc.paths['/openapi/{version}/webhooks'];
    for (const op of [webhooks.post, doc.paths['/openapi/{version}/webhooks/{id}'].put]) {
      const body = op.requestBody.content['application/json'].schema;
      expect(body.properties.filter.description).toContain('status:active AND price:>=10');
      expect(body.properties.filter.description).toContain('AND binds tighter');
      expect(body.properties.include_fields.description).toContain('`fields`');
    }
    const item = webhooks.get.responses['200'].content['application/json'].schema.properties.data.items;
    expect(Object.keys(item.properties)).toEqual(expect.arrayContaining(['filter', 'include_fields']));
    const page = (await t.app.inject({ method: 'GET', url: '/docs', headers: { host: 'localhost:8080' } })).body;
    expect(page).toContain('id="webhook-filters"');
    expect(page).toContain('status:active AND price:&gt;=10');
  });

  it('bad filters and fields are 422s naming them, and nothing is saved', async () => {
    const before = await counts();
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ topic: 'products/create', filter: 'colour:red' }, 'filter', /unknown field "colour".*position 1/],
      [{ topic: 'products/create', filter: 'title:>=b' }, 'filter', /title is a string: ranges/],
      [{ topic: 'products/create', filter: 'price:cheap' }, 'filter', /price is a number/],
      [{ topic: 'products/create', filter: 'status:active AND' }, 'filter', /expected a field name.*position 18/],
      [{ topic: 'orders/create', filter: 'title:x' }, 'filter', /unknown field "title": orders have/],
      [{ topic: 'products/create', include_fields: ['id', 'colour'] }, 'include_fields', /unknown field "colour"; fields are id, title/],
      [{ topic: 'products/create', include_fields: [] }, 'include_fields', /must name at least one/],
      [{ topic: 'app/uninstalled', filter: 'id:1' }, 'filter', /app\/uninstalled is not about a product, order or customer/],
      [{ topic: 'bulk_operations/finish', include_fields: ['id'] }, 'include_fields', /bulk_operations\/finish is not about/],
    ];
    for (const [body, field, message] of cases) {
      const res = await subscribe({ address: rx.url('/bad'), ...body });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().errors[field][0]).toMatch(message);
    }
    // Wrong JSON types are refused by the schema, naming the field.
    for (const [body, field] of [
      [{ filter: 12 }, 'filter'],
      [{ include_fields: 'id,title' }, 'include_fields'],
      [{ include_fields: [1] }, 'include_fields'],
    ] as const) {
      const res = await subscribe({ address: rx.url('/bad'), topic: 'products/create', ...body });
      expect(res.statusCode, res.body).toBe(422);
      expect(JSON.stringify(res.json().errors)).toContain(field);
    }
    expect(await counts()).toEqual(before);
  });

  it('PUT changes, keeps and removes the filter and fields; a bad PUT changes nothing', async () => {
    const made = await subscribe({ address: rx.url('/put'), topic: 'products/update', filter: 'status:active' });
    const id = made.json().data.id;
    const put = (body: Record<string, unknown>) => api(t, f, token, 'PUT', `${V}/webhooks/${id}`, body);
    let res = await put({ filter: 'vendor:"Acme (EU)" OR price:<5', include_fields: ['id', 'vendor'] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ filter: 'vendor:"Acme (EU)" OR price:<5', include_fields: ['id', 'vendor'] });
    // Another field alone leaves the rest as it was.
    res = await put({ address: rx.url('/put-2') });
    expect(res.json().data).toMatchObject({ filter: 'vendor:"Acme (EU)" OR price:<5', include_fields: ['id', 'vendor'] });
    const row = async () => (await api(t, f, token, 'GET', `${V}/webhooks/${id}`)).json().data;
    const before = await row();
    // A topic whose object lacks the stored filter's fields: 422, unless the filter goes too.
    res = await put({ topic: 'orders/create' });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors.filter[0]).toMatch(/unknown field "vendor": orders have/);
    expect(res.json().errors.include_fields[0]).toMatch(/unknown field "vendor"/);
    res = await put({ filter: 'nope:1' });
    expect(res.statusCode).toBe(422);
    res = await put({ topic: 'app/uninstalled' });
    expect(res.statusCode).toBe(422);
    expect(await row()).toEqual(before);
    res = await put({ topic: 'orders/create', filter: null, include_fields: null });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ topic: 'orders/create', filter: null, include_fields: null });
    // Setting the same values again is a no-op write: the version does not move.
    const etag = (await api(t, f, token, 'GET', `${V}/webhooks/${id}`)).headers.etag;
    res = await put({ filter: null });
    expect(res.headers.etag).toBe(etag);
    await api(t, f, token, 'DELETE', `${V}/webhooks/${id}`);
  });

  it('a change the filter rejects writes no delivery (nor an event) and is counted; an accepted one arrives narrowed and signed', async () => {
    const path = '/narrowed';
    const made = await subscribe({
      address: rx.url(path),
      topic: 'products/create',
      filter: 'status:active AND price:>=10',
      include_fields: ['title', 'price', 'id'],
    });
    const sub = made.json().data.id;
    const counted = await filteredMetric('products/create');
    const events = (await counts()).events;
    const cheap = await api(t, f, token, 'POST', `${V}/products`, { title: 'Cheap mug', price: '4.50' });
    expect(cheap.statusCode).toBe(201);
    const draft = await api(t, f, token, 'POST', `${V}/products`, { title: 'Draft lamp', price: '40.00', status: 'draft' });
    expect(draft.statusCode).toBe(201);
    expect(await deliveries(sub)).toEqual([]);
    // No subscription left for those changes: no event row either.
    expect((await counts()).events).toBe(events);
    expect(await filteredMetric('products/create')).toBe(counted + 2);

    const kept = await api(t, f, token, 'POST', `${V}/products`, { title: 'Blue shirt', price: '19.99', vendor: 'Acme' });
    expect(kept.statusCode).toBe(201);
    expect(await filteredMetric('products/create')).toBe(counted + 2);
    const [queued] = await deliveries(sub);
    expect(queued!.include_fields).toBe('["title","price","id"]');
    await worker();
    await until(() => rx.on(path).length === 1, 10_000, 'the narrowed delivery');
    const got = rx.on(path)[0]!;
    const object = kept.json().data;
    // The fields asked for, in the object's own order: what GET …/products?fields=title,price,id gives.
    expect(got.body).toBe(JSON.stringify(selectFields(object, ['title', 'price', 'id'])));
    const listed = await api(t, f, token, 'GET', `${V}/products?ids=${object.id}&fields=title,price,id`);
    expect(JSON.parse(got.body)).toEqual(listed.json().data[0]);
    expect(Object.keys(JSON.parse(got.body))).toEqual(['id', 'title', 'price']);
    expect(got.headers['x-service-hmac-sha256']).toBe(createHmac('sha256', f.clientSecret).update(got.body).digest('base64'));
    const [id, ts] = [got.headers['webhook-id']!, got.headers['webhook-timestamp']!];
    const standard = createHmac('sha256', f.clientSecret).update(`${id}.${ts}.${got.body}`).digest('base64');
    expect(got.headers['webhook-signature']).toBe(`v1,${standard}`);

    // The events list shows the body the delivery sent.
    const listedEvents = await api(t, f, token, 'GET', `${V}/events?topic=products/create`);
    const entry = listedEvents.json().data.find((e: { webhook_id: string }) => e.webhook_id === id);
    expect(entry.payload).toEqual(JSON.parse(got.body));

    // Narrowing the fields later leaves the queued delivery as it was: a redelivery sends the same body.
    await api(t, f, token, 'PUT', `${V}/webhooks/${sub}`, { include_fields: ['id'] });
    await until(async () => (await deliveries(sub))[0]?.status === 'delivered', 5000, 'delivered');
    await t.services.deliveries.redeliver(String(queued!.id));
    await until(() => rx.on(path).length === 2, 10_000, 'the redelivery');
    expect(rx.on(path)[1]!.body).toBe(got.body);
    expect(rx.on(path)[1]!.headers['webhook-id']).toBe(id);
    await api(t, f, token, 'DELETE', `${V}/webhooks/${sub}`);
  });

  it('a PUT to the filter decides the changes written after it', async () => {
    const sub = (await subscribe({ address: rx.url('/refiltered'), topic: 'products/update', filter: 'vendor:Alpha' })).json().data.id;
    const product = (await api(t, f, token, 'POST', `${V}/products`, { title: 'Lamp', vendor: 'Beta' })).json().data;
    await api(t, f, token, 'PUT', `${V}/products/${product.id}`, { sku: 'L-1' });
    expect(await deliveries(sub)).toHaveLength(0);
    const put = await api(t, f, token, 'PUT', `${V}/webhooks/${sub}`, { filter: 'vendor:Beta AND sku:"L-2"' });
    expect(put.statusCode, put.body).toBe(200);
    await api(t, f, token, 'PUT', `${V}/products/${product.id}`, { sku: 'L-3' });
    expect(await deliveries(sub)).toHaveLength(0);
    await api(t, f, token, 'PUT', `${V}/products/${product.id}`, { sku: 'L-2' });
    expect(await deliveries(sub)).toHaveLength(1);
    await api(t, f, token, 'PUT', `${V}/webhooks/${sub}`, { filter: null });
    await api(t, f, token, 'PUT', `${V}/products/${product.id}`, { sku: 'L-4' });
    expect(await deliveries(sub)).toHaveLength(2);
    await api(t, f, token, 'DELETE', `${V}/webhooks/${sub}`);
  });

  it('one event to subscriptions with different fields: each gets its own body, signed for it', async () => {
    const a = (await subscribe({ address: rx.url('/fields-a'), topic: 'orders/create', include_fields: ['id', 'total_price'] })).json().data
      .id;
    const b = (await subscribe({ address: rx.url('/fields-b'), topic: 'orders/create' })).json().data.id;
    const c = (await subscribe({ address: rx.url('/fields-c'), topic: 'orders/create', filter: 'total_price:>1000' })).json().data.id;
    await worker();
    const order = await api(t, f, token, 'POST', `${V}/orders`, {
      email: 'buyer@example.com',
      line_items: [{ title: 'Tea', quantity: 2, price: '3.25' }],
    });
    expect(order.statusCode, order.body).toBe(201);
    await until(() => rx.on('/fields-a').length === 1 && rx.on('/fields-b').length === 1, 10_000, 'two deliveries');
    const full = order.json().data;
    expect(JSON.parse(rx.on('/fields-a')[0]!.body)).toEqual({ id: full.id, total_price: '6.50' });
    expect(JSON.parse(rx.on('/fields-b')[0]!.body)).toEqual(full);
    for (const path of ['/fields-a', '/fields-b']) {
      const r = rx.on(path)[0]!;
      expect(r.headers['x-service-hmac-sha256']).toBe(createHmac('sha256', f.clientSecret).update(r.body).digest('base64'));
    }
    expect(await deliveries(c)).toEqual([]);
    expect(rx.on('/fields-c')).toEqual([]);
    for (const id of [a, b, c]) await api(t, f, token, 'DELETE', `${V}/webhooks/${id}`);
  });

  it('a delete is filtered on the object as it was', async () => {
    const made = await subscribe({ address: rx.url('/deleted'), topic: 'products/delete', filter: 'vendor:Gone', include_fields: ['id'] });
    const sub = made.json().data.id;
    const keep = await api(t, f, token, 'POST', `${V}/products`, { title: 'Kept', vendor: 'Other' });
    const gone = await api(t, f, token, 'POST', `${V}/products`, { title: 'Gone', vendor: 'Gone' });
    await api(t, f, token, 'DELETE', `${V}/products/${keep.json().data.id}`);
    await api(t, f, token, 'DELETE', `${V}/products/${gone.json().data.id}`);
    await worker();
    await until(() => rx.on('/deleted').length === 1, 10_000, 'the delete');
    expect(JSON.parse(rx.on('/deleted')[0]!.body)).toEqual({ id: gone.json().data.id });
    expect(await deliveries(sub)).toHaveLength(1);
    await api(t, f, token, 'DELETE', `${V}/webhooks/${sub}`);
  });
});
