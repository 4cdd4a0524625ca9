// Reads of the webhook delivery log for the partner dashboard, always scoped to one app of the
// partner: deliveries with filters (status, topic), every attempt of a delivery, and the
// subscriptions that were disabled.
import type {
  AttemptRow,
  DeliveryStatus,
  DisabledSubscriptionRow,
  PartnerDeliveryDetailRow,
  PartnerDeliveryRow,
} from '../storage/ports/rows.ts';
import type { WebhookRepository } from '../storage/ports/webhook-records.ts';

export interface DeliveryFilter {
  status?: DeliveryStatus | undefined;
  topic?: string | undefined;
  /** Only deliveries with a smaller id (the next, older page). */
  before?: number | undefined;
  limit: number;
}

export class PartnerDeliveries {
  constructor(private readonly webhooks: WebhookRepository) {}

  /** Newest first; one more row than `limit` tells whether an older page exists. */
  async list(
    appId: number,
    f: DeliveryFilter,
  ): Promise<{ rows: (PartnerDeliveryRow & { lastAttempt: AttemptRow | undefined })[]; more: boolean }> {
    const rows = await this.webhooks.partnerDeliveries(appId, { ...f, limit: f.limit + 1 });
    const page = rows.slice(0, f.limit);
    const last = await this.webhooks.lastAttempts(page.map((r) => r.id));
    return { rows: page.map((r) => ({ ...r, id: Number(r.id), lastAttempt: last.get(Number(r.id)) })), more: rows.length > f.limit };
  }

  /** One delivery of the app with its attempts; undefined when it is not the app's. */
  async get(appId: number, id: number): Promise<(Omit<PartnerDeliveryDetailRow, 'attempts'> & { attempts: AttemptRow[] }) | undefined> {
    const row = await this.webhooks.partnerDelivery(appId, id);
    if (!row) return undefined;
    // Spread after the row: the delivery's attempt list replaces its attempt count.
    return { ...row, attempts: await this.webhooks.attempts(id) };
  }

  /** Subscriptions of the app that the platform disabled (410, or a run of dead deliveries). */
  disabledSubscriptions(appIds: readonly number[]): Promise<DisabledSubscriptionRow[]> {
    return this.webhooks.disabledSubscriptions(appIds);
  }
}
