// The usual refresh and code grants are decided twice: in SQL, by the guarded UPDATE that claims the
// token or code in one statement (grant-steps.ts), and in TypeScript, by rotatesInOneStep and
// redeemsInOneStep (domain/grants.ts). This suite feeds both the same generated rows and requires
// the same verdict, on every database and layout the statements run on, so a change to one rule
// without the other fails here. A row the statement refuses must also come out of it unchanged.
//
// fast-check runs with a fixed seed, so every run tries the same cases.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConfig } from '../src/config.ts';
import { pkceChallenge, presentedChallenge, redeemsInOneStep, rotatesInOneStep } from '../src/domain/grants.ts';
import { queryRunner } from '../src/storage/prepared-query.ts';
import type { AppRow, InstallationRow, StoreRow } from '../src/storage/ports/rows.ts';
import type { CodeRedemption, RefreshRotation } from '../src/storage/ports/tokens.ts';
import { appWithVersion, type GrantSteps, postgresGrantSteps, sqliteGrantSteps } from '../src/storage/repositories/grant-steps.ts';
import { preparedStatements } from '../src/storage/repositories/prepared-statements.ts';
import { type OpenStorage, openStorage } from '../src/storage/sql-storage.ts';
import { DIALECTS, freshPostgresUrl, TEST_PARTITIONS } from './harness.ts';

const NOW = Date.UTC(2026, 10, 22);
const HOUR = 3600_000;
const SEED = 20261122;
const RUNS = 120;

interface Target {
  name: string;
  partitions?: number;
  database(): Promise<{ config: DatabaseConfig; cleanup(): Promise<void> }>;
}

const TARGETS: Target[] = [
  { name: 'sqlite', database: async () => ({ config: { dialect: 'sqlite', path: ':memory:' }, cleanup: async () => {} }) },
];
if (DIALECTS.includes('postgres')) {
  for (const partitions of [undefined, TEST_PARTITIONS]) {
    TARGETS.push({
      name: partitions ? 'postgres (store tables partitioned)' : 'postgres',
      partitions,
      database: async () => {
        const schema = await freshPostgresUrl();
        return { config: { dialect: 'postgres', url: schema.url }, cleanup: () => schema.drop() };
      },
    });
  }
}

let seq = 0;
const tag = (prefix: string) => `${prefix}-${++seq}`;

/** Two stores of one merchant, two apps of one partner, the first app installed in both stores. */
interface World {
  store: StoreRow;
  otherStore: StoreRow;
  app: AppRow;
  otherApp: AppRow;
  installation: InstallationRow;
  otherInstallation: InstallationRow;
}

async function world(s: OpenStorage): Promise<World> {
  const name = tag('w');
  const merchant = await s.accounts.insertMerchant({ email: `${name}@merchant.test`, passwordHash: 'hash', now: NOW });
  const store = await s.accounts.insertStore({ name, ownerMerchantId: merchant.id, now: NOW });
  const otherStore = await s.accounts.insertStore({ name: `${name}-b`, ownerMerchantId: merchant.id, now: NOW });
  const partner = await s.accounts.insertPartner({ email: `${name}@partner.test`, passwordHash: 'hash', now: NOW });
  const newApp = (n: string) => ({
    client_id: `client-${n}`,
    partner_id: partner.id,
    name: `App ${n}`,
    app_url: `https://${n}.example.test/`,
    redirect_uri: `https://${n}.example.test/callback`,
    scopes: 'read_products',
    client_secret_enc: `secret-${n}`,
    created_at: NOW,
  });
  const app = await s.apps.insertApp(newApp(name));
  const otherApp = await s.apps.insertApp(newApp(`${name}-b`));
  const installation = await s.apps.insertInstallation({ storeId: store.id, appId: app.id, scopes: 'read_products', now: NOW });
  const otherInstallation = await s.apps.insertInstallation({ storeId: otherStore.id, appId: app.id, scopes: 'read_products', now: NOW });
  return { store, otherStore, app, otherApp, installation, otherInstallation };
}

/**
 * Mostly `usual`, now and then one of `others`: a case is the usual grant often enough (every other
 * field must be usual too) that both verdicts come up many times in a run.
 */
