// The maintenance round deletes codes, tokens, token families, sessions and one-time reveals once
// nothing can use them any more, and keeps what reuse detection still reads: a used code and
// every refresh token of a family that lives, and the access token issued with a living family's
// newest refresh token. Reuse detection works as before on what is left. On a frozen clock.
import { type CompiledQuery, Kysely, SqliteDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLOCK_SKEW_MARGIN_MS, PRUNE_STEPS, retentionCutoffs } from '../src/domain/credential-retention.ts';
import { hashToken } from '../src/domain/tokens.ts';
import { CredentialPruning, type PruneBounds } from '../src/services/credential-pruning.ts';
import { openDatabase } from '../src/storage/database.ts';
import { SqlCredentialPrune } from '../src/storage/repositories/credential-prune.ts';
import type { Database } from '../src/storage/schema.ts';
import { storageOn } from '../src/storage/sql-storage.ts';
import {
  api,
  codeFor,
  consent,
  createFixture,
  createTestPlatform,
  DIALECTS_WITH_PARTITIONED,
  exchange,
  type Fixture,
  refreshRequest,
  tokenRequest,
  type TestPlatform,
  testWorker,
} from './harness.ts';
import { unroutedQueries } from './partition-routing.ts';
import { until } from './webhook-receiver.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

type Pair = { access_token: string; refresh_token: string };

