// `v1a` (Ed25519) webhook signatures: every verdict of test-vectors/webhook-ed25519.json (made with
// the openssl command), then the keys fetched from a jwks_uri: kept, fetched again for a key the
// set lacks at most once per minRefetchSeconds, and refused cleanly when they cannot be had.
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { remoteJwks, verifyWebhook, WebhookError } from '../src/index.ts';
import type { JsonWebKeySet, WebhookPublicJwk } from '../src/signature/webhook-public-keys.ts';
import { fakeFetch } from './support/fake-fetch.ts';

interface VectorCase {
  name: string;
  headers: Record<string, string>;
  body: string;
  now: number;
  expected: string;
}
const vectors = JSON.parse(readFileSync(new URL('../../../test-vectors/webhook-ed25519.json', import.meta.url), 'utf8')) as {
  tolerance_seconds: number;
  jwks: JsonWebKeySet;
  other_key: WebhookPublicJwk;
  hmac_secret: string;
  cases: VectorCase[];
};
const at = (seconds: number) => () => seconds * 1000;

async function verdict(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
    return 'valid';
  } catch (err) {
    if (err instanceof WebhookError) return err.code;
    throw err;
  }
}

describe('v1a signatures (test-vectors/webhook-ed25519.json)', () => {
  it('covers valid deliveries and each refusal', () => {
    const verdicts = new Set(vectors.cases.map((c) => c.expected));
    expect([...verdicts].sort()).toEqual([
      'WEBHOOK_SIGNATURE_INVALID',
      'WEBHOOK_SIGNATURE_MISSING',
      'WEBHOOK_TIMESTAMP_OUT_OF_RANGE',
      'valid',
    ]);
  });
  for (const c of vectors.cases) {
    it(c.name, async () => {
      const got = await verdict(() =>
        verifyWebhook({
          rawBody: c.body,
          headers: c.headers,
          publicKeys: vectors.jwks,
          now: at(c.now),
          toleranceSeconds: vectors.tolerance_seconds,
        }),
      );
      expect(got).toBe(c.expected);
    });
  }
  it('names the scheme it checked', async () => {
    const c = vectors.cases[0]!;
    const event = await verifyWebhook({ rawBody: c.body, headers: c.headers, publicKeys: vectors.jwks, now: at(c.now) });
    expect(event.scheme).toBe('standard-webhooks-ed25519');
    expect(event.id).toBe(c.headers['webhook-id']);
  });
  it('refuses every valid case with a key set that lacks the signing key (a wrong key)', async () => {
    for (const c of vectors.cases.filter((x) => x.expected === 'valid')) {
      const got = await verdict(() =>
        verifyWebhook({ rawBody: c.body, headers: c.headers, publicKeys: { keys: [vectors.other_key] }, now: at(c.now) }),
      );
      expect(got, c.name).toBe('WEBHOOK_SIGNATURE_INVALID');
    }
  });
  it('with a secret and public keys either kind suffices; the v1 entry is checked with the secret', async () => {
    const c = vectors.cases.find((x) => x.headers['webhook-signature']!.startsWith('v1,') && x.expected === 'valid')!;
    const both = await verifyWebhook({
      rawBody: c.body,
      headers: c.headers,
      secret: vectors.hmac_secret,
      publicKeys: vectors.jwks,
      now: at(c.now),
    });
    expect(both.scheme).toBe('standard-webhooks');
    const keysOnly = await verifyWebhook({
      rawBody: c.body,
      headers: c.headers,
      secret: 'another secret',
      publicKeys: vectors.jwks,
      now: at(c.now),
    });
    expect(keysOnly.scheme).toBe('standard-webhooks-ed25519');
    const hmacOnly = vectors.cases.find((x) => x.expected === 'WEBHOOK_SIGNATURE_MISSING')!;
    const v1 = await verifyWebhook({
      rawBody: hmacOnly.body,
      headers: hmacOnly.headers,
      secret: vectors.hmac_secret,
      now: at(hmacOnly.now),
    });
    expect(v1.scheme).toBe('standard-webhooks');
  });
  it('needs webhook-signature when only public keys are given, and something to check with', async () => {
    const c = vectors.cases[0]!;
    const { 'webhook-signature': _s, ...without } = c.headers;
    expect(
      await verdict(() =>
        verifyWebhook({
          rawBody: c.body,
          headers: { ...without, 'x-service-hmac-sha256': 'abc' },
          publicKeys: vectors.jwks,
          now: at(c.now),
        }),
      ),
    ).toBe('WEBHOOK_SIGNATURE_MISSING');
    expect(await verdict(() => verifyWebhook({ rawBody: c.body, headers: c.headers, now: at(c.now) }))).toBe('WEBHOOK_SIGNATURE_MISSING');
  });
  it('refuses a key set that is not one', async () => {
    const c = vectors.cases[0]!;
    const bad = { keys: 'nope' } as unknown as JsonWebKeySet;
    expect(await verdict(() => verifyWebhook({ rawBody: c.body, headers: c.headers, publicKeys: bad, now: at(c.now) }))).toBe(
      'WEBHOOK_KEYS_UNAVAILABLE',
    );
  });
});