function usually<T>(usual: T, ...others: T[]): fc.Arbitrary<T> {
  return fc.oneof({ arbitrary: fc.constant(usual), weight: 8 }, { arbitrary: fc.constantFrom(...others), weight: 1 });
}
/** Expiries around the grant's `now`: the boundary itself and a step either side are where a flipped comparison shows. */
const expiresIn = fc.constantFrom(-HOUR, -1, 0, 1, HOUR);
/** A time a token or code was marked at (rotated, revoked, used), also on either side of `now`; usually none. */
const markedAt = usually<number | null>(null, NOW - HOUR, NOW - 1, NOW, NOW + 1);

const refreshCase = fc.record({
  ofOtherApp: usually(false, true),
  inOtherStore: usually(false, true),
  expiresIn,
  rotatedAt: markedAt,
  revokedAt: markedAt,
  familyRevokedAt: markedAt,
  form: fc.constantFrom('plain', 'checked'),
});

const VERIFIER = 'v'.repeat(43);
const OTHER_VERIFIER = 'w'.repeat(43);
const codeCase = fc.record({
  ofOtherApp: usually(false, true),
  inOtherStore: usually(false, true),
  expiresIn,
  usedAt: markedAt,
  redirect: usually('registered', 'other', 'missing'),
  challenge: fc.constantFrom(null, pkceChallenge(VERIFIER)),
  verifier: usually<string | undefined>(VERIFIER, undefined, OTHER_VERIFIER, 'too-short'),
  merchant: usually(false, true),
  installation: usually('same scopes', 'more scopes', 'other scopes', 'uninstalled'),
  form: fc.constantFrom('plain', 'checked'),
});

