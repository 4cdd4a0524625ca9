// The storage behind a customer's redaction in the webhook log, on SQLite, PostgreSQL and the
// partitioned PostgreSQL layout: which stored events name a customer (its own events, its orders',
// the privacy requests about it, through deliveries of apps and of private apps), rewriting them
// store by store, and the worker's claim sending the rewritten body. On SQLite, the search reads
// the events table by key only, never scanning it; on the partitioned layout each statement reads
// one partition.
import { type CompiledQuery, Kysely, SqliteDialect, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privacySubscriptionId, type WebhookTopic } from '../src/domain/webhook-topics.ts';
import { openDatabase } from '../src/storage/database.ts';
import type { Repositories } from '../src/storage/ports/repositories.ts';
import type { Database } from '../src/storage/schema.ts';
import { type OpenStorage, openStorage, storageOn } from '../src/storage/sql-storage.ts';
import { DIALECTS, DIALECTS_WITH_PARTITIONED, freshPostgresUrl, TEST_PARTITIONS } from './harness.ts';
import { recordingDb, unroutedQueries } from './partition-routing.ts';

const NOW = Date.UTC(2026, 10, 26);

describe.each(DIALECTS_WITH_PARTITIONED)('stored events naming a customer on %s', (dialect) => {
  let storage: OpenStorage;
  let close: () => Promise<void>;
  let url = '';
  let queries: CompiledQuery[] = [];
  let n = 0;

  beforeAll(async () => {
    if (dialect === 'sqlite') {
      storage = openStorage({ dialect: 'sqlite', path: ':memory:' });
      await storage.migrate();
      close = () => storage.close();
      return;
    }
    const pg = await freshPostgresUrl();
    url = pg.url;
    if (dialect === 'postgres-partitioned') {
      const first = openStorage({ dialect: 'postgres', url }, { poolSize: 1 });
      await first.migrate({ partitions: TEST_PARTITIONS }).finally(() => first.close());
    }
    const recording = recordingDb(url);
    storage = storageOn(recording.db);
    queries = recording.queries;
    await storage.migrate();
    close = async () => {
      await storage.close();
      await pg.drop();
    };
  });
  afterAll(() => close());

  async function store() {
    n += 1;
    const merchant = await storage.accounts.insertMerchant({ email: `m${n}@redaction.test`, passwordHash: 'x', now: NOW });
    const s = await storage.accounts.insertStore({ name: `redaction${n}`, ownerMerchantId: merchant.id, now: NOW });
    const app = await storage.apps.insertApp({
      client_id: `redaction-client-${n}`,
      partner_id: null,
      name: `App ${n}`,
      app_url: 'https://a.test/',
      redirect_uri: 'https://a.test/cb',
      scopes: '',
      client_secret_enc: 'sealed',
      created_at: NOW,
    });
    await storage.apps.updatePrivacyWebhookUrl(app.id, 'https://hooks.example.com/privacy');
    await storage.apps.insertInstallation({ storeId: s.id, appId: app.id, scopes: 'read_customers read_orders', now: NOW });
    const privateAppId = await storage.apps.insertPrivateApp({
      storeId: s.id,
      name: 'Private',
      scopes: 'read_customers',
      tokenHash: `hash-${n}`,
      webhookSecretEnc: 'sealed',
      now: NOW,
    });
    return { id: s.id, appId: app.id, privateAppId };
  }

  /** Writes one event with one delivery of the app (`owner` 'app') or of the private app. */
  async function event(
    s: { id: number; appId: number; privateAppId: number },
    topic: WebhookTopic,
    payload: unknown,
    owner: 'app' | 'private' = 'app',
    tx?: Repositories,
  ): Promise<string> {
    n += 1;
    const id = `evt_redaction_${n}`;
    const delivery =
      owner === 'app'
        ? { subscriptionId: privacySubscriptionId(s.appId), appId: s.appId, privateAppId: null, webhookId: `wh_redaction_${n}` }
        : { subscriptionId: 900_000 + n, appId: null, privateAppId: s.privateAppId, webhookId: `wh_redaction_${n}` };
    await (tx ?? storage).webhooks.insertEvent({ id, storeId: s.id, topic, payload: JSON.stringify(payload), now: NOW + n }, [delivery]);
    return id;
  }

  it("finds a customer's own events, its orders' and the privacy requests about it, from any owner, and nothing else", async () => {
    const s = await store();
    const other = await store();
    const customer = { id: '41', email: 'ada@example.test', first_name: 'Ada', last_name: 'L', phone: '+1 555 0100' };
    const mine = [
      await event(s, 'customers/create', customer),
      await event(s, 'customers/update', { ...customer, first_name: 'Augusta' }, 'private'),
      await event(s, 'orders/create', { id: '7', customer_id: '41', email: 'ada@example.test', line_items: [] }),
      await event(s, 'orders/updated', { id: '7', customer_id: '41', email: 'ada@example.test', line_items: [] }, 'private'),
      await event(s, 'customers/data_request', { shop_id: String(s.id), customer: { id: '41', email: 'ada@example.test', phone: null } }),
    ];
    // Another customer; an order numbered like the customer but a guest's; another customer's
    // order; a product numbered like it; the same customer id in another store.
    await event(s, 'customers/create', { ...customer, id: '42', email: 'bob@example.test' });
    await event(s, 'orders/create', { id: '41', customer_id: null, email: 'guest@example.test', line_items: [] });
    await event(s, 'orders/create', { id: '8', customer_id: '42', email: 'bob@example.test', line_items: [] });
    await event(s, 'products/create', { id: '41', title: 'Mug' });
    await event(other, 'customers/create', customer);

    const found = await storage.transaction((tx) => tx.eventPayloads.namingCustomer(s.id, 41));
    expect(found.map((e) => e.id)).toEqual(mine);
    expect(found.map((e) => e.topic)).toEqual([
      'customers/create',
      'customers/update',
      'orders/create',
      'orders/updated',
      'customers/data_request',
    ]);
    expect(JSON.parse(found[0]!.payload)).toEqual(customer);
    expect(await storage.eventPayloads.namingCustomer(s.id, 43)).toEqual([]);
    expect((await storage.eventPayloads.namingCustomer(other.id, 41)).map((e) => e.topic)).toEqual(['customers/create']);
  });

  it("rewrites only the store's events given; the worker's claim then loads the rewritten body", async () => {
    const s = await store();
    const other = await store();
    const id = await event(s, 'customers/create', { id: '5', email: 'eve@example.test' });
    const foreign = await event(other, 'customers/create', { id: '5', email: 'eve@example.test' });
    const many = await storage.transaction(async (tx) => {
      const ids: string[] = [];
      for (let i = 0; i < 450; i++)
        ids.push(await event(s, 'orders/create', { id: String(100 + i), customer_id: '5', email: 'eve@example.test' }, 'app', tx));
      return ids;
    });
    const payloadOf = async (eventId: string) =>
      (await sql<{ payload: string }>`select payload from webhook_events where id = ${eventId}`.execute(storage.db.kysely)).rows[0]!
        .payload;

    // Another store's id is not this store's event.
    expect(await storage.eventPayloads.replace(s.id, [{ id: foreign, payload: '{}' }])).toBe(0);
    expect(JSON.parse(await payloadOf(foreign))).toEqual({ id: '5', email: 'eve@example.test' });
    // More events than one statement takes: every one is rewritten.
    const rewritten = [id, ...many].map((e, i) => ({ id: e, payload: JSON.stringify({ n: i }) }));
    expect(await storage.transaction((tx) => tx.eventPayloads.replace(s.id, rewritten))).toBe(451);
    expect(JSON.parse(await payloadOf(id))).toEqual({ n: 0 });
    expect(JSON.parse(await payloadOf(many.at(-1)!))).toEqual({ n: 450 });

    const claimed = await storage.deliveryQueue.claim({
      worker: `w${n}`,
      now: NOW + 10_000_000,
      leaseUntil: NOW + 10_000_001,
      limit: 1000,
      excludeSubscriptions: [],
    });
    const mine = claimed.find((d) => d.event_id === id)!;
    expect(JSON.parse(mine.payload)).toEqual({ n: 0 });
  });

  it.runIf(dialect === 'postgres-partitioned')('each statement of the search and the rewrite reads one partition', async () => {
    const s = await store();
    const from = queries.length;
    const id = await event(s, 'customers/create', { id: '9', email: 'z@example.test' });
    await storage.eventPayloads.namingCustomer(s.id, 9);
    await storage.eventPayloads.replace(s.id, [{ id, payload: '{}' }]);
    const mine = queries.slice(from).filter((q) => /webhook_events as e|from webhook_events e/.test(q.sql));
    expect(mine).toHaveLength(2);
    expect(await unroutedQueries(url, mine)).toEqual([]);
  });
});

