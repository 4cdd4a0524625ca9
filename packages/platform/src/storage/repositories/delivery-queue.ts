// The webhook worker's side of the delivery table: claims under a lease, the load of what a
// claimed delivery needs, and batched outcome writes.
//
// PostgreSQL: several workers claim with FOR UPDATE SKIP LOCKED, so no two hold the same row.
// SQLite: one process; while no transaction is open on the shared connection, the claim and the
// outcome writes run synchronously on it (nothing can interleave with synchronous statements, so
// they never see or join an uncommitted change) and without waiting for a sync to disk (see
// durability.ts). Inside an open transaction they wait their turn through Kysely instead.
import { type CompiledQuery, type Kysely, sql } from 'kysely';
import type { Durability } from '../durability.ts';
import { defineQuery, KyselyRunner, type PreparedQuery, type QueryRunner, SqliteRunner } from '../prepared-query.ts';
import type { ClaimedDelivery, DeliveryOutcome, DeliveryQueue } from '../ports.ts';
import type { Database } from '../schema.ts';
import type { Db } from '../database.ts';
import { fleetWide } from '../fleet-wide.ts';

type Statements = ReturnType<typeof outcomeStatements>;
type Step = { [K in keyof Statements]: { kind: K; params: Record<string, string | number | null> } }[keyof Statements];

export class SqlDeliveryQueue implements DeliveryQueue {
  readonly singleProcess: boolean;
  private readonly statements: Statements;

  constructor(
    private readonly db: Db,
    private readonly durability: Durability,
  ) {
    this.singleProcess = db.dialect === 'sqlite';
    this.statements = outcomeStatements(db.kysely);
  }

  private get k(): Kysely<Database> {
    return this.db.kysely;
  }

  /** The raw SQLite handle when synchronous statements are safe right now. */
  private get idleSqlite() {
    const sqlite = this.db.sqlite;
    return sqlite && !sqlite.inTransaction ? sqlite : undefined;
  }

  async releaseAllClaims(): Promise<void> {
    await this.k
      .updateTable('webhook_deliveries')
      .set({ claimed_by: null, claimed_until: null })
      .where('status', '=', 'pending')
      .where('claimed_until', 'is not', null)
      .modifyEnd(fleetWide('webhook-claims-release'))
      .execute();
  }

