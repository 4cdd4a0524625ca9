// Simultaneous writes that must stay unique, on SQLite and PostgreSQL: a customer email per store
// and a webhook subscription per owner, topic and address. The check before the insert cannot see a
// row another transaction has not committed yet; the unique index decides, and the loser gets the
// same 422 as a request that came second.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Repositories } from '../src/storage/ports/repositories.ts';
import { api, createFixture, createTestPlatform, DIALECTS, privateToken, type Fixture, type TestPlatform } from './harness.ts';

const V = '/openapi/2026-01';
const ROUNDS = 8;

describe.each(DIALECTS)('simultaneous writes on %s', (dialect) => {
  let t: TestPlatform;
  let f: Fixture;
  let token: string;
  beforeAll(async () => {
    t = await createTestPlatform(dialect, { rateLimit: 'off' });
    f = await createFixture(t);
    token = await privateToken(t, f.storeName, 'write_products write_customers');
  });
  afterAll(async () => t.close());

  /**
   * Runs `during` with every transaction's `blind` check answering false, as it does for a request
   * whose rival has not committed yet: only the database's unique key stands in the way.
   */
  async function withBlindCheck<K extends 'resources' | 'webhooks'>(
    repo: K,
    blind: keyof Repositories[K],
    during: () => Promise<void>,
  ): Promise<void> {
    const storage = t.platform.storage;
    const real = storage.transaction;
    storage.transaction = <T>(work: (tx: Repositories) => Promise<T>): Promise<T> =>
      real.call(storage, (tx: Repositories) =>
        work({ ...tx, [repo]: Object.assign(Object.create(tx[repo]), { [blind]: async () => false }) }),
      ) as Promise<T>;
    try {
      await during();
    } finally {
      storage.transaction = real;
    }
  }

  async function customersWith(email: string): Promise<number> {
    const rows = await t.db.kysely.selectFrom('customers').select('id').where('email', '=', email).execute();
    return rows.length;
  }

  it('two simultaneous creates of a customer with one email: exactly one 201, one 422, never 500', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const email = `race-${round}@example.test`;
      const results = await Promise.all([0, 1].map(() => api(t, f, token, 'POST', `${V}/customers`, { email })));
      expect(results.map((r) => r.statusCode).sort(), results.map((r) => r.body).join(' | ')).toEqual([201, 422]);
      const refused = results.find((r) => r.statusCode === 422)!.json();
      expect(refused).toMatchObject({ code: 'ValidationFailed', errors: { email: ['has already been taken'] } });
      expect(await customersWith(email)).toBe(1);
    }
  });

  it('two simultaneous updates giving two customers one email: exactly one 200, one 422', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const a = (await api(t, f, token, 'POST', `${V}/customers`, { email: `a-${round}@example.test` })).json().data;
      const b = (await api(t, f, token, 'POST', `${V}/customers`, { email: `b-${round}@example.test` })).json().data;
      const email = `taken-${round}@example.test`;
      const results = await Promise.all([a, b].map((c) => api(t, f, token, 'PUT', `${V}/customers/${c.id}`, { email })));
      expect(results.map((r) => r.statusCode).sort(), results.map((r) => r.body).join(' | ')).toEqual([200, 422]);
      expect(results.find((r) => r.statusCode === 422)!.json().errors).toEqual({ email: ['has already been taken'] });
      expect(await customersWith(email)).toBe(1);
    }
  });

  it('two simultaneous identical webhook subscriptions: exactly one 201, one 422, never 500', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const body = { address: `https://hooks.example.com/race-${round}`, topic: 'products/create' };
      const results = await Promise.all([0, 1].map(() => api(t, f, token, 'POST', `${V}/webhooks`, body)));
      expect(results.map((r) => r.statusCode).sort(), results.map((r) => r.body).join(' | ')).toEqual([201, 422]);
      expect(results.find((r) => r.statusCode === 422)!.json()).toMatchObject({
        code: 'ValidationFailed',
        errors: { address: ['is already subscribed to products/create'] },
      });
      const rows = await t.db.kysely.selectFrom('webhook_subscriptions').select('id').where('address', '=', body.address).execute();
      expect(rows).toHaveLength(1);
    }
  });

  it('a customer email the check could not see is refused by the database with the same 422, and nothing is written', async () => {
    const email = 'unseen@example.test';
    expect((await api(t, f, token, 'POST', `${V}/customers`, { email })).statusCode).toBe(201);
    const other = (await api(t, f, token, 'POST', `${V}/customers`, { email: 'other-unseen@example.test' })).json().data;
    const deliveriesBefore = (await t.db.kysely.selectFrom('webhook_events').select('id').execute()).length;
    await withBlindCheck('resources', 'customerEmailTaken', async () => {
      const created = await api(t, f, token, 'POST', `${V}/customers`, { email });
      expect(created.statusCode, created.body).toBe(422);
      expect(created.json().errors).toEqual({ email: ['has already been taken'] });
      const updated = await api(t, f, token, 'PUT', `${V}/customers/${other.id}`, { email });
      expect(updated.statusCode, updated.body).toBe(422);
      expect(updated.json().errors).toEqual({ email: ['has already been taken'] });
    });
    expect(await customersWith(email)).toBe(1);
    expect(await customersWith('other-unseen@example.test')).toBe(1);
    expect((await t.db.kysely.selectFrom('webhook_events').select('id').execute()).length).toBe(deliveriesBefore);
  });

  it('a subscription the check could not see is refused by the database with the same 422', async () => {
    const body = { address: 'https://hooks.example.com/unseen', topic: 'products/update' };
    expect((await api(t, f, token, 'POST', `${V}/webhooks`, body)).statusCode).toBe(201);
    await withBlindCheck('webhooks', 'subscriptionExists', async () => {
      const again = await api(t, f, token, 'POST', `${V}/webhooks`, body);
      expect(again.statusCode, again.body).toBe(422);
      expect(again.json().errors).toEqual({ address: ['is already subscribed to products/update'] });
    });
    const rows = await t.db.kysely.selectFrom('webhook_subscriptions').select('id').where('address', '=', body.address).execute();
    expect(rows).toHaveLength(1);
  });
});
