import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConfig } from '../src/config.ts';
import { type ClientCheck, grantAsClient } from '../src/services/client-auth.ts';
import type { AppRow } from '../src/storage/ports/rows.ts';
import type { Storage } from '../src/storage/ports/storage.ts';
import type { CodeRedemption, NewTokenPair, RefreshRotation } from '../src/storage/ports/tokens.ts';
import { openStorage } from '../src/storage/sql-storage.ts';
import { storageTargets } from './storage-targets.ts';
import { recordingStorage, unroutedQueries } from './partition-routing.ts';
import { DAY, HOUR, MINUTE, NOW, tag, type World, world, issue } from './storage-contract/support.ts';

const TARGETS = storageTargets('grant-contract');

async function insertCode(s: Storage, w: World): Promise<string> {
  const codeHash = tag('code-hash');
  await s.tokens.insertCode({
    codeHash,
    appId: w.app.id,
    storeId: w.store.id,
    installationId: w.installation.id,
    redirectUri: w.app.redirect_uri,
    scopes: 'read_products',
    codeChallenge: null,
    expiresAt: NOW + MINUTE,
    now: NOW,
  });
  return codeHash;
}

function rotation(w: World, p: NewTokenPair): RefreshRotation {
  const n = tag('n');
  return {
    storeId: w.store.id,
    accessHash: `access-${n}`,
    refreshHash: `refresh-${n}`,
    accessExpiresAt: NOW + HOUR,
    refreshExpiresAt: NOW + DAY,
    now: NOW + 1,
    tokenHash: p.refreshHash,
  };
}

function redemption(w: World, p: NewTokenPair, codeHash: string): CodeRedemption {
  return { ...rotation(w, p), codeHash, familyId: tag('family'), redirectUri: w.app.redirect_uri, codeChallenge: null };
}

