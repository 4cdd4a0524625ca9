// Pure webhook logic: signatures against the shared known answers, headers, the retry schedule,
// Retry-After, next-state decisions, topics of changes, the schedule flag.
import { readFileSync } from 'node:fs';
import { type AddressInfo, createServer, type LookupFunction } from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseRetrySchedule } from '../src/config.ts';
import { ConfigError, SsrfRefusedError } from '../src/domain/errors.ts';
import {
  DEFAULT_RETRY_SCHEDULE_MS,
  jitteredDelay,
  nextState,
  parseRetryAfter,
  RETRY_AFTER_CAP_MS,
  classifyStatus,
} from '../src/domain/webhook-backoff.ts';
import { SUBSCRIBABLE_TOPICS, topicFor, topicResource } from '../src/domain/webhook-topics.ts';
import { CURRENT_VERSION } from '../src/domain/api-versions.ts';
import { hostProblem } from '../src/services/public-address.ts';
import { AddressGuard } from '../src/webhooks/address-guard.ts';
import type { ClaimedDelivery } from '../src/storage/ports/rows.ts';
import { decide } from '../src/webhooks/delivery-jobs.ts';
import { bodyHmac, standardSignature, webhookHeaders } from '../src/webhooks/signer.ts';
import { publicOnlyLookup, WebhookSender } from '../src/webhooks/webhook-sender.ts';

const vectors = JSON.parse(readFileSync(new URL('../../../test-vectors/signatures.json', import.meta.url), 'utf8'));

describe('webhook signatures (shared vectors)', () => {
  it('X-Service-Hmac-Sha256 over the raw body', () => {
    for (const v of vectors.webhook_body_hmac) expect(bodyHmac(v.secret, v.body)).toBe(v.value);
  });
  it('Standard Webhooks webhook-signature over "id.timestamp.body"', () => {
    for (const v of vectors.webhook_standard_signature) {
      expect(`${v['webhook-id']}.${v['webhook-timestamp']}.${v.body}`).toBe(v.signed);
      expect(standardSignature(v.secret, v['webhook-id'], v['webhook-timestamp'], v.body)).toBe(v['webhook-signature']);
    }
  });
  it('every header of PRODUCT.md §7, with the exact names', () => {
    const v = vectors.webhook_standard_signature[0];
    const h = webhookHeaders(
      { current: v.secret },
      {
        webhookId: v['webhook-id'],
        eventId: 'evt_1',
        topic: 'orders/create',
        shopDomain: 'demo.localhost',
        apiVersion: '2026-01',
        triggeredAt: Date.UTC(2026, 0, 2, 3, 4, 5, 6),
        body: v.body,
      },
      Number(v['webhook-timestamp']) * 1000 + 999,
    );
    expect(h).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': 'storegate-webhooks/1',
      'X-Service-Hmac-Sha256': vectors.webhook_body_hmac[0].value,
      'X-Service-Topic': 'orders/create',
      'X-Service-Shop-Domain': 'demo.localhost',
      'X-Service-Api-Version': '2026-01',
      'X-Service-Webhook-Id': 'wh_01',
      'X-Service-Event-Id': 'evt_1',
      'X-Service-Triggered-At': '2026-01-02T03:04:05.006Z',
      'webhook-id': 'wh_01',
      'webhook-timestamp': '1700000000',
      'webhook-signature': v['webhook-signature'],
    });
  });
  it('during a rotation: the body header with the previous secret, one v1 entry per secret (new first)', () => {
    const m = {
      webhookId: 'wh_9',
      eventId: 'evt_9',
      topic: 'orders/create',
      shopDomain: 'demo.localhost',
      apiVersion: '2026-01',
      triggeredAt: 0,
      body: '{"a":1}',
    };
    const h = webhookHeaders({ current: 'sg_whs_new', previous: 'sg_whs_old' }, m, 1_700_000_000_000);
    expect(h['X-Service-Hmac-Sha256']).toBe(bodyHmac('sg_whs_old', m.body));
    expect(h['webhook-signature']).toBe(
      `${standardSignature('sg_whs_new', 'wh_9', 1_700_000_000, m.body)} ${standardSignature('sg_whs_old', 'wh_9', 1_700_000_000, m.body)}`,
    );
    expect(h['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=* v1,[A-Za-z0-9+/]+=*$/);
  });
});

