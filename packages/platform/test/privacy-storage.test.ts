// The storage ports behind the privacy topics, on SQLite and PostgreSQL: the app's privacy address,
// the apps a privacy topic may go to, deliveries without a subscription and due later, cancelling
// one topic, a customer's orders and the redaction of a customer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privacySubscriptionId } from '../src/domain/webhook-topics.ts';
import type { Storage } from '../src/storage/ports/storage.ts';
import { openStorage } from '../src/storage/sql-storage.ts';
import { DIALECTS, freshPostgresUrl } from './harness.ts';

const NOW = Date.UTC(2026, 10, 24);
const HOUR = 3_600_000;

describe.each(DIALECTS)('privacy storage on %s', (dialect) => {
  let storage: Storage;
  let drop: (() => Promise<void>) | undefined;
  let n = 0;

  beforeAll(async () => {
    if (dialect === 'postgres') {
      const pg = await freshPostgresUrl();
      drop = pg.drop;
      storage = openStorage({ dialect: 'postgres', url: pg.url });
    } else {
      storage = openStorage({ dialect: 'sqlite', path: ':memory:' });
    }
    await storage.migrate();
  });
  afterAll(async () => {
    await storage.close();
    await drop?.();
  });

  async function store() {
    n += 1;
    const merchant = await storage.accounts.insertMerchant({ email: `m${n}@privacy.test`, passwordHash: 'x', now: NOW });
    return storage.accounts.insertStore({ name: `privacy${n}`, ownerMerchantId: merchant.id, now: NOW });
  }

  async function app(url: string | null) {
    n += 1;
    const row = await storage.apps.insertApp({
      client_id: `privacy-client-${n}`,
      partner_id: null,
      name: `App ${n}`,
      app_url: 'https://a.test/',
      redirect_uri: 'https://a.test/cb',
      scopes: '',
      client_secret_enc: 'sealed',
      created_at: NOW,
    });
    if (url !== null) await storage.apps.updatePrivacyWebhookUrl(row.id, url);
    return row;
  }

  it('keeps the privacy address on the app (null when cleared); privacyRecipients lists installed apps that have one', async () => {
    const s = await store();
    const withUrl = await app('https://hooks.example.com/privacy');
    const without = await app(null);
    const gone = await app('https://hooks.example.com/gone');
    expect((await storage.apps.findById(withUrl.id))!.privacy_webhook_url).toBe('https://hooks.example.com/privacy');
    expect((await storage.apps.findByClientId(without.client_id))!.privacy_webhook_url).toBeNull();
    for (const a of [withUrl, without, gone])
      await storage.apps.insertInstallation({ storeId: s.id, appId: a.id, scopes: 'read_customers', now: NOW });
    const ended = (await storage.apps.findInstallation(s.id, gone.id))!;
    await storage.apps.updateInstallation(s.id, ended.id, { uninstalledAt: NOW });
    expect(await storage.webhooks.privacyRecipients(s.id)).toEqual([{ app_id: withUrl.id, scopes: 'read_customers' }]);
    await storage.apps.updatePrivacyWebhookUrl(withUrl.id, null);
    expect((await storage.apps.findById(withUrl.id))!.privacy_webhook_url).toBeNull();
    expect(await storage.webhooks.privacyRecipients(s.id)).toEqual([]);
  });

  it("a delivery without a subscription, due later: not claimed before it is due, loaded with the app's address; one topic can be cancelled", async () => {
    const s = await store();
    const a = await app('https://hooks.example.com/p');
    await storage.apps.insertInstallation({ storeId: s.id, appId: a.id, scopes: '', now: NOW });
    const delivery = (id: string) => ({
      subscriptionId: privacySubscriptionId(a.id),
      appId: a.id,
      privateAppId: null,
      webhookId: `wh_${id}`,
    });
    await storage.transaction(async (tx) => {
      await tx.webhooks.insertEvent(
        { id: `evt_later_${n}`, storeId: s.id, topic: 'shop/redact', payload: '{}', now: NOW, dueAt: NOW + 48 * HOUR },
        [delivery(`later_${n}`)],
      );
      await tx.webhooks.insertEvent({ id: `evt_now_${n}`, storeId: s.id, topic: 'customers/redact', payload: '{}', now: NOW }, [
        delivery(`now_${n}`),
      ]);
    });
    const claim = (now: number) =>
      storage.deliveryQueue.claim({ worker: `w${n}-${now}`, now, leaseUntil: now + 1, limit: 100, excludeSubscriptions: [] });
    const first = (await claim(NOW + 48 * HOUR - 1)).filter((d) => Number(d.app_id) === a.id);
    expect(first.map((d) => d.topic)).toEqual(['customers/redact']);
    expect(first[0]).toMatchObject({ subscription_id: -a.id, sub_id: null, privacy_webhook_url: 'https://hooks.example.com/p' });
    const log = await storage.webhooks.partnerDeliveries(a.id, { limit: 10 });
    expect(log.map((d) => [d.topic, d.address])).toEqual([
      ['customers/redact', 'https://hooks.example.com/p'],
      ['shop/redact', 'https://hooks.example.com/p'],
    ]);
    expect((await storage.webhooks.redeliveryCheck(Number(log[0]!.id)))!.sub_id).toBe(-a.id);
    expect(
      await storage.webhooks.cancelPendingTopic({ storeId: s.id, appId: a.id, topic: 'shop/redact', reason: 'installed again', now: NOW }),
    ).toBe(1);
    expect((await claim(NOW + 49 * HOUR + 2)).filter((d) => Number(d.app_id) === a.id && d.topic === 'shop/redact')).toEqual([]);
    const [redact, shop] = await storage.webhooks.partnerDeliveries(a.id, { limit: 10 });
    expect([redact!.status, shop!.status, shop!.last_error]).toEqual(['pending', 'cancelled', 'installed again']);
  });

  it("a customer's orders by id; redaction replaces email, names and phone, and the email on its orders", async () => {
    const s = await store();
    const c = await storage.resources.insert('customers', {
      store_id: s.id,
      email: 'ada@example.test',
      first_name: 'Ada',
      last_name: 'L',
      phone: '+1 555 0100',
      created_at: NOW,
      updated_at: NOW,
    });
    const order = (customerId: number | null, email: string) =>
      storage.resources.insert('orders', {
        store_id: s.id,
        customer_id: customerId,
        email,
        currency: 'USD',
        financial_status: 'paid',
        fulfillment_status: null,
        total_price: '1.00',
        line_items: '[]',
        created_at: NOW,
        updated_at: NOW,
      });
    const o1 = await order(c.id, 'ada@example.test');
    const other = await order(null, 'bob@example.test');
    const o2 = await order(c.id, 'ada@example.test');
    expect(await storage.resources.customerOrderIds(s.id, c.id)).toEqual([Number(o1.id), Number(o2.id)]);
    expect(await storage.resources.customerOrderIds(s.id + 1000, c.id)).toEqual([]);
    expect(await storage.resources.redactCustomer(s.id + 1000, c.id, 'x@redacted.invalid', NOW + 1)).toBe(false);
    expect(await storage.resources.redactCustomer(s.id, c.id, 'x@redacted.invalid', NOW + 1)).toBe(true);
    expect(await storage.resources.get('customers', s.id, c.id)).toMatchObject({
      email: 'x@redacted.invalid',
      first_name: '',
      last_name: '',
      phone: null,
    });
    expect((await storage.resources.get('orders', s.id, o1.id))!.email).toBe('x@redacted.invalid');
    expect((await storage.resources.get('orders', s.id, other.id))!.email).toBe('bob@example.test');
  });
});
