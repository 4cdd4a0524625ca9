// The delivery log: deliveries with their attempts for the CLI and the partner
// dashboard, manual redelivery, and the 30-day retention.
import type { Clock } from '../domain/clock.ts';
import { ConflictError, NotFoundError, ValidationFailedError } from '../domain/errors.ts';
import type { DeliveryStatus } from '../storage/ports/rows.ts';
import type { Storage } from '../storage/ports/storage.ts';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'dead', 'cancelled'] as const;
export type { DeliveryStatus };
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

export function isDeliveryStatus(value: string): value is DeliveryStatus {
  return (DELIVERY_STATUSES as readonly string[]).includes(value);
}

export class DeliveryLog {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  /** Newest first. Unknown app or store names are errors, not empty lists (a typo must show). */
  async list(
    filter: {
      appClientId?: string | undefined;
      storeName?: string | undefined;
      status?: string | undefined;
      limit?: number | undefined;
      id?: number;
    } = {},
  ): Promise<DeliveryView[]> {
    const errors: Record<string, string[]> = {};
    if (filter.status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(filter.status))
      errors.status = [`must be one of: ${DELIVERY_STATUSES.join(', ')}`];
    const limit = filter.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) errors.limit = ['must be a whole number from 1 to 10000'];
    let appId: number | undefined;
    if (filter.appClientId !== undefined) {
      appId = filter.appClientId.length <= 100 ? await this.storage.webhooks.appIdByClientId(filter.appClientId) : undefined;
      if (appId === undefined) errors.app = [`no app with client_id "${filter.appClientId.slice(0, 100)}"`];
    }
    let storeId: number | undefined;
    if (filter.storeName !== undefined) {
      storeId = filter.storeName.length <= 63 ? await this.storage.webhooks.storeIdByName(filter.storeName.toLowerCase()) : undefined;
      if (storeId === undefined) errors.store = [`no store named "${filter.storeName.slice(0, 63)}"`];
    }
    if (Object.keys(errors).length > 0) throw new ValidationFailedError(errors);
    const rows = await this.storage.webhooks.listDeliveries({
      appId,
      storeId,
      status: filter.status as DeliveryStatus | undefined,
      id: filter.id,
      limit,
    });
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
    const rows = await this.storage.webhooks.attempts(deliveryId);
    return rows.map((r) => ({
      attempted_at: iso(r.attempted_at),
      status: r.status_code,
      latency_ms: r.latency_ms,
      response_body: r.response_body,
      error: r.error,
    }));
  }

  /**
   * Sends a finished delivery again now, with the same webhook id (the receiver's de-duplication
   * key) and a fresh retry schedule. Its earlier attempts stay in the log.
   */
  async redeliver(id: string | number): Promise<DeliveryView> {
    const text = String(id).trim();
    if (!/^[1-9][0-9]{0,15}$/.test(text))
      throw new ValidationFailedError({ delivery_id: ['must be a delivery id (a positive whole number)'] });
    const deliveryId = Number(text);
    const now = this.clock();
    await this.storage.transaction(async (tx) => {
      const row = await tx.webhooks.redeliveryCheck(deliveryId);
      if (!row) throw new NotFoundError(`No webhook delivery with id ${deliveryId}`);
      if (row.status === 'pending') throw new ConflictError(`Delivery ${deliveryId} is already queued`);
      if (row.sub_id === null) throw new ConflictError(`The subscription of delivery ${deliveryId} was deleted`);
      if (row.disabled_at !== null) throw new ConflictError(`The subscription of delivery ${deliveryId} is disabled`);
      await tx.webhooks.requeue(deliveryId, now);
    });
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
    return this.storage.transaction((tx) => tx.webhooks.prune(cutoff));
  }
}
