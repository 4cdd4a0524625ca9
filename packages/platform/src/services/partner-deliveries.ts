// Reads of the webhook delivery log for the partner dashboard, always scoped to one app of the
// partner: deliveries with filters (status, topic), every attempt of a delivery, and the
// subscriptions that were disabled (PRODUCT.md §7).
import type { Kysely } from 'kysely';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../webhooks/delivery-log.ts';
import type { Db } from '../storage/db.ts';
import type { Database } from '../storage/schema.ts';

export interface DeliveryFilter {
  status?: DeliveryStatus | undefined;
  topic?: string | undefined;
  /** Only deliveries with a smaller id (the next, older page). */
  before?: number | undefined;
  limit: number;
}

export function isDeliveryStatus(value: string): value is DeliveryStatus {
  return (DELIVERY_STATUSES as readonly string[]).includes(value);
}

export class PartnerDeliveries {
  constructor(private readonly db: Db) {}

  private get k(): Kysely<Database> {
    return this.db.kysely;
  }

  /** Newest first; one more row than `limit` tells whether an older page exists. */
  async list(appId: number, f: DeliveryFilter) {
    let q = this.k
      .selectFrom('webhook_deliveries as d')
      .innerJoin('stores as st', 'st.id', 'd.store_id')
      .leftJoin('webhook_subscriptions as s', 's.id', 'd.subscription_id')
      .select(['d.id', 'd.topic', 'd.status', 'd.attempts', 'd.last_status', 'd.last_error', 'd.created_at', 'd.updated_at', 'd.next_attempt_at', 'st.name as store_name', 's.address'])
      .where('d.app_id', '=', appId);
    if (f.status) q = q.where('d.status', '=', f.status);
    if (f.topic) q = q.where('d.topic', '=', f.topic);
    if (f.before !== undefined) q = q.where('d.id', '<', f.before);
    const rows = await q.orderBy('d.id', 'desc').limit(f.limit + 1).execute();
    const page = rows.slice(0, f.limit);
    const ids = page.map((r) => r.id);
    const attempts = ids.length === 0 ? [] : await this.k.selectFrom('webhook_attempts').select(['delivery_id', 'status_code', 'latency_ms', 'attempted_at', 'error']).where('delivery_id', 'in', ids).orderBy('id').execute();
    const last = new Map<number, (typeof attempts)[number]>();
    for (const a of attempts) last.set(Number(a.delivery_id), a);
    return { rows: page.map((r) => ({ ...r, id: Number(r.id), lastAttempt: last.get(Number(r.id)) })), more: rows.length > f.limit };
  }

  /** One delivery of the app with its attempts; undefined when it is not the app's. */
  async get(appId: number, id: number) {
    const row = await this.k
      .selectFrom('webhook_deliveries as d')
      .innerJoin('stores as st', 'st.id', 'd.store_id')
      .leftJoin('webhook_subscriptions as s', 's.id', 'd.subscription_id')
      .select(['d.id', 'd.webhook_id', 'd.event_id', 'd.topic', 'd.status', 'd.attempts', 'd.last_status', 'd.last_error', 'd.created_at', 'd.next_attempt_at', 'st.name as store_name', 's.id as sub_id', 's.address', 's.disabled_at'])
      .where('d.id', '=', id)
      .where('d.app_id', '=', appId)
      .executeTakeFirst();
    if (!row) return undefined;
    const attempts = await this.k.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', id).orderBy('id').execute();
    return { ...row, attempts };
  }

  /** Subscriptions of the app that the platform disabled (410, or a run of dead deliveries). */
  disabledSubscriptions(appIds: readonly number[]) {
    if (appIds.length === 0) return Promise.resolve([]);
    return this.k
      .selectFrom('webhook_subscriptions as s')
      .innerJoin('stores as st', 'st.id', 's.store_id')
      .select(['s.id', 's.app_id', 's.topic', 's.address', 's.disabled_at', 's.disabled_reason', 'st.name as store_name'])
      .where('s.app_id', 'in', appIds)
      .where('s.disabled_at', 'is not', null)
      .orderBy('s.disabled_at', 'desc')
      .limit(50)
      .execute();
  }
}
