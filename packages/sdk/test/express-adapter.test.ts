import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { storegateExpress } from '../src/adapters/express-adapter.ts';
import type { WebhookEvent } from '../src/signature/webhook-signature.ts';
import { adapterFixture, cookiePair, SHOP } from './support/adapter-fixture.ts';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function listen(server: express.Express): Promise<string> {
  const http = await new Promise<Server>((resolve) => {
    const s = server.listen(0, '127.0.0.1', () => resolve(s));
  });
  servers.push(http);
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
}

describe('Express adapter (real requests on an ephemeral port)', () => {
  it('runs the install: begin → authorize redirect with cookie → callback → session stored', async () => {
    const f = adapterFixture();
    const server = express();
    server.use(storegateExpress(f.app, { afterAuth: (s) => `/welcome?shop=${s.shop}` }));
    const base = await listen(server);

    const begin = await fetch(`${base}/auth?shop=${SHOP}`, { redirect: 'manual' });
    expect(begin.status).toBe(302);
    const authorize = new URL(begin.headers.get('location')!);
    expect(authorize.href).toMatch(/^http:\/\/demo\.localhost:8080\/admin\/oauth\/authorize\?/);
    const cookie = cookiePair(begin.headers.get('set-cookie'));
    expect(cookie).toMatch(/^storegate_state=/);

    const query = await f.platform.redirectQuery(SHOP, authorize.searchParams.get('state')!);
    const callback = await fetch(`${base}/auth/callback?${query}`, { redirect: 'manual', headers: { cookie } });
    expect(callback.status).toBe(302);
    expect(callback.headers.get('location')).toBe(`/welcome?shop=${SHOP}`);
    expect(callback.headers.get('set-cookie')).toMatch(/^storegate_state=; Path=\/; Max-Age=0/);
    expect(await f.sessionStorage.get(SHOP)).toMatchObject({ shop: SHOP, accessToken: expect.stringMatching(/^sg_at_/) });
  });

  it('verifies a signed App-URL request before redirecting, and refuses a forged one', async () => {
    const f = adapterFixture();
    const server = express();
    server.use(storegateExpress(f.app));
    const base = await listen(server);
    const ok = await fetch(`${base}/auth?${await f.platform.installQuery(SHOP)}`, { redirect: 'manual' });
    expect(ok.status).toBe(302);
    const forged = await fetch(`${base}/auth?${(await f.platform.installQuery(SHOP)).replace('demo', 'evil')}`, { redirect: 'manual' });
    expect([forged.status, await forged.text()]).toEqual([400, expect.stringMatching(/^HMAC_INVALID/)]);
    const badCallback = await fetch(`${base}/auth/callback?shop=${SHOP}&code=x`, { redirect: 'manual' });
    expect([badCallback.status, await badCallback.text()]).toEqual([400, expect.stringMatching(/^STATE_MISSING/)]);
  });

  it('verifies webhooks on the exact bytes and hands the event to onWebhook', async () => {
    const f = adapterFixture();
    const events: WebhookEvent[] = [];
    const server = express();
    server.use(storegateExpress(f.app, { onWebhook: (e) => void events.push(e) }));
    const base = await listen(server);
    // Deliberately odd formatting: a re-serialised body would not verify.
    const { body, headers } = await f.webhook('{ "id" : "P1",\n "title":"Hat" }');
    const ok = await fetch(`${base}/webhooks`, { method: 'POST', body, headers });
    expect(ok.status).toBe(200);
    expect(events.map((e) => [e.id, e.topic, e.shop, e.payload])).toEqual([['wh-1', 'products/create', SHOP, { id: 'P1', title: 'Hat' }]]);
    const bad = await fetch(`${base}/webhooks`, { method: 'POST', body: `${body} `, headers });
    expect([bad.status, await bad.text()]).toEqual([401, expect.stringMatching(/^WEBHOOK_SIGNATURE_INVALID/)]);
    expect(events).toHaveLength(1);
  });

  it('an empty webhook POST is unsigned (401), not a raw-body problem', async () => {
    const f = adapterFixture();
    const server = express();
    server.use(storegateExpress(f.app));
    const base = await listen(server);
    const res = await fetch(`${base}/webhooks`, { method: 'POST' });
    expect([res.status, await res.text()]).toEqual([401, expect.stringMatching(/^WEBHOOK_SIGNATURE_MISSING/)]);
  });

  it('says so when a global express.json() consumed the body first', async () => {
    const f = adapterFixture();
    const errors: unknown[] = [];
    const server = express();
    server.use(express.json());
    server.use(storegateExpress(f.app, { onError: (e) => errors.push(e) }));
    const base = await listen(server);
    const { body, headers } = await f.webhook();
    const res = await fetch(`${base}/webhooks`, { method: 'POST', body, headers });
    expect([res.status, await res.text()]).toEqual([500, expect.stringMatching(/^WEBHOOK_BODY_NOT_RAW/)]);
    expect(errors[0]).toMatchObject({ code: 'WEBHOOK_BODY_NOT_RAW', message: expect.stringContaining('express.json()') });
  });

  it('answers 500 when the webhook handler throws, so the platform retries', async () => {
    const f = adapterFixture();
    const server = express();
    server.use(storegateExpress(f.app, { onWebhook: () => Promise.reject(new Error('db down')) }));
    const base = await listen(server);
    const { body, headers } = await f.webhook();
    const res = await fetch(`${base}/webhooks`, { method: 'POST', body, headers });
    expect([res.status, await res.text()]).toEqual([500, 'webhook handler failed']);
  });
});
