// The `subscription/disabled` event, written by the statements that record outcomes in the same
// transaction as the disabling itself, so an app is told exactly when one of its subscriptions
// stops and never about one that did not. It goes to wherever the owning app can still be reached
// in that store: one delivery per distinct address among its other active subscriptions there
// (never to the disabled one's own address, which just failed), or, with none, to a public app's
// privacy webhook address. A private app has no such address: its other subscriptions only.
// Each statement names the store, so on the partitioned layout it reads one partition.
import { newEventId, newWebhookId } from '../../domain/webhook-ids.ts';
import { subscriptionDisabledPayload } from '../../domain/subscription-disabled.ts';
import { privacySubscriptionId, SUBSCRIPTION_DISABLED } from '../../domain/webhook-topics.ts';

type Dialect = 'sqlite' | 'postgres';

/** A statement as the outcome writes run it, and the part of its result read here. */
interface Statement {
  sql: string;
  params: unknown[];
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

const placeholders = (dialect: Dialect) => {
  let n = 0;
  return () => (dialect === 'sqlite' ? '?' : `$${++n}`);
};

/** The event and its deliveries for the subscription `subscriptionId` of `storeId`, just disabled at `now` for `reason`. */
export function* disabledNoticeWrites(
  dialect: Dialect,
  input: { storeId: number; subscriptionId: number; reason: string; now: number },
): Generator<Statement, void, StatementResult> {
  let p = placeholders(dialect);
  const found = yield {
    sql: `select s.id, s.owner, s.topic, s.address, s.app_id, s.private_app_id, a.privacy_webhook_url,
        i.id as installation_id, i.uninstalled_at
      from webhook_subscriptions s
      left join apps a on a.id = s.app_id
      left join installations i on i.store_id = s.store_id and i.app_id = s.app_id
      where s.store_id = ${p()} and s.id = ${p()}`,
    params: [input.storeId, input.subscriptionId],
  };
  const sub = found.rows[0] as DisabledRow | undefined;
  if (!sub) return;
  p = placeholders(dialect);
  // The owner's other subscriptions that still receive: an app still installed, a private app not
  // revoked (as the outbox picks recipients); the lowest id stands for each address.
  const others = yield {
    sql: `select min(s.id) as id from webhook_subscriptions s
      left join installations i on i.store_id = s.store_id and i.app_id = s.app_id
      left join private_apps pa on pa.store_id = s.store_id and pa.id = s.private_app_id
      where s.store_id = ${p()} and s.owner = ${p()} and s.id <> ${p()} and s.address <> ${p()} and s.disabled_at is null
        and (s.app_id is null or (i.id is not null and i.uninstalled_at is null))
        and (s.private_app_id is null or (pa.id is not null and pa.revoked_at is null))
      group by s.address
      order by min(s.id)`,
    params: [input.storeId, sub.owner, sub.id, sub.address],
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
  p = placeholders(dialect);
  yield {
    sql: `insert into webhook_events (id, store_id, topic, payload, created_at) values (${p()}, ${p()}, ${p()}, ${p()}, ${p()})`,
    params: [eventId, input.storeId, SUBSCRIPTION_DISABLED, payload, input.now],
  };
  p = placeholders(dialect);
  const rows = targets.map(() => `(${p()}, ${p()}, ${p()}, ${p()}, ${p()}, ${p()}, ${p()}, 'pending', 0, ${p()}, ${p()}, ${p()})`);
  yield {
    sql: `insert into webhook_deliveries (webhook_id, event_id, subscription_id, store_id, app_id, private_app_id, topic, status,
        attempts, next_attempt_at, created_at, updated_at)
      values ${rows.join(', ')}`,
    params: targets.flatMap((t) => [
      newWebhookId(),
      eventId,
      t.subscriptionId,
      input.storeId,
      t.appId,
      t.privateAppId,
      SUBSCRIPTION_DISABLED,
      input.now,
      input.now,
      input.now,
    ]),
  };
}
