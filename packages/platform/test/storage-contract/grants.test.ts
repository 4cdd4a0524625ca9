// The storage contract for tokens and the grants that issue, rotate and revoke them (authorization codes, refresh rotation).
// Every target (storage-targets.ts) gets a database of its own for this file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Storage } from '../../src/storage/ports/storage.ts';
import type { CodeRedemption, NewTokenPair, RefreshRotation } from '../../src/storage/ports/tokens.ts';
import { storageTargets } from '../storage-targets.ts';
import { NOW, MINUTE, HOUR, DAY, tag, world, secondApp, newCode, pair, issue, rotate, redeem, contractDatabase } from './support.ts';

describe.each(storageTargets('contract-grants'))('storage contract: $name', (target) => {
  const db = contractDatabase(target);
  let s: Storage;

  beforeAll(async () => {
    s = await db.open();
  });

  afterAll(() => db.close());

  describe('tokens and grants', () => {
    it('codes: codeByHash, claimCode true once then false', async () => {
      const w = await world(s);
      const hash = tag('code-hash');
      await s.tokens.insertCode(newCode(w, hash));
      const code = {
        app_id: w.app.id,
        store_id: w.store.id,
        installation_id: w.installation.id,
        redirect_uri: w.app.redirect_uri,
        scopes: 'read_products',
        code_challenge: 'challenge-1',
        expires_at: NOW + MINUTE,
        used_at: null,
        family_id: null,
        merchant_id: null,
      };
      expect(await s.grants.run((q) => q.codeByHash(w.store.id, hash))).toEqual(code);
      expect(await s.grants.run((q) => q.codeByHash(w.store.id, 'code-hash-unknown'))).toBeUndefined();
      expect(await s.grants.run((q) => q.claimCode(w.store.id, hash, 'family-a', NOW + 1))).toBe(true);
      expect(await s.grants.run((q) => q.claimCode(w.store.id, hash, 'family-b', NOW + 2))).toBe(false);
      expect(await s.grants.run((q) => q.codeByHash(w.store.id, hash))).toEqual({ ...code, used_at: NOW + 1, family_id: 'family-a' });
      expect(await s.grants.run((q) => q.installation(w.store.id, w.installation.id))).toEqual({
        id: w.installation.id,
        uninstalled_at: null,
        scopes: 'read_products',
      });
      // The scopes as they are at this moment, not as they were when the code was issued.
      await s.apps.updateInstallation(w.store.id, w.installation.id, { scopes: 'read_orders' });
      expect((await s.grants.run((q) => q.installation(w.store.id, w.installation.id)))?.scopes).toBe('read_orders');
      expect(await s.grants.run((q) => q.installation(w.store.id, w.installation.id + 100_000))).toBeUndefined();
    });

    it('concurrent grants claiming one code: exactly one wins', async () => {
      const w = await world(s);
      const hash = tag('code-hash');
      await s.tokens.insertCode(newCode(w, hash));
      const wins = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          s.grants.run(async (q) => {
            if (!(await q.claimCode(w.store.id, hash, `family-${hash}-${i}`, NOW + 1))) return false;
            await q.insertFamily(w.store.id, `family-${hash}-${i}`, w.installation.id, NOW + 1);
            return true;
          }),
        ),
      );
      expect(wins.filter(Boolean)).toHaveLength(1);
      expect((await s.grants.run((q) => q.codeByHash(w.store.id, hash)))?.family_id).toBe(`family-${hash}-${wins.indexOf(true)}`);
    });

    it('a token pair: refreshByHash, successor, owners, and the Admin API lookup', async () => {
      const w = await world(s);
      const p = await issue(s, w);
      const refresh = {
        family_id: p.familyId,
        installation_id: w.installation.id,
        store_id: w.store.id,
        app_id: w.app.id,
        scopes: 'read_products',
        expires_at: NOW + 30 * DAY,
        rotated_at: null,
        revoked_at: null,
      };
      const owner = { family_id: p.familyId, app_id: w.app.id, store_id: w.store.id };
      await s.grants.run(async (q) => {
        expect(await q.refreshByHash(p.storeId, p.refreshHash)).toEqual(refresh);
        expect(await q.refreshByHash(p.storeId, p.accessHash)).toBeUndefined();
        expect(await q.successor(p.storeId, p.refreshHash, p.accessHash)).toEqual({
          access_expires_at: NOW + HOUR,
          revoked_at: null,
          rotated_at: null,
          access_used_at: null,
          access_revoked_at: null,
        });
        expect(await q.refreshOwner(p.storeId, p.refreshHash)).toEqual(owner);
        expect(await q.accessOwner(p.storeId, p.accessHash)).toEqual(owner);
        expect(await q.accessOwner(p.storeId, p.refreshHash)).toBeUndefined();
      });
      expect(await s.tokens.findAccessToken(p.storeId, p.accessHash)).toEqual({
        app_id: w.app.id,
        store_id: w.store.id,
        scopes: 'read_products',
        expires_at: NOW + HOUR,
        revoked_at: null,
        used_at: null,
        created_at: NOW,
        merchant_id: null,
      });
      expect(await s.tokens.findAccessToken(p.storeId, p.refreshHash)).toBeUndefined();
      // Token introspection reads a refresh token as the grant does, outside any grant.
      const asGranted = await s.grants.run((q) => q.refreshByHash(p.storeId, p.refreshHash));
      expect(asGranted).toMatchObject({ app_id: w.app.id, rotated_at: null });
      expect(await s.tokens.findRefreshToken(p.storeId, p.refreshHash)).toEqual(asGranted);
      expect(await s.tokens.findRefreshToken(p.storeId, p.accessHash)).toBeUndefined();
    });

    it('every token lookup names its store: with another store the rows are unknown, and writes change nothing', async () => {
      const w = await world(s);
      const other = await world(s);
      const p = await issue(s, w);
      const code = tag('code-hash');
      await s.tokens.insertCode(newCode(w, code));
      const privateHash = tag('private-hash');
      await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'P',
        scopes: 'read_products',
        tokenHash: privateHash,
        webhookSecretEnc: 'x',
        now: NOW,
      });
      const elsewhere = other.store.id;
      await s.grants.run(async (q) => {
        expect(await q.codeByHash(elsewhere, code)).toBeUndefined();
        expect(await q.claimCode(elsewhere, code, 'family-elsewhere', NOW)).toBe(false);
        expect(await q.installation(elsewhere, w.installation.id)).toBeUndefined();
        expect(await q.refreshByHash(elsewhere, p.refreshHash)).toBeUndefined();
        expect(await q.successor(elsewhere, p.refreshHash, p.accessHash)).toBeUndefined();
        expect(await q.refreshOwner(elsewhere, p.refreshHash)).toBeUndefined();
        expect(await q.accessOwner(elsewhere, p.accessHash)).toBeUndefined();
        expect(await q.claimRefresh(elsewhere, p.refreshHash, NOW)).toBe(false);
        expect(await q.markAccessUsed(elsewhere, p.accessHash, NOW)).toBe(false);
        await q.revokeAccess(elsewhere, p.accessHash, NOW);
        await q.revokeFamily(elsewhere, p.familyId, NOW);
      });
      expect(await s.tokens.findAccessToken(elsewhere, p.accessHash)).toBeUndefined();
      expect(await s.tokens.findPrivateToken(elsewhere, privateHash)).toBeUndefined();
      expect(await s.tokens.findRefreshToken(elsewhere, p.refreshHash)).toBeUndefined();
      await s.tokens.revokeInstallation(elsewhere, w.installation.id, NOW);
      expect(await s.tokens.expireCodes(elsewhere, w.installation.id, NOW)).toBe(0);
      await s.apps.updateInstallation(elsewhere, w.installation.id, { uninstalledAt: NOW });
      // Nothing of store w changed.
      expect(await s.tokens.findAccessToken(w.store.id, p.accessHash)).toMatchObject({ revoked_at: null, used_at: null });
      expect(await s.grants.run((q) => q.refreshByHash(w.store.id, p.refreshHash))).toMatchObject({ revoked_at: null, rotated_at: null });
      expect(await s.grants.run((q) => q.codeByHash(w.store.id, code))).toMatchObject({ used_at: null, expires_at: NOW + MINUTE });
      expect((await s.apps.findInstallation(w.store.id, w.app.id))?.uninstalled_at).toBeNull();
      expect((await s.tokens.findPrivateToken(w.store.id, privateHash))?.store_id).toBe(w.store.id);
    });

    it('rotateRefresh: a live token of this app rotates once, its successor pair stored with it; anything else changes nothing', async () => {
      const w = await world(s);
      const p = await issue(s, w);
      const rotation = (from: NewTokenPair, n: string, over: Partial<RefreshRotation> = {}): RefreshRotation => ({
        storeId: from.storeId,
        tokenHash: from.refreshHash,
        accessHash: `access-${n}`,
        refreshHash: `refresh-${n}`,
        accessExpiresAt: NOW + 2 * HOUR,
        refreshExpiresAt: NOW + 40 * DAY,
        now: NOW + 1,
        ...over,
      });
      const unchanged = async (from: NewTokenPair) =>
        expect(await s.grants.run((q) => q.refreshByHash(from.storeId, from.refreshHash))).toMatchObject({
          rotated_at: null,
          revoked_at: null,
        });
      // Refused, nothing written: another app, another store, unknown, expired.
      const other = await secondApp(s, w);
      const elsewhere = await world(s);
      for (const [app, over] of [
        [other.app, {}],
        [w.app, { storeId: elsewhere.store.id }],
        [w.app, { tokenHash: 'refresh-unknown' }],
        [w.app, { now: NOW + 30 * DAY }],
      ] as const) {
        const n = tag('n');
        expect(await rotate(s, app, rotation(p, n, over))).toBeUndefined();
        expect(await s.grants.run((q) => q.refreshByHash(p.storeId, `refresh-${n}`))).toBeUndefined();
        await unchanged(p);
      }
      const n = tag('n');
      expect(await rotate(s, w.app, rotation(p, n))).toEqual({ scopes: 'read_products' });
      expect((await s.grants.run((q) => q.refreshByHash(p.storeId, p.refreshHash)))?.rotated_at).toBe(NOW + 1);
      expect(await s.grants.run((q) => q.refreshByHash(p.storeId, `refresh-${n}`))).toEqual({
        family_id: p.familyId,
        installation_id: w.installation.id,
        store_id: w.store.id,
        app_id: w.app.id,
        scopes: 'read_products',
        expires_at: NOW + 40 * DAY,
        rotated_at: null,
        revoked_at: null,
      });
      expect(await s.tokens.findAccessToken(p.storeId, `access-${n}`)).toEqual({
        app_id: w.app.id,
        store_id: w.store.id,
        scopes: 'read_products',
        expires_at: NOW + 2 * HOUR,
        revoked_at: null,
        used_at: null,
        created_at: NOW + 1,
        merchant_id: null,
      });
      // Rotated already: the second presentation is the full grant's to judge.
      expect(await rotate(s, w.app, rotation(p, tag('n')))).toBeUndefined();
      // A revoked family, a revoked token: nothing.
      const revokedFamily = await issue(s, w);
      await s.grants.run((q) => q.revokeFamily(w.store.id, revokedFamily.familyId, NOW));
      expect(await rotate(s, w.app, rotation(revokedFamily, tag('n')))).toBeUndefined();
      expect((await s.grants.run((q) => q.refreshByHash(w.store.id, revokedFamily.refreshHash)))?.rotated_at).toBeNull();
      const revokedToken = await issue(s, w);
      await s.tokens.revokeInstallation(w.store.id, w.installation.id, NOW);
      expect(await rotate(s, w.app, rotation(revokedToken, tag('n')))).toBeUndefined();
    });

    it('rotateRefresh: of concurrent rotations of one token exactly one stores a pair', async () => {
      const w = await world(s);
      const p = await issue(s, w);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          rotate(s, w.app, {
            storeId: p.storeId,
            tokenHash: p.refreshHash,
            accessHash: `access-${p.familyId}-${i}`,
            refreshHash: `refresh-${p.familyId}-${i}`,
            accessExpiresAt: NOW + HOUR,
            refreshExpiresAt: NOW + DAY,
            now: NOW + 1,
          }),
        ),
      );
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
      const winner = results.findIndex((r) => r !== undefined);
      for (let i = 0; i < 8; i++)
        expect(await s.tokens.findAccessToken(p.storeId, `access-${p.familyId}-${i}`)).toEqual(
          i === winner ? expect.anything() : undefined,
        );
    });

    it('redeemCode: a live code for this app, redirect URI and verifier, of an installation holding exactly its scopes, is used once; anything else changes nothing', async () => {
      const w = await world(s);
      const redemption = (codeHash: string, n: string, over: Partial<CodeRedemption> = {}): CodeRedemption => ({
        storeId: w.store.id,
        codeHash,
        familyId: `family-${n}`,
        redirectUri: w.app.redirect_uri,
        codeChallenge: 'challenge-1',
        accessHash: `access-${n}`,
        refreshHash: `refresh-${n}`,
        accessExpiresAt: NOW + HOUR,
        refreshExpiresAt: NOW + 30 * DAY,
        now: NOW + 1,
        ...over,
      });
      const code = tag('code-hash');
      await s.tokens.insertCode(newCode(w, code));
      const other = await secondApp(s, w);
      const elsewhere = await world(s);
      for (const [app, over] of [
        [other.app, {}],
        [w.app, { storeId: elsewhere.store.id }],
        [w.app, { codeHash: 'code-hash-unknown' }],
        [w.app, { redirectUri: 'https://elsewhere.example.test/callback' }],
        [w.app, { redirectUri: null }],
        [w.app, { codeChallenge: 'challenge-2' }],
        [w.app, { codeChallenge: null }],
        [w.app, { now: NOW + MINUTE }],
      ] as const) {
        const n = tag('n');
        expect(await redeem(s, app, redemption(code, n, over))).toBeUndefined();
        expect(await s.tokens.findAccessToken(w.store.id, `access-${n}`)).toBeUndefined();
        expect(await s.grants.run((q) => q.codeByHash(w.store.id, code))).toMatchObject({ used_at: null, family_id: null });
      }
      const n = tag('n');
      expect(await redeem(s, w.app, redemption(code, n))).toEqual({ scopes: 'read_products', installationId: w.installation.id });
      expect(await s.grants.run((q) => q.codeByHash(w.store.id, code))).toMatchObject({ used_at: NOW + 1, family_id: `family-${n}` });
      expect(await s.grants.run((q) => q.refreshByHash(w.store.id, `refresh-${n}`))).toMatchObject({
        family_id: `family-${n}`,
        installation_id: w.installation.id,
        app_id: w.app.id,
        scopes: 'read_products',
        expires_at: NOW + 30 * DAY,
        revoked_at: null,
      });
      expect(await s.tokens.findAccessToken(w.store.id, `access-${n}`)).toMatchObject({ expires_at: NOW + HOUR, revoked_at: null });
      // Used: a second redemption is the full grant's to judge (a replay).
      expect(await redeem(s, w.app, redemption(code, tag('n')))).toBeUndefined();
      // A code without a challenge needs no verifier.
      const plain = tag('code-hash');
      await s.tokens.insertCode({ ...newCode(w, plain), codeChallenge: null });
      expect(await redeem(s, w.app, redemption(plain, tag('n'), { codeChallenge: null }))).toBeDefined();
      // The installation's scopes changed, or it is uninstalled: nothing.
      const changed = tag('code-hash');
      await s.tokens.insertCode(newCode(w, changed));
      await s.apps.updateInstallation(w.store.id, w.installation.id, { scopes: 'read_products,read_orders' });
      expect(await redeem(s, w.app, redemption(changed, tag('n')))).toBeUndefined();
      await s.apps.updateInstallation(w.store.id, w.installation.id, { scopes: 'read_products', uninstalledAt: NOW });
      expect(await redeem(s, w.app, redemption(changed, tag('n')))).toBeUndefined();
      expect(await s.grants.run((q) => q.codeByHash(w.store.id, changed))).toMatchObject({ used_at: null });
    });

    it('claimRefresh once; revokeAccess ends one access token; revokeFamily is folded into every token of the family', async () => {
      const w = await world(s);
      const p = await issue(s, w);
      expect(await s.grants.run((q) => q.claimRefresh(p.storeId, p.refreshHash, NOW + 1))).toBe(true);
      expect(await s.grants.run((q) => q.claimRefresh(p.storeId, p.refreshHash, NOW + 2))).toBe(false);
      expect((await s.grants.run((q) => q.refreshByHash(p.storeId, p.refreshHash)))?.rotated_at).toBe(NOW + 1);

      const other = await issue(s, w);
      await s.grants.run((q) => q.revokeAccess(other.storeId, other.accessHash, NOW + 3));
      expect((await s.tokens.findAccessToken(other.storeId, other.accessHash))?.revoked_at).toBe(NOW + 3);
      expect((await s.grants.run((q) => q.refreshByHash(other.storeId, other.refreshHash)))?.revoked_at).toBeNull();

      await s.grants.run((q) => q.revokeFamily(w.store.id, p.familyId, NOW + 4));
      await s.grants.run(async (q) => {
        expect(await q.refreshByHash(p.storeId, p.refreshHash)).toMatchObject({ revoked_at: NOW + 4, rotated_at: NOW + 1 });
        expect(await q.successor(p.storeId, p.refreshHash, p.accessHash)).toMatchObject({
          access_expires_at: NOW + HOUR,
          revoked_at: NOW + 4,
        });
      });
      expect((await s.tokens.findAccessToken(p.storeId, p.accessHash))?.revoked_at).toBe(NOW + 4);
      // Another family of the same installation is untouched.
      expect((await s.grants.run((q) => q.refreshByHash(other.storeId, other.refreshHash)))?.revoked_at).toBeNull();
    });

    it('a grant that throws is rolled back; a grant beside it still commits', async () => {
      const w = await world(s);
      const kept = pair(w, tag('t'));
      const dropped = pair(w, tag('t'));
      const refused = new Error('grant refused');
      const [ok, failed] = await Promise.allSettled([
        s.grants.run(async (q) => {
          await q.insertFamily(w.store.id, kept.familyId, w.installation.id, NOW);
          await q.insertPair(kept);
          return 'kept';
        }),
        s.grants.run(async (q) => {
          await q.insertFamily(w.store.id, dropped.familyId, w.installation.id, NOW);
          await q.insertPair(dropped);
          throw refused;
        }),
      ]);
      expect(ok).toEqual({ status: 'fulfilled', value: 'kept' });
      expect(failed).toEqual({ status: 'rejected', reason: refused });
      expect(await s.tokens.findAccessToken(kept.storeId, kept.accessHash)).toBeDefined();
      expect(await s.tokens.findAccessToken(dropped.storeId, dropped.accessHash)).toBeUndefined();
      expect(await s.grants.run((q) => q.refreshByHash(dropped.storeId, dropped.refreshHash))).toBeUndefined();
      // Nothing of it is left behind: the same family and tokens can be written afresh.
      await s.grants.run(async (q) => {
        await q.insertFamily(w.store.id, dropped.familyId, w.installation.id, NOW);
        await q.insertPair(dropped);
      });
      expect(await s.tokens.findAccessToken(dropped.storeId, dropped.accessHash)).toBeDefined();
    });

    it('revokeInstallation ends every family of the installation, and only those', async () => {
      const w = await world(s);
      const other = await world(s);
      const a = await issue(s, w);
      const b = await issue(s, w);
      const elsewhere = await issue(s, other);
      await s.tokens.revokeInstallation(w.store.id, w.installation.id, NOW + 5);
      expect((await s.tokens.findAccessToken(a.storeId, a.accessHash))?.revoked_at).toBe(NOW + 5);
      expect((await s.tokens.findAccessToken(b.storeId, b.accessHash))?.revoked_at).toBe(NOW + 5);
      expect((await s.grants.run((q) => q.refreshByHash(b.storeId, b.refreshHash)))?.revoked_at).toBe(NOW + 5);
      expect((await s.tokens.findAccessToken(elsewhere.storeId, elsewhere.accessHash))?.revoked_at).toBeNull();
    });

    it('expireCodes ends the unredeemed, unexpired codes of one installation now, and only those', async () => {
      const w = await world(s);
      const other = await world(s);
      const [open, alsoOpen, used, expired, elsewhere] = Array.from({ length: 5 }, () => tag('code-hash'));
      await s.tokens.insertCode(newCode(w, open!));
      await s.tokens.insertCode({ ...newCode(w, alsoOpen!), expiresAt: NOW + 10 * MINUTE });
      await s.tokens.insertCode(newCode(w, used!));
      await s.tokens.insertCode({ ...newCode(w, expired!), expiresAt: NOW - 1 });
      await s.tokens.insertCode(newCode(other, elsewhere!));
      expect(await s.grants.run((q) => q.claimCode(w.store.id, used!, 'family-used', NOW))).toBe(true);

      expect(await s.transaction((tx) => tx.tokens.expireCodes(w.store.id, w.installation.id, NOW + 5))).toBe(2);
      const code = (hash: string, storeId = w.store.id) => s.grants.run((q) => q.codeByHash(storeId, hash));
      expect(await code(open!)).toMatchObject({ expires_at: NOW + 5, used_at: null });
      expect(await code(alsoOpen!)).toMatchObject({ expires_at: NOW + 5, used_at: null });
      expect(await code(used!)).toMatchObject({ expires_at: NOW + MINUTE, used_at: NOW });
      expect(await code(expired!)).toMatchObject({ expires_at: NOW - 1 });
      expect(await code(elsewhere!, other.store.id)).toMatchObject({ expires_at: NOW + MINUTE, used_at: null });
      // Nothing left to end.
      expect(await s.tokens.expireCodes(w.store.id, w.installation.id, NOW + 6)).toBe(0);
      expect(await code(open!)).toMatchObject({ expires_at: NOW + 5 });
    });

    it('private tokens: found by hash, revoked with their app', async () => {
      const w = await world(s);
      const hash = tag('private-hash');
      const id = await s.apps.insertPrivateApp({
        storeId: w.store.id,
        name: 'Feed',
        scopes: 'read_products',
        tokenHash: hash,
        webhookSecretEnc: 'sealed',
        now: NOW,
      });
      expect(await s.tokens.findPrivateToken(w.store.id, hash)).toEqual({
        id,
        store_id: w.store.id,
        scopes: 'read_products',
        revoked_at: null,
        created_at: NOW,
      });
      expect(await s.tokens.findPrivateToken(w.store.id, 'private-hash-unknown')).toBeUndefined();
      await s.apps.revokePrivateApp(w.store.id, id, NOW + 1);
      expect(await s.tokens.findPrivateToken(w.store.id, hash)).toEqual({
        id,
        store_id: w.store.id,
        scopes: 'read_products',
        revoked_at: NOW + 1,
        created_at: NOW,
      });
    });
  });

  db.routingTest();
});