describe.each(TARGETS)('grant store contract: $name', (target) => {
  let s: Storage;
  let config: DatabaseConfig;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const db = await target.database();
    config = db.config;
    cleanup = db.cleanup;
    s = openStorage(config, { poolSize: 10 });
    await s.migrate({ partitions: target.partitions });
  });

  afterAll(async () => {
    await s?.close();
    await cleanup?.();
  });

  const rotatedAt = async (w: World, p: NewTokenPair) =>
    (await s.grants.run((q) => q.refreshByHash(w.store.id, p.refreshHash)))?.rotated_at;
  const usedAt = async (w: World, code: string) => (await s.grants.run((q) => q.codeByHash(w.store.id, code)))?.used_at;

  it('rotateRefresh and redeemCode hand back the app of the client_id and change nothing unless it is the approved row', async () => {
    const w = await world(s);
    const p = await issue(s, w);
    const code = await insertCode(s, w);
    // Not approved: the app is read for the service to judge, nothing else.
    const read = await s.grants.rotateRefresh({ lookupId: w.app.client_id }, rotation(w, p));
    expect(read).toMatchObject({ ran: false, app: { id: w.app.id, client_secret_enc: w.app.client_secret_enc } });
    expect(await s.grants.redeemCode({ lookupId: w.app.client_id }, redemption(w, p, code))).toMatchObject({
      ran: false,
      app: { id: w.app.id },
    });
    // Approved on a row the app no longer is (another secret): refused by storage, the app as it is handed back.
    const stale = { ...w.app, client_secret_enc: 'sealed-elsewhere' };
    expect(await s.grants.rotateRefresh({ lookupId: w.app.client_id, approved: stale }, rotation(w, p))).toMatchObject({
      ran: false,
      app: { id: w.app.id, client_secret_enc: w.app.client_secret_enc },
    });
    expect(await s.grants.redeemCode({ lookupId: w.app.client_id, approved: stale }, redemption(w, p, code))).toMatchObject({
      ran: false,
      app: { redirect_uri: w.app.redirect_uri },
    });
    // Approved on another app's row, or no app under the client_id: nothing.
    const other = await world(s);
    expect(await s.grants.rotateRefresh({ lookupId: w.app.client_id, approved: other.app }, rotation(w, p))).toMatchObject({
      ran: false,
      app: { id: w.app.id },
    });
    // Also when that row is the copy storage kept of the other client_id.
    await s.grants.rotateRefresh({ lookupId: other.app.client_id }, rotation(w, p));
    const otherCopy = s.grants.knownApp(other.app.client_id);
    expect(otherCopy).toMatchObject({ id: other.app.id });
    expect(await s.grants.rotateRefresh({ lookupId: w.app.client_id, approved: otherCopy }, rotation(w, p))).toMatchObject({
      ran: false,
      app: { id: w.app.id },
    });
    expect(s.grants.knownApp(w.app.client_id)).toMatchObject({ id: w.app.id });
    expect(await s.grants.rotateRefresh({ lookupId: 'client-unknown', approved: w.app }, rotation(w, p))).toEqual({
      ran: false,
      app: undefined,
    });
    expect(await rotatedAt(w, p)).toBeNull();
    expect(await usedAt(w, code)).toBeNull();
    // Approved on the row as it is: the grant runs.
    const ran = await s.grants.rotateRefresh({ lookupId: w.app.client_id, approved: w.app }, rotation(w, p));
    expect(ran).toMatchObject({ ran: true, app: { id: w.app.id }, granted: { scopes: 'read_products' } });
    expect(await rotatedAt(w, p)).toBe(NOW + 1);
  });

  it.runIf(target.dialect === 'postgres' || target.file)(
    'a client is judged on its app as it is now, though another node changed it since this node last read it',
    async () => {
      // The node under test, and another node on the same database (its own connections).
      const url = config.dialect === 'postgres' ? config.url : undefined;
      const recorded = url ? recordingStorage(url) : undefined;
      const node = recorded ? recorded.storage : s;
      const other = openStorage(config);
      try {
        const w = await world(s);
        const seen: (AppRow | undefined)[] = [];
        // Accepts the app while it holds this secret and redirect URI, as the token endpoint's check does.
        const client = (secret: string, redirectUri = w.app.redirect_uri): ClientCheck => ({
          lookupId: w.app.client_id,
          check: (app) => {
            seen.push(app);
            if (!app || app.client_secret_enc !== secret || app.redirect_uri !== redirectUri) throw new Error('client refused');
            return app;
          },
        });
        const rotate = async (c: ClientCheck, p: NewTokenPair) =>
          (
            await grantAsClient(c, {
              known: (id) => node.grants.knownApp(id),
              run: (g) => node.grants.rotateRefresh(g, rotation(w, p)),
            })
          ).granted;
        const redeem = async (c: ClientCheck, p: NewTokenPair, code: string) =>
          (
            await grantAsClient(c, {
              known: (id) => node.grants.knownApp(id),
              run: (g) => node.grants.redeemCode(g, redemption(w, p, code)),
            })
          ).granted;
        const secret = w.app.client_secret_enc;

        // The first grant reads the app; the next is judged on what it read, the grant then one
        // statement on PostgreSQL.
        expect(await rotate(client(secret), await issue(s, w))).toBeDefined();
        const next = await issue(s, w);
        const queriesBefore = recorded?.queries.length ?? 0;
        expect(await rotate(client(secret), next)).toBeDefined();
        if (recorded) expect(recorded.queries.slice(queriesBefore).map((q) => q.sql)).toHaveLength(1);

        // The secret replaced on the other node: the old one is refused, and nothing changes.
        await other.apps.updateSecrets(w.app.id, { current: 'sealed-second', previous: null, previousExpiresAt: null });
        const held = await issue(s, w);
        await expect(rotate(client(secret), held)).rejects.toThrow('client refused');
        expect(seen.at(-1)).toMatchObject({ id: w.app.id, client_secret_enc: 'sealed-second' });
        expect(await rotatedAt(w, held)).toBeNull();
        // Replaced once more: this node's last read refuses the newest secret, the app as it is now takes it.
        await other.apps.updateSecrets(w.app.id, { current: 'sealed-third', previous: null, previousExpiresAt: null });
        expect(await rotate(client('sealed-third'), held)).toBeDefined();
        expect(await rotatedAt(w, held)).toBe(NOW + 1);

        // The redirect URI changed on the other node: a code presented with the old one is refused, unused.
        const code = await insertCode(s, w);
        await other.apps.updateUrls(w.app.id, w.app.app_url, 'https://moved.example/callback');
        await expect(redeem(client('sealed-third'), held, code)).rejects.toThrow('client refused');
        expect(await usedAt(w, code)).toBeNull();
        await other.apps.updateUrls(w.app.id, w.app.app_url, 'https://moved-again.example/callback');
        const moved = client('sealed-third', 'https://moved-again.example/callback');
        expect(await redeem(moved, held, code)).toMatchObject({ installationId: w.installation.id });

        // The app gone from under its client_id: refused as unknown, nothing changed.
        const last = await issue(s, w);
        expect(await rotate(moved, await issue(s, w))).toBeDefined();
        await other.db.kysely
          .updateTable('apps')
          .set({ client_id: tag('client-renamed') })
          .where('id', '=', w.app.id)
          .execute();
        await expect(rotate(moved, last)).rejects.toThrow('client refused');
        expect(seen.at(-1)).toBeUndefined();
        expect(await rotatedAt(w, last)).toBeNull();
        if (target.partitions && url) expect(await unroutedQueries(url, recorded!.queries)).toEqual([]);
      } finally {
        await other.close();
        await recorded?.close();
      }
    },
  );
});