describe('retry schedule', () => {
  it('19 retries, growing, about 48 hours in total (nominal = expected with full jitter)', () => {
    expect(DEFAULT_RETRY_SCHEDULE_MS).toHaveLength(19);
    for (let i = 1; i < 19; i++) expect(DEFAULT_RETRY_SCHEDULE_MS[i]!).toBeGreaterThanOrEqual(DEFAULT_RETRY_SCHEDULE_MS[i - 1]!);
    const total = DEFAULT_RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0);
    expect(total / 3_600_000).toBeGreaterThan(47);
    expect(total / 3_600_000).toBeLessThan(50);
    expect(loadConfig({ database: ':memory:', masterKey: 'a'.repeat(64) }).webhooks.retrySchedule).toEqual(DEFAULT_RETRY_SCHEDULE_MS);
  });

  it('full jitter: each wait in [0, 2 × nominal); simulated totals average about 48 h', () => {
    expect(jitteredDelay(1000, () => 0)).toBe(0);
    expect(jitteredDelay(1000, () => 0.5)).toBe(1000);
    expect(jitteredDelay(1000, () => 0.9999)).toBe(1999);
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let sum = 0;
    const runs = 2000;
    for (let r = 0; r < runs; r++) for (const nominal of DEFAULT_RETRY_SCHEDULE_MS) sum += jitteredDelay(nominal, random);
    expect(sum / runs / 3_600_000).toBeGreaterThan(46);
    expect(sum / runs / 3_600_000).toBeLessThan(51);
  });

  it('next state: 2xx delivered, 410 dead and disables, others retry until the schedule runs out', () => {
    const schedule = [100, 200];
    const half = () => 0.5;
    expect(nextState(classifyStatus(204), 1, schedule, 0, half)).toEqual({ status: 'delivered' });
    expect(nextState(classifyStatus(410), 1, schedule, 0, half)).toEqual({ status: 'dead', disable: 'the receiver answered 410 Gone' });
    expect(nextState(classifyStatus(500), 1, schedule, 1000, half)).toEqual({ status: 'pending', nextAttemptAt: 1100 });
    expect(nextState(classifyStatus(302), 2, schedule, 1000, half)).toEqual({ status: 'pending', nextAttemptAt: 1200 });
    expect(nextState({ kind: 'failure', status: null }, 3, schedule, 1000, half)).toEqual({ status: 'dead' });
    // Retry-After longer than the backoff wins; shorter does not shorten the backoff.
    expect(nextState(classifyStatus(429, 5000), 1, schedule, 1000, half)).toEqual({ status: 'pending', nextAttemptAt: 6000 });
    expect(nextState(classifyStatus(503, 10), 1, schedule, 1000, half)).toEqual({ status: 'pending', nextAttemptAt: 1100 });
  });

  it('Retry-After: seconds or HTTP date, capped; garbage ignored', () => {
    const now = Date.UTC(2026, 10, 22, 12, 0, 0);
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(['7'], now)).toBe(7000);
    expect(parseRetryAfter(new Date(now + 30_000).toUTCString(), now)).toBe(30_000);
    expect(parseRetryAfter(new Date(now - 30_000).toUTCString(), now)).toBe(0);
    expect(parseRetryAfter('99999999', now)).toBe(RETRY_AFTER_CAP_MS);
    for (const bad of [undefined, '', 'soon', '-5', '1.5', '1e3']) expect(parseRetryAfter(bad, now), String(bad)).toBeUndefined();
  });

  it('--webhook-retry-schedule parses durations and refuses bad values', () => {
    expect(parseRetrySchedule('100ms,1s,2m,1h,250')).toEqual([100, 1000, 120_000, 3_600_000, 250]);
    for (const bad of ['1x', '1s,,2s', '-1s', '0', '8d', 'fast', Array(51).fill('1s').join(',')])
      expect(() => parseRetrySchedule(bad), bad).toThrow(ConfigError);
    expect(() => loadConfig({ database: ':memory:', masterKey: 'a'.repeat(64), webhookTimeout: '10' })).toThrow(/--webhook-timeout/);
  });
});

describe('topics of changes', () => {
  it('PRODUCT.md §7 names; orders/updated; no orders or customers delete topic', () => {
    expect(topicFor('products', 'create')).toBe('products/create');
    expect(topicFor('products', 'update')).toBe('products/update');
    expect(topicFor('products', 'delete')).toBe('products/delete');
    expect(topicFor('orders', 'create')).toBe('orders/create');
    expect(topicFor('orders', 'update')).toBe('orders/updated');
    expect(topicFor('orders', 'delete')).toBeUndefined();
    expect(topicFor('customers', 'update')).toBe('customers/update');
    expect(topicFor('customers', 'delete')).toBeUndefined();
  });
});

