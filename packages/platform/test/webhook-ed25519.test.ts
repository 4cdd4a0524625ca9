// Asymmetric webhook signatures (Standard Webhooks `v1a`, Ed25519), on SQLite and PostgreSQL: only
// apps that asked get `v1a` entries, each verifying with node:crypto against the key the JWKS
// publishes; a key rotation signs with both keys during its overlap, then with the new one, and the
// JWKS follows; two platforms on one database agree on the first key; a master-key rotation
// re-seals the private keys; the settings refuse bad input and change nothing.
import { createPublicKey, verify as verifySignature } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../sdk/src/index.ts';
import type { Config } from '../src/config.ts';
import { ConflictError, ValidationFailedError } from '../src/domain/errors.ts';
import { SecretBox } from '../src/domain/secret-box.ts';
import { asymmetricSignature, ed25519Thumbprint, privateSigningKey } from '../src/domain/webhook-signing-keys.ts';
import { SqlWebhookSigningKeyRepository } from '../src/storage/repositories/webhook-signing-key-repository.ts';
import type { WebhookWorker } from '../src/webhooks/webhook-worker.ts';
import {
  api,
  appToken,
  createFixture,
  createTestPlatform,
  csrfFrom,
  DIALECTS,
  type Fixture,
  testWorker,
  type TestPlatform,
} from './harness.ts';
import { Receiver, type Received, until } from './webhook-receiver.ts';
import { PLATFORM_HOST, createPartner, expectCsrfRefused, expectGoodPage, get, partnerLogin, post } from './web-pages.ts';

