// API health on SQLite and PostgreSQL (see ports/api-health.ts). The usage upsert adds in the
// database (`calls = calls + excluded.calls`), so two nodes flushing the same key at once both
// count; rows of a batch are written in key order, so two batches lock shared rows in the same
// order and cannot deadlock on PostgreSQL.
import { sql } from 'kysely';
import type { ApiCallerKind } from '../../domain/api-health.ts';
import type { ApiHealthRepository, ApiUsageDelta, ApiUsageRow, BrownoutRow, RecentCaller } from '../ports/api-health.ts';
import type { Executor } from './executor.ts';

/** Rows per insert: 8 parameters each stays far below either database's parameter limit. */
const BATCH = 500;
const BROWNOUT_COLUMNS = ['id', 'version', 'starts_at', 'ends_at', 'created_at'] as const;

function keyOf(d: ApiUsageDelta): string {
  const id = (n: number) => String(n).padStart(20, '0');
  return [d.callerKind, id(d.callerId), d.version, d.route, id(d.storeId)].join('\u0000');
}

export class SqlApiHealthRepository implements ApiHealthRepository {
  constructor(private readonly x: Executor) {}

  async addUsage(deltas: readonly ApiUsageDelta[]): Promise<void> {
    const sorted = [...deltas].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
    const least = this.x.dialect === 'postgres' ? sql.raw('least') : sql.raw('min');
    const greatest = this.x.dialect === 'postgres' ? sql.raw('greatest') : sql.raw('max');
    for (let i = 0; i < sorted.length; i += BATCH) {
      const rows = sorted.slice(i, i + BATCH).map((d) => ({
        caller_kind: d.callerKind,
        caller_id: d.callerId,
        store_id: d.storeId,
        version: d.version,
        route: d.route,
        calls: d.calls,
        first_seen_at: d.firstSeenAt,
        last_seen_at: d.lastSeenAt,
      }));
      await this.x.k
        .insertInto('api_version_usage')
        .values(rows)
        .onConflict((oc) =>
          oc.columns(['caller_kind', 'caller_id', 'version', 'route', 'store_id']).doUpdateSet({
            calls: sql`api_version_usage.calls + excluded.calls`,
            first_seen_at: sql`${least}(api_version_usage.first_seen_at, excluded.first_seen_at)`,
            last_seen_at: sql`${greatest}(api_version_usage.last_seen_at, excluded.last_seen_at)`,
          }),
        )
        .execute();
    }
  }

  async usage(callerKind: ApiCallerKind | undefined, callerIds?: readonly number[]): Promise<ApiUsageRow[]> {
    if (callerIds !== undefined && callerIds.length === 0) return [];
    let q = this.x.k
      .selectFrom('api_version_usage')
      .select((eb) => [
        'caller_kind',
        'caller_id',
        'version',
        'route',
        eb.fn.sum<number>('calls').as('calls'),
        eb.fn.min<number>('first_seen_at').as('first_seen_at'),
        eb.fn.max<number>('last_seen_at').as('last_seen_at'),
      ])
      .groupBy(['caller_kind', 'caller_id', 'version', 'route'])
      .orderBy('caller_kind')
      .orderBy('caller_id')
      .orderBy('version')
      .orderBy('route');
    if (callerKind !== undefined) q = q.where('caller_kind', '=', callerKind);
    if (callerIds !== undefined) q = q.where('caller_id', 'in', [...callerIds]);
    const rows = await q.execute();
    // PostgreSQL sums bigints as numeric (a string through pg).
    return rows.map((r) => ({
      caller_kind: r.caller_kind as ApiCallerKind,
      caller_id: Number(r.caller_id),
      version: r.version,
      route: r.route,
      calls: Number(r.calls),
      first_seen_at: Number(r.first_seen_at),
      last_seen_at: Number(r.last_seen_at),
    }));
  }

  async callersToNotify(version: string, since: number): Promise<RecentCaller[]> {
    const rows = await this.x.k
      .selectFrom('api_version_usage as u')
      .select((eb) => ['u.caller_kind', 'u.caller_id', 'u.store_id', eb.fn.max<number>('u.last_seen_at').as('last_seen_at')])
      .where('u.version', '=', version)
      .where('u.last_seen_at', '>=', since)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('api_version_notices as n')
              .select('n.caller_id')
              .whereRef('n.caller_kind', '=', 'u.caller_kind')
              .whereRef('n.caller_id', '=', 'u.caller_id')
              .where('n.version', '=', version),
          ),
        ),
      )
      .groupBy(['u.caller_kind', 'u.caller_id', 'u.store_id'])
      .orderBy('u.caller_kind')
      .orderBy('u.caller_id')
      .orderBy('last_seen_at', 'desc')
      .orderBy('u.store_id')
      .execute();
    return rows.map((r) => ({
      caller_kind: r.caller_kind as ApiCallerKind,
      caller_id: Number(r.caller_id),
      store_id: Number(r.store_id),
      last_seen_at: Number(r.last_seen_at),
    }));
  }

  async markNotified(input: {
    callerKind: ApiCallerKind;
    callerId: number;
    version: string;
    storeId: number;
    now: number;
  }): Promise<boolean> {
    const res = await this.x.k
      .insertInto('api_version_notices')
      .values({
        caller_kind: input.callerKind,
        caller_id: input.callerId,
        version: input.version,
        store_id: input.storeId,
        notified_at: input.now,
      })
      .onConflict((oc) => oc.columns(['caller_kind', 'caller_id', 'version']).doNothing())
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  async notices(callerKind: ApiCallerKind, callerId: number): Promise<{ version: string; notified_at: number }[]> {
    const rows = await this.x.k
      .selectFrom('api_version_notices')
      .select(['version', 'notified_at'])
      .where('caller_kind', '=', callerKind)
      .where('caller_id', '=', callerId)
      .orderBy('version')
      .execute();
    return rows.map((r) => ({ version: r.version, notified_at: Number(r.notified_at) }));
  }

  async brownouts(): Promise<BrownoutRow[]> {
    const rows = await this.x.k
      .selectFrom('api_version_brownouts')
      .select(BROWNOUT_COLUMNS)
      .orderBy('version')
      .orderBy('starts_at')
      .execute();
    return rows.map(brownoutRow);
  }

  async insertBrownout(input: { version: string; startsAt: number; endsAt: number; now: number }): Promise<BrownoutRow> {
    const row = await this.x.k
      .insertInto('api_version_brownouts')
      .values({ version: input.version, starts_at: input.startsAt, ends_at: input.endsAt, created_at: input.now })
      .returning(BROWNOUT_COLUMNS)
      .executeTakeFirstOrThrow();
    return brownoutRow(row);
  }

  async deleteBrownout(id: number): Promise<boolean> {
    const res = await this.x.k.deleteFrom('api_version_brownouts').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}

function brownoutRow(r: BrownoutRow): BrownoutRow {
  return {
    id: Number(r.id),
    version: r.version,
    starts_at: Number(r.starts_at),
    ends_at: Number(r.ends_at),
    created_at: Number(r.created_at),
  };
}
