// The master key on a shared database, on SQLite and PostgreSQL: the database records the id of the
// key its secrets are sealed with, a node holding another key refuses to start (changing nothing),
// and `KeyRotation` re-seals every secret under a new key while nodes holding both keep serving.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import type { Config } from '../src/config.ts';
import { masterKeyId, SecretBox } from '../src/domain/secret-box.ts';
import { createPlatform } from '../src/platform.ts';
import type { Db } from '../src/storage/database.ts';
import { KeyRotation } from '../src/services/key-rotation.ts';
import type { MasterKeyRepository } from '../src/storage/ports/master-keys.ts';
import { SqlMasterKeyRepository } from '../src/storage/repositories/master-key-repository.ts';
import {
  api,
  appToken,
  consent,
  createFixture,
  createTestPlatform,
  DIALECTS,
  type Dialect,
  exchange,
  freshPostgresUrl,
  refreshRequest,
  testWorker,
  type TestPlatform,
} from './harness.ts';
import { Receiver, until } from './webhook-receiver.ts';

const key = (name: string) => createHash('sha256').update(`storegate test ${name}`).digest();
const K1 = key('one');
const K2 = key('two');
const K3 = key('three');
const ALL_KEYS = [K1, K2, K3];
const V = '/openapi/2026-01';

const dir = mkdtempSync(join(tmpdir(), 'storegate-master-key-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** A database of its own: a SQLite file (shared by several handles), or a fresh PostgreSQL schema. */
async function firstPlatform(dialect: Dialect, masterKey: Buffer): Promise<TestPlatform> {
  files += 1;
  const database: Config['database'] | undefined =
    dialect === 'sqlite' ? { dialect: 'sqlite', path: join(dir, `k${files}.db`) } : undefined;
  return createTestPlatform(dialect, { rateLimit: 'off', masterKey, ...(database ? { database } : {}) });
}

/** Another node on the same database as `t`, with its own keys. */
function node(t: TestPlatform, masterKey: Buffer, previousMasterKey?: Buffer): Promise<TestPlatform> {
  return createTestPlatform(t.config.database.dialect, { rateLimit: 'off', database: t.config.database, masterKey, previousMasterKey });
}

function configFor(t: TestPlatform, masterKey: Buffer, previousMasterKey?: Buffer): Config {
  return { ...t.config, masterKey, previousMasterKey };
}

async function recorded(db: Db): Promise<Record<string, string>> {
  const rows = await db.kysely.selectFrom('master_keys').select(['name', 'value']).orderBy('name').execute();
  return Object.fromEntries(rows.map((r) => [r.name, r.value]));
}

/** Every sealed value the database holds, by where it lives. */
async function sealedValues(db: Db): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const a of await db.kysely.selectFrom('apps').select(['id', 'client_secret_enc', 'previous_secret_enc']).execute()) {
    out[`apps ${a.id} client`] = a.client_secret_enc;
    if (a.previous_secret_enc) out[`apps ${a.id} previous`] = a.previous_secret_enc;
  }
  for (const p of await db.kysely
    .selectFrom('private_apps')
    .select(['id', 'webhook_secret_enc', 'previous_webhook_secret_enc'])
    .execute()) {
    out[`private ${p.id} webhook`] = p.webhook_secret_enc;
    if (p.previous_webhook_secret_enc) out[`private ${p.id} previous`] = p.previous_webhook_secret_enc;
  }
  for (const r of await db.kysely.selectFrom('one_time_reveals').select(['id_hash', 'payload_enc']).execute())
    out[`reveal ${r.id_hash}`] = r.payload_enc;
  for (const k of await db.kysely.selectFrom('master_keys').select(['name', 'value']).where('name', 'like', 'data:%').execute())
    out[`kept ${k.name}`] = k.value;
  return out;
}

/** Everything a refused start could have touched. */
async function snapshot(db: Db): Promise<string> {
  const migrations = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db.kysely);
  return JSON.stringify([await recorded(db), await sealedValues(db), migrations.rows]);
}

function expectNoKey(text: string): void {
  for (const k of ALL_KEYS) {
    expect(text).not.toContain(k.toString('hex'));
    expect(text).not.toContain(k.toString('base64'));
  }
}

