import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signStandardWebhook, signWebhook, verifyWebhook } from '../src/signature/webhook-signature.ts';

const vectors = JSON.parse(readFileSync(new URL('../../../test-vectors/signatures.json', import.meta.url), 'utf8')) as {
  webhook_body_hmac: Array<{ secret: string; body: string; header: string; value: string }>;
  webhook_standard_signature: Array<Record<string, string>>;
};
const body = vectors.webhook_body_hmac[0]!;
const std = vectors.webhook_standard_signature[0]!;
const at = (seconds: number) => () => seconds * 1000;

describe('X-Service-Hmac-Sha256 (base64 HMAC of the raw body)', () => {
  it('matches the known answer', async () => {
    expect(await signWebhook(body.body, body.secret)).toBe(body.value);
  });
  it('verifies a string, a Buffer, a Uint8Array and an ArrayBuffer body', async () => {
    const bytes = new TextEncoder().encode(body.body);
    for (const rawBody of [body.body, Buffer.from(body.body), bytes, bytes.buffer.slice(0)]) {
      const event = await verifyWebhook({ rawBody, headers: { [body.header.toLowerCase()]: body.value }, secret: body.secret });
      expect(event.scheme).toBe('hmac-sha256');
      expect(event.payload).toEqual({ id: 'ORDER_1', topic: 'orders/create' });
    }
  });
  it('returns the typed event from the X-Service-* headers', async () => {
    const headers = new Headers({
      'X-Service-Hmac-Sha256': body.value,
      'X-Service-Topic': 'orders/create',
      'X-Service-Shop-Domain': 'demo.localhost',
      'X-Service-Api-Version': '2026-01',
      'X-Service-Webhook-Id': 'wh-123',
      'X-Service-Event-Id': 'ev-9',
      'X-Service-Triggered-At': '2026-01-01T00:00:00Z',
    });
    const event = await verifyWebhook({ rawBody: body.body, headers, secret: body.secret });
    expect({ ...event.toJSON(), payload: event.payload }).toMatchObject({
      id: 'wh-123',
      topic: 'orders/create',
      shop: 'demo.localhost',
      apiVersion: '2026-01',
      eventId: 'ev-9',
      triggeredAt: '2026-01-01T00:00:00Z',
      rawBody: body.body,
      payload: { id: 'ORDER_1', topic: 'orders/create' },
    });
  });
  it('takes the header prefix and signature header name from options (interoperability)', async () => {
    const event = await verifyWebhook({
      rawBody: body.body,
      headers: { 'x-shopify-hmac-sha256': body.value, 'x-shopify-topic': 'orders/create', 'x-shopify-webhook-id': 'w1' },
      secret: body.secret,
      headerPrefix: 'X-Shopify-',
    });
    expect([event.topic, event.id]).toEqual(['orders/create', 'w1']);
    const custom = await verifyWebhook({
      rawBody: body.body,
      headers: { 'x-sig': body.value },
      secret: body.secret,
      signatureHeader: 'X-Sig',
    });
    expect(custom.scheme).toBe('hmac-sha256');
  });
  it('accepts any of several secrets (rotation)', async () => {
    await expect(
      verifyWebhook({ rawBody: body.body, headers: { 'x-service-hmac-sha256': body.value }, secret: ['new', body.secret] }),
    ).resolves.toBeDefined();
  });
  it('says which check failed', async () => {
    await expect(verifyWebhook({ rawBody: body.body, headers: {}, secret: body.secret })).rejects.toMatchObject({
      code: 'WEBHOOK_SIGNATURE_MISSING',
    });
    const wrong = verifyWebhook({ rawBody: body.body, headers: { 'x-service-hmac-sha256': body.value }, secret: 'other' });
    await expect(wrong).rejects.toMatchObject({
      code: 'WEBHOOK_SIGNATURE_INVALID',
      message: expect.stringMatching(/secret is wrong.*re-serialised/s),
    });
    const reserialised = JSON.stringify(JSON.parse(body.body), null, 2);
    await expect(
      verifyWebhook({ rawBody: reserialised, headers: { 'x-service-hmac-sha256': body.value }, secret: body.secret }),
    ).rejects.toMatchObject({
      code: 'WEBHOOK_SIGNATURE_INVALID',
    });
  });
  it('refuses a parsed object with a clear error', async () => {
    const parsed = JSON.parse(body.body) as unknown;
    const error = await verifyWebhook({
      rawBody: parsed as string,
      headers: { 'x-service-hmac-sha256': body.value },
      secret: body.secret,
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'WEBHOOK_BODY_NOT_RAW', name: 'WebhookError' });
    expect((error as Error).message).toMatch(/parsed object.*express\.json/);
    await expect(verifyWebhook({ rawBody: undefined as unknown as string, headers: {}, secret: 's' })).rejects.toMatchObject({
      code: 'WEBHOOK_BODY_NOT_RAW',
    });
  });
  it('parses the payload only on access, with a typed error for non-JSON', async () => {
    const sig = await signWebhook('not json', 's');
    const event = await verifyWebhook({ rawBody: 'not json', headers: { 'x-service-hmac-sha256': sig }, secret: 's' });
    expect(event.rawBody).toBe('not json');
    expect(() => event.payload).toThrow(expect.objectContaining({ code: 'WEBHOOK_PAYLOAD_INVALID' }));
  });
});

