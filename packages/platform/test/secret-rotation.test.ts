// Secret rotation without a dropped webhook, on SQLite and PostgreSQL: across a rotation a real
// worker delivers to a local receiver, the install and OAuth redirects are signed, and the token
// endpoint answers with the old and the new secret; then finishing early, the overlap running out
// on the frozen clock, a second rotation refused, private apps' webhook secrets, and the storage
// compare-and-set under two rotations at once.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyQuery, verifyWebhook } from '../../sdk/src/index.ts';
import { DEFAULT_SECRET_OVERLAP_MS, loadConfig, parseSecretOverlap } from '../src/config.ts';
import { ConflictError, NotFoundError } from '../src/domain/errors.ts';
import { verifyQueryString } from '../src/domain/query-signature.ts';
import { bodyHmac, standardSignature } from '../src/webhooks/signer.ts';
import type { WebhookWorker } from '../src/webhooks/webhook-worker.ts';
import {
  api,
  appToken,
  codeFor,
  consent,
  createFixture,
  createTestPlatform,
  DIALECTS,
  login,
  privateToken,
  refreshRequest,
  testWorker,
  tokenRequest,
  type Fixture,
  type Jar,
  type TestPlatform,
} from './harness.ts';
import { Receiver, until, type Received } from './webhook-receiver.ts';

const V = '/openapi/2026-01';
const FAST = { timeoutMs: 2000, retrySchedule: [40, 40, 40], disableAfterDead: 5 };

describe('--secret-overlap', () => {
  it('takes one duration with its unit, from 1 minute to 30 days; 24 h by default', () => {
    expect(parseSecretOverlap(undefined)).toBe(DEFAULT_SECRET_OVERLAP_MS);
    expect(DEFAULT_SECRET_OVERLAP_MS).toBe(24 * 3_600_000);
    expect(parseSecretOverlap('30m')).toBe(30 * 60_000);
    expect(parseSecretOverlap('7d')).toBe(7 * 86_400_000);
    expect(parseSecretOverlap('90s')).toBe(90_000);
    expect(loadConfig({ database: ':memory:', masterKey: 'a'.repeat(64), secretOverlap: '2h' }).secretOverlapMs).toBe(7_200_000);
    for (const bad of ['24', '1.5h', '-1h', 'h', '24 hours', '59s', '31d', '0m', '9999999999h']) {
      expect(() => parseSecretOverlap(bad), bad).toThrow(/--secret-overlap/);
    }
  });
});

