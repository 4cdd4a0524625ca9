// The statement that adds a batch of attempts to the hourly rollup of endpoint health, run in the
// outcomes' own transaction (so a batch is counted exactly when it is recorded). The batch is summed
// first, one row per owner, endpoint and hour, and those rows are upserted in one statement that
// adds to the stored counts, so workers recording at the same moment add up. Rows go in key order,
// so two workers' transactions lock shared rows in the same order and cannot deadlock on
// PostgreSQL; it runs last in the transaction, so those row locks are held only until the commit
// that follows.
import { LATENCY_BOUNDS, hourOf, latencyBucket, latencyCounted, OUTCOME_KINDS, outcomeKind } from '../../domain/endpoint-health.ts';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { defineQuery } from '../prepared-query.ts';
import type { DeliveryOutcome } from '../ports/rows.ts';
import type { Database } from '../schema.ts';
import { type Dialect, rawQuery } from './raw-query.ts';

export const LATENCY_COLUMNS = LATENCY_BOUNDS.map((ms) => `ms_${ms}`);
const KEY_COLUMNS = ['owner_kind', 'owner_id', 'origin', 'hour'];
const COUNT_COLUMNS = [...OUTCOME_KINDS, ...LATENCY_COLUMNS];
const COLUMNS = [...KEY_COLUMNS, ...COUNT_COLUMNS];

const INTO = sql.raw(`insert into webhook_endpoint_hours (${COLUMNS.join(', ')})`);
const CONFLICT = sql.raw(
  `on conflict (${KEY_COLUMNS.join(', ')}) do update set ${COUNT_COLUMNS.map(
    (c) => `${c} = webhook_endpoint_hours.${c} + excluded.${c}`,
  ).join(', ')}`,
);

/**
 * PostgreSQL's upsert, its columns as arrays named `${prefix}0`, `${prefix}1`… (so that another
 * statement can carry it in a WITH clause beside parameters of its own).
 */
export function postgresHourUpsert(p: (name: string) => string, prefix: string): RawBuilder<unknown> {
  const arrays = COLUMNS.map((c, i) => sql`${p(`${prefix}${i}`)}::${sql.raw(c === 'owner_kind' || c === 'origin' ? 'text' : 'bigint')}[]`);
  return sql`${INTO} select * from unnest(${sql.join(arrays)}) ${CONFLICT}`;
}

/** The upsert of a batch's rollup rows, compiled once for one database. */
export function endpointHourQuery(k: Kysely<Database>, dialect: Dialect) {
  return defineQuery<Record<string, unknown>>((p) => {
    if (dialect === 'sqlite') {
      // `where true`: SQLite needs it to read an upsert's ON CONFLICT after a SELECT.
      const values = sql.raw(COLUMNS.map((_, i) => `value ->> ${i}`).join(', '));
      return rawQuery(k, sql`${INTO} select ${values} from json_each(${p('rows')}) where true ${CONFLICT}`);
    }
    return rawQuery(k, postgresHourUpsert(p, 'c'));
  });
}

/** The rollup rows of a batch: one per owner, endpoint and hour, in key order. */
export function endpointHourRows(batch: readonly DeliveryOutcome[]): unknown[][] {
  const rows = new Map<string, unknown[]>();
  for (const o of batch) {
    if (o.cancelled !== undefined || !o.endpoint) continue;
    const { ownerKind, ownerId, origin } = o.endpoint;
    const hour = hourOf(o.attempt.attemptedAt);
    const key = `${ownerKind}\u0000${String(ownerId).padStart(20, '0')}\u0000${origin}\u0000${String(hour).padStart(20, '0')}`;
    let row = rows.get(key);
    if (!row) rows.set(key, (row = [ownerKind, ownerId, origin, hour, ...COUNT_COLUMNS.map(() => 0)]));
    const kind = outcomeKind(o.attempt);
    const add = (column: number) => {
      row[column] = (row[column] as number) + 1;
    };
    add(KEY_COLUMNS.length + OUTCOME_KINDS.indexOf(kind));
    if (latencyCounted(kind)) add(KEY_COLUMNS.length + OUTCOME_KINDS.length + latencyBucket(o.attempt.latencyMs));
  }
  return [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
}

/** The parameters of the upsert for `batch`; undefined when the batch holds no counted attempt. */
export function endpointHourParams(dialect: Dialect, batch: readonly DeliveryOutcome[]): Record<string, unknown> | undefined {
  const rows = endpointHourRows(batch);
  if (rows.length === 0) return undefined;
  if (dialect === 'sqlite') return { rows: JSON.stringify(rows) };
  return postgresHourParams(rows, 'c');
}

/** The columns of `rows` as postgresHourUpsert takes them (empty arrays for no rows). */
export function postgresHourParams(rows: unknown[][], prefix: string): Record<string, unknown> {
  return Object.fromEntries(COLUMNS.map((_, c) => [`${prefix}${c}`, rows.map((r) => r[c])]));
}
