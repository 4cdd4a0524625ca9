// What a change of an installation's grant takes with it, on SQLite and PostgreSQL: webhook
// subscriptions to topics the app may no longer read (and their queued deliveries), the outbox and
// the worker checking the owner's scopes as they are now, and authorization codes issued before the
// change (or before an uninstall), which never yield more than the installation holds.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../src/domain/tokens.ts';
import type { WebhookWorker } from '../src/webhooks/webhook-worker.ts';
import {
  api,
  appToken,
  consent,
  createFixture,
  createTestPlatform,
  DIALECTS,
  exchange,
  login,
  privateToken,
  testWorker,
  tokenRequest,
  type Fixture,
  type TestPlatform,
} from './harness.ts';
import { Receiver, until } from './webhook-receiver.ts';

const V = '/openapi/2026-01';
const LOST = 'the app may no longer read this topic';

describe.each(DIALECTS)('grant changes on %s', (dialect) => {
  let t: TestPlatform;
  let rx: Receiver;
  const workers: WebhookWorker[] = [];

  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off', webhooks: { timeoutMs: 300, retrySchedule: [40], disableAfterDead: 5 } });
    // Real time: the worker claims by the wall clock.
    t.clock.now = Date.now() - 1000;
    rx = await Receiver.start();
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  async function ids(f: Fixture) {
    const store = (await t.services.accounts.findStoreByName(f.storeName))!;
    const app = (await t.services.apps.findByClientId(f.clientId))!;
    return { storeId: store.id, appId: app.id };
  }

  async function subscribe(token: string, f: Fixture, topic: string, path: string): Promise<number> {
    const res = await api(t, f, token, 'POST', `${V}/webhooks`, { address: rx.url(path), topic });
    expect(res.statusCode, res.body).toBe(201);
    return Number(res.json().data.id);
  }

  function subscriptionsOf(storeId: number, owner: string) {
    return t.db.kysely
      .selectFrom('webhook_subscriptions')
      .select(['id', 'topic'])
      .where('store_id', '=', storeId)
      .where('owner', '=', owner)
      .orderBy('id')
      .execute();
  }

  async function privateAppOf(subscriptionId: number): Promise<number> {
    const row = await t.db.kysely
      .selectFrom('webhook_subscriptions')
      .select('private_app_id')
      .where('id', '=', subscriptionId)
      .executeTakeFirstOrThrow();
    return Number(row.private_app_id);
  }

  function deliveriesOf(subscriptionIds: number[]) {
    return t.db.kysely
      .selectFrom('webhook_deliveries')
      .select(['subscription_id', 'topic', 'status', 'last_error'])
      .where('subscription_id', 'in', subscriptionIds)
      .orderBy('id')
      .execute();
  }

  function redeem(f: Fixture, code: string) {
    return tokenRequest(t, f, {
      client_id: f.clientId,
      client_secret: f.clientSecret,
      code,
      grant_type: 'authorization_code',
      redirect_uri: f.redirectUri,
    });
  }

  describe('webhooks outlive no grant', () => {
    it('shrinking the grant deletes the subscriptions the app may no longer read and cancels their queued deliveries', async () => {
      const f = await createFixture(t, { scopes: 'read_products read_customers write_orders' });
      const { storeId, appId } = await ids(f);
      const jar = await login(t, f);
      const token = (await exchange(t, f, (await consent(t, f, { scope: 'read_products write_customers' }, jar)).searchParams.get('code')!))
        .access_token;
      const subs = {
        products: await subscribe(token, f, 'products/create', '/shrink-products'),
        customers: await subscribe(token, f, 'customers/create', '/shrink-customers'),
        customersUpdate: await subscribe(token, f, 'customers/update', '/shrink-customers-update'),
        uninstalled: await subscribe(token, f, 'app/uninstalled', '/shrink-uninstalled'),
      };
      // Queued while the app could still read them (no worker runs yet).
      const writer = await privateToken(t, f.storeName, 'write_products write_customers');
      expect((await api(t, f, writer, 'POST', `${V}/customers`, { email: 'shrink@example.test' })).statusCode).toBe(201);
      expect((await api(t, f, writer, 'POST', `${V}/products`, { title: 'Shrink mug' })).statusCode).toBe(201);

      // The merchant approves a list without customers: customers are no longer readable.
      await consent(t, f, { scope: 'read_products write_orders' }, jar);

      expect((await subscriptionsOf(storeId, `app:${appId}`)).map((s) => s.topic)).toEqual(['products/create', 'app/uninstalled']);
      expect(await deliveriesOf([subs.products, subs.customers, subs.customersUpdate])).toEqual([
        { subscription_id: subs.customers, topic: 'customers/create', status: 'cancelled', last_error: LOST },
        { subscription_id: subs.products, topic: 'products/create', status: 'pending', last_error: null },
      ]);
      // Nothing of the customers topics reaches the app any more.
      expect((await api(t, f, writer, 'POST', `${V}/customers`, { email: 'after@example.test' })).statusCode).toBe(201);
      expect((await deliveriesOf([subs.customers, subs.customersUpdate])).map((d) => d.status)).toEqual(['cancelled']);
      // app/uninstalled needs no scope and stays.
      expect(subs.uninstalled).toBeGreaterThan(0);
    });

    it('the outbox queues an event only for owners whose scopes cover its topic now; app/uninstalled needs none', async () => {
      const f = await createFixture(t, { scopes: 'read_products' });
      const { storeId, appId } = await ids(f);
      const token = await appToken(t, f, 'read_products');
      const appSub = await subscribe(token, f, 'products/create', '/outbox-app');
      const farewell = await subscribe(token, f, 'app/uninstalled', '/outbox-farewell');
      const reader = await privateToken(t, f.storeName, 'read_products');
      const privSub = await subscribe(reader, f, 'products/create', '/outbox-private');
      const keeper = await privateToken(t, f.storeName, 'write_products');
      const keptSub = await subscribe(keeper, f, 'products/create', '/outbox-kept');
      // Scopes narrowed behind the services' back (another node mid-change, rows from an older
      // version): the subscriptions are still there, but their owners may not read products now.
      await t.db.kysely.updateTable('installations').set({ scopes: 'read_orders' }).where('app_id', '=', appId).execute();
      await t.db.kysely
        .updateTable('private_apps')
        .set({ scopes: 'read_orders' })
        .where('id', '=', await privateAppOf(privSub))
        .execute();

      expect((await api(t, f, keeper, 'POST', `${V}/products`, { title: 'Only for the keeper' })).statusCode).toBe(201);
      expect(await deliveriesOf([appSub, privSub, keptSub])).toEqual([
        { subscription_id: keptSub, topic: 'products/create', status: 'pending', last_error: null },
      ]);

      await t.services.apps.uninstall(storeId, appId);
      expect((await deliveriesOf([farewell])).map((d) => [d.topic, d.status])).toEqual([['app/uninstalled', 'pending']]);
    });

    it('the worker cancels a queued delivery whose owner lost the scope while it waited, and sends nothing', async () => {
      const f = await createFixture(t, { scopes: 'read_products' });
      const { appId } = await ids(f);
      const token = await appToken(t, f, 'read_products');
      const appSub = await subscribe(token, f, 'products/create', '/late-app');
      const reader = await privateToken(t, f.storeName, 'read_products');
      const privSub = await subscribe(reader, f, 'products/create', '/late-private');
      const writer = await privateToken(t, f.storeName, 'write_products');
      const stillSub = await subscribe(writer, f, 'products/create', '/late-still');
      expect((await api(t, f, writer, 'POST', `${V}/products`, { title: 'Queued while allowed' })).statusCode).toBe(201);
      expect(await deliveriesOf([appSub, privSub, stillSub])).toHaveLength(3);
      // Narrowed after the event was queued, behind the services' back.
      await t.db.kysely.updateTable('installations').set({ scopes: 'read_orders' }).where('app_id', '=', appId).execute();
      await t.db.kysely
        .updateTable('private_apps')
        .set({ scopes: 'read_customers' })
        .where('id', '=', await privateAppOf(privSub))
        .execute();

      const w = await testWorker(t, { pollMs: 25, random: () => 0.5, pruneEveryMs: 0 });
      workers.push(w);
      await w.start();
      await until(async () => (await deliveriesOf([appSub, privSub, stillSub])).every((d) => d.status !== 'pending'), 5000, 'finished');
      expect(await deliveriesOf([appSub, privSub, stillSub])).toEqual([
        { subscription_id: appSub, topic: 'products/create', status: 'cancelled', last_error: LOST },
        { subscription_id: privSub, topic: 'products/create', status: 'cancelled', last_error: LOST },
        { subscription_id: stillSub, topic: 'products/create', status: 'delivered', last_error: null },
      ]);
      expect(rx.on('/late-app')).toHaveLength(0);
      expect(rx.on('/late-private')).toHaveLength(0);
      expect(rx.on('/late-still')).toHaveLength(1);
    });
  });

  describe('codes outlive no grant', () => {
    it('a change of the granted scopes ends every code issued before it: a later redemption is invalid_grant', async () => {
      const f = await createFixture(t, { scopes: 'read_products read_customers write_orders' });
      const jar = await login(t, f);
      const wide = (await consent(t, f, { scope: 'read_products write_orders' }, jar)).searchParams.get('code')!;
      // Shrinks (write_orders goes) and grows (read_customers comes).
      const after = (await consent(t, f, { scope: 'read_products read_customers' }, jar)).searchParams.get('code')!;
      const res = await redeem(f, wide);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_grant', error_description: 'authorization code has expired' });
      expect((await exchange(t, f, after)).scope).toBe('read_customers read_products');
    });

    it('a grant that only grows also ends the codes issued before it', async () => {
      const f = await createFixture(t, { scopes: 'read_products read_customers' });
      const jar = await login(t, f);
      const before = (await consent(t, f, { scope: 'read_products' }, jar)).searchParams.get('code')!;
      await consent(t, f, { scope: 'read_products read_customers' }, jar);
      expect((await redeem(f, before)).json()).toEqual({ error: 'invalid_grant', error_description: 'authorization code has expired' });
    });

    it('the same grant again (every scope already granted) leaves earlier codes alone', async () => {
      const f = await createFixture(t, { scopes: 'read_products' });
      const jar = await login(t, f);
      const first = (await consent(t, f, { scope: 'read_products' }, jar)).searchParams.get('code')!;
      const { storeId, appId } = await ids(f);
      await t.services.apps.grant(storeId, appId, ['read_products']);
      expect((await exchange(t, f, first)).scope).toBe('read_products');
    });

    it('uninstall ends every unredeemed code: after a reinstall the old code is invalid_grant', async () => {
      const f = await createFixture(t, { scopes: 'read_products' });
      const jar = await login(t, f);
      const old = (await consent(t, f, { scope: 'read_products' }, jar)).searchParams.get('code')!;
      const { storeId, appId } = await ids(f);
      await t.services.apps.uninstall(storeId, appId);
      const fresh = (await consent(t, f, { scope: 'read_products' }, jar)).searchParams.get('code')!;
      expect((await redeem(f, old)).json()).toEqual({ error: 'invalid_grant', error_description: 'authorization code has expired' });
      expect((await exchange(t, f, fresh)).scope).toBe('read_products');
    });

    it('a code never yields more than the installation holds when it is redeemed', async () => {
      const f = await createFixture(t, { scopes: 'read_products write_orders' });
      const jar = await login(t, f);
      const code = (await consent(t, f, { scope: 'read_products write_orders' }, jar)).searchParams.get('code')!;
      const { storeId, appId } = await ids(f);
      // A code for fewer scopes than held, issued without a change of the grant (a narrower request
      // through the authorize page would shrink the grant and end `code`).
      const installation = (await t.services.apps.findInstallation(storeId, appId))!;
      const narrow = await t.services.oauth.issueCode({
        appId,
        storeId,
        installationId: installation.id,
        redirectUri: f.redirectUri,
        scopes: ['read_products'],
        codeChallenge: null,
      });
      // The grant narrowed behind the services' back (a change that committed between this code's
      // check and its redemption, on another node): the code asks for more than is held now.
      await t.db.kysely.updateTable('installations').set({ scopes: 'read_products,read_orders' }).where('app_id', '=', appId).execute();
      const res = await redeem(f, code);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        error: 'invalid_grant',
        error_description: 'authorization code asks for scopes the app no longer holds',
      });
      const issued = await t.db.kysely.selectFrom('access_tokens').select('scopes').where('app_id', '=', appId).execute();
      expect(issued).toEqual([]);
      // A code within what is held still works.
      expect((await exchange(t, f, narrow)).scope).toBe('read_products');
    });
  });

  // A redemption that claimed its code just before the change and commits after it: the change
  // waits for it (the claimed code row is locked) and then ends the family it issued too.
  describe.runIf(dialect === 'postgres')('a redemption in flight during the change', () => {
    async function inFlight(change: (storeId: number, appId: number) => Promise<unknown>): Promise<number | null> {
      const f = await createFixture(t, { scopes: 'read_products write_orders' });
      const jar = await login(t, f);
      const code = (await consent(t, f, { scope: 'read_products write_orders' }, jar)).searchParams.get('code')!;
      const { storeId, appId } = await ids(f);
      const installationId = (await t.services.apps.findInstallation(storeId, appId))!.id;
      const family = `family-in-flight-${installationId}`;
      const url = t.config.database.dialect === 'postgres' ? t.config.database.url : '';
      const redemption = new pg.Client({ connectionString: url });
      await redemption.connect();
      try {
        // The grant's first steps, held open: the code claimed, its family written, not committed.
        await redemption.query('begin');
        const claimed = await redemption.query(
          'update authorization_codes set used_at = $1, family_id = $2 where store_id = $3 and code_hash = $4 and used_at is null',
          [t.clock.now, family, storeId, hashToken(code)],
        );
        expect(claimed.rowCount).toBe(1);
        await redemption.query(
          'insert into token_families (id, installation_id, store_id, created_at, revoked_at) values ($1, $2, $3, $4, null)',
          [family, installationId, storeId, t.clock.now],
        );
        const changed = change(storeId, appId);
        // Until the change waits on a lock the redemption holds.
        await until(
          async () => {
            const r = await redemption.query(
              'select count(*)::int as n from pg_stat_activity where pg_backend_pid() = any(pg_blocking_pids(pid))',
            );
            return r.rows[0].n > 0;
          },
          5000,
          'the change to wait for the redemption',
        );
        await redemption.query('commit');
        await changed;
      } finally {
        await redemption.end();
      }
      const row = await t.db.kysely.selectFrom('token_families').select('revoked_at').where('id', '=', family).executeTakeFirstOrThrow();
      return row.revoked_at;
    }

    it('a shrinking grant ends the family of a redemption that committed after it began', async () => {
      expect(await inFlight((storeId, appId) => t.services.apps.grant(storeId, appId, ['read_orders', 'read_products']))).not.toBeNull();
    });

    it('an uninstall ends the family of a redemption that committed after it began', async () => {
      expect(await inFlight((storeId, appId) => t.services.apps.uninstall(storeId, appId))).not.toBeNull();
    });
  });
});