describe.each(DIALECTS)('secret rotation on %s', (dialect) => {
  let t: TestPlatform;
  let rx: Receiver;
  const workers: WebhookWorker[] = [];

  async function worker(): Promise<WebhookWorker> {
    // The platform's frozen clock: the overlap is judged by it when each delivery is prepared.
    const w = await testWorker(t, { pollMs: 20, random: () => 0.5, pruneEveryMs: 0, clock: t.clock.fn });
    workers.push(w);
    await w.start();
    return w;
  }

  async function subscribe(token: string, fx: Fixture, path: string): Promise<void> {
    const res = await api(t, fx, token, 'POST', `${V}/webhooks`, { address: rx.url(path), topic: 'products/create' });
    expect(res.statusCode, res.body).toBe(201);
  }

  /** A product created through `token`'s store; returns the delivery the receiver got on `path`. */
  async function delivered(token: string, fx: Fixture, path: string): Promise<Received> {
    const before = rx.on(path).length;
    const res = await api(t, fx, token, 'POST', `${V}/products`, { title: `Mug ${before}`, price: '5' });
    expect(res.statusCode, res.body).toBe(201);
    await until(() => rx.on(path).length > before, 8000, `a delivery on ${path}`);
    return rx.on(path)[before]!;
  }

  function standardFor(got: Received, secret: string): string {
    return standardSignature(secret, got.headers['webhook-id']!, got.headers['webhook-timestamp']!, got.body);
  }

  async function launchQuery(fx: Fixture, jar: Jar): Promise<string> {
    const res = await t.app.inject({
      method: 'GET',
      url: `/admin/apps/${fx.clientId}/install`,
      headers: { host: fx.host, cookie: jar.header() },
    });
    expect(res.statusCode).toBe(303);
    return new URL(String(res.headers.location)).search.slice(1);
  }

  async function exchangeWith(fx: Fixture, code: string, secret: string) {
    return tokenRequest(t, fx, {
      client_id: fx.clientId,
      client_secret: secret,
      code,
      grant_type: 'authorization_code',
      redirect_uri: fx.redirectUri,
    });
  }

  const appRow = (clientId: string) =>
    t.db.kysely.selectFrom('apps').selectAll().where('client_id', '=', clientId).executeTakeFirstOrThrow();

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off', webhooks: FAST });
    rx = await Receiver.start();
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  it('across a rotation nothing an app still holding the old secret checks breaks; finishing moves everything to the new one', async () => {
    const f = await createFixture(t, { scopes: 'read_products write_products' });
    const OLD = f.clientSecret;
    const token = await appToken(t, f, 'read_products write_products');
    await subscribe(token, f, '/app');
    await worker();
    const jar = await login(t, f);

    const app = (await t.services.apps.findByClientId(f.clientId))!;
    const { secret: NEW, overlapEndsAt } = await t.services.rotations.rotateClientSecret(app.id);
    expect(NEW).toMatch(/^sg_cs_/);
    expect(overlapEndsAt).toBe(t.clock.now + DEFAULT_SECRET_OVERLAP_MS);
    // Sealed at rest: neither secret is stored in plaintext.
    const row = await appRow(f.clientId);
    expect(JSON.stringify(row)).not.toContain(NEW);
    expect(JSON.stringify(row)).not.toContain(OLD);
    expect(t.services.box.open(row.previous_secret_enc!)).toBe(OLD);

    // Webhooks: the body header with the old secret; webhook-signature with both, the new one first.
    const during = await delivered(token, f, '/app');
    expect(during.headers['x-service-hmac-sha256']).toBe(bodyHmac(OLD, during.body));
    expect(during.headers['webhook-signature']).toBe(`${standardFor(during, NEW)} ${standardFor(during, OLD)}`);
    const now = () => Number(during.headers['webhook-timestamp']) * 1000;
    for (const secret of [[OLD], [NEW], [NEW, OLD]]) {
      await expect(verifyWebhook({ rawBody: during.body, headers: during.headers, secret, now })).resolves.toBeTruthy();
    }
    const { 'webhook-signature': _s, ...legacyOnly } = during.headers;
    await expect(verifyWebhook({ rawBody: during.body, headers: legacyOnly, secret: OLD })).resolves.toMatchObject({
      scheme: 'hmac-sha256',
    });

    // The install/launch redirect and the OAuth redirect with the code: signed with the old secret.
    const launch = await launchQuery(f, jar);
    expect(verifyQueryString(launch, OLD)).toBe(true);
    expect(verifyQueryString(launch, NEW)).toBe(false);
    await expect(verifyQuery(launch, [NEW, OLD])).resolves.toBeTruthy();
    const redirect = await consent(t, f, { scope: 'read_products write_products' }, jar);
    expect(verifyQueryString(redirect.search.slice(1), OLD)).toBe(true);

    // The token endpoint takes both secrets.
    const withNew = await exchangeWith(f, redirect.searchParams.get('code')!, NEW);
    expect(withNew.statusCode, withNew.body).toBe(200);
    const withOld = await exchangeWith(f, await codeFor(t, f, { scope: 'read_products write_products' }), OLD);
    expect(withOld.statusCode, withOld.body).toBe(200);
    const oldRefresh = await refreshRequest(t, f, withOld.json().refresh_token);
    expect(oldRefresh.statusCode).toBe(200);

    // Finishing: the new secret signs everything; the old one stops at the token endpoint.
    await t.services.rotations.finishClientSecretRotation(app.id);
    const after = await delivered(token, f, '/app');
    expect(after.headers['x-service-hmac-sha256']).toBe(bodyHmac(NEW, after.body));
    expect(after.headers['webhook-signature']).toBe(standardFor(after, NEW));
    expect(verifyQueryString(await launchQuery(f, jar), NEW)).toBe(true);
    const late = await exchangeWith(f, await codeFor(t, f, { scope: 'read_products write_products' }), OLD);
    expect(late.statusCode).toBe(401);
    expect(late.json().error).toBe('invalid_client');
    expect(late.body).not.toContain(OLD);
    expect((await exchangeWith(f, await codeFor(t, f, { scope: 'read_products write_products' }), NEW)).statusCode).toBe(200);
    // Finishing twice: nothing in progress.
    await expect(t.services.rotations.finishClientSecretRotation(app.id)).rejects.toBeInstanceOf(ConflictError);

    const logs = t.logs.join('');
    for (const secret of [OLD, NEW]) expect(logs).not.toContain(secret);
  });

  it('the overlap ends by itself (frozen clock): then only the new secret signs and authenticates', async () => {
    const f = await createFixture(t, { scopes: 'read_products write_products' });
    await subscribe(await appToken(t, f, 'read_products write_products'), f, '/expiry');
    // Products are written with a private app's token: the app's access token expires within the day.
    const token = await privateToken(t, f.storeName, 'write_products');
    await worker();
    const app = (await t.services.apps.findByClientId(f.clientId))!;
    const { secret: NEW } = await t.services.rotations.rotateClientSecret(app.id);

    t.clock.advance(DEFAULT_SECRET_OVERLAP_MS - 1);
    const last = await delivered(token, f, '/expiry');
    expect(last.headers['x-service-hmac-sha256']).toBe(bodyHmac(f.clientSecret, last.body));
    expect((await exchangeWith(f, await codeFor(t, f, { scope: 'read_products write_products' }), f.clientSecret)).statusCode).toBe(200);

    t.clock.advance(1);
    const first = await delivered(token, f, '/expiry');
    expect(first.headers['x-service-hmac-sha256']).toBe(bodyHmac(NEW, first.body));
    expect(first.headers['webhook-signature']).toBe(standardFor(first, NEW));
    const jar = await login(t, f);
    expect(verifyQueryString(await launchQuery(f, jar), NEW)).toBe(true);
    expect((await exchangeWith(f, await codeFor(t, f, { scope: 'read_products write_products' }), f.clientSecret)).statusCode).toBe(401);
    // Nothing left to finish; a new rotation may start.
    await expect(t.services.rotations.finishClientSecretRotation(app.id)).rejects.toBeInstanceOf(ConflictError);
    await expect(t.services.rotations.rotateClientSecret(app.id)).resolves.toMatchObject({ secret: expect.stringMatching(/^sg_cs_/) });
  });

  it('a second rotation during the overlap is refused and changes nothing; two at once: exactly one wins', async () => {
    const f = await createFixture(t);
    const app = (await t.services.apps.findByClientId(f.clientId))!;
    await t.services.rotations.rotateClientSecret(app.id);
    const before = await appRow(f.clientId);
    await expect(t.services.rotations.rotateClientSecret(app.id)).rejects.toThrow(/already in progress/);
    expect(await appRow(f.clientId)).toEqual(before);

    const g = await createFixture(t);
    const other = (await t.services.apps.findByClientId(g.clientId))!;
    const results = await Promise.allSettled([
      t.services.rotations.rotateClientSecret(other.id),
      t.services.rotations.rotateClientSecret(other.id),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(ConflictError);
    const won = (results.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<{ secret: string }>).value.secret;
    const row = await appRow(g.clientId);
    expect(t.services.box.open(row.client_secret_enc)).toBe(won);
    expect(t.services.box.open(row.previous_secret_enc!)).toBe(g.clientSecret);
    await expect(t.services.rotations.rotateClientSecret(999_999_999)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('the overlap follows the configuration', async () => {
    const short = await createTestPlatform(dialect, { secretOverlapMs: 30 * 60_000 });
    try {
      const f = await createFixture(short);
      const app = (await short.services.apps.findByClientId(f.clientId))!;
      const { overlapEndsAt } = await short.services.rotations.rotateClientSecret(app.id);
      expect(overlapEndsAt).toBe(short.clock.now + 30 * 60_000);
      short.clock.advance(30 * 60_000);
      await expect(short.services.apps.authenticateClient(f.clientId, f.clientSecret)).rejects.toThrow();
    } finally {
      await short.close();
    }
  });

  it("a private app's webhook secret: both signature headers follow the same overlap and finish", async () => {
    const f = await createFixture(t);
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    const created = await t.services.apps.createPrivateApp({ storeId: store.id, name: 'Sync', scopes: 'write_products' });
    const OLD = created.webhookSecret;
    await subscribe(created.accessToken, f, '/private');
    await worker();

    const { secret: NEW, name } = await t.services.rotations.rotatePrivateWebhookSecret(store.id, created.id);
    expect(name).toBe('Sync');
    expect(NEW).toMatch(/^sg_whs_/);
    const stored = await t.db.kysely.selectFrom('private_apps').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(NEW);
    expect(t.services.box.open(stored.previous_webhook_secret_enc!)).toBe(OLD);
    const summary = (await t.services.apps.listPrivateApps(store.id)).find((p) => p.id === created.id)!;
    expect(Number(summary.previous_webhook_secret_expires_at)).toBe(t.clock.now + DEFAULT_SECRET_OVERLAP_MS);

    const during = await delivered(created.accessToken, f, '/private');
    expect(during.headers['x-service-hmac-sha256']).toBe(bodyHmac(OLD, during.body));
    expect(during.headers['webhook-signature']).toBe(`${standardFor(during, NEW)} ${standardFor(during, OLD)}`);
    await expect(t.services.rotations.rotatePrivateWebhookSecret(store.id, created.id)).rejects.toBeInstanceOf(ConflictError);

    await t.services.rotations.finishPrivateWebhookSecretRotation(store.id, created.id);
    const after = await delivered(created.accessToken, f, '/private');
    expect(after.headers['x-service-hmac-sha256']).toBe(bodyHmac(NEW, after.body));
    expect(after.headers['webhook-signature']).toBe(standardFor(after, NEW));
    await expect(t.services.rotations.finishPrivateWebhookSecretRotation(store.id, created.id)).rejects.toBeInstanceOf(ConflictError);

    // The overlap ends by itself too.
    const { secret: NEWER } = await t.services.rotations.rotatePrivateWebhookSecret(store.id, created.id);
    t.clock.advance(DEFAULT_SECRET_OVERLAP_MS);
    const expired = await delivered(created.accessToken, f, '/private');
    expect(expired.headers['x-service-hmac-sha256']).toBe(bodyHmac(NEWER, expired.body));
    expect(expired.headers['webhook-signature']).toBe(standardFor(expired, NEWER));

    // Another store's private app, an unknown id or a revoked app: 404, nothing changes.
    const g = await createFixture(t);
    const elsewhere = (await t.services.accounts.findStoreByName(g.storeName))!;
    const before = await t.db.kysely.selectFrom('private_apps').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    await expect(t.services.rotations.rotatePrivateWebhookSecret(elsewhere.id, created.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(t.services.rotations.finishPrivateWebhookSecretRotation(elsewhere.id, created.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(t.services.rotations.rotatePrivateWebhookSecret(store.id, 999_999_999)).rejects.toBeInstanceOf(NotFoundError);
    expect(await t.db.kysely.selectFrom('private_apps').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow()).toEqual(before);
    await t.services.apps.revokePrivateApp(store.id, created.id);
    await expect(t.services.rotations.rotatePrivateWebhookSecret(store.id, created.id)).rejects.toBeInstanceOf(NotFoundError);

    const logs = t.logs.join('');
    for (const secret of [OLD, NEW, NEWER]) expect(logs).not.toContain(secret);
  });

  it('storage: the rotation compare-and-set and finish, for both kinds of owner', async () => {
    const f = await createFixture(t);
    const apps = t.platform.storage.apps;
    const app = (await apps.findByClientId(f.clientId))!;
    const now = t.clock.now;
    const start = (expectedCurrent: string, current: string) =>
      apps.startSecretRotation({ appId: app.id }, { expectedCurrent, current, previousExpiresAt: now + 100, now });
    expect(await start('not-the-current', 'sealed-x')).toBe(false);
    expect(await start(app.client_secret_enc, 'sealed-1')).toBe(true);
    expect(await start('sealed-1', 'sealed-2')).toBe(false);
    expect(await apps.finishSecretRotation({ appId: app.id }, now + 100)).toBe(false);
    expect(await apps.finishSecretRotation({ appId: app.id }, now)).toBe(true);
    expect(await apps.finishSecretRotation({ appId: app.id }, now)).toBe(false);
    expect(await appRow(f.clientId)).toMatchObject({
      client_secret_enc: 'sealed-1',
      previous_secret_enc: null,
      previous_secret_expires_at: null,
    });
    expect(await start('sealed-1', 'sealed-2')).toBe(true);
    // Past its expiry a rotation no longer counts as in progress.
    expect(
      await apps.startSecretRotation(
        { appId: app.id },
        { expectedCurrent: 'sealed-2', current: 'sealed-3', previousExpiresAt: now + 300, now: now + 100 },
      ),
    ).toBe(true);
    expect(await appRow(f.clientId)).toMatchObject({
      client_secret_enc: 'sealed-3',
      previous_secret_enc: 'sealed-2',
      previous_secret_expires_at: now + 300,
    });

    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    const id = await apps.insertPrivateApp({
      storeId: store.id,
      name: 'P',
      scopes: 'read_products',
      tokenHash: `h-${dialect}-${now}`,
      webhookSecretEnc: 'w-1',
      now,
    });
    const owner = { storeId: store.id, privateAppId: id };
    expect(
      await apps.startSecretRotation(
        { storeId: store.id + 1_000_000, privateAppId: id },
        { expectedCurrent: 'w-1', current: 'w-2', previousExpiresAt: now + 100, now },
      ),
    ).toBe(false);
    expect(await apps.startSecretRotation(owner, { expectedCurrent: 'w-1', current: 'w-2', previousExpiresAt: now + 100, now })).toBe(true);
    expect(await apps.findPrivateAppSecrets(store.id, id)).toEqual({
      id,
      name: 'P',
      webhook_secret_enc: 'w-2',
      previous_webhook_secret_enc: 'w-1',
      previous_webhook_secret_expires_at: now + 100,
    });
    expect(await apps.startSecretRotation(owner, { expectedCurrent: 'w-2', current: 'w-3', previousExpiresAt: now + 100, now })).toBe(
      false,
    );
    expect(await apps.finishSecretRotation(owner, now)).toBe(true);
    expect(await apps.findPrivateAppSecrets(store.id, id)).toMatchObject({ webhook_secret_enc: 'w-2', previous_webhook_secret_enc: null });
    await apps.revokePrivateApp(store.id, id, now);
    expect(await apps.findPrivateAppSecrets(store.id, id)).toBeUndefined();
    expect(await apps.startSecretRotation(owner, { expectedCurrent: 'w-2', current: 'w-3', previousExpiresAt: now + 100, now })).toBe(
      false,
    );
  });
});
