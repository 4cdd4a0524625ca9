import { describe, expect, it } from 'vitest';
import { createWebHandler } from '../src/adapters/web-handler.ts';
import type { WebhookEvent } from '../src/signature/webhook-signature.ts';
import { adapterFixture, cookiePair, SHOP } from './support/adapter-fixture.ts';

const APP = 'http://localhost:3000';

describe('web-standard handler (Request → Response)', () => {
  it('runs the install flow', async () => {
    const f = adapterFixture();
    const handle = createWebHandler(f.app);
    const begin = await handle(new Request(`${APP}/auth?shop=${SHOP}`));
    expect(begin.status).toBe(302);
    const state = new URL(begin.headers.get('location')!).searchParams.get('state')!;
    const cookie = cookiePair(begin.headers.get('set-cookie'));
    const callback = await handle(
      new Request(`${APP}/auth/callback?${await f.platform.redirectQuery(SHOP, state)}`, { headers: { cookie } }),
    );
    expect([callback.status, callback.headers.get('location')]).toEqual([302, `/?shop=${SHOP}`]);
    expect(await f.sessionStorage.get(SHOP)).toMatchObject({ shop: SHOP });
  });

  it('verifies webhooks and answers 404 elsewhere', async () => {
    const f = adapterFixture();
    const events: WebhookEvent[] = [];
    const handle = createWebHandler(f.app, { paths: { webhooks: '/api/webhooks' }, onWebhook: (e) => void events.push(e) });
    const { body, headers } = await f.webhook();
    expect((await handle(new Request(`${APP}/api/webhooks`, { method: 'POST', body, headers }))).status).toBe(200);
    expect(events[0]).toMatchObject({ id: 'wh-1', topic: 'products/create' });
    const bad = await handle(new Request(`${APP}/api/webhooks`, { method: 'POST', body: `${body}\n`, headers }));
    expect(bad.status).toBe(401);
    expect((await handle(new Request(`${APP}/nope`))).status).toBe(404);
  });

  it('requireStandardWebhookSignature makes the app refuse body-signature-only webhooks', async () => {
    const f = adapterFixture({ requireStandardWebhookSignature: true });
    const { body, headers } = await f.webhook();
    await expect(f.app.verifyWebhook({ rawBody: body, headers })).rejects.toMatchObject({ code: 'WEBHOOK_SIGNATURE_MISSING' });
  });

  it('app.verifyWebhook reads a web Request directly', async () => {
    const f = adapterFixture();
    const { body, headers } = await f.webhook();
    const event = await f.app.verifyWebhook(new Request(`${APP}/webhooks`, { method: 'POST', body, headers }));
    expect(event.payload).toEqual({ id: 'P1', title: 'Hat' });
  });
});
