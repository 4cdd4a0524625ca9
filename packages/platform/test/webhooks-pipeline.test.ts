// The delivery pipeline's shared work: the headers built from a signed event are the headers of
// webhookHeaders; deliveries of one event share their body bytes and signature only where the
// secrets are the same; the sender keeps connections per origin, the status, Retry-After and the
// first bytes of an answer, and ends an attempt at its deadline.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../src/domain/secret-box.ts';
import { storeHostname } from '../src/domain/store-host.ts';
import type { ClaimedDelivery } from '../src/storage/ports/rows.ts';
import { DeliveryJobs } from '../src/webhooks/delivery-jobs.ts';
import { bodyHmac, deliveryHeaders, signEvent, webhookHeaders } from '../src/webhooks/signer.ts';
import { RESPONSE_KEEP_BYTES, WebhookSender } from '../src/webhooks/webhook-sender.ts';

const message = {
  webhookId: 'wh_7',
  eventId: 'evt_7',
  topic: 'products/create',
  shopDomain: 'demo.localhost',
  apiVersion: '2026-01',
  triggeredAt: Date.UTC(2026, 0, 2, 3, 4, 5, 6),
  body: '{"id":"1","title":"caf\u00e9 \u2713"}',
};

function pairs(flat: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
}

describe('headers of a signed event', () => {
  it.each([
    { name: 'one secret', secrets: { current: 'sg_whs_one' } },
    { name: 'during a rotation', secrets: { current: 'sg_whs_new', previous: 'sg_whs_old' } },
  ])('are the headers of webhookHeaders, in the same order ($name)', ({ secrets }) => {
    const now = 1_700_000_000_999;
    const flat = deliveryHeaders(signEvent(secrets, message), message.webhookId, now);
    expect(pairs(flat)).toEqual(Object.entries(webhookHeaders(secrets, message, now)));
  });
});

describe('DeliveryJobs.prepare', () => {
  const box = new SecretBox(randomBytes(32));
  const row = (over: Partial<ClaimedDelivery>): ClaimedDelivery => ({
    id: 1,
    store_id: 1,
    webhook_id: 'wh_1',
    event_id: 'evt_1',
    topic: 'products/create',
    subscription_id: 1,
    attempts: 0,
    app_id: null,
    private_app_id: 9,
    replayed_at: null,
    payload: message.body,
    include_fields: null,
    event_at: message.triggeredAt,
    store_name: 'shop',
    sub_id: 1,
    address: 'http://127.0.0.1:9/a',
    api_version: '2026-01',
    disabled_at: null,
    enabled_at: null,
    client_secret_enc: null,
    webhook_signature_ed25519: null,
    privacy_webhook_url: null,
    previous_secret_enc: null,
    previous_secret_expires_at: null,
    installation_id: null,
    uninstalled_at: null,
    installed_at: null,
    installation_scopes: null,
    private_id: 9,
    webhook_secret_enc: box.seal('sg_whs_first'),
    previous_webhook_secret_enc: null,
    previous_webhook_secret_expires_at: null,
    revoked_at: null,
    private_scopes: 'read_products',
    ...over,
  });

  it('deliveries of one event with the same secret share the body bytes and signature; another secret or event signs its own', () => {
    const jobs = new DeliveryJobs({ box, storeDomain: 'localhost' });
    // One owner's deliveries carry the same sealed secret (its row), as a claim loads them.
    const first = box.seal('sg_whs_first');
    const other = box.seal('sg_whs_second');
    const { jobs: out, cancelled } = jobs.prepare(
      [
        row({ id: 1, webhook_id: 'wh_1', subscription_id: 1, webhook_secret_enc: first }),
        row({ id: 2, webhook_id: 'wh_2', subscription_id: 2, address: 'http://127.0.0.1:10/b', webhook_secret_enc: first }),
        row({ id: 3, webhook_id: 'wh_3', subscription_id: 3, private_app_id: 10, private_id: 10, webhook_secret_enc: other }),
        row({ id: 4, webhook_id: 'wh_4', event_id: 'evt_2', payload: '{"id":"2"}', webhook_secret_enc: first }),
        row({ id: 5, webhook_id: 'wh_5', sub_id: null, webhook_secret_enc: first }),
      ],
      message.triggeredAt,
    );
    expect(cancelled.map((c) => c.id)).toEqual([5]);
    expect(out.map((j) => [j.id, j.origin])).toEqual([
      [1, 'http://127.0.0.1:9'],
      [2, 'http://127.0.0.1:10'],
      [3, 'http://127.0.0.1:9'],
      [4, 'http://127.0.0.1:9'],
    ]);
    const [a, b, c, d] = out;
    expect(b!.event).toBe(a!.event);
    expect(a!.event.body.toString()).toBe(message.body);
    expect(a!.event.bodySignature).toBe(bodyHmac('sg_whs_first', message.body));
    expect(c!.event).not.toBe(a!.event);
    expect(c!.event.body).toBe(a!.event.body);
    expect(c!.event.bodySignature).toBe(bodyHmac('sg_whs_second', message.body));
    expect(d!.event.body.toString()).toBe('{"id":"2"}');
    expect(d!.event.bodySignature).toBe(bodyHmac('sg_whs_first', '{"id":"2"}'));
    // Each delivery signs its own id.
    const now = Date.UTC(2026, 0, 3);
    expect(pairs(deliveryHeaders(b!.event, b!.webhookId, now))).toEqual(
      Object.entries(
        webhookHeaders(
          { current: 'sg_whs_first' },
          { ...message, webhookId: 'wh_2', eventId: 'evt_1', shopDomain: storeHostname('shop', 'localhost') },
          now,
        ),
      ),
    );
  });
});

