// Webhook subscriptions, the outbox (events and their deliveries, written with the change that
// caused them), and the delivery log read by the CLI and the partner dashboard.
import { sql } from 'kysely';
import type { WebhookTopic } from '../../domain/webhook-topics.ts';
import type { KeysetSource } from '../ports/keyset-source.ts';
import type {
  AttemptRow,
  DeliveryLogRow,
  DeliveryStatus,
  DisabledSubscriptionRow,
  NewDelivery,
  NewSubscription,
  PartnerDeliveryDetailRow,
  PartnerDeliveryRow,
  PrivacyRecipient,
  Recipient,
  SubscriptionRow,
} from '../ports/rows.ts';
import type { SubscriptionChange, WebhookRepository } from '../ports/webhook-records.ts';
import type { WriteGuard } from '../ports/write-condition.ts';
import { refusingDuplicates } from '../unique-violation.ts';
import type { Executor } from './executor.ts';
import { SqlKeysetSource } from './keyset.ts';
import { fleetWide } from '../fleet-wide.ts';
import { pruneWebhookLog } from './webhook-prune.ts';
import { guarded } from './write-guard.ts';
import { addressOf, SUBSCRIPTION_COLUMNS, subscriptionOf } from './webhook-columns.ts';
import { FRESH_START, releaseLeases, requeued } from './webhook-recovery-repository.ts';

// What the logs show of an attempt; the store is the delivery's, shown with it.
const ATTEMPT_COLUMNS = ['id', 'delivery_id', 'attempted_at', 'status_code', 'latency_ms', 'response_body', 'error'] as const;

export class SqlWebhookRepository implements WebhookRepository {
  constructor(private readonly x: Executor) {}

  private get k() {
    return this.x.k;
  }

  subscriptions(): KeysetSource<SubscriptionRow> {
    return new SqlKeysetSource<SubscriptionRow>(this.x, 'webhook_subscriptions');
  }