const V = '/openapi/2026-01';
const FAST = { timeoutMs: 2000, retrySchedule: [40, 40, 40], disableAfterDead: 5 };
const HOUR = 3_600_000;
const OVERLAP = 10 * 60_000;
const dir = mkdtempSync(join(tmpdir(), 'storegate-ed25519-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

interface Jwk {
  kty: string;
  crv: string;
  x: string;
  kid: string;
  use: string;
  alg: string;
}

/** The `v1a` values of a delivery's webhook-signature, in order. */
function v1a(got: Received): string[] {
  return got.headers['webhook-signature']!.split(' ')
    .filter((e) => e.startsWith('v1a,'))
    .map((e) => e.slice(4));
}

/** Whether `signature` (base64) is the key's signature of the delivery's "id.timestamp.body". */
function signedBy(got: Received, signature: string, jwk: Jwk): boolean {
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
  const content = Buffer.from(`${got.headers['webhook-id']}.${got.headers['webhook-timestamp']}.${got.body}`);
  return verifySignature(null, content, key, Buffer.from(signature, 'base64'));
}

describe.each(DIALECTS)('v1a webhook signatures on %s', (dialect) => {
  let t: TestPlatform;
  let rx: Receiver;
  const workers: WebhookWorker[] = [];

  async function worker(): Promise<WebhookWorker> {
    const w = await testWorker(t, { pollMs: 20, random: () => 0.5, pruneEveryMs: 0, clock: t.clock.fn });
    workers.push(w);
    await w.start();
    return w;
  }

  async function jwks(host: string): Promise<{ keys: Jwk[] }> {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json', headers: { host } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toContain('application/jwk-set+json');
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    return res.json();
  }

  async function subscribed(scopes = 'read_products write_products'): Promise<{ f: Fixture; token: string; path: string }> {
    const f = await createFixture(t, { scopes });
    const token = await appToken(t, f, scopes);
    const path = `/${f.storeName}`;
    const res = await api(t, f, token, 'POST', `${V}/webhooks`, { address: rx.url(path), topic: 'products/create' });
    expect(res.statusCode, res.body).toBe(201);
    return { f, token, path };
  }

  async function delivered(s: { f: Fixture; token: string; path: string }): Promise<Received> {
    const before = rx.on(s.path).length;
    const res = await api(t, s.f, s.token, 'POST', `${V}/products`, { title: `Mug ${before}`, price: '5' });
    expect(res.statusCode, res.body).toBe(201);
    await until(() => rx.on(s.path).length > before, 8000, `a delivery on ${s.path}`);
    return rx.on(s.path)[before]!;
  }

  async function optIn(f: Fixture): Promise<void> {
    const app = (await t.services.apps.findByClientId(f.clientId))!;
    await t.services.webhookSignatures.setEd25519(app.id, true);
  }

  beforeAll(async () => {
    files += 1;
    // A SQLite file, so that a second platform can open the same database.
    const database: Config['database'] | undefined =
      dialect === 'sqlite' ? { dialect: 'sqlite', path: join(dir, `e${files}.db`) } : undefined;
    t = await createTestPlatform(dialect, { rateLimit: 'off', webhooks: FAST, ...(database ? { database } : {}) });
    rx = await Receiver.start();
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  it('two platforms on one database creating the first key at once agree on one key', async () => {
    const other = await createTestPlatform(dialect, { rateLimit: 'off', database: t.config.database, masterKey: t.config.masterKey });
    try {
      expect(await t.db.kysely.selectFrom('webhook_signing_keys').select('kid').execute()).toEqual([]);
      const sets = await Promise.all([
        t.services.signingKeys.jwks(),
        other.services.signingKeys.jwks(),
        t.services.signingKeys.signingKeys(),
        other.services.signingKeys.signingKeys(),
        other.services.signingKeys.jwks(),
      ]);
      const kids = new Set(sets.flatMap((s) => (Array.isArray(s) ? s.map((k) => k.kid) : s.keys.map((k) => k.kid))));
      expect(kids.size).toBe(1);
      const rows = await t.db.kysely.selectFrom('webhook_signing_keys').selectAll().execute();
      expect(rows).toHaveLength(1);
      expect(Number(rows[0]!.active)).toBe(1);
      // The kid is the RFC 7638 thumbprint of the public key; the private key is sealed at rest.
      expect(rows[0]!.kid).toBe(ed25519Thumbprint(rows[0]!.public_key));
      expect(rows[0]!.private_key_enc).toMatch(/^v1\./);
      expect(t.services.box.open(rows[0]!.private_key_enc)).toMatch(/^MC4CAQAwBQYDK2Vw/);
    } finally {
      await other.close();
    }
  });

  it('only apps that asked get v1a entries; each verifies with node:crypto against the JWKS key', async () => {
    const plain = await subscribed();
    const opted = await subscribed();
    await optIn(opted.f);
    await worker();
    const set = await jwks(PLATFORM_HOST);
    expect(set.keys).toHaveLength(1);
    const jwk = set.keys[0]!;
    expect(jwk).toEqual({ kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid: jwk.kid, use: 'sig', alg: 'EdDSA' });
    // The same set on a store's host, linked from that store's RFC 8414 metadata.
    expect(await jwks(opted.f.host)).toEqual(set);
    const meta = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server', headers: { host: opted.f.host } });
    expect(meta.json().jwks_uri).toBe(`${meta.json().issuer}/.well-known/jwks.json`);

    const none = await delivered(plain);
    expect(none.headers['webhook-signature']).toMatch(/^v1,[^ ]+$/);
    expect(none.headers['x-service-signing-key-ids']).toBeUndefined();

    const got = await delivered(opted);
    const entries = got.headers['webhook-signature']!.split(' ');
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatch(/^v1,/);
    expect(entries[1]).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    expect(got.headers['x-service-signing-key-ids']).toBe(jwk.kid);
    expect(signedBy(got, v1a(got)[0]!, jwk)).toBe(true);
    // Tampering with the body, the id or the timestamp breaks it.
    expect(signedBy({ ...got, body: got.body.replace('Mug', 'Mud') }, v1a(got)[0]!, jwk)).toBe(false);
    expect(signedBy({ ...got, headers: { ...got.headers, 'webhook-id': 'other' } }, v1a(got)[0]!, jwk)).toBe(false);
    const ts = String(Number(got.headers['webhook-timestamp']) + 1);
    expect(signedBy({ ...got, headers: { ...got.headers, 'webhook-timestamp': ts } }, v1a(got)[0]!, jwk)).toBe(false);
    // The SDK verifies it with the public keys alone, and still with the client secret alone.
    const now = () => Number(got.headers['webhook-timestamp']) * 1000;
    const event = await verifyWebhook({ rawBody: got.body, headers: got.headers, publicKeys: set, now });
    expect(event.scheme).toBe('standard-webhooks-ed25519');
    expect((await verifyWebhook({ rawBody: got.body, headers: got.headers, secret: opted.f.clientSecret, now })).scheme).toBe(
      'standard-webhooks',
    );

    // Turned off again: the next delivery carries the HMAC only.
    const app = (await t.services.apps.findByClientId(opted.f.clientId))!;
    await t.services.webhookSignatures.setEd25519(app.id, false);
    expect((await delivered(opted)).headers['webhook-signature']).toMatch(/^v1,[^ ]+$/);
  });

  it('a rotation signs with both keys during the overlap, then with the new one; the JWKS follows', async () => {
    const s = await subscribed();
    await optIn(s.f);
    await worker();
    const [old] = (await jwks(PLATFORM_HOST)).keys;
    expect(v1a(await delivered(s))).toHaveLength(1);

    const rotated = await t.services.signingKeys.rotate({ overlapMs: OVERLAP });
    expect(rotated.replaced).toBe(old!.kid);
    expect(rotated.retiresAt).toBe(new Date(t.clock.now + OVERLAP).toISOString());
    // Published at once, newest first.
    const during = (await jwks(PLATFORM_HOST)).keys;
    expect(during.map((k) => k.kid)).toEqual([rotated.kid, old!.kid]);
    expect(await jwks(s.f.host)).toEqual({ keys: during });
    // One rotation at a time.
    await expect(t.services.signingKeys.rotate()).rejects.toBeInstanceOf(ConflictError);
    expect((await jwks(PLATFORM_HOST)).keys).toEqual(during);

    // The worker reads the keys again within its refresh bound (a minute).
    t.clock.advance(61_000);
    const both = await delivered(s);
    expect(v1a(both)).toHaveLength(2);
    expect(both.headers['x-service-signing-key-ids']).toBe(`${rotated.kid} ${old!.kid}`);
    expect(signedBy(both, v1a(both)[0]!, during[0]!)).toBe(true);
    expect(signedBy(both, v1a(both)[1]!, during[1]!)).toBe(true);
    const states = await t.services.signingKeys.list();
    expect(states.map((k) => [k.kid, k.state])).toEqual([
      [rotated.kid, 'active'],
      [old!.kid, 'retiring'],
    ]);

    // The overlap ends: one entry, one published key; the old key is retired and then deleted.
    t.clock.advance(OVERLAP);
    const after = await delivered(s);
    expect(v1a(after)).toHaveLength(1);
    expect(after.headers['x-service-signing-key-ids']).toBe(rotated.kid);
    expect(signedBy(after, v1a(after)[0]!, during[0]!)).toBe(true);
    expect((await jwks(PLATFORM_HOST)).keys.map((k) => k.kid)).toEqual([rotated.kid]);
    expect((await t.services.signingKeys.list()).map((k) => k.state)).toEqual(['active', 'retired']);
    expect(await t.services.signingKeys.pruneRetired()).toBe(1);
    expect((await t.services.signingKeys.list()).map((k) => k.kid)).toEqual([rotated.kid]);

    // Finishing ends an overlap at once.
    const again = await t.services.signingKeys.rotate();
    expect((await jwks(PLATFORM_HOST)).keys).toHaveLength(2);
    expect(await t.services.signingKeys.finish()).toEqual({ retired: [rotated.kid] });
    expect((await jwks(PLATFORM_HOST)).keys.map((k) => k.kid)).toEqual([again.kid]);
    t.clock.advance(61_000);
    expect(v1a(await delivered(s))).toHaveLength(1);
  });

  it('a worker that cannot open the signing keys sends the other deliveries and holds the v1a ones back until it can', async () => {
    const plain = await subscribed();
    const opted = await subscribed();
    await optIn(opted.f);
    await t.services.signingKeys.jwks();
    const rows = await t.db.kysely.selectFrom('webhook_signing_keys').select(['kid', 'private_key_enc']).execute();
    const unreadable = new SecretBox(Buffer.alloc(32, 9)).seal('not this platform');
    await t.db.kysely.updateTable('webhook_signing_keys').set({ private_key_enc: unreadable }).execute();
    // Both events queued before the worker starts, so that its first claim holds both.
    const before = rx.on(opted.path).length;
    const plainBefore = rx.on(plain.path).length;
    for (const s of [opted, plain]) {
      const res = await api(t, s.f, s.token, 'POST', `${V}/products`, { title: 'Held', price: '5' });
      expect(res.statusCode).toBe(201);
    }
    await worker();
    await until(() => rx.on(plain.path).length > plainBefore, 8000, 'the delivery without v1a');
    expect(v1a(rx.on(plain.path)[plainBefore]!)).toEqual([]);
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.on(opted.path).length).toBe(before);

    for (const r of rows)
      await t.db.kysely.updateTable('webhook_signing_keys').set({ private_key_enc: r.private_key_enc }).where('kid', '=', r.kid).execute();
    // Past the lease of the rows it did not hold, and past its copy of the keys.
    t.clock.advance(61_000);
    await until(() => rx.on(opted.path).length > before, 8000, 'the held-back delivery');
    expect(v1a(rx.on(opted.path)[before]!)).toHaveLength(1);
  });

  it('a rotation with a bad overlap is refused and changes nothing', async () => {
    const before = await t.services.signingKeys.list();
    for (const overlapMs of [-1, 1.5, 91 * 24 * HOUR, Number.NaN]) {
      await expect(t.services.signingKeys.rotate({ overlapMs })).rejects.toBeInstanceOf(ValidationFailedError);
    }
    expect(await t.services.signingKeys.list()).toEqual(before);
  });

  it('a master-key rotation re-seals the private keys; the new key alone opens them and they still sign', async () => {
    await t.services.signingKeys.jwks();
    const rows = await t.db.kysely.selectFrom('webhook_signing_keys').selectAll().execute();
    const next = Buffer.alloc(32, 7);
    const report = await t.services.keyRotation.rotate(t.config.masterKey, next);
    expect(report.resealed.webhook_signing_keys).toBe(rows.length);
    const box = new SecretBox(next);
    for (const row of rows) {
      const now = await t.db.kysely.selectFrom('webhook_signing_keys').selectAll().where('kid', '=', row.kid).executeTakeFirstOrThrow();
      expect(now.private_key_enc).not.toBe(row.private_key_enc);
      expect(box.open(now.private_key_enc)).toBe(t.services.box.open(row.private_key_enc));
      const signature = asymmetricSignature(privateSigningKey(box.open(now.private_key_enc)), 'wh_1', 1_700_000_000, '{}').slice(4);
      const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: row.public_key }, format: 'jwk' });
      expect(verifySignature(null, Buffer.from('wh_1.1700000000.{}'), key, Buffer.from(signature, 'base64'))).toBe(true);
    }
  });
});

