// A rotated refresh token presented again: the same successor pair for as long as neither of its
// tokens has been used (a lost response must not lock the merchant out, however late the retry),
// reuse once either has been (the family is revoked), never past the old token's lifetime. The
// first use of an access token is recorded once, in the database, so every node agrees.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../src/domain/tokens.ts';
import {
  accessTokenActive,
  api,
  codeFor,
  createFixture,
  createTestPlatform,
  DIALECTS,
  exchange,
  type Fixture,
  refreshRequest,
  type TestPlatform,
} from './harness.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface Pair {
  access_token: string;
  refresh_token: string;
  expires_at: number;
}

describe.each(DIALECTS)('refresh successors on %s', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off' });
  });
  afterAll(async () => t.close());

  async function rotated(f: Fixture): Promise<{ first: Pair; next: Pair }> {
    const first = (await exchange(t, f, await codeFor(t, f))) as Pair;
    const res = await refreshRequest(t, f, first.refresh_token);
    expect(res.statusCode).toBe(200);
    return { first, next: res.json() as Pair };
  }

  const usedAt = async (token: string) =>
    (await t.db.kysely.selectFrom('access_tokens').select('used_at').where('token_hash', '=', hashToken(token)).executeTakeFirstOrThrow())
      .used_at;

  it('an hour later, the old refresh token still gets the very same pair while it is unused', async () => {
    const f = await createFixture(t);
    const { first, next } = await rotated(f);
    t.clock.advance(HOUR);
    for (let i = 0; i < 3; i++) {
      const retry = await refreshRequest(t, f, first.refresh_token);
      expect(retry.statusCode).toBe(200);
      expect(retry.json()).toMatchObject({
        access_token: next.access_token,
        refresh_token: next.refresh_token,
        expires_at: next.expires_at,
      });
      // The access token of the pair has expired by now; the answer says so instead of a negative number.
      expect(retry.json().expires_in).toBe(0);
    }
    // The successor refresh token works, so the app that lost the first answer is not locked out.
    const onward = await refreshRequest(t, f, next.refresh_token);
    expect(onward.statusCode).toBe(200);
    expect(await accessTokenActive(t, onward.json().access_token)).toBe(true);
  });

  it('once the successor access token has called the Admin API, the old refresh token is reuse: refused, family revoked', async () => {
    const f = await createFixture(t);
    const { first, next } = await rotated(f);
    expect(await usedAt(next.access_token)).toBeNull();
    expect((await api(t, f, next.access_token, 'GET', '/openapi/2026-01/products')).statusCode).toBe(200);
    expect(await usedAt(next.access_token)).toBe(t.clock.now);
    const reuse = await refreshRequest(t, f, first.refresh_token);
    expect(reuse.statusCode).toBe(400);
    expect(reuse.json()).toEqual({ error: 'invalid_grant', error_description: 'refresh token was already used' });
    expect(await accessTokenActive(t, next.access_token)).toBe(false);
    expect((await api(t, f, next.access_token, 'GET', '/openapi/2026-01/products')).statusCode).toBe(401);
    expect((await refreshRequest(t, f, next.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('once the successor refresh token has rotated, the old one is reuse and takes the newest pair down too', async () => {
    const f = await createFixture(t);
    const { first, next } = await rotated(f);
    const third = (await refreshRequest(t, f, next.refresh_token)).json() as Pair;
    t.clock.advance(5_000);
    const reuse = await refreshRequest(t, f, first.refresh_token);
    expect(reuse.json()).toEqual({ error: 'invalid_grant', error_description: 'refresh token was already used' });
    expect(await accessTokenActive(t, third.access_token)).toBe(false);
    expect((await refreshRequest(t, f, third.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('an access token revoked by its app counts as used', async () => {
    const f = await createFixture(t);
    const { first, next } = await rotated(f);
    const revoke = await t.app.inject({
      method: 'POST',
      url: '/admin/oauth/revoke',
      headers: { host: f.host, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ client_id: f.clientId, client_secret: f.clientSecret, token: next.access_token }).toString(),
    });
    expect(revoke.statusCode).toBe(200);
    expect((await refreshRequest(t, f, first.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' });
    expect((await refreshRequest(t, f, next.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it("past the old refresh token's lifetime the retry is refused, and the unused successor family is left alone", async () => {
    const f = await createFixture(t);
    const first = (await exchange(t, f, await codeFor(t, f))) as Pair;
    t.clock.advance(DAY);
    const next = (await refreshRequest(t, f, first.refresh_token)).json() as Pair;
    t.clock.advance(89 * DAY);
    const late = await refreshRequest(t, f, first.refresh_token);
    expect(late.statusCode).toBe(400);
    expect(late.json()).toEqual({ error: 'invalid_grant', error_description: 'refresh token has expired' });
    // The successor was issued a day after the old token, so it lives a day longer.
    expect((await refreshRequest(t, f, next.refresh_token)).statusCode).toBe(200);
  });

  it('the first use is written once; later calls read only', async () => {
    const f = await createFixture(t);
    const { next } = await rotated(f);
    const firstUse = t.clock.now;
    const calls = await Promise.all(Array.from({ length: 10 }, () => api(t, f, next.access_token, 'GET', '/openapi/2026-01/products')));
    expect(calls.map((c) => c.statusCode)).toEqual(Array(10).fill(200));
    expect(await usedAt(next.access_token)).toBe(firstUse);
    t.clock.advance(60_000);
    expect((await api(t, f, next.access_token, 'GET', '/openapi/2026-01/products')).statusCode).toBe(200);
    expect(await usedAt(next.access_token)).toBe(firstUse);
  });

  it('the use seen by another node (a write behind this node cache) still makes the old token reuse', async () => {
    const f = await createFixture(t);
    const { first, next } = await rotated(f);
    // As if another platform node served the first call: only the database knows.
    await t.db.kysely
      .updateTable('access_tokens')
      .set({ used_at: t.clock.now })
      .where('token_hash', '=', hashToken(next.access_token))
      .execute();
    expect((await refreshRequest(t, f, first.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('two retries of the old token racing a first use: each retry gets the pair or is refused as reuse, and afterwards the family is consistent', async () => {
    for (let round = 0; round < 5; round++) {
      const f = await createFixture(t);
      const { first, next } = await rotated(f);
      const [a, call, b] = await Promise.all([
        refreshRequest(t, f, first.refresh_token),
        api(t, f, next.access_token, 'GET', '/openapi/2026-01/products'),
        refreshRequest(t, f, first.refresh_token),
      ]);
      const answers = [a, b].map((r) => (r.statusCode === 200 ? (r.json() as Pair).refresh_token : r.json().error));
      for (const x of answers) expect([next.refresh_token, 'invalid_grant']).toContain(x);
      expect([200, 401]).toContain(call.statusCode);
      const revoked = !(await accessTokenActive(t, next.access_token));
      if (answers.includes('invalid_grant')) {
        // A refusal means the use was recorded first, so the family is gone.
        expect(revoked).toBe(true);
      } else if (call.statusCode === 200) {
        // Both retries came before the recorded use: a third presentation now is reuse.
        expect(revoked).toBe(false);
        expect((await refreshRequest(t, f, first.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' });
      }
      expect(await usedAt(next.access_token)).not.toBeNull();
    }
  });
});