describe.each(DIALECTS)('the search with many stores on %s', (dialect) => {
  const STORES = 100;
  const EVENTS = 300;
  const TARGET = 17;
  const TOPICS = ['products/create', 'customers/create', 'orders/create', 'orders/updated', 'customers/update'];
  let storage: OpenStorage;
  let drop: (() => Promise<void>) | undefined;
  let queries: CompiledQuery[] = [];

  beforeAll(async () => {
    if (dialect === 'sqlite') {
      const real = openDatabase({ dialect: 'sqlite', path: ':memory:' });
      // Every statement the storage runs through Kysely is recorded, so the test explains exactly
      // what the search runs.
      const kysely = new Kysely<Database>({
        dialect: new SqliteDialect({ database: real.sqlite! }),
        log: (event) => {
          if (event.level === 'query') queries.push(event.query);
        },
      });
      storage = storageOn({ ...real, kysely });
    } else {
      const pg = await freshPostgresUrl();
      drop = pg.drop;
      const recording = recordingDb(pg.url);
      storage = storageOn(recording.db);
      queries = recording.queries;
    }
    await storage.migrate();
    const k = storage.db.kysely;
    // Every store holds events of every kind, customer 5's among them, each delivered to an app
    // (the store's number) and every third one to a private app too.
    const topic =
      dialect === 'sqlite'
        ? sql`json_extract(${JSON.stringify(TOPICS)}, '$[' || (y % 5) || ']')`
        : sql`(cast(${TOPICS} as text[]))[y % 5 + 1]`;
    const payload =
      dialect === 'sqlite'
        ? sql`json_object('id', cast(y as text), 'customer_id', cast(y % 7 as text), 'email', 'c' || y || '@example.test')`
        : sql`json_build_object('id', y::text, 'customer_id', (y % 7)::text, 'email', 'c' || y || '@example.test')::text`;
    await sql`with recursive s(x) as (select 1 union all select x + 1 from s where x < ${STORES}),
        g(y) as (select 1 union all select y + 1 from g where y < ${EVENTS})
      insert into webhook_events (id, store_id, topic, payload, created_at)
      select 'evt_' || x || '_' || y, x, ${topic}, ${payload}, y from s, g`.execute(k);
    await sql`insert into webhook_deliveries (webhook_id, event_id, subscription_id, store_id, app_id, private_app_id, topic, status,
        attempts, next_attempt_at, created_at, updated_at)
      select 'wh_a_' || id, id, 1, store_id, store_id, null, topic, 'delivered', 1, created_at, created_at, created_at
      from webhook_events`.execute(k);
    await sql`insert into webhook_deliveries (webhook_id, event_id, subscription_id, store_id, app_id, private_app_id, topic, status,
        attempts, next_attempt_at, created_at, updated_at)
      select 'wh_p_' || id, id, 2, store_id, null, store_id, topic, 'pending', 0, created_at, created_at, created_at
      from webhook_events where created_at % 3 = 0`.execute(k);
    await sql`analyze`.execute(k);
  });
  afterAll(async () => {
    await storage.close();
    await drop?.();
  });

  /** The plan's steps, one line each. */
  async function planOf(q: CompiledQuery): Promise<string[]> {
    if (dialect === 'sqlite')
      return (storage.db.sqlite!.prepare(`explain query plan ${q.sql}`).all(...q.parameters) as { detail: string }[]).map((r) => r.detail);
    const rows = await sql<{
      'QUERY PLAN': string;
    }>`explain ${sql.raw(q.sql.replace(/\$(\d+)/g, (_, i: string) => literal(q.parameters[Number(i) - 1])))}`.execute(storage.db.kysely);
    return rows.rows.map((r) => r['QUERY PLAN'].trim());
  }

  it("reads the store's deliveries through the events-list indexes and the events by key, never scanning either table", async () => {
    const from = queries.length;
    const found = await storage.transaction((tx) => tx.eventPayloads.namingCustomer(TARGET, 5));
    // customers/* events whose id is 5 (y = 5 is products/create, so none), orders/* whose
    // customer_id is 5 (y % 7 = 5 and y % 5 in 2, 3).
    const expected = [];
    for (let y = 1; y <= EVENTS; y++) if (y % 7 === 5 && (y % 5 === 2 || y % 5 === 3)) expected.push(`evt_${TARGET}_${y}`);
    expect(found.map((e) => e.id)).toEqual(expected);
    const plan = await planOf(queries.slice(from).find((q) => /from webhook_events e/.test(q.sql))!);
    if (dialect === 'sqlite') {
      expect(plan).toContain('SEARCH e USING INDEX sqlite_autoindex_webhook_events_1 (id=?)');
      expect(plan.some((l) => l.startsWith('SEARCH d USING INDEX webhook_deliveries_app_events (store_id=? AND'))).toBe(true);
      expect(plan.some((l) => l.startsWith('SEARCH d USING INDEX webhook_deliveries_private_events (store_id=? AND'))).toBe(true);
      expect(plan.filter((l) => l.startsWith('SCAN'))).toEqual([]);
    } else {
      expect(plan.some((l) => /Index Scan using webhook_events_pkey on webhook_events e\b/.test(l))).toBe(true);
      expect(plan.some((l) => /Index (Only )?Scan (using|on) webhook_deliveries_app_events\b/.test(l))).toBe(true);
      expect(plan.some((l) => /Index (Only )?Scan (using|on) webhook_deliveries_private_events\b/.test(l))).toBe(true);
      expect(plan.filter((l) => /Seq Scan/.test(l))).toEqual([]);
    }
  });
});

/** A parameter spelled as an SQL literal, for EXPLAIN (which takes no parameters). */
function literal(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  return `'${String(v).replaceAll("'", "''")}'`;
}
