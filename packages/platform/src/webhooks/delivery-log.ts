// The delivery log (PRODUCT.md §7): deliveries with their attempts for the CLI and the partner
// dashboard, manual redelivery, and the 30-day retention.
import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import { ConflictError, NotFoundError, ValidationFailedError } from '../errors.ts';
import type { Clock } from '../services/clock.ts';
import type { Db } from '../storage/db.ts';
import type { Database } from '../storage/schema.ts';
import { notifyOutboxCommit } from './outbox.ts';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'dead', 'cancelled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export const LOG_RETENTION_MS = 30 * 86_400_000;

export interface DeliveryView {
  id: string;
  webhook_id: string;
  event_id: string;
  topic: string;
  status: DeliveryStatus;
  store: string;
  /** `client_id` of a public app, or `private:<id>`. */
  app: string;
  address: string | null;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface AttemptView {
  attempted_at: string;
  status: number | null;
  latency_ms: number;
  response_body: string | null;
  error: string | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

export class DeliveryLog {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly config: Pick<Config, 'storeDomain'>,
  ) {}

  private get k(): Kysely<Database> {
    return this.db.kysely;
  }

  /** Newest first. Unknown app or store names are errors, not empty lists (a typo must show). */
  async list(filter: { appClientId?: string | undefined; storeName?: string | undefined; status?: string | undefined; limit?: number | undefined; id?: number } = {}): Promise<DeliveryView[]> {
    const errors: Record<string, string[]> = {};
    if (filter.status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(filter.status)) errors.status = [`must be one of: ${DELIVERY_STATUSES.join(', ')}`];
    const limit = filter.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) errors.limit = ['must be a whole number from 1 to 10000'];
    let appId: number | undefined;
    if (filter.appClientId !== undefined) {
      const app = filter.appClientId.length <= 100 ? await this.k.selectFrom('apps').select('id').where('client_id', '=', filter.appClientId).executeTakeFirst() : undefined;
      if (!app) errors.app = [`no app with client_id "${filter.appClientId.slice(0, 100)}"`];
      else appId = app.id;
    }
    let storeId: number | undefined;
    if (filter.storeName !== undefined) {
      const store = filter.storeName.length <= 63 ? await this.k.selectFrom('stores').select('id').where('name', '=', filter.storeName.toLowerCase()).executeTakeFirst() : undefined;
      if (!store) errors.store = [`no store named "${filter.storeName.slice(0, 63)}"`];
      else storeId = store.id;
    }
    if (Object.keys(errors).length > 0) throw new ValidationFailedError(errors);
    let q = this.k
      .selectFrom('webhook_deliveries as d')
      .innerJoin('stores as st', 'st.id', 'd.store_id')
      .leftJoin('apps as a', 'a.id', 'd.app_id')
      .leftJoin('webhook_subscriptions as s', 's.id', 'd.subscription_id')
      .select([
        'd.id', 'd.webhook_id', 'd.event_id', 'd.topic', 'd.status', 'd.attempts', 'd.last_status', 'd.last_error', 'd.next_attempt_at', 'd.created_at', 'd.updated_at', 'd.private_app_id',
        'st.name as store_name', 'a.client_id', 's.address',
      ]);
    if (appId !== undefined) q = q.where('d.app_id', '=', appId);
    if (storeId !== undefined) q = q.where('d.store_id', '=', storeId);
    if (filter.status !== undefined) q = q.where('d.status', '=', filter.status as DeliveryStatus);
    if (filter.id !== undefined) q = q.where('d.id', '=', filter.id);
    const rows = await q.orderBy('d.id', 'desc').limit(limit).execute();
    return rows.map((r) => ({
      id: String(r.id),
      webhook_id: r.webhook_id,
      event_id: r.event_id,
      topic: r.topic,
      status: r.status,
      store: r.store_name,
      app: r.client_id ?? `private:${r.private_app_id}`,
      address: r.address,
      attempts: r.attempts,
      last_status: r.last_status,
      last_error: r.last_error,
      next_attempt_at: r.status === 'pending' ? iso(r.next_attempt_at) : null,
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    }));
  }

  async attempts(deliveryId: number): Promise<AttemptView[]> {
    const rows = await this.k.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('id').execute();
    return rows.map((r) => ({ attempted_at: iso(r.attempted_at), status: r.status_code, latency_ms: r.latency_ms, response_body: r.response_body, error: r.error }));
  }

  /**
   * Sends a finished delivery again now, with the same webhook id (the receiver's de-duplication
   * key) and a fresh retry schedule. Its earlier attempts stay in the log.
   */
  async redeliver(id: string | number): Promise<DeliveryView> {
    const text = String(id).trim();
    if (!/^[1-9][0-9]{0,15}$/.test(text)) throw new ValidationFailedError({ delivery_id: ['must be a delivery id (a positive whole number)'] });
    const deliveryId = Number(text);
    const now = this.clock();
    await this.k.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('webhook_deliveries as d')
        .leftJoin('webhook_subscriptions as s', 's.id', 'd.subscription_id')
        .select(['d.id', 'd.status', 's.id as sub_id', 's.disabled_at'])
        .where('d.id', '=', deliveryId)
        .executeTakeFirst();
      if (!row) throw new NotFoundError(`No webhook delivery with id ${deliveryId}`);
      if (row.status === 'pending') throw new ConflictError(`Delivery ${deliveryId} is already queued`);
      if (row.sub_id === null) throw new ConflictError(`The subscription of delivery ${deliveryId} was deleted`);
      if (row.disabled_at !== null) throw new ConflictError(`The subscription of delivery ${deliveryId} is disabled`);
      await trx
        .updateTable('webhook_deliveries')
        .set({ status: 'pending', attempts: 0, next_attempt_at: now, claimed_by: null, claimed_until: null, updated_at: now })
        .where('id', '=', deliveryId)
        .execute();
    });
    notifyOutboxCommit(this.db);
    const [view] = await this.listById(deliveryId);
    return view!;
  }

  private listById(id: number): Promise<DeliveryView[]> {
    return this.list({ id });
  }

  /**
   * Drops attempts older than `maxAgeMs`, finished deliveries last changed before then, and events
   * left without deliveries. Pending deliveries are never dropped.
   */
  async prune(maxAgeMs = LOG_RETENTION_MS): Promise<{ attempts: number; deliveries: number; events: number }> {
    const cutoff = this.clock() - maxAgeMs;
    return this.k.transaction().execute(async (trx) => {
      const old = trx.selectFrom('webhook_deliveries').select('id').where('status', '!=', 'pending').where('updated_at', '<', cutoff);
      const a1 = await trx.deleteFrom('webhook_attempts').where('attempted_at', '<', cutoff).executeTakeFirst();
      const a2 = await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', old).executeTakeFirst();
      const d = await trx.deleteFrom('webhook_deliveries').where('status', '!=', 'pending').where('updated_at', '<', cutoff).executeTakeFirst();
      const e = await trx
        .deleteFrom('webhook_events')
        .where('created_at', '<', cutoff)
        // NOT IN over one subquery (built once), not a correlated NOT EXISTS per event.
        .where('id', 'not in', trx.selectFrom('webhook_deliveries').select('event_id'))
        .executeTakeFirst();
      return { attempts: Number(a1.numDeletedRows) + Number(a2.numDeletedRows), deliveries: Number(d.numDeletedRows), events: Number(e.numDeletedRows) };
    });
  }
}
