// The statements of a claim: the claim itself, which inserts a lease (webhook_delivery_leases) for
// each delivery it takes, leaving the delivery row as it is, and returns the claimed delivery rows
// (on SQLite read by a second statement); then one read of their events (one row per event,
// however many subscriptions it goes to) and one read of their owners (subscription, app or
// private app, installation, store: one row per distinct subscription and owner). Joining all of
// it per delivery would read the same event payload and the same owner once for every delivery; a
// batch of deliveries mostly shares a few of each.
// Each SQL text is the same for every claim (lists go in as one JSON array on SQLite, as arrays on
// PostgreSQL), so it is compiled and planned once. On PostgreSQL the events read also names its ids
// as `id = any(array)`, for the planner's sake (see delivery-outcomes.ts).
import { type Kysely, sql } from 'kysely';
import { fleetWide } from '../fleet-wide.ts';
import { defineQuery } from '../prepared-query.ts';
import type { ClaimedDelivery } from '../ports/rows.ts';
import type { Database } from '../schema.ts';
import { type Dialect, listParam, rawQuery } from './raw-query.ts';

export interface ClaimParams {
  worker: string;
  now: number;
  leaseUntil: number;
  limit: number;
  excludeSubscriptions: readonly number[];
}

/** A delivery row as the claim returns it. */
export type ClaimedRow = Pick<
  ClaimedDelivery,
  | 'id'
  | 'store_id'
  | 'webhook_id'
  | 'event_id'
  | 'topic'
  | 'subscription_id'
  | 'attempts'
  | 'app_id'
  | 'private_app_id'
  | 'include_fields'
  | 'replayed_at'
> & { next_attempt_at: number };

export interface EventRow {
  id: string;
  store_id: number;
  payload: string;
  event_at: number;
}

export type OwnerRow = Omit<ClaimedDelivery, keyof ClaimedRow | 'payload' | 'event_at'> & {
  store_id: number;
  subscription_id: number;
  app_id: number | null;
  private_app_id: number | null;
};

const RETURNED = sql.raw(
  'id, store_id, webhook_id, event_id, topic, subscription_id, attempts, app_id, private_app_id, include_fields, next_attempt_at, ' +
    'replayed_at',
);

const OWNER_COLUMNS = sql.raw(`v.store_id, v.subscription_id, v.app_id, v.private_app_id, st.name as store_name,
  s.id as sub_id, s.address, s.api_version, s.disabled_at, s.enabled_at,
  a.client_secret_enc, a.webhook_signature_ed25519, a.privacy_webhook_url, a.previous_secret_enc, a.previous_secret_expires_at,
  i.id as installation_id, i.uninstalled_at, i.installed_at, i.scopes as installation_scopes,
  p.id as private_id, p.webhook_secret_enc, p.previous_webhook_secret_enc, p.previous_webhook_secret_expires_at,
  p.revoked_at, p.scopes as private_scopes`);

// Every owner table is joined within the delivery's store.
const OWNER_JOINS = sql.raw(`join stores st on st.id = v.store_id
  left join webhook_subscriptions s on s.store_id = v.store_id and s.id = v.subscription_id
  left join apps a on a.id = v.app_id
  left join installations i on i.store_id = v.store_id and i.app_id = v.app_id
  left join private_apps p on p.store_id = v.store_id and p.id = v.private_app_id`);

/** The claim's parameters as its statement takes them (`exclude`: see listParam). */
export type ClaimQueryParams = {
  worker: string;
  leaseUntil: number;
  now: number;
  exclude: unknown;
  limit: number;
};

/** The loads' parameters: one column list per tuple member on PostgreSQL, one JSON array of tuples on SQLite. */
export type LoadQueryParams = {
  rows: unknown;
  c0: unknown;
  c1: unknown;
  c2: unknown;
  c3: unknown;
};