describe.each(DIALECTS)('the signing key repository on %s', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect);
  });
  afterAll(async () => t?.close());
  const key = (kid: string, at: number) => ({ kid, public_key: `pub-${kid}`, private_key_enc: `enc-${kid}`, created_at: at });

  it('one active key; rotations compare and set, one at a time; finish and deleteRetired end replaced keys', async () => {
    const repo = new SqlWebhookSigningKeyRepository(t.db.kysely);
    await repo.insertFirst(key('a', 1));
    await repo.insertFirst(key('b', 1));
    expect((await repo.live(10)).map((k) => [k.kid, k.active])).toEqual([['a', true]]);

    expect(await repo.rotate({ expectedActive: 'b', next: key('c', 20), retiresAt: 100, now: 20 })).toBe('changed');
    expect(await repo.rotate({ expectedActive: 'a', next: key('c', 20), retiresAt: 100, now: 20 })).toBe('rotated');
    expect(await repo.rotate({ expectedActive: 'c', next: key('d', 30), retiresAt: 100, now: 30 })).toBe('overlapping');
    expect((await repo.live(30)).map((k) => [k.kid, k.active, k.retires_at])).toEqual([
      ['c', true, null],
      ['a', false, 100],
    ]);
    expect((await repo.live(100)).map((k) => k.kid)).toEqual(['c']);
    expect((await repo.all()).map((k) => k.kid)).toEqual(['c', 'a']);
    expect(await repo.deleteRetired(99)).toBe(0);
    expect(await repo.deleteRetired(100)).toBe(1);

    expect(await repo.rotate({ expectedActive: 'c', next: key('e', 200), retiresAt: 900, now: 200 })).toBe('rotated');
    expect(await repo.finish(300)).toEqual(['c']);
    expect((await repo.all()).map((k) => [k.kid, k.active])).toEqual([['e', true]]);
    expect(await repo.finish(300)).toEqual([]);
  });
});