describe('WebhookSender', () => {
  let server: Server;
  let base: string;
  const sockets = new Set<unknown>();
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();

  beforeAll(async () => {
    server = createServer((req, res) => handler(req, res));
    server.on('connection', (s) => sockets.add(s));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends the body and headers, keeps status, Retry-After and the first bytes, over one kept-alive connection', async () => {
    const seen: { body: string; signature: string | undefined }[] = [];
    handler = (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ body, signature: req.headers['x-service-hmac-sha256'] as string | undefined });
        res.writeHead(429, { 'Retry-After': '7' });
        res.end('x'.repeat(RESPONSE_KEEP_BYTES + 500));
      });
    };
    sockets.clear();
    const sender = new WebhookSender({ timeoutMs: 5000, perOrigin: 1, publicOnly: false });
    try {
      const event = signEvent({ current: 'k' }, message);
      for (let i = 0; i < 3; i++) {
        const result = await sender.send(`${base}/hook?x=${i}`, deliveryHeaders(event, `wh_${i}`, Date.now()), event.body);
        expect(result).toMatchObject({ status: 429, retryAfter: '7', error: null, responseBody: 'x'.repeat(RESPONSE_KEEP_BYTES) });
      }
      expect(seen).toEqual(Array.from({ length: 3 }, () => ({ body: message.body, signature: bodyHmac('k', message.body) })));
      expect(sockets.size).toBe(1);
    } finally {
      await sender.close();
    }
  });

  it('an answer longer than it drains still counts, with its status; the connection is dropped', async () => {
    handler = (_req, res) => {
      res.writeHead(200);
      res.end(Buffer.alloc(200 * 1024, 'y'));
    };
    const sender = new WebhookSender({ timeoutMs: 5000, perOrigin: 1, publicOnly: false });
    try {
      const result = await sender.send(`${base}/big`, ['content-type', 'application/json'], '{}');
      expect(result).toMatchObject({ status: 200, error: null, responseBody: 'y'.repeat(RESPONSE_KEEP_BYTES) });
      // The next attempt to the origin works on a new connection.
      handler = (_req, res) => res.end('ok');
      expect(await sender.send(`${base}/next`, ['content-type', 'application/json'], '{}')).toMatchObject({
        status: 200,
        responseBody: 'ok',
      });
    } finally {
      await sender.close();
    }
  });

  it('ends an attempt at its deadline, whether the answer or a free connection is what it waits for', async () => {
    handler = () => {
      // never answers
    };
    const sender = new WebhookSender({ timeoutMs: 200, perOrigin: 1, publicOnly: false });
    try {
      // The second waits for the only connection, which the first holds until its own deadline.
      const [first, second] = await Promise.all([
        sender.send(`${base}/hang`, ['content-type', 'application/json'], '{}'),
        sender.send(`${base}/hang`, ['content-type', 'application/json'], '{}'),
      ]);
      expect(first).toMatchObject({ status: null, error: 'timed out after 200 ms' });
      expect(second).toMatchObject({ status: null, error: 'timed out after 200 ms' });
    } finally {
      await sender.destroy();
      await sender.close();
    }
  });
});