describe('Standard Webhooks signature (webhook-id / webhook-timestamp / webhook-signature)', () => {
  const headers = (signature: string, ts = std['webhook-timestamp']!) => ({
    'webhook-id': std['webhook-id']!,
    'webhook-timestamp': ts,
    'webhook-signature': signature,
  });
  it('matches the known answer', async () => {
    expect(
      await signStandardWebhook({ id: std['webhook-id']!, timestamp: std['webhook-timestamp']!, rawBody: std['body']! }, std['secret']!),
    ).toBe(std['webhook-signature']);
  });
  it('verifies with the timestamp inside the tolerance and returns webhook-id as the de-dup id', async () => {
    const event = await verifyWebhook({
      rawBody: std['body']!,
      headers: headers(std['webhook-signature']!),
      secret: std['secret']!,
      now: at(1700000100),
    });
    expect([event.scheme, event.id, event.timestamp]).toEqual(['standard-webhooks', 'wh_01', 1700000000]);
  });
  it('accepts one good signature among several, ignoring other versions', async () => {
    const sig = `v2,abc v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= ${std['webhook-signature']}`;
    await expect(
      verifyWebhook({ rawBody: std['body']!, headers: headers(sig), secret: std['secret']!, now: at(1700000000) }),
    ).resolves.toBeDefined();
  });
  it('refuses a replay outside the tolerance and a wrong signature', async () => {
    await expect(
      verifyWebhook({ rawBody: std['body']!, headers: headers(std['webhook-signature']!), secret: std['secret']!, now: at(1700000301) }),
    ).rejects.toMatchObject({
      code: 'WEBHOOK_TIMESTAMP_OUT_OF_RANGE',
    });
    await expect(
      verifyWebhook({
        rawBody: std['body']!,
        headers: headers(std['webhook-signature']!),
        secret: std['secret']!,
        now: at(1700000301),
        toleranceSeconds: 600,
      }),
    ).resolves.toBeDefined();
    await expect(
      verifyWebhook({
        rawBody: `${std['body']} `,
        headers: headers(std['webhook-signature']!),
        secret: std['secret']!,
        now: at(1700000000),
      }),
    ).rejects.toMatchObject({
      code: 'WEBHOOK_SIGNATURE_INVALID',
    });
    await expect(
      verifyWebhook({ rawBody: std['body']!, headers: headers('v2,abc'), secret: std['secret']!, now: at(1700000000) }),
    ).rejects.toMatchObject({
      code: 'WEBHOOK_SIGNATURE_MISSING',
    });
  });
  it('takes the standard signature over the body header when both are present', async () => {
    const both = { ...headers('v1,wrong'), 'x-service-hmac-sha256': body.value };
    await expect(
      verifyWebhook({ rawBody: std['body']!, headers: both, secret: std['secret']!, now: at(1700000000) }),
    ).rejects.toMatchObject({ code: 'WEBHOOK_SIGNATURE_INVALID' });
  });
  it('requireStandardSignature refuses a body-header-only webhook', async () => {
    await expect(
      verifyWebhook({
        rawBody: body.body,
        headers: { 'x-service-hmac-sha256': body.value },
        secret: body.secret,
        requireStandardSignature: true,
      }),
    ).rejects.toMatchObject({
      code: 'WEBHOOK_SIGNATURE_MISSING',
    });
  });
});

describe('properties', () => {
  it('sign then verify always succeeds, and flipping any byte of the body fails', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 1, maxLength: 300 }),
        fc.string({ minLength: 1 }),
        fc.nat(),
        async (bytes, secret, pick) => {
          const signature = await signWebhook(bytes, secret);
          await verifyWebhook({ rawBody: bytes, headers: { 'x-service-hmac-sha256': signature }, secret });
          const changed = bytes.slice();
          const i = pick % changed.length;
          changed[i] = (changed[i]! ^ (1 << (pick % 8))) & 0xff;
          await expect(verifyWebhook({ rawBody: changed, headers: { 'x-service-hmac-sha256': signature }, secret })).rejects.toMatchObject({
            code: 'WEBHOOK_SIGNATURE_INVALID',
          });
        },
      ),
      { numRuns: 150 },
    );
  });
  it('standard signature: any change to id, timestamp or body fails', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.stringMatching(/^[a-z0-9_]{1,12}$/),
        fc.string({ maxLength: 100 }),
        fc.constantFrom('id', 'ts', 'body'),
        async (id, text, what) => {
          const ts = 1700000000;
          const signature = await signStandardWebhook({ id, timestamp: ts, rawBody: text }, 's');
          const ok = { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': signature };
          await verifyWebhook({ rawBody: text, headers: ok, secret: 's', now: at(ts) });
          const bad =
            what === 'id' ? { ...ok, 'webhook-id': `${id}x` } : what === 'ts' ? { ...ok, 'webhook-timestamp': String(ts + 1) } : ok;
          await expect(
            verifyWebhook({ rawBody: what === 'body' ? `${text}x` : text, headers: bad, secret: 's', now: at(ts) }),
          ).rejects.toMatchObject({
            code: 'WEBHOOK_SIGNATURE_INVALID',
          });
        },
      ),
      { numRuns: 100 },
    );
  });
});