describe.each(DIALECTS)('the v1a setting in the partner dashboard (%s)', (dialect) => {
  let t: TestPlatform;
  let n = 300;
  beforeAll(async () => {
    t = await createTestPlatform(dialect);
  });
  afterAll(async () => t?.close());

  const stored = async (clientId: string) => (await t.services.apps.findByClientId(clientId))!.webhook_signature_ed25519;

  it('the app page explains it and turns it on and off; a bad value, no CSRF token or another partner change nothing', async () => {
    const p = await createPartner(t, ++n);
    const { app } = await t.services.apps.createApp({
      name: 'Signed app',
      appUrl: 'https://app.example.test/',
      redirectUri: 'https://app.example.test/cb',
      scopes: 'read_products',
      partnerId: p.id,
    });
    const jar = await partnerLogin(t, p);
    const url = `/partner/apps/${app.client_id}`;
    const page = await get(t, PLATFORM_HOST, url, jar);
    expectGoodPage(page);
    expect(page.body).toContain('<h2>Asymmetric webhook signatures</h2>');
    expect(page.body).toContain('/.well-known/jwks.json');
    expect(page.body).toContain('asymmetric signatures are <strong>off</strong>');
    expect(await stored(app.client_id)).toBe(0);

    await expectCsrfRefused(t, PLATFORM_HOST, `${url}/webhook-signatures`, jar, { ed25519: 'on' }, () => stored(app.client_id));
    for (const value of ['yes', '1', 'ON', '']) {
      const bad = await post(t, PLATFORM_HOST, `${url}/webhook-signatures`, jar, { _csrf: csrfFrom(page.body), ed25519: value });
      expect(bad.statusCode, value).toBe(422);
      expect(bad.body).toContain('ed25519');
    }
    expect(await stored(app.client_id)).toBe(0);

    const on = await post(t, PLATFORM_HOST, `${url}/webhook-signatures`, jar, { _csrf: csrfFrom(page.body), ed25519: 'on' });
    expect(on.statusCode).toBe(303);
    expect(on.headers.location).toBe(`${url}?done=ed25519_on`);
    expect(await stored(app.client_id)).toBe(1);
    const after = await get(t, PLATFORM_HOST, String(on.headers.location), jar);
    expectGoodPage(after);
    expect(after.body).toContain('Webhooks to this app now also carry v1a (Ed25519) signatures.');
    expect(after.body).toContain('value="off">Stop sending v1a signatures</button>');

    const other = await createPartner(t, ++n);
    const otherJar = await partnerLogin(t, other);
    const otherPage = await get(t, PLATFORM_HOST, '/partner', otherJar);
    const foreign = await post(t, PLATFORM_HOST, `${url}/webhook-signatures`, otherJar, {
      _csrf: csrfFrom(otherPage.body),
      ed25519: 'off',
    });
    expect(foreign.statusCode).toBe(404);
    expect(await stored(app.client_id)).toBe(1);

    const off = await post(t, PLATFORM_HOST, `${url}/webhook-signatures`, jar, { _csrf: csrfFrom(page.body), ed25519: 'off' });
    expect(off.headers.location).toBe(`${url}?done=ed25519_off`);
    expect(await stored(app.client_id)).toBe(0);
  });

  it('the JWKS is in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: PLATFORM_HOST } })).json();
    expect(doc.paths['/.well-known/jwks.json'].get.summary).toContain('webhook signing keys');
  });
});

