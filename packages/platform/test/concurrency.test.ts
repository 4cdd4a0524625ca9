// Races: 50 simultaneous redemptions of one code, 50 simultaneous refreshes of one refresh token.
// The token endpoint's limits are off: these are about atomicity, and 50 grants of one client at
// once are more than its bucket admits (token-rate-limit.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../src/domain/tokens.ts';
import {
  accessTokenActive,
  codeFor,
  createFixture,
  createTestPlatform,
  DIALECTS,
  exchange,
  refreshRequest,
  tokenRequest,
  type TestPlatform,
} from './harness.ts';

describe.each(DIALECTS)('concurrency on %s', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect, { tokenRateLimit: { client: 'off', store: 'off' } });
  });
  afterAll(async () => t.close());

  it('50 simultaneous redemptions of one code issue exactly one token pair', async () => {
    const f = await createFixture(t);
    const code = await codeFor(t, f);
    const fields = {
      client_id: f.clientId,
      client_secret: f.clientSecret,
      code,
      grant_type: 'authorization_code',
      redirect_uri: f.redirectUri,
    };
    const results = await Promise.all(Array.from({ length: 50 }, () => tokenRequest(t, f, fields)));
    const ok = results.filter((r) => r.statusCode === 200);
    expect(ok).toHaveLength(1);
    for (const r of results.filter((r) => r.statusCode !== 200)) expect(r.json().error).toBe('invalid_grant');
    const store = await t.services.accounts.findStoreByName(f.storeName);
    const issued = await t.db.kysely.selectFrom('access_tokens').select('token_hash').where('store_id', '=', store!.id).execute();
    expect(issued).toHaveLength(1);
    expect(issued[0]!.token_hash).toBe(hashToken(ok[0]!.json().access_token));
    // The 49 replays are a code-theft signal: the pair that was issued is revoked (RFC 6749 §4.1.2).
    expect(await accessTokenActive(t, ok[0]!.json().access_token)).toBe(false);
  });

  it('50 simultaneous refreshes of one refresh token produce one successor, returned to all of them', async () => {
    const f = await createFixture(t);
    const pair = await exchange(t, f, await codeFor(t, f));
    const results = await Promise.all(Array.from({ length: 50 }, () => refreshRequest(t, f, pair.refresh_token)));
    expect(results.map((r) => r.statusCode)).toEqual(Array(50).fill(200));
    const bodies = results.map((r) => r.json());
    expect(new Set(bodies.map((b) => b.refresh_token)).size).toBe(1);
    expect(new Set(bodies.map((b) => b.access_token)).size).toBe(1);
    expect(new Set(bodies.map((b) => b.expires_at)).size).toBe(1);
    const family = await t.db.kysely
      .selectFrom('refresh_tokens')
      .select(['token_hash', 'rotated_at'])
      .where(
        'family_id',
        '=',
        (
          await t.db.kysely
            .selectFrom('refresh_tokens')
            .select('family_id')
            .where('token_hash', '=', hashToken(pair.refresh_token))
            .executeTakeFirstOrThrow()
        ).family_id,
      )
      .execute();
    expect(family).toHaveLength(2);
    expect(await accessTokenActive(t, bodies[0].access_token)).toBe(true);
    // The successor itself rotates normally afterwards.
    expect((await refreshRequest(t, f, bodies[0].refresh_token)).statusCode).toBe(200);
  });
});
