// What the database holds after a whole install: no token, code, client secret, webhook secret,
// session id or password in plain text, on either database. A copy of the database (a backup, a
// read replica, a leaked dump) must not let anyone call the API or sign as the platform.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  consent,
  createFixture,
  createTestPlatform,
  DIALECTS,
  exchange,
  Jar,
  login,
  refreshRequest,
  type TestPlatform,
} from './harness.ts';

const TABLES = [
  'merchants',
  'stores',
  'partners',
  'apps',
  'installations',
  'authorization_codes',
  'token_families',
  'access_tokens',
  'refresh_tokens',
  'private_apps',
  'web_sessions',
  'webhook_subscriptions',
  'login_attempts',
  'one_time_reveals',
] as const;

describe.each(DIALECTS)('secrets at rest on %s', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off' });
  });
  afterAll(async () => t.close());

  it('no token, code, secret, session id or password is stored in plain text', async () => {
    const f = await createFixture(t);
    const jar = await login(t, f, new Jar());
    const redirect = await consent(t, f, {}, jar);
    const code = redirect.searchParams.get('code')!;
    const pair = await exchange(t, f, code);
    const next = (await refreshRequest(t, f, pair.refresh_token)).json() as { access_token: string; refresh_token: string };
    // The successor pair can be handed out again (a retry of the old refresh token, here an hour
    // later), yet it is kept nowhere: it is derived again from the old token under the master key.
    t.clock.advance(3_600_000);
    const again = (await refreshRequest(t, f, pair.refresh_token)).json() as { access_token: string; refresh_token: string };
    expect(again).toMatchObject({ access_token: next.access_token, refresh_token: next.refresh_token });
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    const priv = await t.services.apps.createPrivateApp({ storeId: store.id, name: 'at rest', scopes: 'read_products' });
    const session = jar.header();

    const plaintexts = {
      code,
      'access token': pair.access_token,
      'refresh token': pair.refresh_token,
      'rotated access token': next.access_token,
      'rotated refresh token': next.refresh_token,
      // Halves of the tokens too: a token stored in pieces or under another prefix is no better.
      'rotated access token body': next.access_token.slice(6),
      'rotated refresh token body': next.refresh_token.slice(6),
      'client secret': f.clientSecret,
      'private app token': priv.accessToken,
      'private app webhook secret': priv.webhookSecret,
      'merchant password': f.password,
    };
    const dump: string[] = [];
    for (const table of TABLES) dump.push(JSON.stringify(await t.db.kysely.selectFrom(table).selectAll().execute()));
    const all = dump.join('\n');
    // The dump is real: it holds the rows this flow wrote.
    expect(all).toContain(f.clientId);
    expect(all).toContain(f.storeName);
    for (const [what, value] of Object.entries(plaintexts)) {
      expect(value.length, what).toBeGreaterThanOrEqual(8);
      expect(all.includes(value), `${what} found in the database`).toBe(false);
    }
    // Session ids travel only in the cookie; the table keeps their hashes.
    for (const cookie of session.split('; ')) {
      const value = cookie.slice(cookie.indexOf('=') + 1);
      if (value.length >= 16)
        expect(all.includes(value), `cookie ${cookie.slice(0, cookie.indexOf('='))} found in the database`).toBe(false);
    }
  });
});