  findSubscription(storeId: number, owner: string, id: number): Promise<SubscriptionRow | undefined> {
    return this.k
      .selectFrom('webhook_subscriptions')
      .select([...SUBSCRIPTION_COLUMNS])
      .where('store_id', '=', storeId)
      .where('owner', '=', owner)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async subscriptionExists(storeId: number, owner: string, topic: string, address: string): Promise<boolean> {
    const row = await this.k
      .selectFrom('webhook_subscriptions')
      .select('id')
      .where('store_id', '=', storeId)
      .where('owner', '=', owner)
      .where('topic', '=', topic)
      .where('address', '=', address)
      .executeTakeFirst();
    return row !== undefined;
  }

  insertSubscription(input: NewSubscription): Promise<SubscriptionRow> {
    return refusingDuplicates('webhook_subscriptions', () =>
      this.k
        .insertInto('webhook_subscriptions')
        .values({ filter: null, include_fields: null, ...input, disabled_at: null })
        .returning([...SUBSCRIPTION_COLUMNS])
        .executeTakeFirstOrThrow(),
    );
  }

  updateSubscription(storeId: number, id: number, v: SubscriptionChange, guard?: WriteGuard): Promise<SubscriptionRow | undefined> {
    const { enable: _enable, ...values } = v;
    const set = { ...values, version: sql<number>`version + 1` };
    const update = this.k.updateTable('webhook_subscriptions').set(v.enable ? { ...set, ...FRESH_START } : set);
    const where = guarded(update.where('store_id', '=', storeId).where('id', '=', id), guard);
    return refusingDuplicates('webhook_subscriptions', () => where.returning([...SUBSCRIPTION_COLUMNS]).executeTakeFirst());
  }

  async deleteSubscription(storeId: number, id: number, guard?: WriteGuard): Promise<boolean> {
    const remove = this.k.deleteFrom('webhook_subscriptions').where('store_id', '=', storeId).where('id', '=', id);
    return Number((await guarded(remove, guard).executeTakeFirst()).numDeletedRows) > 0;
  }

  async countSubscriptions(storeId: number, owner: string): Promise<number> {
    const row = await this.k
      .selectFrom('webhook_subscriptions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('store_id', '=', storeId)
      .where('owner', '=', owner)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async countTopicSubscriptions(storeId: number, topic: string, owner: string): Promise<{ owner: number; store: number }> {
    const row = await this.k
      .selectFrom('webhook_subscriptions')
      .select((eb) => [
        eb.fn.countAll<number>().as('store'),
        eb.fn.sum<number | null>(eb.case().when('owner', '=', owner).then(1).else(0).end()).as('owner'),
      ])
      .where('store_id', '=', storeId)
      .where('topic', '=', topic)
      .executeTakeFirstOrThrow();
    return { owner: Number(row.owner ?? 0), store: Number(row.store) };
  }

  async removeSubscriptions(input: {
    storeId: number;
    appId: number;
    topics: readonly WebhookTopic[];
    reason: string;
    now: number;
  }): Promise<number> {
    if (input.topics.length === 0) return 0;
    const topics = [...input.topics];
    await this.k
      .updateTable('webhook_deliveries')
      .set({ status: 'cancelled', last_error: input.reason, updated_at: input.now })
      .where('store_id', '=', input.storeId)
      .where('app_id', '=', input.appId)
      .where('status', '=', 'pending')
      .where('topic', 'in', topics)
      .execute();
    const res = await this.k
      .deleteFrom('webhook_subscriptions')
      .where('store_id', '=', input.storeId)
      .where('app_id', '=', input.appId)
      .where('topic', 'in', topics)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  recipients(storeId: number, topic: WebhookTopic, uninstalledAppId?: number): Promise<Recipient[]> {
    const { outbox, runner } = this.x;
    return uninstalledAppId === undefined
      ? runner.all(outbox.recipients, { store: storeId, topic })
      : runner.all(outbox.appRecipients, { store: storeId, topic, app: uninstalledAppId });
  }

  async insertEvent(
    event: { id: string; storeId: number; topic: WebhookTopic; payload: string; now: number; dueAt?: number },
    deliveries: NewDelivery[],
  ): Promise<void> {
    if (deliveries.length === 0) return;
    const { outbox, runner } = this.x;
    const now = event.now;
    await runner.run(outbox.insertEvent, { id: event.id, store: event.storeId, topic: event.topic, payload: event.payload, now });
    const common = { event: event.id, store: event.storeId, topic: event.topic, due: event.dueAt ?? now, now };
    await runner.run(
      outbox.insertDeliveries,
      this.x.dialect === 'sqlite'
        ? {
            ...common,
            rows: JSON.stringify(deliveries.map((d) => [d.webhookId, d.subscriptionId, d.appId, d.privateAppId, d.includeFields ?? null])),
          }
        : {
            ...common,
            webhookIds: deliveries.map((d) => d.webhookId),
            subscriptionIds: deliveries.map((d) => d.subscriptionId),
            appIds: deliveries.map((d) => d.appId),
            privateAppIds: deliveries.map((d) => d.privateAppId),
            includeFields: deliveries.map((d) => d.includeFields ?? null),
          },
    );
    this.x.deliveriesQueued();
  }

  privacyRecipients(storeId: number): Promise<PrivacyRecipient[]> {
    return this.k
      .selectFrom('installations as i')
      .innerJoin('apps as a', 'a.id', 'i.app_id')
      .select(['i.app_id', 'i.scopes'])
      .where('i.store_id', '=', storeId)
      .where('i.uninstalled_at', 'is', null)
      .where('a.privacy_webhook_url', 'is not', null)
      .orderBy('i.app_id')
      .execute();
  }

  async cancelPendingTopic(input: { storeId: number; appId: number; topic: WebhookTopic; reason: string; now: number }): Promise<number> {
    const res = await this.k
      .updateTable('webhook_deliveries')
      .set({ status: 'cancelled', last_error: input.reason, updated_at: input.now })
      .where('store_id', '=', input.storeId)
      .where('app_id', '=', input.appId)
      .where('status', '=', 'pending')
      .where('topic', '=', input.topic)
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  async cancelPending(storeId: number, appId: number, reason: string, now: number): Promise<void> {
    await this.k
      .updateTable('webhook_deliveries')
      .set({ status: 'cancelled', last_error: reason, updated_at: now })
      .where('store_id', '=', storeId)
      .where('app_id', '=', appId)
      .where('status', '=', 'pending')
      .where('topic', '!=', 'app/uninstalled')
      .execute();
  }

  async appIdByClientId(clientId: string): Promise<number | undefined> {
    return (await this.k.selectFrom('apps').select('id').where('client_id', '=', clientId).executeTakeFirst())?.id;
  }

  async storeIdByName(name: string): Promise<number | undefined> {
    return (await this.k.selectFrom('stores').select('id').where('name', '=', name).executeTakeFirst())?.id;
  }

  listDeliveries(filter: {
    appId?: number | undefined;
    storeId?: number | undefined;
    status?: DeliveryStatus | undefined;
    id?: number | undefined;
    limit: number;
  }): Promise<DeliveryLogRow[]> {
    let q = this.k
      .selectFrom('webhook_deliveries as d')
      .innerJoin('stores as st', 'st.id', 'd.store_id')
      .leftJoin('apps as a', 'a.id', 'd.app_id')
      .leftJoin('webhook_subscriptions as s', (j) => j.onRef('s.store_id', '=', 'd.store_id').onRef('s.id', '=', 'd.subscription_id'))
      .select([
        'd.id',
        'd.webhook_id',
        'd.event_id',
        'd.topic',
        'd.status',
        'd.attempts',
        'd.last_status',
        'd.last_error',
        'd.next_attempt_at',
        'd.created_at',
        'd.updated_at',
        'd.private_app_id',
        'st.name as store_name',
        'a.client_id',
      ])
      .select((eb) => addressOf(eb).as('address'));
    if (filter.appId !== undefined) q = q.where('d.app_id', '=', filter.appId);
    if (filter.storeId !== undefined) q = q.where('d.store_id', '=', filter.storeId);
    if (filter.status !== undefined) q = q.where('d.status', '=', filter.status);
    if (filter.id !== undefined) q = q.where('d.id', '=', filter.id);
    return q.orderBy('d.id', 'desc').limit(filter.limit).modifyEnd(fleetWide('operator-delivery-log')).execute();
  }

  attempts(deliveryId: number): Promise<AttemptRow[]> {
    return this.k
      .selectFrom('webhook_attempts')
      .select(ATTEMPT_COLUMNS)
      .where('delivery_id', '=', deliveryId)
      .orderBy('id')
      .modifyEnd(fleetWide('delivery-attempts-by-id'))
      .execute();
  }

  async lastAttempts(deliveryIds: readonly number[]): Promise<Map<number, AttemptRow>> {
    const last = new Map<number, AttemptRow>();
    if (deliveryIds.length === 0) return last;
    const rows = await this.k
      .selectFrom('webhook_attempts')
      .select(ATTEMPT_COLUMNS)
      .where('delivery_id', 'in', [...deliveryIds])
      .orderBy('id')
      .modifyEnd(fleetWide('delivery-attempts-by-id'))
      .execute();
    for (const a of rows) last.set(Number(a.delivery_id), a);
    return last;
  }

  redeliveryCheck(id: number): Promise<{ status: DeliveryStatus; sub_id: number | null; disabled_at: number | null } | undefined> {
    return this.k
      .selectFrom('webhook_deliveries as d')
      .leftJoin('webhook_subscriptions as s', (j) => j.onRef('s.store_id', '=', 'd.store_id').onRef('s.id', '=', 'd.subscription_id'))
      .select(['d.status', 's.disabled_at'])
      .select((eb) => subscriptionOf(eb).as('sub_id'))
      .where('d.id', '=', id)
      .modifyEnd(fleetWide('operator-redeliver'))
      .executeTakeFirst();
  }

  async requeue(id: number, now: number): Promise<void> {
    const requeue = this.k.updateTable('webhook_deliveries').set(requeued(now, null)).where('id', '=', id);
    await requeue.modifyEnd(fleetWide('operator-redeliver')).execute();
    await releaseLeases(this.k, [id]).modifyEnd(fleetWide('operator-redeliver')).execute();
    this.x.deliveriesQueued();
  }

  prune(cutoff: number): Promise<{ attempts: number; deliveries: number; events: number }> {
    return pruneWebhookLog(this.k, cutoff);
  }

  partnerDeliveries(
    appId: number,
    f: { status?: DeliveryStatus | undefined; topic?: string | undefined; before?: number | undefined; limit: number },
  ): Promise<PartnerDeliveryRow[]> {
    let q = this.k
      .selectFrom('webhook_deliveries as d')
      .innerJoin('stores as st', 'st.id', 'd.store_id')
      .leftJoin('webhook_subscriptions as s', (j) => j.onRef('s.store_id', '=', 'd.store_id').onRef('s.id', '=', 'd.subscription_id'))
      .leftJoin('apps as a', 'a.id', 'd.app_id')
      .select([
        'd.id',
        'd.topic',
        'd.status',
        'd.attempts',
        'd.last_status',
        'd.last_error',
        'd.created_at',
        'd.updated_at',
        'd.next_attempt_at',
        'st.name as store_name',
      ])
      .select((eb) => addressOf(eb).as('address'))
      .where('d.app_id', '=', appId);
    if (f.status) q = q.where('d.status', '=', f.status);
    if (f.topic) q = q.where('d.topic', '=', f.topic);
    if (f.before !== undefined) q = q.where('d.id', '<', f.before);
    return q.orderBy('d.id', 'desc').limit(f.limit).modifyEnd(fleetWide('partner-delivery-log')).execute();
  }

  partnerDelivery(appId: number, id: number): Promise<PartnerDeliveryDetailRow | undefined> {
    return this.k
      .selectFrom('webhook_deliveries as d')
      .innerJoin('stores as st', 'st.id', 'd.store_id')
      .leftJoin('webhook_subscriptions as s', (j) => j.onRef('s.store_id', '=', 'd.store_id').onRef('s.id', '=', 'd.subscription_id'))
      .leftJoin('apps as a', 'a.id', 'd.app_id')
      .select([
        'd.id',
        'd.webhook_id',
        'd.event_id',
        'd.topic',
        'd.status',
        'd.attempts',
        'd.last_status',
        'd.last_error',
        'd.created_at',
        'd.next_attempt_at',
        'st.name as store_name',
        's.disabled_at',
      ])
      .select((eb) => [subscriptionOf(eb).as('sub_id'), addressOf(eb).as('address')])
      .where('d.id', '=', id)
      .where('d.app_id', '=', appId)
      .modifyEnd(fleetWide('partner-delivery-log'))
      .executeTakeFirst();
  }

  disabledSubscriptions(appIds: readonly number[]): Promise<DisabledSubscriptionRow[]> {
    if (appIds.length === 0) return Promise.resolve([]);
    return this.k
      .selectFrom('webhook_subscriptions as s')
      .innerJoin('stores as st', 'st.id', 's.store_id')
      .select(['s.id', 's.app_id', 's.topic', 's.address', 's.disabled_at', 's.disabled_reason', 'st.name as store_name'])
      .where('s.app_id', 'in', [...appIds])
      .where('s.disabled_at', 'is not', null)
      .orderBy('s.disabled_at', 'desc')
      .limit(50)
      .modifyEnd(fleetWide('partner-disabled-subscriptions'))
      .execute();
  }
}
