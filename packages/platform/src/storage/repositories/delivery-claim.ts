// The statements of a claim: the claim itself, which returns the claimed delivery rows, then one
// read of their events (one row per event, however many subscriptions it goes to) and one read of
// their owners (subscription, app or private app, installation, store: one row per distinct
// subscription and owner). Joining all of it per delivery would read the same event payload and
// the same owner once for every delivery; a batch of deliveries mostly shares a few of each.
// Each SQL text is the same for every claim (lists go in as one JSON array on SQLite, as arrays on
// PostgreSQL), so it is compiled and planned once. On PostgreSQL the events read also names its ids
// as `id = any(array)`, for the planner's sake (see delivery-outcomes.ts).
import type { ClaimedDelivery } from '../ports.ts';

type Dialect = 'sqlite' | 'postgres';

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

const RETURNED =
  'id, store_id, webhook_id, event_id, topic, subscription_id, attempts, app_id, private_app_id, include_fields, next_attempt_at, replayed_at';

const OWNER_COLUMNS = `v.store_id, v.subscription_id, v.app_id, v.private_app_id, st.name as store_name,
  s.id as sub_id, s.address, s.api_version, s.disabled_at, s.enabled_at,
  a.client_secret_enc, a.webhook_signature_ed25519, a.privacy_webhook_url, a.previous_secret_enc, a.previous_secret_expires_at,
  i.id as installation_id, i.uninstalled_at, i.installed_at, i.scopes as installation_scopes,
  p.id as private_id, p.webhook_secret_enc, p.previous_webhook_secret_enc, p.previous_webhook_secret_expires_at,
  p.revoked_at, p.scopes as private_scopes`;

// Every owner table is joined within the delivery's store.
const OWNER_JOINS = `join stores st on st.id = v.store_id
  left join webhook_subscriptions s on s.store_id = v.store_id and s.id = v.subscription_id
  left join apps a on a.id = v.app_id
  left join installations i on i.store_id = v.store_id and i.app_id = v.app_id
  left join private_apps p on p.store_id = v.store_id and p.id = v.private_app_id`;

export const CLAIM_SQL = {
  // `status = 'pending'` is written out so that SQLite can use the partial index.
  sqlite: {
    claim: `update webhook_deliveries set claimed_by = ?, claimed_until = ?
      where id in (
        select id from webhook_deliveries
        where status = 'pending' and next_attempt_at <= ? and (claimed_until is null or claimed_until < ?)
          and subscription_id not in (select value from json_each(?))
        order by next_attempt_at, id
        limit ?
      )
      returning ${RETURNED} /* fleet-wide: webhook-claim */`,
    events: `select e.id, e.store_id, e.payload, e.created_at as event_at
      from json_each(?) v join webhook_events e on e.store_id = v.value ->> 0 and e.id = v.value ->> 1
      /* fleet-wide: webhook-claim-load */`,
    owners: `with v (store_id, subscription_id, app_id, private_app_id) as (
        select value ->> 0, value ->> 1, value ->> 2, value ->> 3 from json_each(?)
      )
      select ${OWNER_COLUMNS} from v ${OWNER_JOINS} /* fleet-wide: webhook-claim-load */`,
  },
  postgres: {
    claim: `update webhook_deliveries set claimed_by = $1, claimed_until = $2
      where id in (
        select id from webhook_deliveries
        where status = 'pending' and next_attempt_at <= $3 and (claimed_until is null or claimed_until < $3)
          and not (subscription_id = any($4::bigint[]))
        order by next_attempt_at, id
        limit $5
        for update skip locked
      )
      returning ${RETURNED} /* fleet-wide: webhook-claim */`,
    events: `select e.id, e.store_id, e.payload, e.created_at as event_at
      from unnest($1::bigint[], $2::text[]) as v (store_id, id) join webhook_events e on e.store_id = v.store_id and e.id = v.id
      where e.id = any($2::text[])
      /* fleet-wide: webhook-claim-load */`,
    owners: `select ${OWNER_COLUMNS}
      from unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[]) as v (store_id, subscription_id, app_id, private_app_id)
      ${OWNER_JOINS} /* fleet-wide: webhook-claim-load */`,
  },
} as const;

export function claimParams(dialect: Dialect, c: ClaimParams): unknown[] {
  if (dialect === 'sqlite') return [c.worker, c.leaseUntil, c.now, c.now, JSON.stringify(c.excludeSubscriptions), c.limit];
  return [c.worker, c.leaseUntil, c.now, [...c.excludeSubscriptions], c.limit];
}

const eventKey = (store: number, id: string) => `${store}\n${id}`;
const ownerKey = (r: Pick<ClaimedRow, 'store_id' | 'subscription_id' | 'app_id' | 'private_app_id'>) =>
  `${r.store_id}\n${r.subscription_id}\n${r.app_id}\n${r.private_app_id}`;

function tuples(dialect: Dialect, rows: unknown[][], columns: number): unknown[] {
  if (dialect === 'sqlite') return [JSON.stringify(rows)];
  return Array.from({ length: columns }, (_, c) => rows.map((r) => r[c]));
}

/** The parameters of the events read and the owners read for the claimed rows. */
export function loadParams(dialect: Dialect, claimed: readonly ClaimedRow[]): { events: unknown[]; owners: unknown[] } {
  const events = new Map<string, unknown[]>();
  const owners = new Map<string, unknown[]>();
  for (const r of claimed) {
    events.set(eventKey(r.store_id, r.event_id), [r.store_id, r.event_id]);
    owners.set(ownerKey(r), [r.store_id, r.subscription_id, r.app_id, r.private_app_id]);
  }
  return { events: tuples(dialect, [...events.values()], 2), owners: tuples(dialect, [...owners.values()], 4) };
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
