// The plan PostgreSQL picks for the worker's set-based writes on a delivery table that grew faster
// than its statistics were refreshed: a backlog committed at once, then claimed, as the webhooks
// benchmark does it. Recording a batch of outcomes must read only the batch's rows. Joined with
// unnest() alone, the planner read every pending row and compared it with every row of the batch
// (seconds per batch of 500, so outcomes fell behind the sends); that plan fails here.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimParams } from '../src/storage/repositories/delivery-claim.ts';
import { deliveryQueries } from '../src/storage/repositories/delivery-queue.ts';
import { outcomeWrites } from '../src/storage/repositories/delivery-outcomes.ts';
import { outcomeBatch } from '../src/storage/repositories/delivery-outcome-batch.ts';
import type { DeliveryOutcome } from '../src/storage/ports/rows.ts';
import { openDatabase } from '../src/storage/database.ts';
import { storageOn } from '../src/storage/sql-storage.ts';
import { freshPostgresUrl } from './harness.ts';
import { bound, postgresCompiler } from './prepared-text.ts';

const ROWS = 20_000;
const BATCH = 500;
const STORE = 1;
const WORKER = 'w_plans';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];

/** The rows each scan of `table` returned, over all its loops. */
function rowsRead(plan: PlanNode, table: string): number[] {
  return nodes(plan)
    .filter((n) => n['Relation Name'] === table && n['Node Type'] !== 'ModifyTable')
    .map((n) => (n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1));
}

describe.skipIf(!process.env.TEST_PG_URL)('delivery write plans on PostgreSQL with stale statistics', () => {
  let schema: Awaited<ReturnType<typeof freshPostgresUrl>>;
  let client: pg.Client;

  beforeAll(async () => {
    schema = await freshPostgresUrl();
    const storage = storageOn(openDatabase({ dialect: 'postgres', url: schema.url }, { poolSize: 1 }));
    await storage.migrate();
    await storage.close();
    client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    // Statistics stay as the migration left them (no analyze of the rows below), as they are
    // between a bulk commit and the next autovacuum.
    for (const table of ['webhook_deliveries', 'webhook_events', 'webhook_delivery_leases'])
      await client.query(`alter table ${table} set (autovacuum_enabled = false)`);
    await client.query(
      `insert into webhook_events (id, store_id, topic, payload, created_at)
       select 'evt_' || g, ${STORE}, 'products/create', '{}', 1 from generate_series(1, ${ROWS / 8}) g`,
    );
    await client.query(
      `insert into webhook_deliveries (webhook_id, event_id, subscription_id, store_id, app_id, private_app_id, topic, status,
         attempts, next_attempt_at, created_at, updated_at)
       select 'wh_' || g, 'evt_' || (1 + g / 8), g % 8, ${STORE}, null, 1, 'products/create', 'pending', 0, g, 1, 1
       from generate_series(1, ${ROWS}) g`,
    );
    // Claimed, as the worker does before it sends: every row gets a lease.
    await client.query(
      `insert into webhook_delivery_leases (delivery_id, store_id, worker, leased_until)
       select id, store_id, $1, 9e12 from webhook_deliveries`,
      [WORKER],
    );
  }, 60_000);

  afterAll(async () => {
    await client?.end();
    await schema?.drop();
  });

  async function explain(text: string, params: unknown[]): Promise<PlanNode> {
    await client.query('begin');
    try {
      const res = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`explain (analyze, format json) ${text}`, params);
      return res.rows[0]!['QUERY PLAN'][0]!.Plan;
    } finally {
      await client.query('rollback');
    }
  }

  it('recording a batch of outcomes reads only the batch’s delivery rows', async () => {
    const { rows } = await client.query<{ id: string }>('select id from webhook_deliveries order by id limit $1 offset 7000', [BATCH]);
    const batch: DeliveryOutcome[] = rows.map((r) => ({
      id: Number(r.id),
      storeId: STORE,
      subscriptionId: 1,
      attempts: 0,
      attempt: { attemptedAt: 5, status: 200, latencyMs: 3, responseBody: null, error: null },
      next: { status: 'delivered' },
    }));
    const queries = deliveryQueries(postgresCompiler());
    const steps = outcomeWrites(queries.outcomes, 'postgres', batch, { worker: WORKER, now: 5, disableAfterDead: 5 });
    let step = steps.next({ ids: [], changes: 0, rows: [] });
    let checked = 0;
    while (!step.done) {
      const { sql, params } = bound(step.value.query, step.value.params);
      if (/update webhook_deliveries/.test(sql)) {
        const plan = await explain(sql, params);
        expect(rowsRead(plan, 'webhook_deliveries').every((n) => n <= BATCH)).toBe(true);
        expect(rowsRead(plan, 'webhook_delivery_leases').every((n) => n <= BATCH)).toBe(true);
        // The update found and changed every row of the batch, its leases still this worker's.
        expect(plan['Actual Rows']).toBe(BATCH);
        checked++;
      }
      step = steps.next({ ids: batch.map((o) => o.id), changes: batch.length, rows: [] });
    }
    expect(checked).toBe(1);
  });

  it('recording a batch in one statement reads only the batch’s delivery rows', async () => {
    const { rows } = await client.query<{ id: string }>('select id from webhook_deliveries order by id limit $1 offset 9000', [BATCH]);
    const batch: DeliveryOutcome[] = rows.map((r) => ({
      id: Number(r.id),
      storeId: STORE,
      subscriptionId: 1,
      attempts: 0,
      attempt: { attemptedAt: 5, status: 200, latencyMs: 3, responseBody: null, error: null },
      next: { status: 'delivered' },
    }));
    const query = deliveryQueries(postgresCompiler()).outcomeBatch!;
    const one = outcomeBatch(query, batch, { worker: WORKER, now: 5, disableAfterDead: 5 })!;
    const { sql, params } = bound(one.query, one.params);
    const plan = await explain(sql, params);
    expect(rowsRead(plan, 'webhook_deliveries').every((n) => n <= BATCH)).toBe(true);
    expect(rowsRead(plan, 'webhook_delivery_leases').every((n) => n <= BATCH)).toBe(true);
    // The update found and changed every row of the batch.
    expect(plan['Actual Rows']).toBe(BATCH);
  });

  it('a claim picks its rows once and takes no more than its limit', async () => {
    // Free the rows again (the setup claimed them all), still without refreshing statistics.
    await client.query('delete from webhook_delivery_leases');
    const limit = 250;
    const claim = deliveryQueries(postgresCompiler()).claim;
    if (!claim) throw new Error('PostgreSQL claims in one statement');
    const { sql, params } = bound(claim, {
      worker: 'w_claim',
      leaseUntil: 9e12,
      now: 10 * ROWS,
      exclude: [],
      limit,
    });
    const plan = await explain(sql, params);
    // The pick (a LockRows over the ordered, limited scan) runs once: run again for another outer
    // row, it would skip what it locked the first time round and could lock other rows.
    const picks = nodes(plan).filter((n) => n['Node Type'] === 'LockRows');
    expect(picks.map((n) => n['Actual Loops'])).toEqual([1]);
    expect(plan['Actual Rows']).toBe(limit);
    // With statistics refreshed it walks the due rows in order and stops at its limit (stale, it may
    // sort every pending row first, as the pick always could), reading no more leases than that.
    await client.query('analyze webhook_deliveries, webhook_delivery_leases');
    const fresh = await explain(sql, params);
    expect(rowsRead(fresh, 'webhook_deliveries').every((n) => n <= limit)).toBe(true);
    expect(rowsRead(fresh, 'webhook_delivery_leases').every((n) => n <= limit)).toBe(true);
    expect(fresh['Actual Rows']).toBe(limit);
  });

  it('loading the events of a claim reads only those events', async () => {
    const ids = Array.from({ length: BATCH / 8 }, (_, i) => `evt_${1000 + i}`);
    const { sql, params } = bound(deliveryQueries(postgresCompiler()).events, { c0: ids.map(() => STORE), c1: ids });
    const plan = await explain(sql, params);
    expect(rowsRead(plan, 'webhook_events').every((n) => n <= ids.length)).toBe(true);
  });
});

