// The webhook worker's side of the delivery table: claims under a lease, the load of what a
// claimed delivery needs, and batched outcome writes.
//
// PostgreSQL: several workers claim with FOR UPDATE SKIP LOCKED, so no two hold the same row.
// SQLite: one process; while no transaction is open on the shared connection, the claim and the
// outcome writes run synchronously on it (nothing can interleave with synchronous statements, so
// they never see or join an uncommitted change) and without waiting for a sync to disk (see
// durability.ts). Inside an open transaction they wait their turn through Kysely instead.
//
// Every statement has one SQL text, whatever the batch (lists go in as one JSON array on SQLite,
// as arrays on PostgreSQL), so it is compiled once and prepared once; a batch costs a fixed number
// of statements, not a few per delivery (see delivery-outcomes.ts).
import { CompiledQuery, type Kysely, sql } from 'kysely';
import type { Durability } from '../durability.ts';
import { defineQuery, type PreparedQuery } from '../prepared-query.ts';
import type { ClaimedDelivery, DeliveryOutcome, DeliveryQueue } from '../ports.ts';
import type { Database } from '../schema.ts';
import type { Db } from '../database.ts';
import { fleetWide } from '../fleet-wide.ts';
import { outcomeWrites, type Statement, type StatementResult, type WriteContext } from './delivery-outcomes.ts';

type ClaimParams = { worker: string; now: number; leaseUntil: number; limit: number; excludeSubscriptions: readonly number[] };

export class SqlDeliveryQueue implements DeliveryQueue {
  readonly singleProcess: boolean;
  private readonly claimSql: string;
  private readonly load: PreparedQuery<ClaimedDelivery>;

  constructor(
    private readonly db: Db,
    private readonly durability: Durability,
  ) {
    this.singleProcess = db.dialect === 'sqlite';
    this.claimSql = claimStatement(db.dialect);
    this.load = loadQuery(db.kysely, db.dialect);
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
    // In slices, far below either database's limit on bound parameters.
    for (let i = 0; i < input.ids.length; i += 500) {
      const query = this.k
        .updateTable('webhook_deliveries')
        .set({ claimed_by: null, claimed_until: null, next_attempt_at: input.until, updated_at: input.now })
        .where('id', 'in', input.ids.slice(i, i + 500))
        .where('claimed_by', '=', input.worker)
        .where('status', '=', 'pending')
        .modifyEnd(fleetWide('webhook-claims-defer'));
      const sqlite = this.idleSqlite;
      if (sqlite) {
        // Worker bookkeeping, like a claim: a hand-back lost in a crash only leaves the rows to be
        // claimed (and handed back) again, so it does not wait for a sync.
        const { sql: text, parameters } = query.compile();
        deferred += this.durability.relaxed(() => sqlite.prepare(text).run(...parameters).changes);
      } else deferred += Number((await query.executeTakeFirst()).numUpdatedRows);
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

  async claim(input: ClaimParams): Promise<ClaimedDelivery[]> {
    const params = claimParams(this.db.dialect, input);
    const sqlite = this.idleSqlite;
    if (sqlite) {
      const ids = this.durability.relaxed(() => sqlite.prepare(this.claimSql).all(...params) as { id: number }[]);
      if (ids.length === 0) return [];
      return sqlite.prepare(this.load.compiled.sql).all(JSON.stringify(ids.map((r) => r.id))) as ClaimedDelivery[];
    }
    const claimed = await this.k.executeQuery<{ id: number | string }>(CompiledQuery.raw(this.claimSql, params));
    if (claimed.rows.length === 0) return [];
    const ids = claimed.rows.map((r) => Number(r.id));
    const list = this.db.dialect === 'sqlite' ? JSON.stringify(ids) : ids;
    return (await this.k.executeQuery<ClaimedDelivery>(CompiledQuery.raw(this.load.compiled.sql, [list]))).rows;
  }

  async recordOutcomes(outcomes: readonly DeliveryOutcome[], ctx: WriteContext): Promise<void> {
    if (outcomes.length === 0) return;
    const sqlite = this.idleSqlite;
    if (sqlite) {
      // One synchronous transaction: one commit for the whole batch.
      this.durability.relaxed(() =>
        sqlite.transaction(() => {
          const steps = outcomeWrites('sqlite', outcomes, ctx);
          let step = steps.next(NOTHING);
          while (!step.done) {
            const stmt = sqlite.prepare(step.value.sql);
            step = steps.next(
              stmt.reader
                ? { ids: (stmt.all(...step.value.params) as { id: number }[]).map((r) => r.id), changes: 0 }
                : { ids: [], changes: stmt.run(...step.value.params).changes },
            );
          }
        })(),
      );
      return;
    }
    await this.k.transaction().execute(async (trx) => {
      const steps = outcomeWrites(this.db.dialect, outcomes, ctx);
      let step = steps.next(NOTHING);
      while (!step.done) step = steps.next(await runStatement(trx, step.value));
    });
  }
}

const NOTHING: StatementResult = { ids: [], changes: 0 };

async function runStatement(k: Kysely<Database>, s: Statement): Promise<StatementResult> {
  const res = await k.executeQuery<{ id?: number | string }>(CompiledQuery.raw(s.sql, s.params));
  return { ids: res.rows.map((r) => Number(r.id)), changes: Number(res.numAffectedRows ?? 0) };
}

/**
 * Claims up to `limit` due rows, oldest first, leaving out the given subscriptions; returns their
 * ids. One SQL text for every call: the subscriptions left out are a JSON array (SQLite) or an
 * array parameter (PostgreSQL).
 */
function claimStatement(dialect: 'sqlite' | 'postgres'): string {
  // `status = 'pending'` is written out so that SQLite can use the partial index.
  if (dialect === 'sqlite') {
    return `update webhook_deliveries set claimed_by = ?, claimed_until = ?
      where id in (
        select id from webhook_deliveries
        where status = 'pending' and next_attempt_at <= ? and (claimed_until is null or claimed_until < ?)
          and subscription_id not in (select value from json_each(?))
        order by next_attempt_at, id
        limit ?
      )
      returning id /* fleet-wide: webhook-claim */`;
  }
  return `update webhook_deliveries set claimed_by = $1, claimed_until = $2
    where id in (
      select id from webhook_deliveries
      where status = 'pending' and next_attempt_at <= $3 and (claimed_until is null or claimed_until < $3)
        and not (subscription_id = any($4::bigint[]))
      order by next_attempt_at, id
      limit $5
      for update skip locked
    )
    returning id /* fleet-wide: webhook-claim */`;
}

function claimParams(dialect: 'sqlite' | 'postgres', c: ClaimParams): unknown[] {
  if (dialect === 'sqlite') return [c.worker, c.leaseUntil, c.now, c.now, JSON.stringify(c.excludeSubscriptions), c.limit];
  return [c.worker, c.leaseUntil, c.now, [...c.excludeSubscriptions], c.limit];
}

/** What a claim loads for each delivery, for the ids given (one parameter: the list of ids). */
function loadQuery(k: Kysely<Database>, dialect: 'sqlite' | 'postgres'): PreparedQuery<ClaimedDelivery> {
  return defineQuery((p) =>
    k
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
      .where(
        dialect === 'sqlite'
          ? sql<boolean>`d.id in (select value from json_each(${p('ids')}))`
          : sql<boolean>`d.id = any(${p('ids')}::bigint[])`,
      )
      .orderBy('d.next_attempt_at')
      .orderBy('d.id')
      .modifyEnd(fleetWide('webhook-claim-load')),
  ) as PreparedQuery<ClaimedDelivery>;
}
