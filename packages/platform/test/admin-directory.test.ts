// What `storegate ... list|show` and `storegate merchants unlock|reset-password` rely on: the
// listings (never a secret), and the account repairs seen through the real login form.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NotFoundError, ValidationFailedError } from '../src/domain/errors.ts';
import type { Scope } from '../src/domain/scopes.ts';
import { DIALECTS, Jar, createFixture, createTestPlatform, csrfFrom, formBody, login, type Fixture, type TestPlatform } from './harness.ts';

async function loginStatus(t: TestPlatform, f: Fixture, password: string): Promise<{ ok: boolean; body: string }> {
  const jar = new Jar();
  const page = await t.app.inject({ method: 'GET', url: '/admin/login', headers: { host: f.host } });
  jar.take(page);
  const res = await t.app.inject({
    method: 'POST',
    url: '/admin/login',
    headers: { host: f.host, cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    payload: formBody({ _csrf: csrfFrom(page.body), email: f.email, password, return_to: '/admin' }),
  });
  return { ok: res.statusCode === 303 && res.headers.location === '/admin', body: res.body };
}

describe.each(DIALECTS)('admin directory (%s)', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  beforeEach(async () => {
    t = await createTestPlatform(dialect);
    f = await createFixture(t);
  });
  afterEach(() => t.close());

  it('lists and shows stores, partners, apps, private apps and installations without secrets', async () => {
    const dir = t.services.directory;
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    const app = (await t.services.apps.findByClientId(f.clientId))!;
    await t.services.accounts.createPartner({ email: 'dev@partner.test', password: 'partner-password' });
    const priv = await t.services.apps.createPrivateApp({ storeId: store.id, name: 'Sync', scopes: 'read_products' });
    await t.services.apps.grant(store.id, app.id, ['read_products'] as Scope[]);

    expect(await dir.stores()).toEqual([
      expect.objectContaining({ name: f.storeName, owner_email: f.email, currency: 'USD', installed_apps: 1, private_apps: 1 }),
    ]);
    expect((await dir.store(f.storeName.toUpperCase())).id).toBe(store.id);
    expect(await dir.partners()).toEqual([expect.objectContaining({ email: 'dev@partner.test', apps: 0 })]);
    expect((await dir.partner('DEV@partner.test')).email).toBe('dev@partner.test');
    const apps = await dir.apps();
    expect(apps).toEqual([
      expect.objectContaining({
        client_id: f.clientId,
        installations: 1,
        authorization_iss: true,
        managed_install: false,
        partner_email: null,
      }),
    ]);
    expect(await dir.app(f.clientId)).toEqual(apps[0]);
    await t.services.apps.setManagedInstall(app.id, true);
    expect(await dir.app(f.clientId)).toEqual({ ...apps[0], managed_install: true });
    await t.services.apps.setManagedInstall(app.id, false);
    const privates = await dir.privateApps();
    expect(privates).toEqual([
      expect.objectContaining({ id: priv.id, store: f.storeName, name: 'Sync', status: 'active', revoked_at: null }),
    ]);
    expect(await dir.privateApp(store.id, priv.id)).toEqual(privates[0]);
    const installs = await dir.installations({ storeId: store.id });
    expect(installs).toEqual([expect.objectContaining({ store: f.storeName, client_id: f.clientId, status: 'installed' })]);
    expect(await dir.installation(installs[0]!.id)).toEqual(installs[0]);
    expect(await dir.installations({ appId: app.id + 1000 })).toEqual([]);

    // No secret anywhere: not the client secret, not the token, not the webhook secret.
    const everything = JSON.stringify([apps, privates, installs, await dir.stores(), await dir.partners()]);
    for (const secret of [f.clientSecret, priv.accessToken, priv.webhookSecret]) expect(everything).not.toContain(secret);
    expect(everything).not.toMatch(/secret|hash|token/i);

    for (const missing of [
      () => dir.store('nope'),
      () => dir.partner('nobody@x.test'),
      () => dir.app('nope'),
      () => dir.privateApp(store.id, priv.id + 1),
      () => dir.installation(999_999),
    ])
      await expect(missing()).rejects.toBeInstanceOf(NotFoundError);
  });

  it('unlock lifts a merchant lock set by wrong passwords; reset-password changes it, ends sessions, and refuses a short one', async () => {
    const dir = t.services.directory;
    const session = await login(t, f);
    for (let i = 0; i < 6; i++) expect((await loginStatus(t, f, 'wrong password')).ok).toBe(false);
    expect((await loginStatus(t, f, f.password)).ok, 'locked: even the right password is refused').toBe(false);
    await expect(dir.unlockMerchant('nobody@x.test')).rejects.toBeInstanceOf(NotFoundError);
    await expect(dir.unlockMerchant(f.email, 'other-store')).rejects.toBeInstanceOf(NotFoundError);
    expect(await dir.unlockMerchant(f.email.toUpperCase())).toEqual({ email: f.email, unlocked: [f.storeName] });
    expect((await loginStatus(t, f, f.password)).ok).toBe(true);
    expect(await dir.unlockMerchant(f.email, f.storeName)).toEqual({ email: f.email, unlocked: [] });

    await expect(dir.resetMerchantPassword(f.email, 'short')).rejects.toBeInstanceOf(ValidationFailedError);
    expect((await loginStatus(t, f, f.password)).ok, 'a refused reset changes nothing').toBe(true);

    const admin = () => t.app.inject({ method: 'GET', url: '/admin', headers: { host: f.host, cookie: session.header() } });
    expect((await admin()).statusCode).toBe(200);
    const reset = await dir.resetMerchantPassword(f.email);
    expect(reset.generated_password).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(reset.sessions_ended).toBeGreaterThanOrEqual(1);
    expect((await admin()).statusCode, 'the old session is over').not.toBe(200);
    expect((await loginStatus(t, f, f.password)).ok).toBe(false);
    expect((await loginStatus(t, f, reset.generated_password!)).ok).toBe(true);
    const chosen = await dir.resetMerchantPassword(f.email, 'a chosen password');
    expect(chosen.generated_password).toBeUndefined();
    expect((await loginStatus(t, f, 'a chosen password')).ok).toBe(true);
  });
});
