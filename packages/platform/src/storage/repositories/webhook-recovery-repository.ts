// Recovery of a subscription in SQL: the subscription with its owner's state, enabling it again in
// place, and replaying its deliveries. A replay reads the subscription's deliveries through
// webhook_deliveries_subscription_time (store_id, subscription_id, created_at, id), so it costs
// what the window holds of that subscription, whatever the store's log holds besides; and it
// changes a row only while its status is still one a replay takes, so two replays at once queue
// each delivery once.
import { type Kysely, sql } from 'kysely';
import type { Database } from '../schema.ts';
import type { RecoverableSubscription, ReplayRequest, ReplayResult, WebhookRecoveryRepository } from '../ports/webhook-recovery.ts';
import type { SubscriptionRow } from '../ports/rows.ts';
import { fleetWide } from '../fleet-wide.ts';
import type { Executor } from './executor.ts';

/** What makes a subscription active again with a clean record: also a new address (PUT). */
export const FRESH_START = { disabled_at: null, disabled_reason: null, dead_streak: 0 } as const;

/** A finished delivery queued to be sent again now, with a fresh retry schedule. */
export function requeued(now: number, replayedAt: number | null) {
  return { status: 'pending' as const, attempts: 0, next_attempt_at: now, updated_at: now, replayed_at: replayedAt };
}

/**
 * The leases still on deliveries just queued again (in `storeId` when given), deleted after the
 * deliveries' update (the order a claim takes them in). A worker that held one when it was
 * cancelled has not recorded that outcome yet; its lease gone, that outcome no longer lands on the
 * fresh send.
 */
export function releaseLeases(k: Kysely<Database>, ids: readonly number[], storeId?: number) {
  const leases = k.deleteFrom('webhook_delivery_leases').where('delivery_id', 'in', [...ids]);
  return storeId === undefined ? leases : leases.where('store_id', '=', storeId);
}

export class SqlWebhookRecoveryRepository implements WebhookRecoveryRepository {
  constructor(private readonly x: Executor) {}

  private select() {
    return (
      this.x.k
        .selectFrom('webhook_subscriptions as s')
        .innerJoin('stores as st', 'st.id', 's.store_id')
        .leftJoin('installations as i', (j) => j.onRef('i.store_id', '=', 's.store_id').onRef('i.app_id', '=', 's.app_id'))
        .leftJoin('private_apps as p', (j) => j.onRef('p.store_id', '=', 's.store_id').onRef('p.id', '=', 's.private_app_id'))
        // Every column of the subscription (whatever later migrations add), with its store's name.
        .selectAll('s')
        .select('st.name as store_name')
        .select(['i.scopes as installation_scopes', 'i.uninstalled_at', 'i.id as installation_id'])
        .select(['p.scopes as private_scopes', 'p.revoked_at', 'p.id as private_id'])
    );
  }

  private static shape(r: Awaited<ReturnType<ReturnType<SqlWebhookRecoveryRepository['select']>['executeTakeFirst']>>) {
    if (!r) return undefined;
    const { installation_scopes, uninstalled_at, installation_id, private_scopes, revoked_at, private_id, ...row } = r;
    const reachable =
      row.app_id !== null ? installation_id !== null && uninstalled_at === null : private_id !== null && revoked_at === null;
    const out: RecoverableSubscription = { ...row, scopes: row.app_id !== null ? installation_scopes : private_scopes, reachable };
    return out;
  }

  async findOwned(storeId: number, owner: string, id: number): Promise<RecoverableSubscription | undefined> {
    const row = await this.select()
      .where('s.store_id', '=', storeId)
      .where('s.owner', '=', owner)
      .where('s.id', '=', id)
      .executeTakeFirst();
    return SqlWebhookRecoveryRepository.shape(row);
  }

  async findOfApp(appId: number, id: number): Promise<RecoverableSubscription | undefined> {
    const row = await this.select()
      .where('s.app_id', '=', appId)
      .where('s.id', '=', id)
      .modifyEnd(fleetWide('partner-subscription'))
      .executeTakeFirst();
    return SqlWebhookRecoveryRepository.shape(row);
  }

  async findById(id: number): Promise<RecoverableSubscription | undefined> {
    const row = await this.select().where('s.id', '=', id).modifyEnd(fleetWide('operator-subscription')).executeTakeFirst();
    return SqlWebhookRecoveryRepository.shape(row);
  }

  async enable(storeId: number, id: number, now: number): Promise<SubscriptionRow | undefined> {
    return this.x.k
      .updateTable('webhook_subscriptions')
      .set({ ...FRESH_START, enabled_at: now, updated_at: now, version: sql<number>`version + 1` })
      .where('store_id', '=', storeId)
      .where('id', '=', id)
      .where('disabled_at', 'is not', null)
      .returningAll()
      .executeTakeFirst();
  }

  async replay(input: ReplayRequest): Promise<ReplayResult> {
    const window = this.x.k
      .selectFrom('webhook_deliveries')
      .where('store_id', '=', input.storeId)
      .where('subscription_id', '=', input.subscriptionId)
      .where('created_at', '>=', input.since);
    const picked = await window
      .select(['id', 'created_at'])
      .where('status', 'in', [...input.statuses])
      .orderBy('created_at')
      .orderBy('id')
      .limit(input.limit + 1)
      .execute();
    const ids = picked.slice(0, input.limit).map((r) => Number(r.id));
    let queued = 0;
    for (let i = 0; i < ids.length; i += 500) {
      const changed = await this.x.k
        .updateTable('webhook_deliveries')
        .set(requeued(input.now, input.now))
        .where('store_id', '=', input.storeId)
        .where('id', 'in', ids.slice(i, i + 500))
        .where('status', 'in', [...input.statuses])
        .returning('id')
        .execute();
      queued += changed.length;
      if (changed.length > 0)
        await releaseLeases(
          this.x.k,
          changed.map((r) => Number(r.id)),
          input.storeId,
        ).execute();
    }
    if (queued > 0) this.x.deliveriesQueued();
    const pending = await window
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    const left = picked[input.limit];
    return { queued, alreadyQueued: Math.max(0, Number(pending.n) - queued), nextSince: left ? Number(left.created_at) : undefined };
  }
}