  async releaseClaims(worker: string): Promise<number> {
    const res = await this.k
      .updateTable('webhook_deliveries')
      .set({ claimed_by: null, claimed_until: null })
      .where('claimed_by', '=', worker)
      .where('status', '=', 'pending')
      .modifyEnd(fleetWide('webhook-claims-release'))
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  async deferClaims(input: { worker: string; ids: readonly number[]; until: number; now: number }): Promise<number> {
    let deferred = 0;
    for (let i = 0; i < input.ids.length; i += 500) {
      const res = await this.k
        .updateTable('webhook_deliveries')
        .set({ claimed_by: null, claimed_until: null, next_attempt_at: input.until, updated_at: input.now })
        .where('id', 'in', input.ids.slice(i, i + 500))
        .where('claimed_by', '=', input.worker)
        .where('status', '=', 'pending')
        .modifyEnd(fleetWide('webhook-claims-defer'))
        .executeTakeFirst();
      deferred += Number(res.numUpdatedRows);
    }
    return deferred;
  }

  async renewClaims(input: { worker: string; ids: readonly number[]; leaseUntil: number }): Promise<number> {
    if (input.ids.length === 0) return 0;
    let renewed = 0;
    // In slices, so a full buffer stays far below either database's limit on bound parameters.
    for (let i = 0; i < input.ids.length; i += 500) {
      const res = await this.k
        .updateTable('webhook_deliveries')
        .set({ claimed_until: input.leaseUntil })
        .where('id', 'in', input.ids.slice(i, i + 500))
        .where('claimed_by', '=', input.worker)
        .where('status', '=', 'pending')
        .modifyEnd(fleetWide('webhook-claims-renew'))
        .executeTakeFirst();
      renewed += Number(res.numUpdatedRows);
    }
    return renewed;
  }

  async claim(input: {
    worker: string;
    now: number;
    leaseUntil: number;
    limit: number;
    excludeSubscriptions: readonly number[];
  }): Promise<ClaimedDelivery[]> {
    const claim = this.claimQuery(input);
    const sqlite = this.idleSqlite;
    if (sqlite) {
      const ids = this.durability.relaxed(() => sqlite.prepare(claim.sql).all(...claim.parameters) as { id: number }[]).map((r) => r.id);
      if (ids.length === 0) return [];
      const load = loadQuery(this.k, ids);
      return sqlite.prepare(load.sql).all(...load.parameters) as ClaimedDelivery[];
    }
    const claimed = await this.k.executeQuery(claim);
    if (claimed.rows.length === 0) return [];
    return (
      await this.k.executeQuery(
        loadQuery(
          this.k,
          claimed.rows.map((r) => Number(r.id)),
        ),
      )
    ).rows;
  }

  private claimQuery(input: {
    worker: string;
    now: number;
    leaseUntil: number;
    limit: number;
    excludeSubscriptions: readonly number[];
  }): CompiledQuery<{ id: number }> {
    const { now } = input;
    const notIn =
      input.excludeSubscriptions.length > 0 ? sql`and subscription_id not in (${sql.join([...input.excludeSubscriptions])})` : sql``;
    const lock = this.db.dialect === 'postgres' ? sql`for update skip locked` : sql``;
    // `status = 'pending'` is written out so that SQLite can use the partial index.
    return sql<{ id: number }>`
      update webhook_deliveries set claimed_by = ${input.worker}, claimed_until = ${input.leaseUntil}
      where id in (
        select id from webhook_deliveries
        where status = 'pending' and next_attempt_at <= ${now} and (claimed_until is null or claimed_until < ${now}) ${notIn}
        order by next_attempt_at, id
        limit ${input.limit}
        ${lock}
      )
      returning id ${fleetWide('webhook-claim')}`.compile(this.k);
  }

  async recordOutcomes(
    outcomes: readonly DeliveryOutcome[],
    ctx: { worker: string; now: number; disableAfterDead: number },
  ): Promise<void> {
    const sqlite = this.idleSqlite;
    if (sqlite) {
      const runner = new SqliteRunner(sqlite);
      // One synchronous transaction: one commit for the whole batch.
      this.durability.relaxed(() =>
        sqlite.transaction(() =>
          runPlan(outcomes, ctx, (step) => runner.runSync(this.statements[step.kind] as PreparedQuery<unknown>, step.params)),
        )(),
      );
      return;
    }
    await this.k.transaction().execute(async (trx) => {
      const runner: QueryRunner = new KyselyRunner(trx);
      const steps = writePlan(outcomes, ctx);
      let step = steps.next(0);
      while (!step.done) step = steps.next(await runner.run(this.statements[step.value.kind] as PreparedQuery<unknown>, step.value.params));
    });
  }
}

function runPlan(
  outcomes: readonly DeliveryOutcome[],
  ctx: { worker: string; now: number; disableAfterDead: number },
  run: (step: Step) => number,
): void {
  const steps = writePlan(outcomes, ctx);
  let step = steps.next(0);
  while (!step.done) step = steps.next(run(step.value));
}

/** What a claim loads for each delivery, for the ids given. */
function loadQuery(k: Kysely<Database>, ids: number[]): CompiledQuery<ClaimedDelivery> {
  return k
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', (j) => j.onRef('e.store_id', '=', 'd.store_id').onRef('e.id', '=', 'd.event_id'))
    .innerJoin('stores as st', 'st.id', 'd.store_id')
    .leftJoin('webhook_subscriptions as s', (j) => j.onRef('s.store_id', '=', 'd.store_id').onRef('s.id', '=', 'd.subscription_id'))
    .leftJoin('apps as a', 'a.id', 'd.app_id')
    .leftJoin('installations as i', (j) => j.onRef('i.store_id', '=', 'd.store_id').onRef('i.app_id', '=', 'd.app_id'))
    .leftJoin('private_apps as p', (j) => j.onRef('p.store_id', '=', 'd.store_id').onRef('p.id', '=', 'd.private_app_id'))
    .select([
      'd.id',
      'd.store_id',
      'd.webhook_id',
      'd.event_id',
      'd.topic',
      'd.subscription_id',
      'd.attempts',
      'd.app_id',
      'd.private_app_id',
      'e.payload',
      'e.created_at as event_at',
      'st.name as store_name',
      's.id as sub_id',
      's.address',
      's.api_version',
      's.disabled_at',
      'a.client_secret_enc',
      'a.privacy_webhook_url',
      'a.previous_secret_enc',
      'a.previous_secret_expires_at',
      'i.id as installation_id',
      'i.uninstalled_at',
      'i.installed_at',
      'i.scopes as installation_scopes',
      'p.id as private_id',
      'p.webhook_secret_enc',
      'p.previous_webhook_secret_enc',
      'p.previous_webhook_secret_expires_at',
      'p.revoked_at',
      'p.scopes as private_scopes',
    ])
    .where('d.id', 'in', ids)
    .orderBy('d.next_attempt_at')
    .orderBy('d.id')
    .modifyEnd(fleetWide('webhook-claim-load'))
    .compile() as CompiledQuery<ClaimedDelivery>;
}

// Every delivery update is guarded by `claimed_by`: a worker whose lease ran out does not
// overwrite the row's new holder.
function outcomeStatements(k: Kysely<Database>) {
  const release = { claimed_by: null, claimed_until: null };
  return {
    attempt: defineQuery((p) =>
      k.insertInto('webhook_attempts').values({
        store_id: p<number>('store'),
        delivery_id: p<number>('delivery'),
        attempted_at: p<number>('at'),
        status_code: p<number | null>('status'),
        latency_ms: p<number>('latency'),
        response_body: p<string | null>('body'),
        error: p<string | null>('error'),
      }),
    ),
    delivered: defineQuery((p) =>
      k
        .updateTable('webhook_deliveries')
        .set({
          status: 'delivered',
          attempts: p<number>('attempts'),
          last_status: p<number | null>('status'),
          last_error: null,
          ...release,
          updated_at: p<number>('now'),
        })
        .where('store_id', '=', p<number>('store'))
        .where('id', '=', p<number>('id'))
        .where('claimed_by', '=', p('worker'))
        .where('status', '=', 'pending'),
    ),
    cancelled: defineQuery((p) =>
      k
        .updateTable('webhook_deliveries')
        .set({ status: 'cancelled', last_error: p<string>('reason'), ...release, updated_at: p<number>('now') })
        .where('store_id', '=', p<number>('store'))
        .where('id', '=', p<number>('id'))
        .where('claimed_by', '=', p('worker'))
        .where('status', '=', 'pending'),
    ),
    retry: defineQuery((p) =>
      k
        .updateTable('webhook_deliveries')
        .set({
          attempts: p<number>('attempts'),
          last_status: p<number | null>('status'),
          last_error: p<string | null>('error'),
          next_attempt_at: p<number>('next'),
          ...release,
          updated_at: p<number>('now'),
        })
        .where('store_id', '=', p<number>('store'))
        .where('id', '=', p<number>('id'))
        .where('claimed_by', '=', p('worker'))
        .where('status', '=', 'pending'),
    ),
    dead: defineQuery((p) =>
      k
        .updateTable('webhook_deliveries')
        .set({
          status: 'dead',
          attempts: p<number>('attempts'),
          last_status: p<number | null>('status'),
          last_error: p<string | null>('error'),
          ...release,
          updated_at: p<number>('now'),
        })
        .where('store_id', '=', p<number>('store'))
        .where('id', '=', p<number>('id'))
        .where('claimed_by', '=', p('worker'))
        .where('status', '=', 'pending'),
    ),
    resetStreak: defineQuery((p) =>
      k
        .updateTable('webhook_subscriptions')
        .set({ dead_streak: 0 })
        .where('store_id', '=', p<number>('store'))
        .where('id', '=', p<number>('subscription'))
        .where('dead_streak', '>', 0),
    ),
    bumpStreak: defineQuery((p) =>
      k
        .updateTable('webhook_subscriptions')
        .set((eb) => ({ dead_streak: eb('dead_streak', '+', 1) }))
        .where('store_id', '=', p<number>('store'))
        .where('id', '=', p<number>('subscription')),
    ),
    disable: defineQuery((p) =>
      k
        .updateTable('webhook_subscriptions')
        .set({ disabled_at: p<number>('now'), disabled_reason: p<string>('reason'), updated_at: p<number>('now') })
        .where('store_id', '=', p<number>('store'))
        .where('id', '=', p<number>('subscription'))
        .where('disabled_at', 'is', null),
    ),
    disableAfterStreak: defineQuery((p) =>
      k
        .updateTable('webhook_subscriptions')
        .set({ disabled_at: p<number>('now'), disabled_reason: p<string>('reason'), updated_at: p<number>('now') })
        .where('store_id', '=', p<number>('store'))
        .where('id', '=', p<number>('subscription'))
        .where('dead_streak', '>=', p<number>('streak'))
        .where('disabled_at', 'is', null),
    ),
  };
}

/**
 * The statements that record a batch of outcomes, in order; each `yield` receives the number of
 * rows the statement changed (subscription health moves only when the delivery row was ours).
 */
function* writePlan(
  batch: readonly DeliveryOutcome[],
  ctx: { now: number; worker: string; disableAfterDead: number },
): Generator<Step, void, number> {
  const { now, worker } = ctx;
  // Subscriptions are keyed by store and id together, as every write names them.
  const healthy = new Map<string, { store: number; subscription: number }>();
  const key = (o: DeliveryOutcome) => `${o.storeId}:${o.subscriptionId}`;
  for (const o of batch) {
    if (o.cancelled !== undefined) {
      yield { kind: 'cancelled', params: { reason: o.cancelled, now, store: o.storeId, id: o.id, worker } };
      continue;
    }
    const a = o.attempt;
    yield {
      kind: 'attempt',
      params: {
        store: o.storeId,
        delivery: o.id,
        at: a.attemptedAt,
        status: a.status,
        latency: a.latencyMs,
        body: a.responseBody,
        error: a.error,
      },
    };
    const attempts = o.attempts + 1;
    const error = a.error ?? (a.status !== null ? `HTTP ${a.status}` : null);
    if (o.next.status === 'delivered') {
      if ((yield { kind: 'delivered', params: { attempts, status: a.status, now, store: o.storeId, id: o.id, worker } }) > 0)
        healthy.set(key(o), { store: o.storeId, subscription: o.subscriptionId });
    } else if (o.next.status === 'pending') {
      yield {
        kind: 'retry',
        params: { attempts, status: a.status, error, next: o.next.nextAttemptAt, now, store: o.storeId, id: o.id, worker },
      };
    } else if ((yield { kind: 'dead', params: { attempts, status: a.status, error, now, store: o.storeId, id: o.id, worker } }) > 0) {
      // A success earlier in this batch ends the streak before this failure counts.
      if (healthy.delete(key(o))) yield { kind: 'resetStreak', params: { store: o.storeId, subscription: o.subscriptionId } };
      if (o.next.disable) {
        yield { kind: 'disable', params: { now, reason: o.next.disable, store: o.storeId, subscription: o.subscriptionId } };
      } else {
        yield { kind: 'bumpStreak', params: { store: o.storeId, subscription: o.subscriptionId } };
        yield {
          kind: 'disableAfterStreak',
          params: {
            now,
            reason: `${ctx.disableAfterDead} deliveries in a row failed every retry`,
            store: o.storeId,
            subscription: o.subscriptionId,
            streak: ctx.disableAfterDead,
          },
        };
      }
    }
  }
  for (const h of healthy.values()) yield { kind: 'resetStreak', params: h };
}
