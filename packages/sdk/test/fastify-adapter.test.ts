import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { storegateFastify } from '../src/adapters/fastify-adapter.ts';
import type { WebhookEvent } from '../src/signature/webhook-signature.ts';
import { adapterFixture, cookiePair, SHOP } from './support/adapter-fixture.ts';

describe('Fastify adapter (inject)', () => {
  it('runs the install flow', async () => {
    const f = adapterFixture();
    const server = Fastify();
    await server.register(storegateFastify(f.app));
    const begin = await server.inject({ method: 'GET', url: `/auth?shop=${SHOP}` });
    expect(begin.statusCode).toBe(302);
    const state = new URL(begin.headers.location as string).searchParams.get('state')!;
    const cookie = cookiePair(begin.headers['set-cookie'] as string);
    const callback = await server.inject({
      method: 'GET',
      url: `/auth/callback?${await f.platform.redirectQuery(SHOP, state)}`,
      headers: { cookie },
    });
    expect([callback.statusCode, callback.headers.location]).toEqual([302, `/?shop=${SHOP}`]);
    expect(await f.sessionStorage.get(SHOP)).toMatchObject({ shop: SHOP });
    const mismatch = await server.inject({
      method: 'GET',
      url: `/auth/callback?${await f.platform.redirectQuery(SHOP, state)}`,
      headers: { cookie: 'storegate_state=other' },
    });
    expect([mismatch.statusCode, mismatch.body]).toEqual([400, expect.stringMatching(/^STATE_MISMATCH/)]);
    await server.close();
  });

  it('verifies webhooks on the raw bytes, whatever the content type, while other routes keep JSON parsing', async () => {
    const f = adapterFixture();
    const events: WebhookEvent[] = [];
    const server = Fastify();
    server.post('/other', async (req) => ({ parsed: req.body }));
    await server.register(storegateFastify(f.app, { onWebhook: (e) => void events.push(e) }), { prefix: '/storegate' });
    const { body, headers } = await f.webhook('{"id":"P1",   "title":"Hat"}');
    const ok = await server.inject({ method: 'POST', url: '/storegate/webhooks', payload: body, headers });
    expect(ok.statusCode).toBe(200);
    const textual = await server.inject({
      method: 'POST',
      url: '/storegate/webhooks',
      payload: body,
      headers: { ...headers, 'content-type': 'text/plain' },
    });
    expect(textual.statusCode).toBe(200);
    expect(events.map((e) => e.payload)).toEqual([
      { id: 'P1', title: 'Hat' },
      { id: 'P1', title: 'Hat' },
    ]);
    const bad = await server.inject({ method: 'POST', url: '/storegate/webhooks', payload: body.replace('Hat', 'Cap'), headers });
    expect([bad.statusCode, bad.body]).toEqual([401, expect.stringMatching(/^WEBHOOK_SIGNATURE_INVALID/)]);
    const other = await server.inject({ method: 'POST', url: '/other', payload: { a: 1 } });
    expect(other.json()).toEqual({ parsed: { a: 1 } });
    await server.close();
  });
});