export function claimQueries(k: Kysely<Database>, dialect: Dialect) {
  if (dialect === 'sqlite') {
    return {
      // Two statements: the lease taken (one statement, so nothing comes between the pick and the
      // take), then the rows read. `status = 'pending'` is written out so that SQLite can use the
      // partial index. A lapsed lease is the only one the pick can meet, so a conflict takes it over.
      take: defineQuery<{ id: number }>((p) =>
        rawQuery(
          k,
          sql<{ id: number }>`insert into webhook_delivery_leases (delivery_id, store_id, worker, leased_until)
            select id, store_id, ${p('worker')}, ${p('leaseUntil')} from webhook_deliveries
            where status = 'pending' and next_attempt_at <= ${p('now')}
              and not exists (select 1 from webhook_delivery_leases l
                where l.delivery_id = webhook_deliveries.id and l.leased_until >= ${p('now')})
              and subscription_id not in (select value from json_each(${p('exclude')}))
            order by next_attempt_at, id
            limit ${p('limit')}
            on conflict (delivery_id) do update set worker = excluded.worker, leased_until = excluded.leased_until
            returning delivery_id as id ${fleetWide('webhook-claim')}`,
        ),
      ),
      taken: defineQuery<ClaimedRow>((p) =>
        rawQuery(
          k,
          sql<ClaimedRow>`select ${RETURNED} from webhook_deliveries where id in (select value from json_each(${p('ids')}))
            ${fleetWide('webhook-claim')}`,
        ),
      ),
      claim: undefined,
      events: defineQuery<EventRow>((p) =>
        rawQuery(
          k,
          sql<EventRow>`select e.id, e.store_id, e.payload, e.created_at as event_at
            from json_each(${p('rows')}) v join webhook_events e on e.store_id = v.value ->> 0 and e.id = v.value ->> 1
            ${fleetWide('webhook-claim-load')}`,
        ),
      ),
      owners: defineQuery<OwnerRow>((p) =>
        rawQuery(
          k,
          sql<OwnerRow>`with v (store_id, subscription_id, app_id, private_app_id) as (
              select value ->> 0, value ->> 1, value ->> 2, value ->> 3 from json_each(${p('rows')})
            )
            select ${OWNER_COLUMNS} from v ${OWNER_JOINS} ${fleetWide('webhook-claim-load')}`,
        ),
      ),
    };
  }
  return {
    take: undefined,
    taken: undefined,
    // One statement: the rows picked and locked once, in a materialized CTE (as a subquery the
    // planner is free to run the pick again for another outer row, and each run skips what a
    // concurrent claim locked meanwhile), then their leases inserted, a lapsed lease taken over.
    // The delivery rows are locked, never updated. The lock keeps two claims from picking the same
    // row at once; the lease's key settles what the lock cannot see: a claim whose snapshot missed
    // a lease committed just before meets it on insert, where only a lapsed lease is taken over.
    claim: defineQuery<ClaimedRow>((p) =>
      rawQuery(
        k,
        sql<ClaimedRow>`with picked as materialized (
            select ${RETURNED} from webhook_deliveries d
            where d.status = 'pending' and d.next_attempt_at <= ${p('now')}
              and not exists (select 1 from webhook_delivery_leases l
                where l.delivery_id = d.id and l.store_id = d.store_id and l.leased_until >= ${p('now')})
              and not (d.subscription_id = any(${p('exclude')}::bigint[]))
            order by d.next_attempt_at, d.id
            limit ${p('limit')}
            for update of d skip locked
          ),
          leased as (
            insert into webhook_delivery_leases (delivery_id, store_id, worker, leased_until)
            select id, store_id, ${p('worker')}::text, ${p('leaseUntil')}::bigint from picked
            on conflict on constraint webhook_delivery_leases_pkey
              do update set worker = excluded.worker, leased_until = excluded.leased_until
              where webhook_delivery_leases.leased_until < ${p('now')}
            returning delivery_id
          )
          select ${RETURNED} from picked where id in (select delivery_id from leased) ${fleetWide('webhook-claim')}`,
      ),
    ),
    events: defineQuery<EventRow>((p) =>
      rawQuery(
        k,
        sql<EventRow>`select e.id, e.store_id, e.payload, e.created_at as event_at
          from unnest(${p('c0')}::bigint[], ${p('c1')}::text[]) as v (store_id, id)
          join webhook_events e on e.store_id = v.store_id and e.id = v.id
          where e.id = any(${p('c1')}::text[])
          ${fleetWide('webhook-claim-load')}`,
      ),
    ),
    owners: defineQuery<OwnerRow>((p) =>
      rawQuery(
        k,
        sql<OwnerRow>`select ${OWNER_COLUMNS}
          from unnest(${p('c0')}::bigint[], ${p('c1')}::bigint[], ${p('c2')}::bigint[], ${p('c3')}::bigint[])
            as v (store_id, subscription_id, app_id, private_app_id)
          ${OWNER_JOINS} ${fleetWide('webhook-claim-load')}`,
      ),
    ),
  };
}