describe.each(DIALECTS_WITH_PARTITIONED)('credential pruning on %s', (dialect) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off' });
  });
  afterAll(async () => t.close());

  const prune = (bounds: PruneBounds = {}) =>
    new CredentialPruning(new SqlCredentialPrune(t.db.kysely, t.db.dialect), t.config, t.clock.fn, bounds).prune();

  /** Of `tokens`, those whose row is still in `table` (by the hash of the token). */
  async function kept(table: 'authorization_codes' | 'access_tokens' | 'refresh_tokens', tokens: string[]): Promise<string[]> {
    const column = table === 'authorization_codes' ? 'code_hash' : 'token_hash';
    const rows = await t.db.kysely.selectFrom(table).select(`${column} as hash`).where(column, 'in', tokens.map(hashToken)).execute();
    const present = new Set(rows.map((r) => r.hash));
    return tokens.filter((token) => present.has(hashToken(token)));
  }
  const familyOf = async (refreshToken: string) =>
    (
      await t.db.kysely
        .selectFrom('refresh_tokens')
        .select('family_id')
        .where('token_hash', '=', hashToken(refreshToken))
        .executeTakeFirstOrThrow()
    ).family_id;
  async function familiesKept(ids: string[]): Promise<string[]> {
    const rows = await t.db.kysely.selectFrom('token_families').select('id').where('id', 'in', ids).execute();
    const present = new Set(rows.map((r) => r.id));
    return ids.filter((id) => present.has(id));
  }
  const revoke = (f: Fixture, token: string) =>
    t.app.inject({
      method: 'POST',
      url: '/admin/oauth/revoke',
      headers: { host: f.host, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ client_id: f.clientId, client_secret: f.clientSecret, token }).toString(),
    });
  const refreshed = async (f: Fixture, refreshToken: string): Promise<Pair> => {
    const res = await refreshRequest(t, f, refreshToken);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Pair;
  };

  it('codes and tokens past their last use go; a used code, the refresh tokens and the newest access token of a living family stay', async () => {
    const f = await createFixture(t);
    const unused = await codeFor(t, f);
    // A family whose successor access token called the Admin API.
    const liveCode = await codeFor(t, f);
    const live1 = (await exchange(t, f, liveCode)) as Pair;
    // A family its app revoked.
    const revokedCode = await codeFor(t, f);
    const revoked1 = (await exchange(t, f, revokedCode)) as Pair;
    expect((await revoke(f, revoked1.refresh_token)).statusCode).toBe(200);
    t.clock.advance(2 * HOUR);
    const live2 = await refreshed(f, live1.refresh_token);
    expect((await api(t, f, live2.access_token, 'GET', '/openapi/2026-01/products')).statusCode).toBe(200);
    // A family whose app lost the answer of its refresh: neither successor token was used.
    const lostCode = await codeFor(t, f);
    const lost1 = (await exchange(t, f, lostCode)) as Pair;
    t.clock.advance(1_000);
    const lost2 = await refreshed(f, lost1.refresh_token);
    const families = {
      live: await familyOf(live1.refresh_token),
      revoked: await familyOf(revoked1.refresh_token),
      lost: await familyOf(lost1.refresh_token),
    };
    t.clock.advance(2 * HOUR);

    expect(await prune()).toEqual({ codes: 2, accessTokens: 3, refreshTokens: 1, families: 1, sessions: 0, reveals: 0, launchTokens: 0 });
    expect(await kept('authorization_codes', [unused, liveCode, revokedCode, lostCode])).toEqual([liveCode, lostCode]);
    const accessTokens = [live1, live2, revoked1, lost1, lost2].map((p) => p.access_token);
    expect(await kept('access_tokens', accessTokens)).toEqual([live2.access_token, lost2.access_token]);
    const refreshTokens = [live1, live2, revoked1, lost1, lost2].map((p) => p.refresh_token);
    expect(await kept('refresh_tokens', refreshTokens)).toEqual([live1, live2, lost1, lost2].map((p) => p.refresh_token));
    expect(await familiesKept(Object.values(families))).toEqual([families.live, families.lost]);
    // A second round at the same moment finds nothing more.
    expect(await prune()).toEqual({ codes: 0, accessTokens: 0, refreshTokens: 0, families: 0, sessions: 0, reveals: 0, launchTokens: 0 });

    // The app that lost the answer still gets the very same pair.
    const retry = await refreshRequest(t, f, lost1.refresh_token);
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toMatchObject({ access_token: lost2.access_token, refresh_token: lost2.refresh_token });
    // The rotated refresh token of the family whose successor is in use is reuse: the family ends.
    const reuse = await refreshRequest(t, f, live1.refresh_token);
    expect(reuse.json()).toEqual({ error: 'invalid_grant', error_description: 'refresh token was already used' });
    expect((await refreshRequest(t, f, live2.refresh_token)).json()).toEqual({
      error: 'invalid_grant',
      error_description: 'refresh token has been revoked',
    });
    // The used code, presented again, still revokes what it issued.
    const replay = await t.app.inject({
      method: 'POST',
      url: '/admin/oauth/token',
      headers: { host: f.host, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        client_id: f.clientId,
        client_secret: f.clientSecret,
        code: lostCode,
        grant_type: 'authorization_code',
        redirect_uri: f.redirectUri,
      }).toString(),
    });
    expect(replay.json()).toEqual({ error: 'invalid_grant', error_description: 'authorization code was already used' });
    expect((await refreshRequest(t, f, lost2.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('a family goes whole once every token of it has expired, not a moment sooner; one that kept rotating stays', async () => {
    const f = await createFixture(t);
    const start = t.clock.now;
    const endedCode = await codeFor(t, f);
    const ended = (await exchange(t, f, endedCode)) as Pair;
    const keptCode = await codeFor(t, f);
    const k1 = (await exchange(t, f, keptCode)) as Pair;
    t.clock.advance(30 * DAY);
    const k2 = await refreshed(f, k1.refresh_token);
    expect((await api(t, f, k2.access_token, 'GET', '/openapi/2026-01/products')).statusCode).toBe(200);
    t.clock.advance(30 * DAY);
    const k3 = await refreshed(f, k2.refresh_token);
    const endedFamily = await familyOf(ended.refresh_token);
    const keptFamily = await familyOf(k1.refresh_token);

    // The ended family's refresh token expired 90 days after it was issued, the margin later it goes.
    t.clock.now = start + 90 * DAY + CLOCK_SKEW_MARGIN_MS;
    await prune();
    expect(await kept('refresh_tokens', [ended.refresh_token])).toEqual([ended.refresh_token]);
    expect(await kept('access_tokens', [ended.access_token])).toEqual([ended.access_token]);
    t.clock.advance(1);
    await prune();
    expect(await kept('refresh_tokens', [ended.refresh_token])).toEqual([]);
    expect(await kept('access_tokens', [ended.access_token])).toEqual([]);
    expect(await kept('authorization_codes', [endedCode, keptCode])).toEqual([keptCode]);
    expect(await familiesKept([endedFamily, keptFamily])).toEqual([keptFamily]);
    // The family that kept rotating keeps every refresh token (the first has expired, and is still
    // reuse when presented) and its newest access token.
    expect(
      await kept(
        'refresh_tokens',
        [k1, k2, k3].map((p) => p.refresh_token),
      ),
    ).toHaveLength(3);
    expect(
      await kept(
        'access_tokens',
        [k1, k2, k3].map((p) => p.access_token),
      ),
    ).toEqual([k3.access_token]);
    const reuse = await refreshRequest(t, f, k1.refresh_token);
    expect(reuse.json()).toEqual({ error: 'invalid_grant', error_description: 'refresh token was already used' });
    expect((await refreshRequest(t, f, k3.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('sessions and one-time reveals go the margin after they expired', async () => {
    const f = await createFixture(t);
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    const merchant = await t.services.accounts.startSession('merchant', store.owner_merchant_id, store.id);
    const reveal = await t.services.reveals.put(merchant, { secret: 'first' });
    t.clock.advance(3 * MINUTE);
    const laterReveal = await t.services.reveals.put(merchant, { secret: 'second' });
    t.clock.advance(6 * HOUR);
    const partner = await t.services.accounts.startSession('partner', 1, null);
    // The first session expired 12 hours after it began; the second lives another 6 hours.
    t.clock.advance(6 * HOUR - 3 * MINUTE + CLOCK_SKEW_MARGIN_MS + 1);
    const sessions = await t.db.kysely
      .selectFrom('web_sessions')
      .select('id_hash')
      .where('id_hash', 'in', [hashToken(merchant), hashToken(partner)]);
    const reveals = t.db.kysely
      .selectFrom('one_time_reveals')
      .select('id_hash')
      .where('id_hash', 'in', [hashToken(reveal), hashToken(laterReveal)]);
    expect(await sessions.execute()).toHaveLength(2);
    expect(await reveals.execute()).toHaveLength(2);
    const pruned = await prune();
    expect(pruned.sessions).toBeGreaterThanOrEqual(1);
    expect(pruned.reveals).toBeGreaterThanOrEqual(2);
    expect((await sessions.execute()).map((r) => r.id_hash)).toEqual([hashToken(partner)]);
    expect(await reveals.execute()).toEqual([]);
    expect(await t.services.accounts.findSession('partner', partner, null)).toBeDefined();
  });

  it('an online access token goes the margin after it expired, though its family has not ended', async () => {
    const f = await createFixture(t);
    const url = await consent(t, f, { 'grant_options[]': 'per-user' });
    const online = await tokenRequest(t, f, {
      client_id: f.clientId,
      client_secret: f.clientSecret,
      code: url.searchParams.get('code')!,
      grant_type: 'authorization_code',
      redirect_uri: f.redirectUri,
    });
    const token = online.json().access_token as string;
    expect(await kept('access_tokens', [token])).toHaveLength(1);
    t.clock.advance(24 * HOUR + CLOCK_SKEW_MARGIN_MS - 1);
    await prune();
    expect(await kept('access_tokens', [token])).toHaveLength(1);
    t.clock.advance(2);
    await prune();
    expect(await kept('access_tokens', [token])).toEqual([]);
  });

  it('the id of an exchanged launch token goes the margin after the token expired, not before', async () => {
    const store = (await t.services.accounts.findStoreByName((await createFixture(t)).storeName))!;
    const expiresAt = t.clock.now + MINUTE;
    await t.db.kysely
      .insertInto('launch_token_uses')
      .values({ store_id: store.id, jti: 'prune-test-jti', expires_at: expiresAt, created_at: t.clock.now })
      .execute();
    const kept = () => t.db.kysely.selectFrom('launch_token_uses').select('jti').where('jti', '=', 'prune-test-jti').execute();
    t.clock.advance(MINUTE + CLOCK_SKEW_MARGIN_MS - 1);
    await prune();
    expect(await kept()).toHaveLength(1);
    t.clock.advance(2);
    expect((await prune()).launchTokens).toBeGreaterThanOrEqual(1);
    expect(await kept()).toEqual([]);
  });

  it('deletes in bounded batches: a round stops at its bound and the next one goes on', async () => {
    const f = await createFixture(t);
    const codes: string[] = [];
    for (let i = 0; i < 5; i++) codes.push(await codeFor(t, f));
    t.clock.advance(HOUR);
    // Two rows per statement, one statement per step: two codes per round.
    expect((await prune({ batchSize: 2, maxBatches: 1 })).codes).toBe(2);
    expect(await kept('authorization_codes', codes)).toHaveLength(3);
    expect((await prune({ batchSize: 2, maxBatches: 1 })).codes).toBe(2);
    expect((await prune({ batchSize: 2, maxBatches: 1 })).codes).toBe(1);
    expect(await kept('authorization_codes', codes)).toEqual([]);
  });

  it("the worker's maintenance round prunes them", async () => {
    const f = await createFixture(t);
    const code = await codeFor(t, f);
    const pair = (await exchange(t, f, await codeFor(t, f))) as Pair;
    expect((await revoke(f, pair.refresh_token)).statusCode).toBe(200);
    t.clock.advance(HOUR);
    const worker = await testWorker(t, { clock: t.clock.fn, pollMs: 5 });
    await worker.start();
    try {
      await until(
        async () => (await kept('authorization_codes', [code])).length + (await kept('refresh_tokens', [pair.refresh_token])).length === 0,
        10_000,
        'the worker to prune the expired code and the revoked family',
      );
    } finally {
      await worker.stop();
    }
  });

  it.runIf(dialect === 'postgres-partitioned')(
    'every statement of the round reads one partition per row or is marked fleet-wide',
    async () => {
      const url = t.config.database.dialect === 'postgres' ? t.config.database.url : '';
      const statements = (t.queries ?? []).filter((q) =>
        /^delete from "(refresh_tokens|token_families|access_tokens|authorization_codes)"/.test(q.sql),
      );
      expect(statements.length).toBeGreaterThan(0);
      expect(await unroutedQueries(url, statements)).toEqual([]);
    },
  );
});

// SQLite plans each statement by its indexes alone (no statistics here), so what it picks is what
// every database of that layout gets: every table of the round is reached through an index.
describe('credential pruning plans on SQLite', () => {
  it('every statement of the round finds its rows through an index, never a scan of a whole table', async () => {
    const real = openDatabase({ dialect: 'sqlite', path: ':memory:' });
    const queries: CompiledQuery[] = [];
    const kysely = new Kysely<Database>({
      dialect: new SqliteDialect({ database: real.sqlite! }),
      log: (event) => {
        if (event.level === 'query') queries.push(event.query);
      },
    });
    try {
      await storageOn({ ...real, kysely }).migrate();
      const repo = new SqlCredentialPrune(kysely, 'sqlite');
      const cutoffs = retentionCutoffs(Date.UTC(2027, 0, 1), { accessTokenTtlSeconds: 3600, refreshTokenTtlSeconds: 90 * 86_400 });
      for (const step of PRUNE_STEPS) {
        queries.length = 0;
        await repo.pruneBatch(step, cutoffs, 1000);
        expect(queries).toHaveLength(1);
        const q = queries[0]!;
        const plan = (real.sqlite!.prepare(`explain query plan ${q.sql}`).all(...q.parameters) as { detail: string }[]).map(
          (r) => r.detail,
        );
        expect(
          plan.filter((line) => /^SCAN /.test(line)),
          `${step}:\n${plan.join('\n')}`,
        ).toEqual([]);
        expect(
          plan.some((line) => /^SEARCH \w+ USING .*INDEX \w+_(expiry|revoked|created) /.test(line)),
          `${step}:\n${plan.join('\n')}`,
        ).toBe(true);
      }
    } finally {
      await real.close();
    }
  });
});
