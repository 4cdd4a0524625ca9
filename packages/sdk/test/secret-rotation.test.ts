// Verification while the platform rotates a secret: a `webhook-signature` with several `v1,`
// entries checked against any configured secret, the body signature and the query `hmac` against
// each secret in turn, and the app configured with `clientSecret: [new, old]`.
import { describe, expect, it } from 'vitest';
import { createApp, signQuery, signStandardWebhook, signWebhook, verifyQuery, verifyWebhook } from '../src/index.ts';

const OLD = 'sg_cs_old-secret';
const NEW = 'sg_cs_new-secret';
const OTHER = 'sg_cs_someone-else';
const body = '{"id":"1","title":"Mug"}';
const ts = 1_800_000_000;
const now = () => ts * 1000;

async function duringRotation(order: [string, string] = [NEW, OLD]) {
  const entries = await Promise.all(order.map((s) => signStandardWebhook({ id: 'wh_1', timestamp: ts, rawBody: body }, s)));
  return {
    'webhook-id': 'wh_1',
    'webhook-timestamp': String(ts),
    'webhook-signature': entries.join(' '),
    'x-service-hmac-sha256': await signWebhook(body, OLD),
  };
}

describe('webhook-signature with one v1 entry per secret', () => {
  it('verifies with the new secret, the old one, or both, whatever the order of entries and secrets', async () => {
    for (const order of [[NEW, OLD] as [string, string], [OLD, NEW] as [string, string]]) {
      const headers = await duringRotation(order);
      for (const secret of [NEW, OLD, [NEW, OLD], [OLD, NEW], [OTHER, NEW]]) {
        const event = await verifyWebhook({ rawBody: body, headers, secret, now });
        expect(event.scheme).toBe('standard-webhooks');
      }
    }
  });

  it('refuses when no configured secret matches any entry, naming how many secrets were checked', async () => {
    const headers = await duringRotation();
    await expect(verifyWebhook({ rawBody: body, headers, secret: [OTHER, 'sg_cs_another'], now })).rejects.toMatchObject({
      code: 'WEBHOOK_SIGNATURE_INVALID',
      message: expect.stringContaining('checked 2 secrets'),
    });
    // A tampered body fails with every entry.
    await expect(verifyWebhook({ rawBody: `${body} `, headers, secret: [NEW, OLD], now })).rejects.toMatchObject({
      code: 'WEBHOOK_SIGNATURE_INVALID',
    });
  });

  it('skips entries of other versions and tolerates repeated spaces between entries', async () => {
    const headers = await duringRotation();
    const [first, second] = headers['webhook-signature'].split(' ');
    const spaced = { ...headers, 'webhook-signature': `v2,not-a-known-scheme  ${first}   ${second}` };
    await expect(verifyWebhook({ rawBody: body, headers: spaced, secret: OLD, now })).resolves.toBeTruthy();
    const onlyUnknown = { ...headers, 'webhook-signature': 'v1a,xyz v2,abc' };
    await expect(verifyWebhook({ rawBody: body, headers: onlyUnknown, secret: OLD, now })).rejects.toMatchObject({
      code: 'WEBHOOK_SIGNATURE_MISSING',
    });
  });

  it('X-Service-Hmac-Sha256 alone (signed with the old secret during the overlap) verifies with [new, old]', async () => {
    const { 'x-service-hmac-sha256': hmac } = await duringRotation();
    const event = await verifyWebhook({ rawBody: body, headers: { 'x-service-hmac-sha256': hmac }, secret: [NEW, OLD] });
    expect(event.scheme).toBe('hmac-sha256');
    await expect(verifyWebhook({ rawBody: body, headers: { 'x-service-hmac-sha256': hmac }, secret: NEW })).rejects.toMatchObject({
      code: 'WEBHOOK_SIGNATURE_INVALID',
    });
  });
});

describe('query hmac with several secrets', () => {
  it('tries each secret: signed with the old or the new one, [new, old] accepts both', async () => {
    const params = { shop: 'demo.localhost', timestamp: String(ts) };
    for (const signer of [OLD, NEW]) {
      const query = `${new URLSearchParams(params)}&hmac=${await signQuery(params, signer)}`;
      await expect(verifyQuery(query, [NEW, OLD], { timestampToleranceSeconds: 300, now })).resolves.toMatchObject(params);
      await expect(verifyQuery(query, [OTHER], { now })).rejects.toMatchObject({ message: expect.stringContaining('checked 1 secret') });
    }
  });

  it('an app configured with [new, old] verifies App-URL requests and webhooks signed either way', async () => {
    const app = createApp({
      clientId: 'client-1',
      clientSecret: [NEW, OLD],
      scopes: ['read_products'],
      redirectUri: 'http://localhost:3000/auth/callback',
      clock: { now },
    });
    const params = { shop: 'demo.localhost', timestamp: String(ts) };
    for (const signer of [OLD, NEW]) {
      const query = `${new URLSearchParams(params)}&hmac=${await signQuery(params, signer)}`;
      await expect(app.verifyInstallRequest(query)).resolves.toMatchObject({ shop: 'demo.localhost' });
    }
    await expect(app.verifyWebhook({ rawBody: body, headers: await duringRotation() })).resolves.toMatchObject({ id: 'wh_1' });
  });
});