describe('the platform signer reproduces test-vectors/webhook-ed25519.json', () => {
  it('signs the valid single-key cases byte for byte from the seeds (Ed25519 is deterministic)', () => {
    const vectors = JSON.parse(readFileSync(new URL('../../../test-vectors/webhook-ed25519.json', import.meta.url), 'utf8')) as {
      seeds: Record<string, string>;
      jwks: { keys: Jwk[] };
      cases: { name: string; headers: Record<string, string>; body: string; expected: string }[];
    };
    for (const jwk of vectors.jwks.keys) expect(ed25519Thumbprint(jwk.x)).toBe(jwk.kid);
    const pkcs8 = (seed: string) => Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(seed, 'hex')]);
    let checked = 0;
    for (const c of vectors.cases.filter((x) => x.expected === 'valid')) {
      const kids = c.headers['X-Service-Signing-Key-Ids']!.split(' ').filter(Boolean);
      const entries = c.headers['webhook-signature']!.split(' ').filter((e) => e.startsWith('v1a,'));
      if (kids.length !== entries.length) continue;
      kids.forEach((kid, i) => {
        const key = privateSigningKey(pkcs8(vectors.seeds[kid]!).toString('base64'));
        expect(asymmetricSignature(key, c.headers['webhook-id']!, c.headers['webhook-timestamp']!, c.body), c.name).toBe(entries[i]);
        checked++;
      });
    }
    expect(checked).toBeGreaterThanOrEqual(4);
  });
});