// Every name here is answered by a stub; non-public answers are only ever strings, and the one
// socket a mistake could open goes to a listener on 127.0.0.1.
describe('public-only name resolution (stubbed resolver)', () => {
  const stub = (answers: string[][]) => {
    const asked: string[] = [];
    const resolve = async (hostname: string) => {
      asked.push(hostname);
      return answers[Math.min(asked.length, answers.length) - 1]!;
    };
    return { resolve, asked };
  };
  const lookupOnce = (lookup: LookupFunction, all: boolean) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family: number | undefined }>((done) =>
      lookup('hooks.example.com', { all }, (error, address, family) => done({ error, address, family })),
    );

  it('the subscription and pre-attempt checks let public answers through and stop any non-public one', async () => {
    expect(await hostProblem('https://hooks.example.com/x', stub([['93.184.216.34']]).resolve)).toBeUndefined();
    expect(await hostProblem('https://hooks.example.com/x', stub([['2606:4700:4700::1111', '8.8.8.8']]).resolve)).toBeUndefined();
    expect(await hostProblem('https://hooks.example.com/x', stub([['93.184.216.34', '::ffff:10.0.0.1']]).resolve)).toBe('non-public');
    expect(await hostProblem('https://hooks.example.com/x', stub([[]]).resolve)).toBe('unresolvable');
  });

  it('the connect-time lookup hands public answers to the socket, in both lookup forms', async () => {
    const { resolve } = stub([['93.184.216.34', '2606:4700:4700::1111']]);
    expect(await lookupOnce(publicOnlyLookup(resolve), false)).toEqual({ error: null, address: '93.184.216.34', family: 4 });
    expect(await lookupOnce(publicOnlyLookup(resolve), true)).toMatchObject({
      error: null,
      address: [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:4700:4700::1111', family: 6 },
      ],
    });
  });

  it.each([
    { answer: ['10.0.0.1'] },
    { answer: ['127.0.0.1'] },
    { answer: ['169.254.169.254'] },
    { answer: ['100.64.0.1'] },
    { answer: ['::ffff:10.0.0.1'] },
    { answer: ['64:ff9b::a00:1'] },
    { answer: ['fd00::1'] },
    { answer: ['93.184.216.34', '192.168.0.1'] },
    { answer: [] },
  ])('the connect-time lookup refuses the answer $answer', async ({ answer }) => {
    const result = await lookupOnce(publicOnlyLookup(stub([answer]).resolve), true);
    expect(result.error).toBeInstanceOf(SsrfRefusedError);
    expect(result.error?.message).toBe('hooks.example.com resolves to a non-public address');
  });

  it('DNS rebinding: a name that resolves public at the check and private at connect time is refused when connecting', async () => {
    let connections = 0;
    const listener = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as AddressInfo).port;
    // First answer public (the check before the attempt), then this machine (the connection).
    const dns = stub([['93.184.216.34'], ['127.0.0.1']]);
    const sender = new WebhookSender({ timeoutMs: 2000, perOrigin: 1, publicOnly: true, resolve: dns.resolve });
    try {
      const address = `https://rebind.example.com:${port}/hook`;
      expect(await new AddressGuard('production', dns.resolve).refusal(address)).toBeUndefined();
      const result = await sender.send(address, { 'content-type': 'application/json' }, '{}');
      expect(result).toMatchObject({ status: null, error: 'refused: rebind.example.com resolves to a non-public address' });
      expect(dns.asked).toEqual(['rebind.example.com', 'rebind.example.com']);
      expect(connections).toBe(0);
    } finally {
      await sender.close();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    }
  });
});

