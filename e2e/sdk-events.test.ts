// Missed-event recovery with the SDK against the real platform (`storegate serve` as a child
// process, its own webhook worker, no browser): what a local receiver got is what
// `client.events()` lists, with the same webhook ids, event ids and bodies.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdminClient, NotFoundError, ParameterError, type WebhookEventEntry } from '@storegate/app';
import { localhostFetch } from '@storegate/app/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startServer, type RunningServer } from './server-process.ts';

const SHOP = 'events.localhost';

interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describe('client.events() against the real platform', () => {
  let server: RunningServer;
  let receiver: Server;
  let receiverPort = 0;
  const received: Received[] = [];
  let readerToken = '';
  let writerToken = '';

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverPort = (receiver.address() as AddressInfo).port;
    server = await startServer({
      prepare: (db) => {
        cli(db, ['stores', 'create', 'events', '--owner-email', 'owner@events-e2e.test', '--owner-password', 'events-e2e-password']);
        readerToken = cli(db, [
          'private-apps',
          'create',
          '--store',
          'events',
          '--name',
          'Reader',
          '--scopes',
          'read_products',
        ]).access_token;
        writerToken = cli(db, [
          'private-apps',
          'create',
          '--store',
          'events',
          '--name',
          'Writer',
          '--scopes',
          'write_products',
        ]).access_token;
      },
    });
  });
  afterAll(async () => {
    await server?.stop();
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  const client = (accessToken: string, apiVersion = '2026-01') =>
    createAdminClient({ shop: SHOP, accessToken, apiVersion, apiOrigin: `http://{shop}:${server.port}`, fetch: localhostFetch() });

  it('lists what the receiver got, page after page, with the ids and bodies of the deliveries', async () => {
    const reader = client(readerToken);
    const writer = client(writerToken);
    await reader.post('webhooks', { address: `http://127.0.0.1:${receiverPort}/hooks`, topic: 'products/create' });
    const started = new Date();
    for (const title of ['Mug', 'Cap', 'Scarf']) await writer.post('products', { title, price: '4.00' });
    const deadline = Date.now() + 15_000;
    while (received.length < 3) {
      if (Date.now() > deadline) throw new Error(`only ${received.length} deliveries arrived: ${server.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }

    const listed: WebhookEventEntry[] = [];
    for await (const event of reader.events({ topic: 'products/create', createdAtMin: new Date(started.getTime() - 60_000), limit: 2 }))
      listed.push(event);
    expect(listed.map((e) => e.payload['title'])).toEqual(['Mug', 'Cap', 'Scarf']);
    for (const got of received) {
      const entry = listed.find((e) => e.webhook_id === got.headers['x-service-webhook-id']);
      expect(entry, got.body).toBeDefined();
      expect(entry!.webhook_id).toBe(got.headers['webhook-id']);
      expect(entry!.event_id).toBe(got.headers['x-service-event-id']);
      expect(entry!.topic).toBe(got.headers['x-service-topic']);
      expect(entry!.api_version).toBe(got.headers['x-service-api-version']);
      expect(JSON.stringify(entry!.payload)).toBe(got.body);
    }
    // The writer's own list is empty: it subscribed to nothing.
    expect(await writer.events().toArray()).toEqual([]);
  });

  it('a client pinned to an older version is told before any request; the platform answers 404 there', async () => {
    const older = client(readerToken, '2025-06');
    expect(() => older.events()).toThrow(ParameterError);
    await expect(older.get('events')).rejects.toBeInstanceOf(NotFoundError);
  });
});