// A platform of the test's own: its keys, the JWKS it would publish, deliveries it signs.
function platformKey(): { jwk: WebhookPublicJwk; privateKey: KeyObject; kid: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x!;
  const kid = `kid-${x.slice(0, 8)}`;
  return { jwk: { kty: 'OKP', crv: 'Ed25519', x, kid, use: 'sig', alg: 'EdDSA' }, privateKey, kid };
}

function delivery(keys: { privateKey: KeyObject; kid: string }[], nowSeconds: number, body = '{"id":1}') {
  const id = `wh_${Math.random().toString(36).slice(2)}`;
  const signed = Buffer.from(`${id}.${nowSeconds}.${body}`);
  return {
    rawBody: body,
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(nowSeconds),
      'webhook-signature': keys.map((k) => `v1a,${sign(null, signed, k.privateKey).toString('base64')}`).join(' '),
      'x-service-signing-key-ids': keys.map((k) => k.kid).join(' '),
    },
  };
}

describe('remoteJwks: the keys of a jwks_uri', () => {
  const URL_ = 'https://storegate.example/.well-known/jwks.json';

  function platform() {
    const published: WebhookPublicJwk[] = [];
    const f = fakeFetch(() => new Response(JSON.stringify({ keys: published }), { headers: { 'content-type': 'application/json' } }));
    return { published, f };
  }

  it('fetches once and keeps the keys; a rotation is picked up through the unknown kid, then the old key retires', async () => {
    let now = 1_700_000_000;
    const { published, f } = platform();
    const old = platformKey();
    published.push(old.jwk);
    const keys = remoteJwks(URL_, { fetch: f.fetch, now: () => now * 1000 });
    const verify = (d: ReturnType<typeof delivery>) => verifyWebhook({ ...d, publicKeys: keys, now: () => now * 1000 });

    expect((await verify(delivery([old], now))).scheme).toBe('standard-webhooks-ed25519');
    await verify(delivery([old], now));
    expect(f.calls.length).toBe(1);
    expect(f.calls[0]!.url).toBe(URL_);

    // The platform rotates: the new key is published and signs beside the old one.
    const next = platformKey();
    published.unshift(next.jwk);
    now += 60;
    await verify(delivery([next, old], now));
    expect(f.calls.length).toBe(2);
    // The overlap ends: only the new key signs, and the app already holds it.
    published.pop();
    now += 60;
    await verify(delivery([next], now));
    expect(f.calls.length).toBe(2);
  });

  it('refetches for an unknown key at most once per minRefetchSeconds, and refuses what no trusted key signed', async () => {
    let now = 1_700_000_000;
    const { published, f } = platform();
    const known = platformKey();
    published.push(known.jwk);
    const keys = remoteJwks(URL_, { fetch: f.fetch, now: () => now * 1000, minRefetchSeconds: 30 });
    const verify = (d: ReturnType<typeof delivery>) => verdict(() => verifyWebhook({ ...d, publicKeys: keys, now: () => now * 1000 }));
    expect(await verify(delivery([known], now))).toBe('valid');
    expect(f.calls.length).toBe(1);

    const stranger = platformKey();
    now += 31;
    expect(await verify(delivery([stranger], now))).toBe('WEBHOOK_SIGNATURE_INVALID');
    expect(f.calls.length).toBe(2);
    // Forged deliveries in a row: no fetch until the bound has passed.
    for (let i = 0; i < 5; i++) expect(await verify(delivery([stranger], now))).toBe('WEBHOOK_SIGNATURE_INVALID');
    expect(f.calls.length).toBe(2);
    now += 31;
    expect(await verify(delivery([stranger], now))).toBe('WEBHOOK_SIGNATURE_INVALID');
    expect(f.calls.length).toBe(3);
    // Tampering is refused with the right key in hand.
    const d = delivery([known], now);
    expect(await verify({ ...d, rawBody: '{"id":2}' })).toBe('WEBHOOK_SIGNATURE_INVALID');
    expect(await verify({ ...d, headers: { ...d.headers, 'webhook-id': 'wh_other' } })).toBe('WEBHOOK_SIGNATURE_INVALID');
    expect(await verify({ ...d, headers: { ...d.headers, 'webhook-timestamp': String(now - 1) } })).toBe('WEBHOOK_SIGNATURE_INVALID');
  });

  it('refetches a set older than maxAgeSeconds, and keeps the held keys when that fetch fails', async () => {
    let now = 1_700_000_000;
    let fail = false;
    const k = platformKey();
    const f = fakeFetch(() => (fail ? new Response('down', { status: 503 }) : new Response(JSON.stringify({ keys: [k.jwk] }))));
    const keys = remoteJwks(URL_, { fetch: f.fetch, now: () => now * 1000, maxAgeSeconds: 300 });
    const verify = () => verdict(() => verifyWebhook({ ...delivery([k], now), publicKeys: keys, now: () => now * 1000 }));
    expect(await verify()).toBe('valid');
    now += 301;
    fail = true;
    expect(await verify()).toBe('valid');
    expect(f.calls.length).toBe(2);
  });

  it('says the keys are out of reach when the first fetch fails or answers something else than a key set', async () => {
    const now = 1_700_000_000;
    const k = platformKey();
    for (const answer of [
      () => new Response('down', { status: 503 }),
      () => new Response('<html>', { status: 200 }),
      () => new Response('x'.repeat(70_000), { status: 200 }),
      () => Promise.reject(new TypeError('fetch failed')),
    ]) {
      const f = fakeFetch(answer);
      const keys = remoteJwks(URL_, { fetch: f.fetch, now: () => now * 1000 });
      const err = await verifyWebhook({ ...delivery([k], now), publicKeys: keys, now: () => now * 1000 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WebhookError);
      expect((err as WebhookError).code).toBe('WEBHOOK_KEYS_UNAVAILABLE');
    }
    expect(() => remoteJwks('file:///etc/keys.json')).toThrow(WebhookError);
  });
});

describe('createApp({ webhookPublicKeys })', () => {
  it('app.verifyWebhook accepts v1a entries with the configured keys; a malformed setting is a ConfigError', async () => {
    const { createApp, ConfigError } = await import('../src/index.ts');
    const base = { clientId: 'sg_ci_1', clientSecret: 'sg_cs_secret', scopes: ['read_products'], redirectUri: 'https://app.example/cb' };
    const c = vectors.cases[0]!;
    const app = createApp({ ...base, webhookPublicKeys: vectors.jwks, clock: { now: () => c.now * 1000 } });
    expect((await app.verifyWebhook({ rawBody: c.body, headers: c.headers })).scheme).toBe('standard-webhooks-ed25519');
    const without = createApp({ ...base, clock: { now: () => c.now * 1000 } });
    expect(await verdict(() => without.verifyWebhook({ rawBody: c.body, headers: c.headers }))).toBe('WEBHOOK_SIGNATURE_MISSING');
    expect(() => createApp({ ...base, webhookPublicKeys: 'https://x' as unknown as JsonWebKeySet })).toThrow(ConfigError);
  });
});
