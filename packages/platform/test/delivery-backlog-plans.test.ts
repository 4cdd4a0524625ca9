// What putting off one owner's backlog reads, on a delivery table holding the log and queues of
// many stores: one owner's pending deliveries at a failing endpoint (three subscriptions), the same
// owner's deliveries to another endpoint, other owners of the same store, and a long delivered
// history everywhere. The statement must read within its store only, through the backlog index,
// however large the rest of the table: on SQLite the index is searched on store, subscription and
// due time; on PostgreSQL (plain and partitioned, statistics refreshed or left stale after a bulk
// write) no scan of the table returns more than the store's pending deliveries.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/storage/database.ts';
import { backlogParams } from '../src/storage/repositories/delivery-backlog.ts';
import { deliveryQueries } from '../src/storage/repositories/delivery-queue.ts';
import { storageOn } from '../src/storage/sql-storage.ts';
import { freshPostgresUrl, TEST_PARTITIONS } from './harness.ts';
import { bound, postgresCompiler } from './prepared-text.ts';

const STORES = 50;
const HISTORY = 40_000;
const STORE = 7;
/** The store's own log, delivered: what a plan reading the store's deliveries whole would read. */
const STORE_HISTORY = 20_000;
/** The owner's backlog at the failing endpoint: subscriptions 701 to 703, 400 deliveries each. */
const BACKLOG = 1_200;
/** The same store's other pending deliveries: the owner's at another endpoint, another owner's. */
const STORE_OTHERS = 800;
const INPUT = { storeId: STORE, subscriptionIds: [701, 702, 703], breakerMadeAt: 0, until: 10_000_000, now: 5, limit: 1_000 };

/**
 * Deliveries as the outbox writes them, `count` of them; `columns` gives, from their number `x`,
 * webhook_id as w, subscription_id as sub, store_id as store, status and next_attempt_at as due.
 */
const insertDeliveries = (count: number, columns: string) =>
  `insert into webhook_deliveries (webhook_id, event_id, subscription_id, store_id, app_id, private_app_id, topic, status,
     attempts, next_attempt_at, created_at, updated_at)
   with recursive g(x) as (select 1 union all select x + 1 from g where x < ${count}),
     v as (select ${columns} from g)
   select w, 'evt', sub, store, store, null, 'products/create', status, 0, due, 1, 1 from v`;

const SEED = [
  // Every store's log: one in eight still pending, the rest delivered.
  insertDeliveries(
    HISTORY,
    `'h' || x as w, (x % ${STORES}) * 100 + x % 8 as sub, x % ${STORES} as store,
     case when x % 8 = 0 then 'pending' else 'delivered' end as status, x as due`,
  ),
  insertDeliveries(STORE_HISTORY, `'s' || x as w, 701 + x % 5 as sub, ${STORE} as store, 'delivered' as status, x as due`),
  insertDeliveries(BACKLOG, `'b' || x as w, 701 + x % 3 as sub, ${STORE} as store, 'pending' as status, 1000 + x as due`),
  insertDeliveries(STORE_OTHERS, `'o' || x as w, 704 + x % 2 as sub, ${STORE} as store, 'pending' as status, 1000 + x as due`),
];

describe('putting off a backlog on SQLite', () => {
  it('searches the backlog index on store, subscription and due time, before and after analyze', async () => {
    const db = openDatabase({ dialect: 'sqlite', path: ':memory:' });
    const storage = storageOn(db);
    try {
      await storage.migrate();
      const sqlite = db.sqlite!;
      for (const statement of SEED) sqlite.exec(statement);
      const { sql, params } = bound(deliveryQueries(db).backlog, backlogParams('sqlite', INPUT));
      const plan = () => (sqlite.prepare(`explain query plan ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail);
      // Covering: whether a worker holds a delivery is read from its lease, not from the delivery row.
      const expected = 'SEARCH d USING COVERING INDEX webhook_deliveries_backlog (store_id=? AND subscription_id=? AND next_attempt_at<?)';
      expect(plan()).toContain(expected);
      sqlite.exec('analyze');
      expect(plan()).toContain(expected);
      expect(plan().filter((d) => d.startsWith('SCAN d'))).toEqual([]);
      // And it moves the backlog, a limit at a time.
      expect(await storage.deliveryQueue.deferBacklog(INPUT)).toBe(1_000);
      expect(await storage.deliveryQueue.deferBacklog(INPUT)).toBe(200);
      expect(await storage.deliveryQueue.deferBacklog(INPUT)).toBe(0);
    } finally {
      await storage.close();
    }
  });
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];

/** The rows each scan of the deliveries (or of one of its partitions) looked at, over all its loops. */
function rowsRead(plan: PlanNode): number[] {
  return nodes(plan)
    .filter((n) => /^webhook_deliveries(_p\d+)?$/.test(n['Relation Name'] ?? '') && n['Node Type'] !== 'ModifyTable')
    .map(
      (n) =>
        ((n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Index Recheck'] ?? 0)) *
        (n['Actual Loops'] ?? 1),
    );
}

describe.skipIf(!process.env.TEST_PG_URL).each([
  { layout: 'plain', partitions: undefined },
  { layout: 'partitioned', partitions: TEST_PARTITIONS },
])('putting off a backlog on PostgreSQL ($layout)', ({ partitions }) => {
  let schema: Awaited<ReturnType<typeof freshPostgresUrl>>;
  let client: pg.Client;

  beforeAll(async () => {
    schema = await freshPostgresUrl();
    const storage = storageOn(openDatabase({ dialect: 'postgres', url: schema.url }, { poolSize: 1 }));
    await storage.migrate({ partitions });
    await storage.close();
    client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    // Statistics as the migration left them until a test refreshes them: a bulk write between two
    // runs of autovacuum.
    if (!partitions) await client.query('alter table webhook_deliveries set (autovacuum_enabled = false)');
    for (const statement of SEED) await client.query(statement);
  }, 60_000);

  afterAll(async () => {
    await client?.end();
    await schema?.drop();
  });

  async function explain(): Promise<PlanNode> {
    await client.query('begin');
    try {
      const { sql, params } = bound(deliveryQueries(postgresCompiler()).backlog, backlogParams('postgres', INPUT));
      const res = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`explain (analyze, format json) ${sql}`, params);
      return res.rows[0]!['QUERY PLAN'][0]!.Plan;
    } finally {
      await client.query('rollback');
    }
  }

  it('reads no more than the store’s pending deliveries, with stale statistics and after analyze', async () => {
    for (const refresh of [false, true]) {
      // (The vacuum also drops the row versions the first explain left behind.)
      if (refresh) await client.query('vacuum analyze webhook_deliveries');
      const read = rowsRead(await explain());
      expect(read.length).toBeGreaterThan(0);
      expect(read.filter((n) => n > BACKLOG + STORE_OTHERS)).toEqual([]);
    }
  });
});