export type ClaimQueries = ReturnType<typeof claimQueries>;

export function claimParams(dialect: Dialect, c: ClaimParams): ClaimQueryParams {
  return { worker: c.worker, leaseUntil: c.leaseUntil, now: c.now, exclude: listParam(dialect, c.excludeSubscriptions), limit: c.limit };
}

const eventKey = (store: number, id: string) => `${store}\n${id}`;
const ownerKey = (r: Pick<ClaimedRow, 'store_id' | 'subscription_id' | 'app_id' | 'private_app_id'>) =>
  `${r.store_id}\n${r.subscription_id}\n${r.app_id}\n${r.private_app_id}`;

function tuples(dialect: Dialect, rows: unknown[][]): LoadQueryParams {
  const column = (c: number) => (dialect === 'sqlite' ? null : rows.map((r) => r[c]));
  return { rows: dialect === 'sqlite' ? JSON.stringify(rows) : null, c0: column(0), c1: column(1), c2: column(2), c3: column(3) };
}

/** The parameters of the events read and the owners read for the claimed rows. */
export function loadParams(dialect: Dialect, claimed: readonly ClaimedRow[]): { events: LoadQueryParams; owners: LoadQueryParams } {
  const events = new Map<string, unknown[]>();
  const owners = new Map<string, unknown[]>();
  for (const r of claimed) {
    events.set(eventKey(r.store_id, r.event_id), [r.store_id, r.event_id]);
    owners.set(ownerKey(r), [r.store_id, r.subscription_id, r.app_id, r.private_app_id]);
  }
  return { events: tuples(dialect, [...events.values()]), owners: tuples(dialect, [...owners.values()]) };
}

/**
 * The claimed deliveries with their event and owner, oldest first. A delivery whose event or store
 * is gone has nothing to send: it is left out, as a join would leave it out.
 */
export function assemble(claimed: readonly ClaimedRow[], events: readonly EventRow[], owners: readonly OwnerRow[]): ClaimedDelivery[] {
  const eventBy = new Map(events.map((e) => [eventKey(e.store_id, e.id), e]));
  const ownerBy = new Map(owners.map((o) => [ownerKey(o), o]));
  const out: ClaimedDelivery[] = [];
  for (const r of [...claimed].sort((a, b) => a.next_attempt_at - b.next_attempt_at || a.id - b.id)) {
    const e = eventBy.get(eventKey(r.store_id, r.event_id));
    const o = ownerBy.get(ownerKey(r));
    if (!e || !o) continue;
    out.push({
      id: r.id,
      store_id: r.store_id,
      webhook_id: r.webhook_id,
      event_id: r.event_id,
      topic: r.topic,
      subscription_id: r.subscription_id,
      attempts: r.attempts,
      app_id: r.app_id,
      private_app_id: r.private_app_id,
      replayed_at: r.replayed_at,
      payload: e.payload,
      include_fields: r.include_fields,
      event_at: e.event_at,
      store_name: o.store_name,
      sub_id: o.sub_id,
      address: o.address,
      api_version: o.api_version,
      disabled_at: o.disabled_at,
      enabled_at: o.enabled_at,
      client_secret_enc: o.client_secret_enc,
      webhook_signature_ed25519: o.webhook_signature_ed25519,
      privacy_webhook_url: o.privacy_webhook_url,
      previous_secret_enc: o.previous_secret_enc,
      previous_secret_expires_at: o.previous_secret_expires_at,
      installation_id: o.installation_id,
      uninstalled_at: o.uninstalled_at,
      installed_at: o.installed_at,
      installation_scopes: o.installation_scopes,
      private_id: o.private_id,
      webhook_secret_enc: o.webhook_secret_enc,
      previous_webhook_secret_enc: o.previous_webhook_secret_enc,
      previous_webhook_secret_expires_at: o.previous_webhook_secret_expires_at,
      revoked_at: o.revoked_at,
      private_scopes: o.private_scopes,
    });
  }
  return out;
}