describe.each(TARGETS)('the grant rules of SQL and of the domain agree on $name', (target) => {
  let s: OpenStorage;
  let cleanup: () => Promise<void>;
  let steps: GrantSteps;
  let w: World;
  /** The grant as the statement decides it: the one-step form this database runs, or on PostgreSQL either form. */
  let rotate: (form: string, r: RefreshRotation) => Promise<boolean>;
  let redeem: (form: string, r: CodeRedemption) => Promise<boolean>;

  beforeAll(async () => {
    const db = await target.database();
    cleanup = db.cleanup;
    s = openStorage(db.config);
    await s.migrate({ partitions: target.partitions });
    w = await world(s);
    const k = s.db.kysely;
    const run = queryRunner(s.db);
    if (s.db.sqlite) {
      steps = sqliteGrantSteps(k, preparedStatements(k));
      rotate = async (_form, r) => (await steps.rotateRefresh(run, w.app.id, r)) !== undefined;
      redeem = async (_form, r) => (await steps.redeemCode(run, w.app.id, r)) !== undefined;
      return;
    }
    const pgSteps = postgresGrantSteps(k);
    const version = async () => (await run.first(appWithVersion(k), { id: w.app.client_id }))!.row_version;
    rotate = async (form, r) => {
      if (form === 'plain') return (await pgSteps.rotateRefresh(run, w.app.id, r)) !== undefined;
      const outcome = await pgSteps.rotateRefreshChecked(run, w.app, await version(), r);
      if (outcome.appChanged) throw new Error('the app row did not change');
      return outcome.granted !== undefined;
    };
    redeem = async (form, r) => {
      if (form === 'plain') return (await pgSteps.redeemCode(run, w.app.id, r)) !== undefined;
      const outcome = await pgSteps.redeemCodeChecked(run, w.app, await version(), r);
      if (outcome.appChanged) throw new Error('the app row did not change');
      return outcome.granted !== undefined;
    };
  });

  afterAll(async () => {
    await s?.close();
    await cleanup?.();
  });

  const pairFor = (n: string, now: number) => ({
    storeId: w.store.id,
    accessHash: `access-${n}`,
    refreshHash: `refresh-${n}`,
    accessExpiresAt: now + HOUR,
    refreshExpiresAt: now + 24 * HOUR,
    now,
  });

  it('a refresh token rotates in one statement exactly when rotatesInOneStep says so', async () => {
    await fc.assert(
      fc.asyncProperty(refreshCase, async (c) => {
        const n = tag('r');
        const storeId = c.inOtherStore ? w.otherStore.id : w.store.id;
        const installationId = c.inOtherStore ? w.otherInstallation.id : w.installation.id;
        const appId = c.ofOtherApp ? w.otherApp.id : w.app.id;
        const familyId = `family-${n}`;
        const hash = `held-${n}`;
        await s.grants.run(async (q) => {
          await q.insertFamily(storeId, familyId, installationId, NOW - HOUR);
          await q.insertPair({
            ...pairFor(`old-${n}`, NOW - HOUR),
            refreshHash: hash,
            storeId,
            familyId,
            installationId,
            appId,
            scopes: 'read_products',
            refreshExpiresAt: NOW + c.expiresIn,
          });
        });
        const k = s.db.kysely;
        await k
          .updateTable('refresh_tokens')
          .set({ rotated_at: c.rotatedAt, revoked_at: c.revokedAt })
          .where('token_hash', '=', hash)
          .execute();
        await k.updateTable('token_families').set({ revoked_at: c.familyRevokedAt }).where('id', '=', familyId).execute();

        // What the service reads for the grant of the first app in the first store.
        const before = await s.grants.run((q) => q.refreshByHash(w.store.id, hash));
        const row = before && before.store_id === w.store.id ? before : undefined;
        const expected = rotatesInOneStep(row, { appId: w.app.id, now: NOW });
        const unchanged = await s.grants.run((q) => q.refreshByHash(storeId, hash));
        const rotated = await rotate(c.form, { ...pairFor(n, NOW), tokenHash: hash });
        expect(rotated).toBe(expected);
        const after = await s.grants.run((q) => q.refreshByHash(storeId, hash));
        if (rotated) expect(after?.rotated_at).toBe(NOW);
        else expect(after).toEqual(unchanged);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('a code is redeemed in one statement exactly when redeemsInOneStep says so', async () => {
    await fc.assert(
      fc.asyncProperty(codeCase, async (c) => {
        const n = tag('c');
        const hash = `code-${n}`;
        const storeId = c.inOtherStore ? w.otherStore.id : w.store.id;
        const installationId = c.inOtherStore ? w.otherInstallation.id : w.installation.id;
        const scopes = {
          'same scopes': 'read_products',
          'more scopes': 'read_products,write_orders',
          'other scopes': 'read_orders',
          uninstalled: 'read_products',
        }[c.installation];
        await s.apps.updateInstallation(storeId, installationId, {
          scopes,
          uninstalledAt: c.installation === 'uninstalled' ? NOW - HOUR : null,
        });
        const merchant = c.merchant ? (await s.accounts.insertMerchant({ email: `${n}@m.test`, passwordHash: 'h', now: NOW })).id : null;
        await s.tokens.insertCode({
          codeHash: hash,
          appId: c.ofOtherApp ? w.otherApp.id : w.app.id,
          storeId,
          installationId,
          redirectUri: w.app.redirect_uri,
          scopes: 'read_products',
          codeChallenge: c.challenge,
          expiresAt: NOW + c.expiresIn,
          now: NOW - HOUR,
          merchantId: merchant,
        });
        if (c.usedAt !== null)
          await s.db.kysely.updateTable('authorization_codes').set({ used_at: c.usedAt }).where('code_hash', '=', hash).execute();

        const redirectUri = { registered: w.app.redirect_uri, other: 'https://elsewhere.example.test/cb', missing: undefined }[c.redirect];
        const before = await s.grants.run((q) => q.codeByHash(w.store.id, hash));
        const row = before && before.store_id === w.store.id ? before : undefined;
        const installation = row ? await s.grants.run((q) => q.installation(w.store.id, row.installation_id)) : undefined;
        const expected = redeemsInOneStep(row, installation, { appId: w.app.id, redirectUri, codeVerifier: c.verifier, now: NOW });
        const redeemed = await redeem(c.form, {
          ...pairFor(n, NOW),
          codeHash: hash,
          familyId: `family-${n}`,
          redirectUri: redirectUri ?? null,
          codeChallenge: presentedChallenge(c.verifier),
        });
        expect(redeemed).toBe(expected);
        const after = await s.grants.run((q) => q.codeByHash(storeId, hash));
        expect(after?.used_at).toBe(redeemed ? NOW : c.usedAt);
        expect(after?.family_id).toBe(redeemed ? `family-${n}` : null);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
