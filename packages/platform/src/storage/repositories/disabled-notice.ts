// The `subscription/disabled` event, written by the statements that record outcomes in the same
// transaction as the disabling itself, so an app is told exactly when one of its subscriptions
// stops and never about one that did not. It goes to wherever the owning app can still be reached
// in that store: one delivery per distinct address among its other active subscriptions there
// (never to the disabled one's own address, which just failed), or, with none, to a public app's
// privacy webhook address. A private app has no such address: its other subscriptions only.
// Each statement names the store, so on the partitioned layout it reads one partition.
import { type Kysely, sql } from 'kysely';
import { newEventId, newWebhookId } from '../../domain/webhook-ids.ts';
import { subscriptionDisabledPayload } from '../../domain/subscription-disabled.ts';
import { privacySubscriptionId, SUBSCRIPTION_DISABLED } from '../../domain/webhook-topics.ts';
import { defineQuery, type PreparedQuery } from '../prepared-query.ts';
import type { Database } from '../schema.ts';
import { type Dialect, rawQuery } from './raw-query.ts';

/** A statement as the outcome writes run it, and the part of its result read here. */
interface Statement {
  query: PreparedQuery<Record<string, unknown>>;
  params: Record<string, unknown>;
  reads?: boolean;
}
interface StatementResult {
  rows: Record<string, unknown>[];
}

interface DisabledRow {
  id: number;
  owner: string;
  topic: string;
  address: string;
  app_id: number | null;
  private_app_id: number | null;
  privacy_webhook_url: string | null;
  installation_id: number | null;
  uninstalled_at: number | null;
}

interface Target {
  subscriptionId: number;
  appId: number | null;
  privateAppId: number | null;
}

type Row = Record<string, unknown>;

/** The notice's statements, compiled once for one database. */
export function noticeQueries(k: Kysely<Database>, dialect: Dialect) {
  const q = (build: (p: (name: string) => string) => ReturnType<typeof sql<Row>>) =>
    defineQuery<Row>((p) =>
      rawQuery(
        k,
        build((name) => p(name)),
      ),
    );
  // The deliveries' own columns: one JSON array of [webhook_id, subscription_id, app_id, private_app_id]
  // rows on SQLite, one array per column on PostgreSQL.
  const targets =
    dialect === 'sqlite'
      ? (p: (name: string) => string) =>
          sql`select value ->> 0 as webhook_id, value ->> 1 as subscription_id, value ->> 2 as app_id, value ->> 3 as private_app_id
            from json_each(${p('rows')})`
      : (p: (name: string) => string) =>
          sql`select * from unnest(${p('c0')}::text[], ${p('c1')}::bigint[], ${p('c2')}::bigint[], ${p('c3')}::bigint[])
            as v (webhook_id, subscription_id, app_id, private_app_id)`;
  const typed = (p: (name: string) => string, name: string, type: 'text' | 'bigint') =>
    dialect === 'sqlite' ? sql`${p(name)}` : sql`cast(${p(name)} as ${sql.raw(type)})`;
  return {
    noticeSubscription: q(
      (p) => sql`select s.id, s.owner, s.topic, s.address, s.app_id, s.private_app_id, a.privacy_webhook_url,
          i.id as installation_id, i.uninstalled_at
        from webhook_subscriptions s
        left join apps a on a.id = s.app_id
        left join installations i on i.store_id = s.store_id and i.app_id = s.app_id
        where s.store_id = ${p('store')} and s.id = ${p('subscription')}`,
    ),
    // The owner's other subscriptions that still receive: an app still installed, a private app not
    // revoked (as the outbox picks recipients); the lowest id stands for each address.
    noticeTargets: q(
      (p) => sql`select min(s.id) as id from webhook_subscriptions s
        left join installations i on i.store_id = s.store_id and i.app_id = s.app_id
        left join private_apps pa on pa.store_id = s.store_id and pa.id = s.private_app_id
        where s.store_id = ${p('store')} and s.owner = ${p('owner')} and s.id <> ${p('subscription')} and s.address <> ${p('address')}
          and s.disabled_at is null
          and (s.app_id is null or (i.id is not null and i.uninstalled_at is null))
          and (s.private_app_id is null or (pa.id is not null and pa.revoked_at is null))
        group by s.address
        order by min(s.id)`,
    ),
    noticeEvent: q(
      (p) => sql`insert into webhook_events (id, store_id, topic, payload, created_at)
        values (${p('event')}, ${p('store')}, ${p('topic')}, ${p('payload')}, ${p('now')})`,
    ),
    noticeDeliveries: q(
      (p) => sql`insert into webhook_deliveries (webhook_id, event_id, subscription_id, store_id, app_id, private_app_id, topic, status,
          attempts, next_attempt_at, created_at, updated_at)
        select t.webhook_id, ${typed(p, 'event', 'text')}, t.subscription_id, ${typed(p, 'store', 'bigint')}, t.app_id, t.private_app_id,
          ${typed(p, 'topic', 'text')}, 'pending', 0, ${typed(p, 'now', 'bigint')}, ${typed(p, 'now', 'bigint')},
          ${typed(p, 'now', 'bigint')}
        from (${targets(p)}) t`,
    ),
  };
}

/** The event and its deliveries for the subscription `subscriptionId` of `storeId`, just disabled at `now` for `reason`. */
export function* disabledNoticeWrites(
  q: ReturnType<typeof noticeQueries>,
  dialect: Dialect,
  input: { storeId: number; subscriptionId: number; reason: string; now: number },
): Generator<Statement, void, StatementResult> {
  const found = yield { query: q.noticeSubscription, params: { store: input.storeId, subscription: input.subscriptionId }, reads: true };
  const sub = found.rows[0] as DisabledRow | undefined;
  if (!sub) return;
  const others = yield {
    query: q.noticeTargets,
    params: { store: input.storeId, owner: sub.owner, subscription: sub.id, address: sub.address },
    reads: true,
  };
  let targets: Target[] = others.rows.map((r) => ({
    subscriptionId: Number(r.id),
    appId: sub.app_id,
    privateAppId: sub.private_app_id,
  }));
  if (targets.length === 0) {
    const installed = sub.installation_id !== null && sub.uninstalled_at === null;
    if (sub.app_id === null || !installed || !sub.privacy_webhook_url || sub.privacy_webhook_url === sub.address) return;
    targets = [{ subscriptionId: privacySubscriptionId(sub.app_id), appId: sub.app_id, privateAppId: null }];
  }
  const eventId = newEventId();
  const payload = JSON.stringify(subscriptionDisabledPayload(sub, input.reason, input.now));
  const shared = { event: eventId, store: input.storeId, topic: SUBSCRIPTION_DISABLED, now: input.now };
  yield { query: q.noticeEvent, params: { ...shared, payload } };
  const rows = targets.map((t) => [newWebhookId(), t.subscriptionId, t.appId, t.privateAppId]);
  const columns =
    dialect === 'sqlite' ? { rows: JSON.stringify(rows) } : Object.fromEntries([0, 1, 2, 3].map((c) => [`c${c}`, rows.map((r) => r[c])]));
  yield { query: q.noticeDeliveries, params: { ...shared, ...columns } };
}