// SQLite keeps no statistics here, so it picks indexes by their shape alone: recording a batch
// of outcomes must look each delivery up by primary key, not walk the store's pending rows through
// an index led by store_id (which made every batch read the whole backlog of a busy store).
describe('delivery write plans on SQLite', () => {
  it('recording a batch of outcomes looks the batch’s deliveries up by primary key', async () => {
    const db = openDatabase({ dialect: 'sqlite', path: ':memory:' });
    try {
      await storageOn(db).migrate();
      const batch: DeliveryOutcome[] = [1, 2, 3].map((id) => ({
        id,
        storeId: STORE,
        subscriptionId: 1,
        attempts: 0,
        attempt: { attemptedAt: 5, status: 200, latencyMs: 3, responseBody: null, error: null },
        next: { status: 'delivered' },
      }));
      const steps = outcomeWrites(deliveryQueries(db).outcomes, 'sqlite', batch, { worker: WORKER, now: 5, disableAfterDead: 5 });
      let step = steps.next({ ids: [], changes: 0, rows: [] });
      const plans: string[][] = [];
      while (!step.done) {
        const { sql, params } = bound(step.value.query, step.value.params);
        if (/update webhook_deliveries/.test(sql))
          plans.push((db.sqlite!.prepare(`explain query plan ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail));
        step = steps.next({ ids: batch.map((o) => o.id), changes: batch.length, rows: [] });
      }
      expect(plans).toHaveLength(1);
      const deliveries = plans[0]!.filter((d) => / webhook_deliveries /.test(`${d} `));
      expect(deliveries).toEqual(['SEARCH webhook_deliveries USING INTEGER PRIMARY KEY (rowid=?)']);
    } finally {
      await db.close();
    }
  });

  it('a claim walks the due index in order and looks each lease up by its delivery', async () => {
    const db = openDatabase({ dialect: 'sqlite', path: ':memory:' });
    try {
      await storageOn(db).migrate();
      const take = deliveryQueries(db).take;
      if (!take) throw new Error('SQLite takes its leases in a statement of their own');
      const params = claimParams('sqlite', { worker: WORKER, now: 5, leaseUntil: 9, limit: 100, excludeSubscriptions: [1] });
      const { sql, params: values } = bound(take, params);
      const plan = (db.sqlite!.prepare(`explain query plan ${sql}`).all(...values) as { detail: string }[]).map((r) => r.detail);
      expect(plan).toContain('SEARCH webhook_deliveries USING INDEX webhook_deliveries_due (next_attempt_at<?)');
      expect(plan).toContain('SEARCH l USING INTEGER PRIMARY KEY (rowid=?)');
      expect(plan.filter((d) => /TEMP B-TREE|^SCAN webhook_/.test(d))).toEqual([]);
    } finally {
      await db.close();
    }
  });
});