describe.each(DIALECTS)('master key check on %s', (dialect) => {
  it('a fresh database records the key id on first start (never the key); the same key starts again', async () => {
    const t = await firstPlatform(dialect, K1);
    const others: TestPlatform[] = [];
    try {
      const rows = await recorded(t.db);
      expect(rows.current).toBe(masterKeyId(K1));
      expect(Object.keys(rows).sort()).toEqual(['current', 'data:cursor', 'data:token-derivation']);
      expectNoKey(JSON.stringify(rows));
      // The kept keys are sealed like any secret.
      expect(rows['data:cursor']).toMatch(/^v1\./);
      others.push(await node(t, K1));
      expect(await recorded(t.db)).toEqual(rows);
    } finally {
      for (const o of others) await o.close();
      await t.close();
    }
  });

  it('a node with another key refuses to start with a sentence naming the key ids, and changes nothing', async () => {
    const t = await firstPlatform(dialect, K1);
    try {
      const f = await createFixture(t);
      await appToken(t, f);
      const before = await snapshot(t.db);
      const refused = createPlatform(configFor(t, K2), { http: false });
      await expect(refused).rejects.toThrow(
        `the master key does not match the key this database's secrets are sealed with (key id ${masterKeyId(K1)}; this node's key id ${masterKeyId(K2)}); start with the same MASTER_KEY as the other nodes, or see \`storegate keys rotate\``,
      );
      expectNoKey(String(await refused.catch((e: Error) => e.message)));
      // A worker or a command that does not migrate is held to the same check.
      await expect(createPlatform(configFor(t, K2), { http: false, migrate: false, worker: {} })).rejects.toThrow(/does not match/);
      expect(await snapshot(t.db)).toBe(before);
      // The node already serving is untouched: its client secret still opens at the token endpoint.
      await appToken(t, f);
    } finally {
      await t.close();
    }
  });

  it('two nodes with different keys starting at once on a fresh database agree: one records its key, the other stops', async () => {
    const t = await firstPlatform(dialect, K1);
    try {
      // The database as before this check existed: migrated, with no key recorded yet and no secrets.
      await t.db.kysely.deleteFrom('master_keys').execute();
      const results = await Promise.allSettled([
        createPlatform(configFor(t, K2), { http: false }),
        createPlatform(configFor(t, K3), { http: false }),
      ]);
      const started = results.filter((r) => r.status === 'fulfilled');
      const refused = results.filter((r) => r.status === 'rejected');
      expect(started).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(String((refused[0] as PromiseRejectedResult).reason)).toMatch(/the master key does not match the key this database/);
      const winner = (started[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof createPlatform>>>).value;
      expect((await recorded(t.db)).current).toBe(winner.box.keyId);
      await winner.close();
    } finally {
      await t.close();
    }
  });

  // SQLite runs one process's migrations at a time only through its file lock, so the race of two
  // migrating processes is shown where nodes share a server: PostgreSQL.
  it.runIf(dialect === 'postgres')(
    'two nodes with different keys migrating a brand-new database at once: one starts, the other stops',
    async () => {
      const t = await firstPlatform(dialect, K1);
      const fresh = await freshPostgresUrl();
      try {
        const database = { dialect: 'postgres' as const, url: fresh.url };
        const results = await Promise.allSettled([
          createPlatform({ ...configFor(t, K2), database }, { http: false }),
          createPlatform({ ...configFor(t, K3), database }, { http: false }),
        ]);
        const started = results.filter((r) => r.status === 'fulfilled');
        expect(started).toHaveLength(1);
        const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        expect(String(refused.reason)).toMatch(/the master key does not match the key this database/);
        const winner = (started[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof createPlatform>>>).value;
        expect((await recorded(winner.db)).current).toBe(winner.box.keyId);
        await winner.close();
      } finally {
        await fresh.drop();
        await t.close();
      }
    },
  );

  it('a database that predates the check records the key that opens its secrets, and refuses one that opens none', async () => {
    const t = await firstPlatform(dialect, K1);
    try {
      await createFixture(t);
      await t.db.kysely.deleteFrom('master_keys').execute();
      const wrong = createPlatform(configFor(t, K2), { http: false });
      await expect(wrong).rejects.toThrow(
        `the master key does not open the secrets already in this database (this node's key id ${masterKeyId(K2)}); start with the MASTER_KEY the database's secrets were sealed with`,
      );
      expect(await recorded(t.db)).toEqual({});
      const right = await createPlatform(configFor(t, K1), { http: false });
      await right.close();
      expect((await recorded(t.db)).current).toBe(masterKeyId(K1));
    } finally {
      await t.close();
    }
  });
});

describe.each(DIALECTS)('master key rotation on %s', (dialect) => {
  it('re-seals every kind of secret while nodes serve; afterwards a node with only the new key opens them all', async () => {
    const t1 = await firstPlatform(dialect, K1);
    const nodes: TestPlatform[] = [];
    const rx = await Receiver.start();
    try {
      // Secrets of every kind under K1: a client secret with a rotation in progress (so a previous
      // secret too), a private app's webhook secret, a one-time reveal, the kept keys.
      const f = await createFixture(t1, { scopes: 'read_products write_products' });
      const app = (await t1.services.apps.findByClientId(f.clientId))!;
      const rotated = await t1.services.rotations.rotateClientSecret(app.id);
      const g = await createFixture(t1, { scopes: 'read_products write_products' });
      const store = (await t1.services.accounts.findStoreByName(g.storeName))!;
      const priv = await t1.services.apps.createPrivateApp({ storeId: store.id, name: 'hooks', scopes: 'read_products write_products' });
      const revealId = await t1.services.reveals.put('session-1', { secret: 'shown once' });
      const code = (await consent(t1, g)).searchParams.get('code')!;
      const pair = await exchange(t1, g, code);
      // A refresh whose response the app "lost": its retry must get the same pair on any node.
      const next = (await refreshRequest(t1, g, pair.refresh_token)).json() as { access_token: string; refresh_token: string };
      for (let i = 0; i < 3; i++) await api(t1, g, priv.accessToken, 'POST', `${V}/products`, { title: `p${i}` });
      // The retry is checked before the successor is used (a use would make the retry a reuse).
      const firstPage = await api(t1, g, priv.accessToken, 'GET', `${V}/products?limit=1`);
      const cursor = firstPage.json().cursor as string;
      expect(cursor).toBeTruthy();
      const before = await sealedValues(t1.db);
      expect(Object.keys(before).filter((k) => k.startsWith('apps') && k.endsWith('previous'))).toHaveLength(1);

      // Step 1: a node restarted with the new key and the old one as previous.
      const t2 = await node(t1, K2, K1);
      nodes.push(t2);
      // It seals under the key the database records (K1), which the not yet restarted node opens.
      const priv2 = await t2.services.apps.createPrivateApp({ storeId: store.id, name: 'during', scopes: 'read_products' });
      const priv2Row = await t1.db.kysely
        .selectFrom('private_apps')
        .select('webhook_secret_enc')
        .where('name', '=', 'during')
        .executeTakeFirstOrThrow();
      expect(t1.services.box.open(priv2Row.webhook_secret_enc)).toBe(priv2.webhookSecret);
      const retryOn2 = (await refreshRequest(t2, g, pair.refresh_token)).json();
      expect(retryOn2).toMatchObject(next);

      // Step 2: the rotation, while both nodes run.
      const report = await t2.services.keyRotation.rotate(K1, K2, { batchSize: 2 });
      expect(report).toMatchObject({ from: masterKeyId(K1), to: masterKeyId(K2), switched: true, unreadable: 0 });
      // Two client secrets and the previous one of the rotation in progress; two private apps'
      // webhook secrets; the reveal; the two kept keys.
      expect(report.resealed).toEqual({ apps: 3, private_apps: 2, one_time_reveals: 1, master_keys: 2, webhook_signing_keys: 0 });
      const after = await sealedValues(t1.db);
      expect(Object.keys(after)).toHaveLength(Object.keys(before).length + 1);
      const onlyOld = new SecretBox(K1);
      const onlyNew = new SecretBox(K2);
      for (const [where, sealed] of Object.entries(after)) {
        expect(onlyNew.keyIdOf(sealed), where).toBe(masterKeyId(K2));
        expect(onlyOld.keyIdOf(sealed), where).toBeUndefined();
      }
      expect(await recorded(t1.db)).toMatchObject({ current: masterKeyId(K2), previous: masterKeyId(K1) });
      // The node holding both keys keeps working: it seals under K2 now, and still serves tokens.
      const priv3 = await t2.services.apps.createPrivateApp({ storeId: store.id, name: 'after', scopes: 'read_products' });
      expect((await refreshRequest(t2, g, pair.refresh_token)).json()).toMatchObject(next);

      // Step 3: a node with only the new key (the first node owns the database, so it stays open).
      const t3 = await node(t1, K2);
      nodes.push(t3);
      // The token endpoint opens the client secret (and during its rotation the previous one too).
      expect((await refreshRequest(t3, g, pair.refresh_token)).json()).toMatchObject(next);
      const viaNew = await t3.app.inject({
        method: 'POST',
        url: '/admin/oauth/token',
        headers: { host: f.host, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          client_id: f.clientId,
          client_secret: rotated.secret,
          grant_type: 'authorization_code',
          code: `sg_ac_${'A'.repeat(43)}`,
          redirect_uri: f.redirectUri,
        }).toString(),
      });
      // Authenticated (an unknown code is invalid_grant; a wrong secret would be invalid_client).
      expect(viaNew.json().error).toBe('invalid_grant');
      for (const secret of [f.clientSecret, rotated.secret])
        await expect(t3.services.apps.authenticateClient(f.clientId, secret)).resolves.toMatchObject({ client_id: f.clientId });
      // The reveal opens once.
      expect(await t3.services.reveals.take('session-1', revealId)).toEqual({ secret: 'shown once' });
      // The cursor handed out under the old key still pages on.
      const second = await api(t3, g, priv.accessToken, 'GET', `${V}/products?limit=1&cursor=${encodeURIComponent(cursor)}`);
      expect(second.statusCode, second.body).toBe(200);
      expect(second.json().data[0].id).not.toBe(firstPage.json().data[0].id);
      // Webhooks are signed with the re-sealed secrets.
      const sub = await api(t3, g, priv.accessToken, 'POST', `${V}/webhooks`, { address: rx.url('/priv'), topic: 'products/create' });
      expect(sub.statusCode, sub.body).toBe(201);
      const worker = await testWorker(t3, { pollMs: 25, pruneEveryMs: 0 });
      await worker.start();
      try {
        const created = await api(t3, g, priv.accessToken, 'POST', `${V}/products`, { title: 'signed' });
        expect(created.statusCode).toBe(201);
        await until(() => rx.on('/priv').length === 1, 5000, 'a delivery');
        const got = rx.on('/priv')[0]!;
        const { createHmac } = await import('node:crypto');
        expect(got.headers['x-service-hmac-sha256']).toBe(createHmac('sha256', priv.webhookSecret).update(got.body).digest('base64'));
      } finally {
        await worker.stop();
      }
      expect(priv3.webhookSecret).toMatch(/^sg_/);

      // A node with only the old key is refused now, told its key was replaced.
      await expect(createPlatform(configFor(t3, K1), { http: false })).rejects.toThrow(
        /key id [0-9a-f]{16}; this node's key id [0-9a-f]{16}\) \(the key this node holds was replaced by a rotation\)/,
      );
      // Running the rotation again is harmless: nothing left to re-seal.
      const again = await t3.services.keyRotation.rotate(K1, K2);
      expect(again).toMatchObject({ switched: false, unreadable: 0 });
      expect(Object.values(again.resealed).every((n) => n === 0)).toBe(true);
      expect(again.alreadyNew).toBe(Object.keys(await sealedValues(t3.db)).length);
      for (const n of nodes) expectNoKey(n.logs.join('\n'));
    } finally {
      await rx.close();
      for (const n of nodes.reverse()) await n.close();
      await t1.close();
    }
  });

  it('a rotation with a wrong current key, the same key twice, or a key the database does not record refuses and changes nothing', async () => {
    const t = await firstPlatform(dialect, K1);
    try {
      await createFixture(t);
      const before = await snapshot(t.db);
      await expect(t.services.keyRotation.rotate(K3, K2)).rejects.toThrow(
        `--master-key: not the key this database's secrets are sealed with (key id ${masterKeyId(K1)}; --master-key has key id ${masterKeyId(K3)}); nothing changed`,
      );
      await expect(t.services.keyRotation.rotate(K1, K1)).rejects.toThrow(/--new-master-key: is the same key as --master-key/);
      expect(await snapshot(t.db)).toBe(before);
      await t.services.keyRotation.rotate(K1, K2);
      const rotated = await snapshot(t.db);
      // Switched to K2: only K1 (the key it replaced) may finish it; K3 may not.
      await expect(t.services.keyRotation.rotate(K3, K2)).rejects.toThrow(/is not the key it replaced; nothing changed/);
      expect(await snapshot(t.db)).toBe(rotated);
    } finally {
      await t.close();
    }
  });

  it('a secret rotated by its merchant while its batch is re-sealed keeps the new secret (compare-and-set)', async () => {
    const t = await firstPlatform(dialect, K1);
    const other: TestPlatform[] = [];
    try {
      const f = await createFixture(t);
      const app = (await t.services.apps.findByClientId(f.clientId))!;
      const ring = await node(t, K2, K1);
      other.push(ring);
      const repo = new SqlMasterKeyRepository(ring.db);
      let fresh: string | undefined;
      // The merchant's rotation lands between the batch being read and its re-seal being written.
      const racing: MasterKeyRepository = Object.assign(Object.create(repo) as SqlMasterKeyRepository, {
        reseal: async (...args: Parameters<MasterKeyRepository['reseal']>) => {
          if (args[0] === 'apps' && fresh === undefined) fresh = (await ring.services.rotations.rotateClientSecret(app.id)).secret;
          return repo.reseal(...args);
        },
      });
      const report = await new KeyRotation(racing, () => t.clock.now).rotate(K1, K2);
      expect(fresh).toBeDefined();
      expect(report.unreadable).toBe(0);
      const row = await t.db.kysely
        .selectFrom('apps')
        .select(['client_secret_enc', 'previous_secret_enc'])
        .where('id', '=', app.id)
        .executeTakeFirstOrThrow();
      const onlyNew = new SecretBox(K2);
      expect(onlyNew.openWith(row.client_secret_enc, masterKeyId(K2))).toBe(fresh);
      expect(onlyNew.openWith(row.previous_secret_enc!, masterKeyId(K2))).toBe(f.clientSecret);
    } finally {
      for (const o of other) await o.close();
      await t.close();
    }
  });
});
