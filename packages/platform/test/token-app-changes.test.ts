// The token endpoint judges the client on its app as the database holds it, though another node
// changed the app after this node last read it (a node keeps the app it read, so that its next
// grant need not read it again): a client secret rotated and finished, a redirect URI changed. The
// old value is refused and changes nothing; the new one is taken at once. On SQLite (a file both
// platforms open) and PostgreSQL, plain and partitioned.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../src/domain/tokens.ts';
import { createPlatform, type Platform } from '../src/platform.ts';
import {
  codeFor,
  createFixture,
  createTestPlatform,
  DIALECTS_WITH_PARTITIONED,
  exchange,
  type Fixture,
  refreshRequest,
  type TestPlatform,
  tokenRequest,
} from './harness.ts';
import { unroutedQueries } from './partition-routing.ts';

describe.each(DIALECTS_WITH_PARTITIONED)('token endpoint after another node changed the app, on %s', (dialect) => {
  let t: TestPlatform;
  let other: Platform;
  let dir: string | undefined;

  beforeAll(async () => {
    dir = dialect === 'sqlite' ? mkdtempSync(join(tmpdir(), 'storegate-app-changes-')) : undefined;
    t = await createTestPlatform(dialect, dir ? { database: { dialect: 'sqlite', path: join(dir, 'platform.db') } } : {});
    // Another node: its own connections to the same database.
    other = await createPlatform(t.config, { clock: t.clock.fn, http: false, migrate: false });
  });

  afterAll(async () => {
    await other?.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function appId(f: Fixture): Promise<number> {
    const row = await t.db.kysely.selectFrom('apps').select('id').where('client_id', '=', f.clientId).executeTakeFirstOrThrow();
    return row.id;
  }

  async function rotatedAt(refreshToken: string): Promise<number | null | undefined> {
    const row = await t.db.kysely
      .selectFrom('refresh_tokens')
      .select('rotated_at')
      .where('token_hash', '=', hashToken(refreshToken))
      .executeTakeFirst();
    return row?.rotated_at;
  }

  async function refreshTokens(): Promise<number> {
    const row = await t.db.kysely
      .selectFrom('refresh_tokens')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** A fixture whose app this node has read and granted with: a code exchange, then a refresh. */
  async function granted(): Promise<{ f: Fixture; refreshToken: string }> {
    const f = await createFixture(t);
    const first = await exchange(t, f, await codeFor(t, f));
    const res = await refreshRequest(t, f, first.refresh_token);
    expect(res.statusCode, res.body).toBe(200);
    return { f, refreshToken: res.json().refresh_token };
  }

  it('a client secret rotated and finished on another node: the old secret is refused, nothing changed; the new one rotates the token', async () => {
    const { f, refreshToken } = await granted();
    const id = await appId(f);
    const { secret } = await other.services.rotations.rotateClientSecret(id);
    await other.services.rotations.finishClientSecretRotation(id);

    const before = await refreshTokens();
    const refused = await refreshRequest(t, f, refreshToken);
    expect(refused.statusCode, refused.body).toBe(401);
    expect(refused.json()).toMatchObject({ error: 'invalid_client' });
    expect(await rotatedAt(refreshToken)).toBeNull();
    expect(await refreshTokens()).toBe(before);

    const res = await refreshRequest(t, { ...f, clientSecret: secret }, refreshToken);
    expect(res.statusCode, res.body).toBe(200);
    expect(await rotatedAt(refreshToken)).toBe(t.clock.now);
    expect(await refreshTokens()).toBe(before + 1);
  });

  it('a client secret rotated on another node: the new secret is taken at once, while this node last read the old one', async () => {
    const { f, refreshToken } = await granted();
    const { secret } = await other.services.rotations.rotateClientSecret(await appId(f));
    const res = await refreshRequest(t, { ...f, clientSecret: secret }, refreshToken);
    expect(res.statusCode, res.body).toBe(200);
    expect(await rotatedAt(refreshToken)).toBe(t.clock.now);
  });

  it('a redirect URI changed on another node: the old one is refused, nothing changed; the new one rotates the token', async () => {
    const { f, refreshToken } = await granted();
    const moved = 'http://localhost:3000/moved/callback';
    await other.services.apps.updateUrls(await appId(f), f.appUrl, moved);

    const before = await refreshTokens();
    const refused = await refreshRequest(t, f, refreshToken);
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/redirect_uri/) });
    expect(await rotatedAt(refreshToken)).toBeNull();
    expect(await refreshTokens()).toBe(before);

    const res = await tokenRequest(t, f, {
      client_id: f.clientId,
      client_secret: f.clientSecret,
      refresh_token: refreshToken,
      grant_type: 'refresh_token',
      redirect_uri: moved,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(await rotatedAt(refreshToken)).toBe(t.clock.now);
  });

  it.runIf(dialect === 'postgres-partitioned')('every query of these grants on a store table reads one partition', async () => {
    const url = t.config.database.dialect === 'postgres' ? t.config.database.url : '';
    // This file's own reads of refresh_tokens (by hash alone, to see what a grant changed) are not the platform's.
    const platformQueries = (t.queries ?? []).filter((q) => !/^select (count\(\*\) as "n"|"rotated_at") from "refresh_tokens"/.test(q.sql));
    expect(platformQueries.length).toBeGreaterThan(10);
    const unrouted = await unroutedQueries(url, platformQueries);
    expect(unrouted.map((q) => `${q.tables.join(',')}: ${q.sql}`)).toEqual([]);
  });
});