describe('decide: whether a claimed delivery may still go out', () => {
  const at = Date.UTC(2026, 10, 22);
  const appRow = (over: Partial<ClaimedDelivery> = {}): ClaimedDelivery => ({
    id: 1,
    store_id: 1,
    webhook_id: 'wh_1',
    event_id: 'evt_1',
    topic: 'products/create',
    subscription_id: 7,
    attempts: 0,
    app_id: 3,
    private_app_id: null,
    replayed_at: null,
    payload: '{}',
    include_fields: null,
    event_at: at,
    store_name: 'shop',
    sub_id: 7,
    address: 'https://hooks.example.test/h',
    api_version: '2026-01',
    disabled_at: null,
    enabled_at: null,
    client_secret_enc: 'sealed-app',
    webhook_signature_ed25519: 0,
    privacy_webhook_url: null,
    previous_secret_enc: null,
    previous_secret_expires_at: null,
    installation_id: 5,
    uninstalled_at: null,
    installed_at: at - 1,
    installation_scopes: 'read_products',
    private_id: null,
    webhook_secret_enc: null,
    previous_webhook_secret_enc: null,
    previous_webhook_secret_expires_at: null,
    revoked_at: null,
    private_scopes: null,
    ...over,
  });
  const privateRow = (over: Partial<ClaimedDelivery> = {}): ClaimedDelivery =>
    appRow({
      app_id: null,
      private_app_id: 9,
      client_secret_enc: null,
      installation_id: null,
      installed_at: null,
      installation_scopes: null,
      private_id: 9,
      webhook_secret_enc: 'sealed-private',
      private_scopes: 'read_products',
      ...over,
    });
  const send = (secretEnc: string, previousEnc?: string) => ({
    address: 'https://hooks.example.test/h',
    apiVersion: '2026-01',
    secretEnc,
    previousEnc,
  });
  const lost = { cancelled: 'the app may no longer read this topic' };

  it('sends while the owner may read the topic (write implies read)', () => {
    expect(decide(appRow(), at)).toEqual(send('sealed-app'));
    expect(decide(appRow({ installation_scopes: 'read_orders,write_products' }), at)).toEqual(send('sealed-app'));
    expect(decide(privateRow(), at)).toEqual(send('sealed-private'));
    expect(decide(privateRow({ topic: 'orders/updated', private_scopes: 'write_orders' }), at)).toEqual(send('sealed-private'));
  });

  it('cancels a delivery whose owner no longer holds the read scope of its topic', () => {
    expect(decide(appRow({ installation_scopes: 'read_orders' }), at)).toEqual(lost);
    expect(decide(appRow({ installation_scopes: '' }), at)).toEqual(lost);
    expect(decide(appRow({ topic: 'customers/update', installation_scopes: 'read_products,write_orders' }), at)).toEqual(lost);
    expect(decide(privateRow({ private_scopes: 'read_customers' }), at)).toEqual(lost);
  });

  it('app/uninstalled needs no scope', () => {
    expect(decide(appRow({ topic: 'app/uninstalled', installation_scopes: '', uninstalled_at: at }), at)).toEqual(send('sealed-app'));
  });

  it('during a rotation the previous secret signs too, until its overlap ends', () => {
    const rotating = { previous_secret_enc: 'sealed-old', previous_secret_expires_at: at + 1000 };
    expect(decide(appRow(rotating), at)).toEqual(send('sealed-app', 'sealed-old'));
    expect(decide(appRow(rotating), at + 1000)).toEqual(send('sealed-app'));
    const privateRotating = { previous_webhook_secret_enc: 'sealed-old-private', previous_webhook_secret_expires_at: at + 1000 };
    expect(decide(privateRow(privateRotating), at + 999)).toEqual(send('sealed-private', 'sealed-old-private'));
    expect(decide(privateRow(privateRotating), at + 1001)).toEqual(send('sealed-private'));
    // A public app's delivery never takes a private app's previous secret, nor the other way round.
    expect(decide(appRow(privateRotating), at)).toEqual(send('sealed-app'));
  });

  it('a topic it does not know is never sent (no scope can be checked for it)', () => {
    expect(decide(appRow({ topic: 'products/explode' }), at)).toEqual({ cancelled: 'the topic is unknown' });
  });

  it('subscription/disabled needs no scope; without a subscription it goes to the privacy address while the app is installed', () => {
    const notice = { topic: 'subscription/disabled', installation_scopes: '' };
    expect(decide(appRow(notice), at)).toEqual(send('sealed-app'));
    expect(decide(privateRow({ ...notice, private_scopes: '' }), at)).toEqual(send('sealed-private'));
    const toApp = { ...notice, subscription_id: -3, sub_id: null, address: null, api_version: null };
    expect(decide(appRow({ ...toApp, privacy_webhook_url: 'https://app.example.test/privacy' }), at)).toEqual({
      address: 'https://app.example.test/privacy',
      apiVersion: CURRENT_VERSION,
      secretEnc: 'sealed-app',
      previousEnc: undefined,
    });
    expect(decide(appRow(toApp), at)).toEqual({ cancelled: 'the app has no privacy webhook address' });
    expect(decide(appRow({ ...toApp, privacy_webhook_url: 'https://app.example.test/privacy', uninstalled_at: at }), at)).toEqual({
      cancelled: 'the app was uninstalled',
    });
    // No app subscribes to it: it is not among the topics the subscription schema offers.
    expect(SUBSCRIBABLE_TOPICS).not.toContain('subscription/disabled');
    expect(topicResource('subscription/disabled')).toBeUndefined();
  });
});
