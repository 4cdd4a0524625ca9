// Login protection (issue 5) for the store admin and the partner dashboard: failures counted per
// account and per address in the database, a lock with a clear message, the lock ends by itself,
// the login form needs its CSRF token, and passwords never reach the logs.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { storageOn } from '../src/storage/sql-storage.ts';
import { LoginThrottle } from '../src/services/login-throttle.ts';
import { DIALECTS, Jar, createFixture, createTestPlatform, csrfFrom, type Fixture, type TestPlatform } from './harness.ts';

/** Waits (polling) until `done()` holds; fails after 10 s instead of hanging. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !done(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!done()) throw new Error('timed out waiting');
}
import { PLATFORM_HOST, createPartner, expectCsrfRefused, get, post } from './web-pages.ts';

describe.each(DIALECTS)('login protection (%s)', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect);
  });
  afterAll(async () => t?.close());

  async function merchantAttempt(f: Fixture, email: string, password: string, ip = '127.0.0.1') {
    const jar = new Jar();
    const page = await get(t, f.host, '/admin/login', jar);
    const res = await t.app.inject({
      method: 'POST',
      url: '/admin/login',
      remoteAddress: ip,
      headers: { host: f.host, cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: csrfFrom(page.body), email, password, return_to: '/admin' }).toString(),
    });
    return res;
  }

  it('locks a merchant account after 5 failures in 15 minutes, says so, refuses even the right password, and unlocks after 15 minutes', async () => {
    const f = await createFixture(t);
    for (let i = 1; i <= 4; i++) {
      const res = await merchantAttempt(f, f.email, `wrong password ${i}`);
      expect(res.statusCode).toBe(303);
      expect(res.headers.location).toContain('/admin/login?error=1');
    }
    const fifth = await merchantAttempt(f, f.email, 'wrong password 5');
    expect(fifth.headers.location).toContain('/admin/login?locked=15');
    const page = await get(t, f.host, String(fifth.headers.location), new Jar());
    expect(page.body).toContain('Too many failed attempts; try again in 15 minutes.');
    expect(page.body).toContain('role="alert"');

    const right = await merchantAttempt(f, f.email.toUpperCase(), f.password, '10.0.0.9');
    expect(right.headers.location).toContain('locked=');
    expect(right.cookies.find((c) => c.name === 'sg_session')).toBeUndefined();
    t.clock.advance(10 * 60_000);
    expect((await merchantAttempt(f, f.email, f.password)).headers.location).toContain('locked=5');
    t.clock.advance(5 * 60_000 + 1);
    const after = await merchantAttempt(f, f.email, f.password);
    expect(after.headers.location).toBe('/admin');
    expect(after.cookies.find((c) => c.name === 'sg_session')).toBeDefined();
    // A success clears the account's count.
    expect((await merchantAttempt(f, f.email, 'wrong again')).headers.location).toContain('error=1');
  });

  it('failures older than the window do not add up', async () => {
    const f = await createFixture(t);
    for (let i = 0; i < 4; i++) await merchantAttempt(f, f.email, 'nope nope');
    t.clock.advance(15 * 60_000 + 1);
    for (let i = 0; i < 4; i++) expect((await merchantAttempt(f, f.email, 'nope nope')).headers.location).toContain('error=1');
    expect((await merchantAttempt(f, f.email, f.password)).headers.location).toBe('/admin');
  });

  it('locks an address that fails on many accounts, without locking those accounts for other addresses', async () => {
    const f = await createFixture(t);
    const ip = '192.0.2.77';
    let last = '';
    for (let i = 0; i < 20; i++) last = String((await merchantAttempt(f, `someone${i}@example.test`, 'guess guess', ip)).headers.location);
    expect(last).toContain('locked=15');
    expect((await merchantAttempt(f, f.email, f.password, ip)).headers.location).toContain('locked=');
    expect((await merchantAttempt(f, f.email, f.password, '192.0.2.78')).headers.location).toBe('/admin');
  });

  it('is stored in the database, so another node sees the same lock', async () => {
    const f = await createFixture(t);
    for (let i = 0; i < 5; i++) await merchantAttempt(f, f.email, 'bad bad bad');
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    const otherNode = new LoginThrottle(storageOn(t.db).throttles, t.clock.fn);
    expect(await otherNode.lockedFor({ account: `merchant:${store.id}:${f.email}`, address: '203.0.113.1' })).toBe(15 * 60_000);
    const rows = await t.db.kysely
      .selectFrom('login_attempts')
      .selectAll()
      .where('key', '=', `acct:merchant:${store.id}:${f.email}`)
      .execute();
    expect(rows).toHaveLength(1);
    expect(Number(rows[0]!.locked_until)).toBe(t.clock.now + 15 * 60_000);
  });

  it('locks a partner account the same way', async () => {
    const p = await createPartner(t, 900);
    const attempt = async (password: string) => {
      const jar = new Jar();
      const page = await get(t, PLATFORM_HOST, '/partner/login', jar);
      return post(t, PLATFORM_HOST, '/partner/login', jar, { _csrf: csrfFrom(page.body), email: p.email, password, return_to: '/partner' });
    };
    for (let i = 0; i < 4; i++) expect((await attempt('not it at all')).headers.location).toContain('/partner/login?error=1');
    const fifth = await attempt('not it at all');
    expect(fifth.headers.location).toContain('/partner/login?locked=15');
    expect((await get(t, PLATFORM_HOST, String(fifth.headers.location), new Jar())).body).toContain(
      'Too many failed attempts; try again in 15 minutes.',
    );
    expect((await attempt(p.password)).headers.location).toContain('locked=');
    t.clock.advance(15 * 60_000 + 1);
    expect((await attempt(p.password)).headers.location).toBe('/partner');
  });

  it('the login forms need their CSRF token, and passwords are never logged', async () => {
    const f = await createFixture(t);
    const p = await createPartner(t, 901);
    const sessions = () => t.db.kysely.selectFrom('web_sessions').select('id_hash').execute();
    const jar = new Jar();
    const page = await get(t, f.host, '/admin/login', jar);
    await expectCsrfRefused(t, f.host, '/admin/login', jar, { _csrf: csrfFrom(page.body), email: f.email, password: f.password }, sessions);
    const pjar = new Jar();
    const ppage = await get(t, PLATFORM_HOST, '/partner/login', pjar);
    await expectCsrfRefused(
      t,
      PLATFORM_HOST,
      '/partner/login',
      pjar,
      { _csrf: csrfFrom(ppage.body), email: p.email, password: p.password },
      sessions,
    );
    await merchantAttempt(f, f.email, 'a-wrong-password-xyz');
    await merchantAttempt(f, f.email, f.password);
    const logs = t.logs.join('');
    expect(logs).toContain('merchant login failed');
    for (const secret of [f.password, p.password, 'a-wrong-password-xyz']) expect(logs).not.toContain(secret);
  });

  it('a return address after login stays on the dashboard', async () => {
    const p = await createPartner(t, 902);
    const jar = new Jar();
    const page = await get(t, PLATFORM_HOST, '/partner/login?return_to=https%3A%2F%2Fevil.example%2F', jar);
    expect(page.body).toContain('name="return_to" value="/partner"');
    const res = await post(t, PLATFORM_HOST, '/partner/login', jar, {
      _csrf: csrfFrom(page.body),
      email: p.email,
      password: p.password,
      return_to: '//evil.example/partner',
    });
    expect(res.headers.location).toBe('/partner');
  });
  /**
   * Guesses sent at the same time, every password check held until every guess is either answered
   * or waiting for its check. The promise: per account and window, only the first 5 guesses to be
   * recorded are checked; every other one is answered with the lock message without a check, even
   * when it carries the right password; the account is locked afterwards.
   */
  async function burst(f: Fixture, order: 'together' | 'right one after five checks') {
    const accounts = t.platform.services.accounts;
    const real = accounts.authenticateMerchant.bind(accounts);
    const checked: string[] = [];
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const spy = vi.spyOn(accounts, 'authenticateMerchant').mockImplementation(async (store, email, password) => {
      checked.push(password);
      await held;
      return real(store, email, password);
    });
    try {
      const jar = new Jar();
      const csrf = csrfFrom((await get(t, f.host, '/admin/login', jar)).body);
      let answered = 0;
      // One address per guess, so the account's limit (not the address's) is what decides.
      const send = (i: number, password: string) =>
        t.app
          .inject({
            method: 'POST',
            url: '/admin/login',
            remoteAddress: `198.51.100.${i + 1}`,
            headers: { host: f.host, cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
            payload: new URLSearchParams({ _csrf: csrf, email: f.email, password, return_to: '/admin' }).toString(),
          })
          .then((res) => {
            answered++;
            return res;
          });
      const wrong = Array.from({ length: 24 }, (_, i) => `wrong guess ${i + 1}`);
      let pending: ReturnType<typeof send>[];
      if (order === 'together') {
        pending = [...wrong, f.password].map((password, i) => send(i, password));
      } else {
        pending = wrong.map((password, i) => send(i, password));
        await until(() => checked.length >= 5);
        pending.push(send(24, f.password));
      }
      await until(() => answered + checked.length >= 25);
      release();
      const results = await Promise.all(pending);
      return { checked, results };
    } finally {
      release();
      spy.mockRestore();
    }
  }

  const sessionsOf = async (f: Fixture) => {
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    const rows = await t.db.kysely
      .selectFrom('web_sessions')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('store_id', '=', store.id)
      .executeTakeFirstOrThrow();
    return Number(rows.n);
  };

  it('a burst of 25 guesses at once (24 wrong, the right one last) checks exactly 5 passwords; the other 20 get the lock message', async () => {
    const f = await createFixture(t);
    const { checked, results } = await burst(f, 'together');
    expect(checked).toHaveLength(5);
    const locations = results.map((r) => String(r.headers.location));
    const unchecked = locations.filter((l) => l.includes('locked=15'));
    expect(results.every((r) => r.statusCode === 303)).toBe(true);
    expect(unchecked.length).toBeGreaterThanOrEqual(20);
    // Only a checked guess can log in: the right password logs in only if it was among the five.
    const rightChecked = checked.includes(f.password);
    expect(locations.filter((l) => l === '/admin')).toHaveLength(rightChecked ? 1 : 0);
    expect(results.filter((r) => r.cookies.some((c) => c.name === 'sg_session'))).toHaveLength(rightChecked ? 1 : 0);
    expect(await sessionsOf(f)).toBe(rightChecked ? 1 : 0);
    // Afterwards the account stays locked, right password or not.
    expect((await merchantAttempt(f, f.email, f.password, '203.0.113.50')).headers.location).toContain('locked=15');
  });

  it('the right password sent once the first 5 guesses are being checked is refused unchecked, and the account locks', async () => {
    const f = await createFixture(t);
    const { checked, results } = await burst(f, 'right one after five checks');
    expect(checked).toHaveLength(5);
    expect(checked).not.toContain(f.password);
    const right = results[24]!;
    expect(right.statusCode).toBe(303);
    expect(right.headers.location).toContain('/admin/login?locked=15');
    expect(right.cookies.find((c) => c.name === 'sg_session')).toBeUndefined();
    expect(results.filter((r) => String(r.headers.location).includes('locked=15')).length).toBeGreaterThanOrEqual(20);
    expect(results.some((r) => r.headers.location === '/admin')).toBe(false);
    expect(await sessionsOf(f)).toBe(0);
    expect((await merchantAttempt(f, f.email, f.password, '203.0.113.51')).headers.location).toContain('locked=15');
    t.clock.advance(15 * 60_000 + 1);
    expect((await merchantAttempt(f, f.email, f.password, '203.0.113.51')).headers.location).toBe('/admin');
  });
});
