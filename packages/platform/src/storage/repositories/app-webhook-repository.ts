// App-level webhook subscriptions and their store copies. The app's list lives in one table that
// is not split by store; each copy is a row of webhook_subscriptions (so delivery, the Admin API
// list and the caps treat it as any other subscription), found by the app-level row it names.
import { sql } from 'kysely';
import type { AppSubscriptionRow, AppWebhookRepository, CopyShape, StoreCopyRow } from '../ports/app-webhooks.ts';
import type { SubscriptionRow } from '../ports/rows.ts';
import { fleetWide } from '../fleet-wide.ts';
import { refusingDuplicates } from '../unique-violation.ts';
import type { Executor } from './executor.ts';
import { SUBSCRIPTION_COLUMNS } from './webhook-columns.ts';

const COLUMNS = ['id', 'app_id', 'topic', 'address', 'api_version', 'filter', 'include_fields', 'created_at', 'updated_at'] as const;

const appOwner = (appId: number) => `app:${appId}`;

export class SqlAppWebhookRepository implements AppWebhookRepository {
  constructor(private readonly x: Executor) {}

  private get k() {
    return this.x.k;
  }

  list(appId: number): Promise<AppSubscriptionRow[]> {
    return this.k.selectFrom('app_webhook_subscriptions').select(COLUMNS).where('app_id', '=', appId).orderBy('id').execute();
  }

