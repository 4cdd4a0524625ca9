// The documented zero-downtime procedure, phase by phase, against the example receiver and the
// platform's own signer: before the rotation the app holds [old]; during it the platform signs as it
// does in an overlap and the app is redeployed with [new, old]; after "Finish rotation" the platform
// signs with the new secret only and the app drops the old one. Every request verifies at every step.
import { describe, expect, it } from 'vitest';
import { signedQueryString } from '../../../packages/platform/src/domain/query-signature.ts';
import type { SigningSecrets } from '../../../packages/platform/src/domain/signing-secrets.ts';
import { webhookHeaders } from '../../../packages/platform/src/webhooks/signer.ts';
import { answer, rotationApp, secretList } from '../src/rotation-receiver.ts';

const OLD = 'sg_cs_old-secret';
const NEW = 'sg_cs_new-secret';

function platformRequests(secrets: SigningSecrets) {
  const body = '{"id":"7","title":"Mug"}';
  const headers = webhookHeaders(
    secrets,
    {
      webhookId: 'wh_7',
      eventId: 'evt_7',
      topic: 'products/create',
      shopDomain: 'demo.localhost',
      apiVersion: '2026-01',
      triggeredAt: Date.now(),
      body,
    },
    Date.now(),
  );
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const { 'webhook-signature': _standard, ...legacy } = lower;
  const launch = signedQueryString(
    { shop: 'demo.localhost', timestamp: String(Math.floor(Date.now() / 1000)) },
    secrets.previous ?? secrets.current,
  );
  return [
    { method: 'POST', url: '/webhooks', headers: lower, rawBody: new TextEncoder().encode(body) },
    // A receiver that reads only X-Service-Hmac-Sha256 (an older client).
    { method: 'POST', url: '/webhooks', headers: legacy, rawBody: new TextEncoder().encode(body) },
    { method: 'GET', url: `/?${launch}`, headers: {}, rawBody: new Uint8Array() },
  ];
}

async function allVerify(deployed: string[], platform: SigningSecrets): Promise<void> {
  const app = rotationApp('client-1', deployed);
  for (const request of platformRequests(platform)) {
    const out = await answer(app, request);
    expect(out, `${request.method} ${request.url} with [${deployed.join(', ')}]`).toMatchObject({ status: 200 });
  }
}

describe('zero-downtime rotation with the example receiver', () => {
  it('every request verifies before, during (old app and redeployed app) and after the rotation', async () => {
    await allVerify([OLD], { current: OLD });
    // Rotated on the platform; the app has not deployed yet.
    await allVerify([OLD], { current: NEW, previous: OLD });
    // Deployed [new, old].
    await allVerify(secretList(` ${NEW} , ${OLD} `), { current: NEW, previous: OLD });
    // "Finish rotation": the platform signs with the new secret only; the app still lists both, then drops the old one.
    await allVerify([NEW, OLD], { current: NEW });
    await allVerify([NEW], { current: NEW });
  });

  it('finishing before the app deployed the new secret is what breaks it: the reason is named', async () => {
    const app = rotationApp('client-1', [OLD]);
    const [webhook] = platformRequests({ current: NEW });
    const out = await answer(app, webhook!);
    expect(out.status).toBe(401);
    expect(out.body).toMatch(/does not match/);
  });
});
