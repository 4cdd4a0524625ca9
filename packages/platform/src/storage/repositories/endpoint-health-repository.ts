// Endpoint health on SQLite and PostgreSQL (see ports/endpoint-health.ts). Every read is bounded
// by the app's own figures, never by the size of the delivery log: the rollup holds a row per
// endpoint and hour, the breakers a row per store and endpoint that changed, and the next attempt
// of each subscription is the first entry of the pending-delivery index
// (webhook_deliveries_backlog: store_id, subscription_id, next_attempt_at; pending rows only).
import { sql } from 'kysely';
import { LATENCY_BOUNDS, OUTCOME_KINDS } from '../../domain/endpoint-health.ts';
import { fleetWide } from '../fleet-wide.ts';
import type {
  BreakerChangeRecord,
  BreakerRow,
  EndpointHealthRepository,
  EndpointHourRow,
  StoredBreakerState,
} from '../ports/endpoint-health.ts';
import type { LatencyColumn } from '../schema.ts';
import type { Executor } from './executor.ts';

const LATENCY = LATENCY_BOUNDS.map((ms) => `ms_${ms}` as LatencyColumn);

/**
 * The earliest pending attempt per address of an app: one probe of the pending-delivery index per
 * subscription of the app (and per store it is installed in, for its privacy deliveries, whose
 * subscription id is the app's id negated), so its cost follows the app's subscriptions, never the
 * size of a backlog. Exported for the plan test.
 */
export function nextAttemptsQuery(appId: number) {
  const first = (store: string, subscription: unknown) => sql`(select d.next_attempt_at from webhook_deliveries d
      where d.store_id = ${sql.ref(store)} and d.subscription_id = ${subscription} and d.status = 'pending'
      order by d.next_attempt_at limit 1)`;
  return sql<{ address: string; next_attempt_at: number | string | null }>`
    select address, min(next_at) as next_attempt_at from (
      select s.address as address, ${first('s.store_id', sql.ref('s.id'))} as next_at
      from webhook_subscriptions s where s.app_id = ${appId}
      union all
      select a.privacy_webhook_url as address, ${first('i.store_id', -appId)} as next_at
      from installations i join apps a on a.id = i.app_id
      where i.app_id = ${appId} and a.privacy_webhook_url is not null
    ) t group by address order by address ${fleetWide('partner-endpoint-health')}`;
}

export class SqlEndpointHealthRepository implements EndpointHealthRepository {
  constructor(private readonly x: Executor) {}

  async hours(appId: number, since: number): Promise<EndpointHourRow[]> {
    const rows = await this.x.k
      .selectFrom('webhook_endpoint_hours')
      .selectAll()
      .where('owner_kind', '=', 'app')
      .where('owner_id', '=', appId)
      .where('hour', '>=', since)
      .orderBy('hour')
      .orderBy('origin')
      .execute();
    // PostgreSQL returns bigints as strings.
    return rows.map((r) => ({
      origin: r.origin,
      hour: Number(r.hour),
      counts: Object.fromEntries(OUTCOME_KINDS.map((k) => [k, Number(r[k])])) as EndpointHourRow['counts'],
      latency: LATENCY.map((c) => Number(r[c])),
    }));
  }

  async breakers(appId: number, limit: number): Promise<BreakerRow[]> {
    const rows = await this.x.k
      .selectFrom('webhook_endpoint_breakers as b')
      .innerJoin('stores as s', 's.id', 'b.store_id')
      .select(['b.origin', 'b.store_id', 's.name as store_name', 'b.state', 'b.failures', 'b.reopen_at', 'b.changed_at'])
      .where('b.owner_kind', '=', 'app')
      .where('b.owner_id', '=', appId)
      .orderBy('b.changed_at', 'desc')
      .orderBy('b.store_id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      origin: r.origin,
      store_id: Number(r.store_id),
      store_name: r.store_name,
      state: r.state as StoredBreakerState,
      failures: Number(r.failures),
      reopen_at: r.reopen_at === null ? null : Number(r.reopen_at),
      changed_at: Number(r.changed_at),
    }));
  }

  async nextAttempts(appId: number): Promise<{ address: string; next_attempt_at: number | null }[]> {
    const rows = await nextAttemptsQuery(appId).execute(this.x.k);
    return rows.rows.map((r) => ({ address: r.address, next_attempt_at: r.next_attempt_at === null ? null : Number(r.next_attempt_at) }));
  }

  async recordBreakerChanges(changes: readonly BreakerChangeRecord[]): Promise<void> {
    // One row per breaker (its latest change), in key order: an upsert may not touch a row twice,
    // and a shared order keeps two workers' writes from deadlocking.
    const latest = new Map<string, BreakerChangeRecord>();
    for (const c of changes) latest.set(JSON.stringify([c.ownerKind, c.ownerId, c.storeId, c.origin]), c);
    const rows = [...latest.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, c]) => ({
        owner_kind: c.ownerKind,
        owner_id: c.ownerId,
        store_id: c.storeId,
        origin: c.origin,
        state: c.state,
        failures: c.failures,
        reopen_at: c.reopenAt,
        changed_at: c.changedAt,
      }));
    if (rows.length === 0) return;
    await this.x.k
      .insertInto('webhook_endpoint_breakers')
      .values(rows)
      .onConflict((oc) =>
        oc
          .columns(['owner_kind', 'owner_id', 'store_id', 'origin'])
          .doUpdateSet({
            state: sql`excluded.state`,
            failures: sql`excluded.failures`,
            reopen_at: sql`excluded.reopen_at`,
            changed_at: sql`excluded.changed_at`,
          })
          .where(sql<boolean>`excluded.changed_at >= webhook_endpoint_breakers.changed_at`),
      )
      .execute();
  }

  async prune(before: number): Promise<number> {
    const hours = await this.x.k.deleteFrom('webhook_endpoint_hours').where('hour', '<', before).executeTakeFirst();
    const breakers = await this.x.k.deleteFrom('webhook_endpoint_breakers').where('changed_at', '<', before).executeTakeFirst();
    return Number(hours.numDeletedRows) + Number(breakers.numDeletedRows);
  }
}