  find(appId: number, id: number): Promise<AppSubscriptionRow | undefined> {
    return this.k
      .selectFrom('app_webhook_subscriptions')
      .select(COLUMNS)
      .where('app_id', '=', appId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async lockApp(appId: number): Promise<void> {
    if (this.x.dialect === 'postgres') await sql`select id from apps where id = ${appId} for update`.execute(this.k);
    // SQLite: a write that changes nothing makes this transaction the one writer from here on.
    else
      await this.k
        .updateTable('apps')
        .set((eb) => ({ app_subscription_count: eb.ref('app_subscription_count') }))
        .where('id', '=', appId)
        .execute();
  }

  insert(row: Omit<AppSubscriptionRow, 'id'>): Promise<AppSubscriptionRow> {
    return refusingDuplicates('app_webhook_subscriptions', () =>
      this.k.insertInto('app_webhook_subscriptions').values(row).returning(COLUMNS).executeTakeFirstOrThrow(),
    );
  }

  async delete(appId: number, id: number): Promise<boolean> {
    const res = await this.k.deleteFrom('app_webhook_subscriptions').where('app_id', '=', appId).where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  reshape(appId: number, id: number, shape: CopyShape, now: number): Promise<AppSubscriptionRow | undefined> {
    return this.k
      .updateTable('app_webhook_subscriptions')
      .set({ filter: shape.filter, include_fields: shape.include_fields, updated_at: now })
      .where('app_id', '=', appId)
      .where('id', '=', id)
      .returning(COLUMNS)
      .executeTakeFirst();
  }

  async recount(appId: number): Promise<void> {
    await this.k
      .updateTable('apps')
      .set((eb) => ({
        app_subscription_count: eb
          .selectFrom('app_webhook_subscriptions')
          .select((s) => s.fn.countAll<number>().as('n'))
          .where('app_id', '=', appId),
      }))
      .where('id', '=', appId)
      .execute();
  }

  async countForInstall(appId: number): Promise<number> {
    // Shared: installs of the same app go on side by side; an add or remove (lockApp) waits for
    // them, and they for it, so none reads the list from before a change that commits first.
    const row =
      this.x.dialect === 'postgres'
        ? (await sql<{ n: number }>`select app_subscription_count as n from apps where id = ${appId} for key share`.execute(this.k)).rows[0]
        : await this.k.selectFrom('apps').select('app_subscription_count as n').where('id', '=', appId).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async copiesInStore(storeId: number, appId: number): Promise<StoreCopyRow[]> {
    const rows = await this.k
      .selectFrom('webhook_subscriptions')
      .select(['id', 'app_subscription_id', 'topic', 'filter', 'include_fields'])
      .where('store_id', '=', storeId)
      .where('owner', '=', appOwner(appId))
      .where('app_subscription_id', 'is not', null)
      .execute();
    return rows.map((r) => ({
      id: r.id,
      app_subscription_id: Number(r.app_subscription_id),
      topic: r.topic,
      filter: r.filter,
      include_fields: r.include_fields,
    }));
  }

  adopt(input: {
    storeId: number;
    owner: string;
    topic: string;
    address: string;
    appSubscriptionId: number;
    shape: CopyShape;
    now: number;
  }): Promise<SubscriptionRow | undefined> {
    return this.k
      .updateTable('webhook_subscriptions')
      .set({
        app_subscription_id: input.appSubscriptionId,
        filter: input.shape.filter,
        include_fields: input.shape.include_fields,
        updated_at: input.now,
        version: sql<number>`version + 1`,
      })
      .where('store_id', '=', input.storeId)
      .where('owner', '=', input.owner)
      .where('topic', '=', input.topic)
      .where('address', '=', input.address)
      .where('app_subscription_id', 'is', null)
      .returning(SUBSCRIPTION_COLUMNS)
      .executeTakeFirst();
  }

  async reshapeCopies(storeId: number, ids: readonly number[], shape: CopyShape, now: number): Promise<number> {
    if (ids.length === 0) return 0;
    const res = await this.k
      .updateTable('webhook_subscriptions')
      .set({ filter: shape.filter, include_fields: shape.include_fields, updated_at: now, version: sql<number>`version + 1` })
      .where('store_id', '=', storeId)
      .where('id', 'in', [...ids])
      .where('app_subscription_id', 'is not', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  async deleteCopies(storeId: number, ids: readonly number[]): Promise<number> {
    if (ids.length === 0) return 0;
    const res = await this.k
      .deleteFrom('webhook_subscriptions')
      .where('store_id', '=', storeId)
      .where('id', 'in', [...ids])
      .where('app_subscription_id', 'is not', null)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  async deleteAppCopies(storeId: number, appId: number, keepTopics: readonly string[]): Promise<number> {
    let q = this.k
      .deleteFrom('webhook_subscriptions')
      .where('store_id', '=', storeId)
      .where('owner', '=', appOwner(appId))
      .where('app_subscription_id', 'is not', null);
    if (keepTopics.length > 0) q = q.where('topic', 'not in', [...keepTopics]);
    return Number((await q.executeTakeFirst()).numDeletedRows);
  }

  async storesWithCopies(appSubscriptionId: number, after: number, limit: number): Promise<number[]> {
    const rows = await this.k
      .selectFrom('webhook_subscriptions')
      .select('store_id')
      .distinct()
      .where('app_subscription_id', '=', appSubscriptionId)
      .where('store_id', '>', after)
      .orderBy('store_id')
      .limit(limit)
      .modifyEnd(fleetWide('app-subscription-copies'))
      .execute();
    return rows.map((r) => Number(r.store_id));
  }

  async installedStores(appId: number, after: number, limit: number): Promise<number[]> {
    const rows = await this.k
      .selectFrom('installations')
      .select('store_id')
      .where('app_id', '=', appId)
      .where('uninstalled_at', 'is', null)
      .where('store_id', '>', after)
      .orderBy('store_id')
      .limit(limit)
      .modifyEnd(fleetWide('app-installations'))
      .execute();
    return rows.map((r) => Number(r.store_id));
  }

  async copyCounts(appId: number): Promise<Map<number, number>> {
    const rows = await this.k
      .selectFrom('webhook_subscriptions')
      .select((eb) => ['app_subscription_id', eb.fn.countAll<number>().as('n')])
      .where('app_subscription_id', 'in', (eb) => eb.selectFrom('app_webhook_subscriptions').select('id').where('app_id', '=', appId))
      .groupBy('app_subscription_id')
      .modifyEnd(fleetWide('app-subscription-copies'))
      .execute();
    return new Map(rows.map((r) => [Number(r.app_subscription_id), Number(r.n)]));
  }
}
